# lib/view: what users read: the report's rows and numbers, folded stacks
# and trees of calling contexts, the SVG pictures and pprof profiles
# (gzipped with zlib: ZLIB_LIBS goes with this library). Pure formatting on
# top of lib/agg; escape.c holds the one escaping rule of each format.
noinst_LTLIBRARIES += lib/view/libhrview.la
lib_view_libhrview_la_SOURCES = lib/view/report.c lib/view/report.h \
	lib/view/numfmt.c lib/view/numfmt.h lib/view/flame.c \
	lib/view/flame.h lib/view/svg.c lib/view/svg.h lib/view/pprof.c \
	lib/view/pprof.h lib/view/gate.c lib/view/gate.h \
	lib/view/page.c lib/view/page.h lib/view/page_impl.h \
	lib/view/page_script.c lib/view/pagedir.c lib/view/pagedir.h \
	lib/view/escape.c lib/view/escape.h \
	lib/view/dashboard.c lib/view/dashboard.h
lib_view_libhrview_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
EXTRA_DIST += lib/view/local.mk
