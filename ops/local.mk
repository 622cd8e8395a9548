# ops: the instrumented example program.
bin_PROGRAMS += ops/hostrange-demo
ops_hostrange_demo_SOURCES = ops/demo.c
ops_hostrange_demo_LDADD = client/libhostrange.la
EXTRA_DIST += ops/local.mk
