# Integration tests: a real hostranged, real instrumented processes.
EXTRA_DIST += tests/local.mk
if HAVE_CMOCKA
check_PROGRAMS += tests/test_integration
TESTS += tests/test_integration
tests_test_integration_SOURCES = tests/test_integration.c tests/harness.c \
	tests/harness.h tests/flat.c tests/flat.h
tests_test_integration_CFLAGS = $(TEST_CFLAGS)
tests_test_integration_LDADD = $(CMOCKA_LIBS)
endif
