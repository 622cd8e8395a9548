# lib/stat: summary statistics of samples (histograms, count, mean, exact
# and bounded medians, percentiles), the significance test of diff and
# its limits per range (--fail-above), and the change points of a
# history's series.
# Pure logic: no I/O, no protocol.
noinst_LTLIBRARIES += lib/stat/libhrstat.la
lib_stat_libhrstat_la_SOURCES = lib/stat/hist.c lib/stat/hist.h \
	lib/stat/summary.c lib/stat/summary.h lib/stat/signif.c lib/stat/signif.h \
	lib/stat/limits.c lib/stat/limits.h
# The run-level test of diff on round medians.
lib_stat_libhrstat_la_SOURCES += lib/stat/rounds.c lib/stat/rounds.h
# The smallest change a run-level comparison could have shown.
lib_stat_libhrstat_la_SOURCES += lib/stat/detect.c lib/stat/detect.h
# The decision of a sequential comparison (ab --max-rounds).
lib_stat_libhrstat_la_SOURCES += lib/stat/decide.c lib/stat/decide.h
# Change points of a series of run medians (the history).
lib_stat_libhrstat_la_SOURCES += lib/stat/changepoint.c lib/stat/changepoint.h
# The false discovery rate over the series of one look at a history.
lib_stat_libhrstat_la_SOURCES += lib/stat/fdr.c lib/stat/fdr.h
# The search of bisect: which commit next, what a measured one is.
lib_stat_libhrstat_la_SOURCES += lib/stat/bisect.c lib/stat/bisect.h
# The lines of bisect's state file read back.
lib_stat_libhrstat_la_SOURCES += lib/stat/bisectstate.c lib/stat/bisectstate.h
EXTRA_DIST += lib/stat/local.mk
