# lib/agg: the aggregation (keys, populations, calling contexts, the events
# of a key, feeding a decoded batch, report rows) and the observer cost of
# rows. Pure logic on top of lib/stat; used by the daemon, run files and
# views. agg.h is its door, agg_impl.h its own; keyfields.h is the table
# of a key's counters.
noinst_LTLIBRARIES += lib/agg/libhragg.la
lib_agg_libhragg_la_SOURCES = lib/agg/agg.c lib/agg/agg.h lib/agg/agg_impl.h \
	lib/agg/feed.c lib/agg/keyfields.h lib/agg/paths.c \
	lib/agg/rows.c lib/agg/rows.h lib/agg/events.c lib/agg/events.h \
	lib/agg/observer.c lib/agg/observer.h
lib_agg_libhragg_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
EXTRA_DIST += lib/agg/local.mk
