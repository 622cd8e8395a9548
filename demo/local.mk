# demo: hostrange-demo, the smallest instrumented program.
bin_PROGRAMS += demo/hostrange-demo
demo_hostrange_demo_SOURCES = demo/demo.c
demo_hostrange_demo_LDADD = client/libhostrange.la

EXTRA_DIST += demo/local.mk
