# hostranged (the daemon) and hostrangectl (its command-line client). The
# pure logic lives in libhrd, which the tests link.
noinst_LTLIBRARIES += daemon/libhrd.la
daemon_libhrd_la_SOURCES = daemon/agg.c daemon/agg.h daemon/ingest.c \
	daemon/ingest.h daemon/control.c daemon/control.h daemon/report.c \
	daemon/report.h daemon/rundir.c daemon/rundir.h
daemon_libhrd_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
daemon_libhrd_la_LIBADD = proto/libhrproto.la

bin_PROGRAMS += daemon/hostranged daemon/hostrangectl
daemon_hostranged_SOURCES = daemon/hostranged.c daemon/server.c \
	daemon/server.h
daemon_hostranged_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
daemon_hostranged_LDADD = daemon/libhrd.la $(UV_LIBS) $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
daemon_hostrangectl_SOURCES = daemon/hostrangectl.c
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
