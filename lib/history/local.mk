# lib/history: the run history (hostrangectl history): one backend table,
# SQLite (the default, a file) and PostgreSQL (a server, for a fleet);
# other tools' results turned into runs (import.c, import_json.c).
# Used by hostrangectl only: hostranged never links it.
noinst_LTLIBRARIES += lib/history/libhrhistory.la
lib_history_libhrhistory_la_SOURCES = lib/history/history.c \
	lib/history/history.h lib/history/history_impl.h \
	lib/history/backend.h lib/history/schema.c lib/history/dsn.c \
	lib/history/sqlite.c lib/history/pg.c lib/history/look.c \
	lib/history/look.h lib/history/look_impl.h lib/history/import.c \
	lib/history/import.h lib/history/import_priv.h \
	lib/history/import_json.c lib/history/fromrun.c lib/history/fromrun.h \
	lib/history/series.c lib/history/series.h lib/history/judge.c \
	lib/history/judge.h lib/history/lookread.c lib/history/lookread.h \
	lib/history/page.c lib/history/page.h lib/history/gate.c \
	lib/history/gate.h
lib_history_libhrhistory_la_CFLAGS = $(AM_CFLAGS) $(SQLITE3_CFLAGS) \
	$(PQ_CFLAGS)
# libpq is loaded when first needed (pg.c), not linked.
lib_history_libhrhistory_la_LIBADD = $(SQLITE3_LIBS)
EXTRA_DIST += lib/history/local.mk
