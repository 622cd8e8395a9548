# lib/util: what the programs and lib/run share below everything else:
# files written atomically, the numbers and options of command lines, a
# table of distinct strings, a strict JSON reader, the growable array.
noinst_LTLIBRARIES += lib/util/libhrutil.la
lib_util_libhrutil_la_SOURCES = lib/util/atomic.c lib/util/atomic.h \
	lib/util/options.c lib/util/options.h lib/util/strset.c \
	lib/util/strset.h lib/util/json.c lib/util/json.h \
	lib/util/grow.c lib/util/grow.h
EXTRA_DIST += lib/util/local.mk
