# Reliability: faults injected into real daemons and clients, hostile input
# from tools nobody here wrote (protoc, nanocat), and the soak (make soak).
EXTRA_DIST += tests/reliability.mk tests/soak.sh

# The instrumented program of the fault tests and of the soak.
check_PROGRAMS += tests/test_fault_recorder
tests_test_fault_recorder_SOURCES = tests/test_fault_recorder.c
tests_test_fault_recorder_LDADD = client/libhostrange.la

if HAVE_CMOCKA
check_PROGRAMS += tests/test_fault_client \
	tests/test_fault_scale tests/test_fault_disk tests/test_fault_rundir \
	tests/test_hostile
TESTS += tests/test_fault_client tests/test_fault_scale tests/test_fault_disk \
	tests/test_fault_rundir tests/test_hostile

tests_test_fault_client_SOURCES = tests/test_fault_client.c tests/harness.c \
	tests/harness.h tests/flat.c tests/flat.h
tests_test_fault_client_CFLAGS = $(TEST_CFLAGS)
tests_test_fault_client_LDADD = $(CMOCKA_LIBS)

tests_test_fault_scale_SOURCES = tests/test_fault_scale.c tests/harness.c \
	tests/harness.h tests/flat.c tests/flat.h
tests_test_fault_scale_CFLAGS = $(TEST_CFLAGS)
tests_test_fault_scale_LDADD = $(CMOCKA_LIBS)

tests_test_fault_disk_SOURCES = tests/test_fault_disk.c tests/harness.c \
	tests/harness.h
tests_test_fault_disk_CFLAGS = $(TEST_CFLAGS)
tests_test_fault_disk_LDADD = $(CMOCKA_LIBS)

tests_test_fault_rundir_SOURCES = tests/test_fault_rundir.c tests/harness.c \
	tests/harness.h
tests_test_fault_rundir_CFLAGS = $(TEST_CFLAGS)
tests_test_fault_rundir_LDADD = $(CMOCKA_LIBS)

tests_test_hostile_SOURCES = tests/test_hostile.c tests/harness.c \
	tests/harness.h client/encode.c client/encode.h
tests_test_hostile_CFLAGS = $(TEST_CFLAGS)
tests_test_hostile_LDADD = proto/libhrproto.la $(CMOCKA_LIBS) \
	$(PROTOBUF_C_LIBS)
endif

# The soak: 8 clients for SOAK_SECONDS (default 600) while the report is
# dumped every second; not part of make check.
soak: all tests/test_fault_recorder$(EXEEXT)
	@HOSTRANGED=$(abs_top_builddir)/daemon/hostranged \
	HOSTRANGECTL=$(abs_top_builddir)/daemon/hostrangectl \
	HOSTRANGE_TEST_RECORDER=$(abs_top_builddir)/tests/test_fault_recorder \
	$(SHELL) $(srcdir)/tests/soak.sh
.PHONY: soak
