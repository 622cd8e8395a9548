# lib/history: the run history (hostrangectl history): one backend table,
# SQLite (the default, a file) and PostgreSQL (a server, for a fleet).
# Used by hostrangectl only: hostranged never links it.
noinst_LTLIBRARIES += lib/history/libhrhistory.la
lib_history_libhrhistory_la_SOURCES = lib/history/history.c \
	lib/history/history.h lib/history/backend.h lib/history/sqlite.c \
	lib/history/pg.c
lib_history_libhrhistory_la_CFLAGS = $(AM_CFLAGS) $(SQLITE3_CFLAGS) \
	$(PQ_CFLAGS)
lib_history_libhrhistory_la_LIBADD = $(SQLITE3_LIBS) $(PQ_LIBS)
EXTRA_DIST += lib/history/local.mk
# The history's page.
EXTRA_DIST += doc/history.md
