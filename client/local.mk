# libhostrange: the client library and its one public header.
include_HEADERS += client/include/hostrange.h
lib_LTLIBRARIES += client/libhostrange.la
client_libhostrange_la_SOURCES = client/hostrange.c client/client.h \
	client/stack.h client/clock.c client/intern.c client/encode.c \
	client/encode.h client/ship.c
client_libhostrange_la_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
client_libhostrange_la_LIBADD = proto/libhrproto.la $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS) -lpthread
client_libhostrange_la_LDFLAGS = -version-info 0:0:0
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = client/hostrange.pc
EXTRA_DIST += client/hostrange.pc.in client/local.mk

if HAVE_CMOCKA
check_PROGRAMS += tests/test_stack tests/test_codec tests/test-workload
TESTS += tests/test_stack tests/test_codec

tests_test_stack_SOURCES = tests/test_stack.c
tests_test_stack_CFLAGS = $(TEST_CFLAGS)
tests_test_stack_LDADD = $(CMOCKA_LIBS)

tests_test_codec_SOURCES = tests/test_codec.c client/encode.c
tests_test_codec_CFLAGS = $(TEST_CFLAGS)
tests_test_codec_LDADD = daemon/libhrd.la $(CMOCKA_LIBS) $(PROTOBUF_C_LIBS)

tests_test_workload_SOURCES = tests/test-workload.c
tests_test_workload_LDADD = client/libhostrange.la
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/test_client tests/test_clock
TESTS += tests/test_client tests/test_clock

tests_test_client_SOURCES = tests/test_client.c
tests_test_client_CFLAGS = $(TEST_CFLAGS)
tests_test_client_LDADD = client/libhostrange.la $(CMOCKA_LIBS) -lpthread

tests_test_clock_SOURCES = tests/test_clock.c client/clock.c
tests_test_clock_CFLAGS = $(TEST_CFLAGS)
tests_test_clock_LDADD = $(CMOCKA_LIBS) -lpthread
endif

# The same program built with and without HOSTRANGE_DISABLE.
EXTRA_DIST += tests/test_compiled_out.sh
if HAVE_CMOCKA
check_PROGRAMS += tests/compiled-on tests/compiled-off
TESTS += tests/test_compiled_out.sh
tests_compiled_on_SOURCES = tests/compiled_out.c
tests_compiled_on_CPPFLAGS = $(AM_CPPFLAGS)
tests_compiled_on_LDADD = client/libhostrange.la
tests_compiled_off_SOURCES = tests/compiled_out.c
tests_compiled_off_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTRANGE_DISABLE
endif

if HAVE_CMOCKA
check_PROGRAMS += tests/test_client_daemon
TESTS += tests/test_client_daemon
tests_test_client_daemon_SOURCES = tests/test_client_daemon.c \
	tests/harness.c tests/harness.h tests/flat.c tests/flat.h
tests_test_client_daemon_CFLAGS = $(TEST_CFLAGS)
tests_test_client_daemon_LDADD = $(CMOCKA_LIBS)
endif

# make bench
noinst_PROGRAMS += tests/bench_client
tests_bench_client_SOURCES = tests/bench_client.c tests/bench_clock.h
tests_bench_client_LDADD = client/libhostrange.la -lpthread
BENCHES += tests/bench_client
noinst_PROGRAMS += tests/bench_pipeline
tests_bench_pipeline_SOURCES = tests/bench_pipeline.c tests/bench_clock.h \
	tests/bench_daemon_util.c tests/bench_daemon_util.h \
	tests/bench_daemon_batch.c tests/bench_daemon_batch.h
tests_bench_pipeline_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
tests_bench_pipeline_LDADD = client/libhostrange.la proto/libhrproto.la \
	$(NANOMSG_LIBS) $(PROTOBUF_C_LIBS) -lpthread
BENCHES += tests/bench_pipeline
