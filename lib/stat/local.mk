# lib/stat: summary statistics of samples (histograms, count, mean, exact
# and bounded medians, percentiles) and the significance test of diff.
# Pure logic: no I/O, no protocol.
noinst_LTLIBRARIES += lib/stat/libhrstat.la
lib_stat_libhrstat_la_SOURCES = lib/stat/hist.c lib/stat/hist.h \
	lib/stat/summary.c lib/stat/summary.h lib/stat/signif.c lib/stat/signif.h
EXTRA_DIST += lib/stat/local.mk
