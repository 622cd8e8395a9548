# lib/runner: the processes and directories of hostrangectl's commands
# that run others (record, record --rounds, ab, bisect): the registry that
# stops and removes them on every way out, signals included. Used by
# hostrangectl alone.
noinst_LTLIBRARIES += lib/runner/libhrrunner.la
lib_runner_libhrrunner_la_SOURCES = lib/runner/cleanup.c lib/runner/cleanup.h
lib_runner_libhrrunner_la_CFLAGS = $(AM_CFLAGS)
EXTRA_DIST += lib/runner/local.mk
