# lib/run: files of records (framing, checksums) and the run file format
# (.hrs): writing keys, scanning, loading, joining and merging runs, and
# every reading of a run that hostrangectl prints. Used by the daemon (its
# journal, its snapshot, save) and by hostrangectl.
noinst_LTLIBRARIES += lib/run/libhrrun.la
lib_run_libhrrun_la_SOURCES = lib/run/crc32c.c lib/run/crc32c.h \
	lib/run/recfile.c lib/run/recfile.h lib/run/pbuf.h \
	lib/run/run.c lib/run/run.h lib/run/runkey.c lib/run/runkey.h \
	lib/run/runload.c lib/run/runload.h lib/run/runput.c \
	lib/run/runput.h lib/run/runscan.c lib/run/runscan.h \
	lib/run/runjoin.c lib/run/runjoin.h lib/run/runmerge.c \
	lib/run/runmerge.h lib/run/fingerprint.c lib/run/fingerprint.h lib/run/runfields.h \
	lib/run/runid.c lib/run/runid.h lib/run/runstate.c lib/run/runstate.h
# What diff and bisect read of a run: its keys as populations.
lib_run_libhrrun_la_SOURCES += lib/run/runside.c lib/run/runside.h
# Rounds: built for a merge, looked up by key.
lib_run_libhrrun_la_SOURCES += lib/run/runrounds.c lib/run/runrounds.h
# A merge of run files, from their ids to the output written.
lib_run_libhrrun_la_SOURCES += lib/run/runmergefiles.c
# Two runs compared key by key (diff): pairing, tests, judging.
lib_run_libhrrun_la_SOURCES += lib/run/rundiff.c lib/run/rundiff.h \
	lib/run/rundiffpaths.c
# What a run's header and end say of it, for those who print it.
lib_run_libhrrun_la_SOURCES += lib/run/runheader.c lib/run/runheader.h
# A run file written from the pages of a daemon's save.
lib_run_libhrrun_la_SOURCES += lib/run/runsave.c lib/run/runsave.h
# A run's meta pairs, as the commands that write runs collect them.
lib_run_libhrrun_la_SOURCES += lib/run/runmeta.c lib/run/runmeta.h
lib_run_libhrrun_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
EXTRA_DIST += lib/run/local.mk
