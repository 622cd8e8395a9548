# hostranged (the daemon) and hostrangectl (its command-line client). The
# pure logic lives in libhrd, which the tests link.
noinst_LTLIBRARIES += daemon/libhrd.la
daemon_libhrd_la_SOURCES = daemon/agg.c daemon/agg.h daemon/rows.c \
	daemon/hist.c daemon/hist.h daemon/stats.c daemon/stats.h \
	daemon/ingest.c daemon/ingest.h daemon/control.c daemon/control.h \
	daemon/report.c daemon/report.h daemon/rundir.c daemon/rundir.h \
	daemon/journal.c daemon/journal.h daemon/snapshot.c \
	daemon/snapshot.h daemon/state.c daemon/state.h daemon/observer.c \
	daemon/observer.h daemon/signif.c daemon/signif.h daemon/runkey.c \
	daemon/runkey.h daemon/run.c daemon/run.h
daemon_libhrd_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
daemon_libhrd_la_LIBADD = proto/libhrproto.la

bin_PROGRAMS += daemon/hostranged daemon/hostrangectl
daemon_hostranged_SOURCES = daemon/hostranged.c daemon/server.c \
	daemon/server.h daemon/notify.h
daemon_hostranged_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
daemon_hostranged_LDADD = daemon/libhrd.la $(UV_LIBS) $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
# Readiness for systemd: sd_notify with libsystemd, nothing without.
if HAVE_SYSTEMD
daemon_hostranged_SOURCES += daemon/notify_systemd.c
daemon_hostranged_CFLAGS += $(SYSTEMD_CFLAGS)
daemon_hostranged_LDADD += $(SYSTEMD_LIBS)
else
daemon_hostranged_SOURCES += daemon/notify_none.c
endif
EXTRA_DIST += daemon/notify_systemd.c daemon/notify_none.c
daemon_hostrangectl_SOURCES = daemon/hostrangectl.c daemon/ctl.h \
	daemon/ctl_dump.c daemon/ctl_record.c daemon/ctl_save.c \
	daemon/ctl_merge.c daemon/ctl_diff.c daemon/ctl_from.c
daemon_hostrangectl_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
daemon_hostrangectl_LDADD = daemon/libhrd.la $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
EXTRA_DIST += daemon/local.mk tests/data/reference-add.jsonl \
	tests/data/reference-gemm.jsonl

if HAVE_CMOCKA
check_PROGRAMS += tests/test_report tests/test_agg
TESTS += tests/test_report tests/test_agg

tests_test_report_SOURCES = tests/test_report.c tests/flat.c tests/flat.h
tests_test_report_CFLAGS = $(TEST_CFLAGS)
tests_test_report_LDADD = daemon/libhrd.la $(CMOCKA_LIBS) -lm

tests_test_agg_SOURCES = tests/test_agg.c
tests_test_agg_CFLAGS = $(TEST_CFLAGS)
tests_test_agg_LDADD = daemon/libhrd.la $(CMOCKA_LIBS)
endif

# The daemon's own tests: unit tests of the pure logic, and integration
# tests against a real hostranged (tests/harness.c).
if HAVE_CMOCKA
check_PROGRAMS += tests/test_daemon_stats tests/test_daemon_agg \
	tests/test_daemon_ingest tests/test_state tests/test_daemon_service \
	tests/test_daemon_cli
TESTS += tests/test_daemon_stats tests/test_daemon_agg \
	tests/test_daemon_ingest tests/test_state tests/test_daemon_service \
	tests/test_daemon_cli
tests_test_daemon_stats_SOURCES = tests/test_daemon_stats.c
tests_test_daemon_stats_CFLAGS = $(TEST_CFLAGS)
tests_test_daemon_stats_LDADD = daemon/libhrd.la $(CMOCKA_LIBS) -lm
tests_test_daemon_agg_SOURCES = tests/test_daemon_agg.c
tests_test_daemon_agg_CFLAGS = $(TEST_CFLAGS)
tests_test_daemon_agg_LDADD = daemon/libhrd.la $(CMOCKA_LIBS) -lm
tests_test_daemon_ingest_SOURCES = tests/test_daemon_ingest.c \
	tests/bench_daemon_batch.c tests/bench_daemon_batch.h
tests_test_daemon_ingest_CFLAGS = $(TEST_CFLAGS)
tests_test_daemon_ingest_LDADD = daemon/libhrd.la $(CMOCKA_LIBS) \
	$(PROTOBUF_C_LIBS)
tests_test_state_SOURCES = tests/test_state.c tests/bench_daemon_batch.c \
	tests/bench_daemon_batch.h
tests_test_state_CFLAGS = $(TEST_CFLAGS)
tests_test_state_LDADD = daemon/libhrd.la $(CMOCKA_LIBS) $(PROTOBUF_C_LIBS)
tests_test_daemon_service_SOURCES = tests/test_daemon_service.c \
	tests/harness.c tests/harness.h tests/bench_daemon_batch.c \
	tests/bench_daemon_batch.h
tests_test_daemon_service_CFLAGS = $(TEST_CFLAGS) $(NANOMSG_CFLAGS)
tests_test_daemon_service_LDADD = proto/libhrproto.la $(CMOCKA_LIBS) \
	$(NANOMSG_LIBS) $(PROTOBUF_C_LIBS)
tests_test_daemon_cli_SOURCES = tests/test_daemon_cli.c \
	tests/harness.c tests/harness.h tests/bench_daemon_batch.c \
	tests/bench_daemon_batch.h
tests_test_daemon_cli_CFLAGS = $(tests_test_daemon_service_CFLAGS)
tests_test_daemon_cli_LDADD = $(tests_test_daemon_service_LDADD)
# The observer cost's pure logic: children, calibrations, observer fields.
check_PROGRAMS += tests/test_calib
TESTS += tests/test_calib
# Run files end to end: save, merge, dump --from, --load, diff.
TESTS += tests/test_runs.sh
EXTRA_DIST += tests/test_runs.sh
# The significance test of diff (Mann-Whitney U, Hodges-Lehmann).
check_PROGRAMS += tests/test_signif
TESTS += tests/test_signif
tests_test_signif_SOURCES = tests/test_signif.c
tests_test_signif_CFLAGS = $(TEST_CFLAGS)
tests_test_signif_LDADD = daemon/libhrd.la $(CMOCKA_LIBS) -lm
tests_test_calib_SOURCES = tests/test_calib.c tests/bench_daemon_batch.c \
	tests/bench_daemon_batch.h
tests_test_calib_CFLAGS = $(TEST_CFLAGS)
tests_test_calib_LDADD = daemon/libhrd.la $(CMOCKA_LIBS) $(PROTOBUF_C_LIBS)
if HAVE_SYSTEMD
check_PROGRAMS += tests/test_daemon_notify
TESTS += tests/test_daemon_notify
endif
tests_test_daemon_notify_SOURCES = tests/test_daemon_notify.c \
	tests/harness.c tests/harness.h
tests_test_daemon_notify_CFLAGS = $(TEST_CFLAGS)
tests_test_daemon_notify_LDADD = $(CMOCKA_LIBS)
endif

# Benchmarks (make bench): each prints JSON lines with a same-run baseline.
BENCHES += tests/bench_daemon_ingest tests/bench_daemon_memory \
	tests/bench_daemon_dump tests/bench_daemon_pause
noinst_PROGRAMS += tests/bench_daemon_ingest tests/bench_daemon_memory \
	tests/bench_daemon_dump tests/bench_daemon_pause
tests_bench_daemon_ingest_SOURCES = tests/bench_daemon_ingest.c \
	tests/bench_daemon_util.c tests/bench_daemon_util.h \
	tests/bench_daemon_batch.c tests/bench_daemon_batch.h
tests_bench_daemon_ingest_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
tests_bench_daemon_ingest_LDADD = proto/libhrproto.la $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
tests_bench_daemon_memory_SOURCES = tests/bench_daemon_memory.c \
	tests/bench_daemon_util.c tests/bench_daemon_util.h \
	tests/bench_daemon_batch.c tests/bench_daemon_batch.h
tests_bench_daemon_memory_CFLAGS = $(tests_bench_daemon_ingest_CFLAGS)
tests_bench_daemon_memory_LDADD = $(tests_bench_daemon_ingest_LDADD)
tests_bench_daemon_dump_SOURCES = tests/bench_daemon_dump.c \
	tests/bench_daemon_util.c tests/bench_daemon_util.h \
	tests/bench_daemon_batch.c tests/bench_daemon_batch.h
tests_bench_daemon_dump_CFLAGS = $(tests_bench_daemon_ingest_CFLAGS)
tests_bench_daemon_dump_LDADD = daemon/libhrd.la \
	$(tests_bench_daemon_ingest_LDADD)
tests_bench_daemon_pause_SOURCES = tests/bench_daemon_pause.c \
	tests/bench_daemon_util.c tests/bench_daemon_util.h \
	tests/bench_daemon_batch.c tests/bench_daemon_batch.h
tests_bench_daemon_pause_CFLAGS = $(tests_bench_daemon_ingest_CFLAGS)
tests_bench_daemon_pause_LDADD = $(tests_bench_daemon_ingest_LDADD)
