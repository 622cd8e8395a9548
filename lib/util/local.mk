# lib/util: what the programs and lib/run share below everything else:
# files written atomically, and the numbers and options of command lines.
noinst_LTLIBRARIES += lib/util/libhrutil.la
lib_util_libhrutil_la_SOURCES = lib/util/atomic.c lib/util/atomic.h \
	lib/util/options.c lib/util/options.h \
	lib/util/json.c lib/util/json.h
EXTRA_DIST += lib/util/local.mk
