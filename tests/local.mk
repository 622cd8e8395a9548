# Every test of hostrange, grouped by kind:
#
#   tests/unit/     cmocka unit tests, one per module, of the pure logic
#                   (no sockets, no other process)
#   tests/service/  service, fault and hostile-input tests: a real
#                   hostranged on a private temporary runtime directory,
#                   real instrumented processes, and the compile test
#   tests/helpers/  the programs they run: the instrumented workload, the
#                   fault tests' recorder, the compiled-out object
#   tests/lib/      the test library, libharness.a (every name harness_):
#                   starting and stopping daemons and processes, the
#                   report-row parser, the batch builder and the batch sender
#   tests/python/   the Python module's and pytest plugin's checks
#   tests/source/   checks of the source tree itself (the layers)
#   tests/data/     the reference's reports, a state directory of an
#                   earlier daemon (state-v4), and the expected outputs of
#                   every command (golden)
#
# A test that needs something missing (a GPU, a tool) exits 77: skipped.
EXTRA_DIST += tests/local.mk tests/data/reference-add.jsonl \
	tests/data/reference-gemm.jsonl tests/service/soak.sh \
	tests/service/test_compiled_out.sh tests/service/test_man.sh \
	tests/service/test_runs.sh tests/service/test_paths.sh \
	tests/service/test_plot.sh tests/service/test_state_fixture.sh \
	tests/data/state-v4/README tests/data/state-v4/snapshot \
	tests/data/state-v4/dump.jsonl tests/data/state-v4/dump-by-path.jsonl \
	tests/python/test_python_module.sh tests/python/test_python_plugin.sh \
	tests/python/suite/test_add.py tests/python/suite/test_gemm.py \
	tests/python/suite/hr_arrays.py tests/python/hr_daemon.py \
	tests/python/test_module.py tests/python/test_plugin.py \
	tests/python/other_version_daemon.c tests/python/run_checks.sh

# --- the reference design: the in-process profiler hostrange replaces, a
# shared library as the reference's is, measured beside hostrange by
# test_accuracy and bench_reference (tests/lib/harness_refdesign.h) -------
noinst_LTLIBRARIES += tests/lib/libharness_refd.la
tests_lib_libharness_refd_la_SOURCES = tests/lib/harness_refdesign.c \
	tests/lib/harness_refdesign.h
tests_lib_libharness_refd_la_LDFLAGS = -avoid-version -shared -rpath /nowhere

# --- helpers: the instrumented programs the tests run --------------------
check_PROGRAMS += tests/helpers/workload tests/helpers/recorder \
	tests/helpers/pathtree
tests_helpers_pathtree_SOURCES = tests/helpers/pathtree.c
tests_helpers_pathtree_LDADD = client/libhostrange.la
tests_helpers_workload_SOURCES = tests/helpers/workload.c
tests_helpers_workload_LDADD = client/libhostrange.la
tests_helpers_recorder_SOURCES = tests/helpers/recorder.c
tests_helpers_recorder_LDADD = client/libhostrange.la

# The same program built with and without HOSTRANGE_DISABLE.
check_PROGRAMS += tests/helpers/compiled-on tests/helpers/compiled-off
tests_helpers_compiled_on_SOURCES = tests/helpers/compiled_out.c
tests_helpers_compiled_on_CPPFLAGS = $(AM_CPPFLAGS)
tests_helpers_compiled_on_LDADD = client/libhostrange.la
tests_helpers_compiled_off_SOURCES = tests/helpers/compiled_out.c
tests_helpers_compiled_off_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTRANGE_DISABLE

# hostrange.hpp: the same C++ program with and without HOSTRANGE_DISABLE
# (test_cxx.sh skips without a C++ compiler).
if HAVE_CXX
check_PROGRAMS += tests/helpers/cxx_scopes tests/helpers/cxx_scopes_off
endif
HR_TEST_CXXFLAGS = -std=c++11 -Wall -Wextra -pedantic
tests_helpers_cxx_scopes_SOURCES = tests/helpers/cxx_scopes.cpp
tests_helpers_cxx_scopes_CXXFLAGS = $(HR_TEST_CXXFLAGS)
tests_helpers_cxx_scopes_LDADD = client/libhostrange.la
tests_helpers_cxx_scopes_off_SOURCES = tests/helpers/cxx_scopes.cpp
tests_helpers_cxx_scopes_off_CPPFLAGS = $(AM_CPPFLAGS) -DHOSTRANGE_DISABLE
tests_helpers_cxx_scopes_off_CXXFLAGS = $(HR_TEST_CXXFLAGS)
TESTS += tests/service/test_cxx.sh
EXTRA_DIST += tests/service/test_cxx.sh
# The CMake package and hostrange.pc of an installed, moved tree, used by a
# CMake project (tests/cmake; skipped without cmake or a C++ compiler).
TESTS += tests/service/test_cmake.sh
# The staged install it reads, made before any test runs: installing
# relinks libraries in the build tree in place (libtool), which would pull
# them from under tests running beside it.
check_DATA += tests/cmake-stage.stamp
tests/cmake-stage.stamp: $(check_PROGRAMS) $(check_LTLIBRARIES) \
		$(check_LIBRARIES)
	$(AM_V_GEN)rm -rf tests/cmake-stage && \
	$(MAKE) $(AM_MAKEFLAGS) install \
		DESTDIR='$(abs_top_builddir)/tests/cmake-stage' \
		> tests/cmake-stage.log 2>&1 || \
	  { tail -n 30 tests/cmake-stage.log; exit 1; }; touch $@
CLEANFILES += tests/cmake-stage.stamp tests/cmake-stage.log
clean-local: clean-cmake-stage
clean-cmake-stage:
	-rm -rf tests/cmake-stage
.PHONY: clean-cmake-stage
EXTRA_DIST += tests/service/test_cmake.sh tests/cmake/CMakeLists.txt \
	tests/cmake/consumer.cpp
AM_TESTS_ENVIRONMENT += export HOSTRANGE_TEST_PREFIX='$(prefix)' \
	HOSTRANGE_TEST_LIBDIR='$(libdir)' \
	HOSTRANGE_TEST_INCLUDEDIR='$(includedir)' \
	HOSTRANGE_TEST_CXX='$(CXX)' HOSTRANGE_TEST_LDFLAGS='$(LDFLAGS)';

# Programs marked with NVTX only (no hostrange.h), for the NVTX tool's
# tests; the two shared objects are loaded by nvtx_prog with dlopen.
if HAVE_NVTX
check_PROGRAMS += tests/helpers/nvtx_prog
tests_helpers_nvtx_prog_SOURCES = tests/helpers/nvtx_prog.c
tests_helpers_nvtx_prog_CPPFLAGS = $(NVTX_CFLAGS)
check_LTLIBRARIES += tests/helpers/libnvtx_a.la tests/helpers/libnvtx_b.la
NVTX_LIB_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_helpers_libnvtx_a_la_SOURCES = tests/helpers/nvtx_lib.c
tests_helpers_libnvtx_a_la_CPPFLAGS = $(NVTX_CFLAGS) \
	-DNVTX_LIB_RANGE='"lib.a"'
tests_helpers_libnvtx_a_la_LDFLAGS = $(NVTX_LIB_LDFLAGS)
tests_helpers_libnvtx_b_la_SOURCES = tests/helpers/nvtx_lib.c
tests_helpers_libnvtx_b_la_CPPFLAGS = $(NVTX_CFLAGS) \
	-DNVTX_LIB_RANGE='"lib.b"'
tests_helpers_libnvtx_b_la_LDFLAGS = $(NVTX_LIB_LDFLAGS)
endif
EXTRA_DIST += tests/helpers/nvtx_prog.c tests/helpers/nvtx_lib.c
# The NVTX tool end to end; skips (77) without the NVTX headers.
TESTS += tests/service/test_nvtx.sh
EXTRA_DIST += tests/service/test_nvtx.sh

# The man pages render (man -l) and say what --help says.
TESTS += tests/service/test_man.sh
# Every #include follows the layers (proto, lib/*, daemon, ctl, client...).
TESTS += tests/source/test_layers.sh
EXTRA_DIST += tests/source/test_layers.sh

# The Python checks: the scripts exit 77 when the module is not configured
# (no python/check.env).
TESTS += tests/python/test_python_module.sh \
	tests/python/test_python_plugin.sh
if HAVE_PYTHON
check_PROGRAMS += tests/python/other_version_daemon
tests_python_other_version_daemon_SOURCES = tests/python/other_version_daemon.c
tests_python_other_version_daemon_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
tests_python_other_version_daemon_LDADD = proto/libhrproto.la \
	$(NANOMSG_LIBS) $(PROTOBUF_C_LIBS)
endif

if HAVE_CMOCKA
# --- lib: the test library ---------------------------------------------
check_LIBRARIES = tests/lib/libharness.a
tests_lib_libharness_a_SOURCES = tests/lib/harness.c tests/lib/harness.h \
	tests/lib/harness_rows.c tests/lib/harness_rows.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h \
	tests/lib/harness_send.c tests/lib/harness_send.h \
	tests/lib/harness_runfile.c tests/lib/harness_runfile.h \
	tests/lib/harness_hostile.c tests/lib/harness_hostile.h
tests_lib_libharness_a_CFLAGS = $(TEST_CFLAGS) $(NANOMSG_CFLAGS)

# What the tests link: the library first, then what it needs.
HARNESS_LIBS = tests/lib/libharness.a $(CMOCKA_LIBS)
HARNESS_SEND_LIBS = tests/lib/libharness.a proto/libhrproto.la \
	$(CMOCKA_LIBS) $(NANOMSG_LIBS) $(PROTOBUF_C_LIBS)
# The daemon's parts, run files and views with every library under them.
HRD_TEST_LIBS = tests/lib/libharness.a daemon/libhrdaemon.la lib/view/libhrview.la \
	lib/run/libhrrun.la lib/agg/libhragg.la lib/stat/libhrstat.la \
	lib/util/libhrutil.la \
	proto/libhrproto.la $(CMOCKA_LIBS) $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
HRD_STORE_TEST_LIBS = $(HRD_TEST_LIBS)
OPS_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(HROPS_PROFILING_CPPFLAGS)
OPS_TEST_LIBS = ops/libhrops.la $(CMOCKA_LIBS)

# --- unit: one per module ----------------------------------------------
UNIT_TESTS = tests/unit/test_stack tests/unit/test_codec \
	tests/unit/test_clock tests/unit/test_client tests/unit/test_report \
	tests/unit/test_agg tests/unit/test_stat \
	tests/unit/test_daemon_ingest tests/unit/test_state \
	tests/unit/test_calib tests/unit/test_ops_half tests/unit/test_ops_add \
	tests/unit/test_ops_gemm tests/unit/test_ops_cache \
	tests/unit/test_ops_cuda tests/unit/test_ops_symbols \
	tests/unit/test_ops_align tests/unit/test_signif tests/unit/test_paths \
	tests/unit/test_run tests/unit/test_runmerge tests/unit/test_runput \
	tests/unit/test_spool tests/unit/test_pprof tests/unit/test_limits \
	tests/unit/test_util \
	tests/unit/test_fingerprint tests/unit/test_runner
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)

# lib/runner: real children, directories and private daemons.
tests_unit_test_runner_SOURCES = tests/unit/test_runner.c
tests_unit_test_runner_CFLAGS = $(TEST_CFLAGS) $(PROTOBUF_C_CFLAGS)
tests_unit_test_runner_LDADD = tests/lib/libharness.a \
	lib/runner/libhrrunner.la lib/run/libhrrun.la lib/agg/libhragg.la \
	lib/stat/libhrstat.la lib/util/libhrutil.la proto/libhrproto.la \
	$(CMOCKA_LIBS) $(PROTOBUF_C_LIBS) $(ZLIB_LIBS) -lm

# The client.
tests_unit_test_stack_SOURCES = tests/unit/test_stack.c
tests_unit_test_stack_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_stack_LDADD = $(CMOCKA_LIBS)
tests_unit_test_codec_SOURCES = tests/unit/test_codec.c
tests_unit_test_codec_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_codec_LDADD = client/libhrclient.la $(HRDAEMON_LIBS) \
	$(CMOCKA_LIBS) $(PROTOBUF_C_LIBS)
tests_unit_test_clock_SOURCES = tests/unit/test_clock.c
tests_unit_test_clock_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_clock_LDADD = client/libhrclient.la proto/libhrproto.la \
	$(PROTOBUF_C_LIBS) $(CMOCKA_LIBS)
tests_unit_test_client_SOURCES = tests/unit/test_client.c
tests_unit_test_client_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_client_LDADD = client/libhostrange.la $(HARNESS_LIBS)

# The daemon's parts and the libraries (test_state and test_calib's
# snapshots among them).
tests_unit_test_report_SOURCES = tests/unit/test_report.c
tests_unit_test_report_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_report_LDADD = $(HRD_TEST_LIBS)
tests_unit_test_agg_SOURCES = tests/unit/test_agg.c
tests_unit_test_agg_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_agg_LDADD = $(HRD_TEST_LIBS)
tests_unit_test_stat_SOURCES = tests/unit/test_stat.c
tests_unit_test_stat_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_stat_LDADD = $(HRD_TEST_LIBS)
tests_unit_test_daemon_ingest_SOURCES = tests/unit/test_daemon_ingest.c
tests_unit_test_daemon_ingest_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_daemon_ingest_LDADD = $(HRD_TEST_LIBS)
tests_unit_test_state_SOURCES = tests/unit/test_state.c
tests_unit_test_state_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_state_LDADD = $(HRD_STORE_TEST_LIBS)
# The observer cost's pure logic: children, calibrations, observer fields.
tests_unit_test_calib_SOURCES = tests/unit/test_calib.c
tests_unit_test_calib_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_calib_LDADD = $(HRD_STORE_TEST_LIBS)
# The significance test of diff (Mann-Whitney U, Hodges-Lehmann).
tests_unit_test_signif_SOURCES = tests/unit/test_signif.c
tests_unit_test_signif_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_signif_LDADD = $(HRD_TEST_LIBS)
# Calling contexts: paths, folded stacks, the tree (lib/agg/paths.c,
# flame.c).
tests_unit_test_paths_SOURCES = tests/unit/test_paths.c
tests_unit_test_paths_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_paths_LDADD = $(HRD_STORE_TEST_LIBS)
# pprof profiles of the tree (lib/view/pprof.c), read back and inflated.
tests_unit_test_pprof_SOURCES = tests/unit/test_pprof.c
tests_unit_test_pprof_CFLAGS = $(TEST_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_pprof_LDADD = $(HRD_TEST_LIBS) $(ZLIB_LIBS)
# diff --fail-above's limits per range (lib/stat/limits.c).
tests_unit_test_limits_SOURCES = tests/unit/test_limits.c
tests_unit_test_limits_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_limits_LDADD = $(HRD_TEST_LIBS)
# Machine fingerprints of run files (lib/run/fingerprint.c).
tests_unit_test_fingerprint_SOURCES = tests/unit/test_fingerprint.c
tests_unit_test_fingerprint_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_fingerprint_LDADD = $(HRD_STORE_TEST_LIBS)
tests_unit_test_run_SOURCES = tests/unit/test_run.c
tests_unit_test_run_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_run_LDADD = $(HRD_STORE_TEST_LIBS)
# Merging run files: copied keys, merged keys (lib/run/runmerge.c,
# runscan.c).
tests_unit_test_runmerge_SOURCES = tests/unit/test_runmerge.c
tests_unit_test_runmerge_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_runmerge_LDADD = $(HRD_STORE_TEST_LIBS)
# Keys of run format 1 written by hand, against protobuf-c
# (lib/run/runput.c).
tests_unit_test_runput_SOURCES = tests/unit/test_runput.c
tests_unit_test_runput_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_runput_LDADD = $(HRD_STORE_TEST_LIBS)

# lib/util: atomic files (in place for a device or a pipe), sizes.
tests_unit_test_util_SOURCES = tests/unit/test_util.c
tests_unit_test_util_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_util_LDADD = lib/util/libhrutil.la $(CMOCKA_LIBS) -lpthread

# The spool: the client's writer and the daemon's reader (client/spool.c,
# daemon/spool.c, proto/spool.c).
tests_unit_test_spool_SOURCES = tests/unit/test_spool.c
tests_unit_test_spool_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_spool_LDADD = client/libhrclient.la $(HRD_STORE_TEST_LIBS)

# The operators (libhrops), checked against bench/ref.c.
tests_unit_test_ops_half_SOURCES = tests/unit/test_ops_half.c
tests_unit_test_ops_half_CPPFLAGS = $(OPS_TEST_CPPFLAGS)
tests_unit_test_ops_half_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ops_half_LDADD = $(CMOCKA_LIBS)
tests_unit_test_ops_add_SOURCES = tests/unit/test_ops_add.c bench/ref.c \
	bench/ref.h
tests_unit_test_ops_add_CPPFLAGS = $(OPS_TEST_CPPFLAGS)
tests_unit_test_ops_add_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ops_add_LDADD = $(OPS_TEST_LIBS)
tests_unit_test_ops_gemm_SOURCES = tests/unit/test_ops_gemm.c bench/ref.c \
	bench/ref.h
tests_unit_test_ops_gemm_CPPFLAGS = $(OPS_TEST_CPPFLAGS)
tests_unit_test_ops_gemm_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ops_gemm_LDADD = $(OPS_TEST_LIBS)
tests_unit_test_ops_cache_SOURCES = tests/unit/test_ops_cache.c bench/ref.c \
	bench/ref.h
tests_unit_test_ops_cache_CPPFLAGS = $(OPS_TEST_CPPFLAGS)
tests_unit_test_ops_cache_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ops_cache_LDADD = $(OPS_TEST_LIBS)
tests_unit_test_ops_cuda_SOURCES = tests/unit/test_ops_cuda.c bench/ref.c \
	bench/ref.h
tests_unit_test_ops_cuda_CPPFLAGS = $(OPS_TEST_CPPFLAGS)
tests_unit_test_ops_cuda_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ops_cuda_LDADD = $(OPS_TEST_LIBS)
tests_unit_test_ops_symbols_SOURCES = tests/unit/test_ops_symbols.c
tests_unit_test_ops_symbols_CPPFLAGS = $(OPS_TEST_CPPFLAGS)
tests_unit_test_ops_symbols_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ops_symbols_LDADD = $(CMOCKA_LIBS)
tests_unit_test_ops_align_SOURCES = tests/unit/test_ops_align.c
tests_unit_test_ops_align_CPPFLAGS = $(OPS_TEST_CPPFLAGS)
tests_unit_test_ops_align_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ops_align_LDADD = $(CMOCKA_LIBS)

# --- service: real daemons and processes --------------------------------
SERVICE_TESTS = tests/service/test_integration \
	tests/service/test_client_daemon tests/service/test_daemon_service \
	tests/service/test_daemon_cli tests/service/test_ops_ranges \
	tests/service/test_observer tests/service/test_accuracy
check_PROGRAMS += $(SERVICE_TESTS)
TESTS += $(SERVICE_TESTS) tests/service/test_compiled_out.sh
# Run files end to end: save, merge, dump --from, --load, diff.
TESTS += tests/service/test_runs.sh
# The output of every command that reads run files or a history, in each
# format, byte for byte against tests/data/golden (made-up runs of
# tests/helpers/mkrun, a daemon serving one).
TESTS += tests/service/test_outputs_golden.sh
EXTRA_DIST += tests/service/test_outputs_golden.sh tests/data/golden
# merge of many files as a process: its peak memory within --max-memory,
# every event kept, progress on a terminal.
check_PROGRAMS += tests/service/test_merge_memory
TESTS += tests/service/test_merge_memory
tests_service_test_merge_memory_SOURCES = tests/service/test_merge_memory.c
tests_service_test_merge_memory_CFLAGS = $(TEST_CFLAGS)
tests_service_test_merge_memory_LDADD = $(HRD_STORE_TEST_LIBS) -lutil
# Calling contexts end to end: folded stacks, the tree, dump --by path; and
# plot's SVGs (well-formed, rendered; skipped without xmllint and
# rsvg-convert).
TESTS += tests/service/test_paths.sh tests/service/test_plot.sh \
	tests/service/test_state_fixture.sh
# pprof profiles read by go tool pprof (skipped without go).
TESTS += tests/service/test_pprof.sh
EXTRA_DIST += tests/service/test_pprof.sh
# CI gates: record --save, machine fingerprints, diff's exit statuses and
# its limits per range.
TESTS += tests/service/test_gates.sh
EXTRA_DIST += tests/service/test_gates.sh

tests_service_test_integration_SOURCES = tests/service/test_integration.c
tests_service_test_integration_CFLAGS = $(TEST_CFLAGS)
tests_service_test_integration_LDADD = $(HARNESS_LIBS)
tests_service_test_client_daemon_SOURCES = \
	tests/service/test_client_daemon.c
tests_service_test_client_daemon_CFLAGS = $(TEST_CFLAGS)
tests_service_test_client_daemon_LDADD = $(HARNESS_LIBS)
tests_service_test_daemon_service_SOURCES = \
	tests/service/test_daemon_service.c
tests_service_test_daemon_service_CFLAGS = $(TEST_CFLAGS)
tests_service_test_daemon_service_LDADD = $(HARNESS_SEND_LIBS)
tests_service_test_daemon_cli_SOURCES = tests/service/test_daemon_cli.c
tests_service_test_daemon_cli_CFLAGS = $(TEST_CFLAGS)
tests_service_test_daemon_cli_LDADD = $(HARNESS_SEND_LIBS)
tests_service_test_ops_ranges_SOURCES = tests/service/test_ops_ranges.c
tests_service_test_ops_ranges_CPPFLAGS = $(OPS_TEST_CPPFLAGS)
tests_service_test_ops_ranges_CFLAGS = $(TEST_CFLAGS)
tests_service_test_ops_ranges_LDADD = $(HARNESS_LIBS) ops/libhrops.la

# The observer cost: calibration, --control, and the accuracy of corrected
# figures (a real daemon, hostrange-bench, and this test as the workload).
if HOST_RANGE_PROFILING
OBSERVER_TEST_CPPFLAGS = -DBENCH_HAS_RANGES=1
BENCH_HAS_RANGES = 1
else
OBSERVER_TEST_CPPFLAGS = -DBENCH_HAS_RANGES=0
BENCH_HAS_RANGES = 0
endif
# The same for the scripts: 1 when hostrange-bench has ranges, 0 when it
# was built with --disable-host-range-profiling (it then reports nothing).
AM_TESTS_ENVIRONMENT += export HOSTRANGE_TEST_BENCH_HAS_RANGES='$(BENCH_HAS_RANGES)';
tests_service_test_observer_SOURCES = tests/service/test_observer.c
tests_service_test_observer_CPPFLAGS = $(AM_CPPFLAGS) \
	$(OBSERVER_TEST_CPPFLAGS)
tests_service_test_observer_CFLAGS = $(TEST_CFLAGS)
tests_service_test_observer_LDADD = client/libhostrange.la \
	$(HARNESS_SEND_LIBS)

# Raw and corrected figures against the truth and the reference design on
# the real clock, on both clock paths: fan-outs, chains, short leaves,
# 50 ns to 10 us of work.
tests_service_test_accuracy_SOURCES = tests/service/test_accuracy.c
tests_service_test_accuracy_CPPFLAGS = $(AM_CPPFLAGS) \
	$(OBSERVER_TEST_CPPFLAGS)
tests_service_test_accuracy_CFLAGS = $(TEST_CFLAGS)
tests_service_test_accuracy_LDADD = client/libhostrange.la \
	tests/lib/libharness_refd.la $(HARNESS_LIBS)

# Readiness for systemd (sd_notify), when built with libsystemd.
if HAVE_SYSTEMD
check_PROGRAMS += tests/service/test_daemon_notify
TESTS += tests/service/test_daemon_notify
endif
tests_service_test_daemon_notify_SOURCES = tests/service/test_daemon_notify.c
tests_service_test_daemon_notify_CFLAGS = $(TEST_CFLAGS)
tests_service_test_daemon_notify_LDADD = $(HARNESS_LIBS)

# Faults injected into real daemons and clients, and hostile input from
# tools nobody here wrote (protoc, nanocat).
FAULT_TESTS = tests/service/test_fault_client tests/service/test_fault_scale \
	tests/service/test_fault_disk tests/service/test_fault_rundir \
	tests/service/test_fault_spool tests/service/test_hostile
check_PROGRAMS += $(FAULT_TESTS)
TESTS += $(FAULT_TESTS)
tests_service_test_fault_client_SOURCES = tests/service/test_fault_client.c
tests_service_test_fault_client_CFLAGS = $(TEST_CFLAGS)
tests_service_test_fault_client_LDADD = $(HARNESS_LIBS)
tests_service_test_fault_scale_SOURCES = tests/service/test_fault_scale.c
tests_service_test_fault_scale_CFLAGS = $(TEST_CFLAGS)
tests_service_test_fault_scale_LDADD = $(HARNESS_LIBS)
tests_service_test_fault_disk_SOURCES = tests/service/test_fault_disk.c
tests_service_test_fault_disk_CFLAGS = $(TEST_CFLAGS)
tests_service_test_fault_disk_LDADD = $(HARNESS_LIBS)
tests_service_test_fault_rundir_SOURCES = tests/service/test_fault_rundir.c
tests_service_test_fault_rundir_CFLAGS = $(TEST_CFLAGS)
tests_service_test_fault_rundir_LDADD = $(HARNESS_LIBS)
# A daemon restarted or away while its clients finish: the spool.
tests_service_test_fault_spool_SOURCES = tests/service/test_fault_spool.c
tests_service_test_fault_spool_CFLAGS = $(TEST_CFLAGS)
tests_service_test_fault_spool_LDADD = $(HARNESS_LIBS) proto/libhrproto.la
tests_service_test_hostile_SOURCES = tests/service/test_hostile.c
tests_service_test_hostile_CFLAGS = $(TEST_CFLAGS)
tests_service_test_hostile_LDADD = $(HARNESS_LIBS) client/libhrclient.la \
	proto/libhrproto.la $(PROTOBUF_C_LIBS)
endif

# The soak: 8 clients for SOAK_SECONDS (default 600) while the report is
# dumped every second; not part of make check.
soak: all tests/helpers/recorder$(EXEEXT)
	@HOSTRANGED=$(abs_top_builddir)/daemon/hostranged \
	HOSTRANGECTL=$(abs_top_builddir)/ctl/hostrangectl \
	HOSTRANGE_TEST_RECORDER=$(abs_top_builddir)/tests/helpers/recorder \
	$(SHELL) $(srcdir)/tests/service/soak.sh
.PHONY: soak

# A gate's result where CI and people look: diff --format junit read by
# python3-junitparser and rendered by xunit-viewer (npm, tests/node),
# --format markdown rendered by python3-markdown, --warn-above.
TESTS += tests/service/test_ci_formats.sh
EXTRA_DIST += tests/service/test_ci_formats.sh tests/node/package.json \
	tests/node/package-lock.json
# lib/view/gate.c: JUnit and Markdown of a gate's rows, hostile names.
check_PROGRAMS += tests/unit/test_gate
TESTS += tests/unit/test_gate
tests_unit_test_gate_SOURCES = tests/unit/test_gate.c
tests_unit_test_gate_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_gate_LDADD = $(HRD_TEST_LIBS)
# lib/view/escape.c: each output format's rule over the hostile names of
# tests/lib/harness_hostile.c.
check_PROGRAMS += tests/unit/test_escape
TESTS += tests/unit/test_escape
tests_unit_test_escape_SOURCES = tests/unit/test_escape.c
tests_unit_test_escape_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_escape_LDADD = $(HRD_TEST_LIBS)
# The history page (lib/view/pagedir.c) of a made-up history, written by
# tests/helpers/pagegen and loaded in headless chromium: no console error,
# a chart per series, the findings first, the change points at their runs,
# a screenshot that is not blank; and the size of a page of 2,000 series x
# 500 runs.
check_PROGRAMS += tests/helpers/pagegen
tests_helpers_pagegen_SOURCES = tests/helpers/pagegen.c
tests_helpers_pagegen_LDADD = lib/view/libhrview.la lib/agg/libhragg.la \
	lib/stat/libhrstat.la proto/libhrproto.la $(PROTOBUF_C_LIBS) \
	$(ZLIB_LIBS) -lm
TESTS += tests/service/test_page.sh
EXTRA_DIST += tests/service/test_page.sh tests/service/page_check.mjs
AM_TESTS_ENVIRONMENT += export \
	HOSTRANGE_TEST_PAGEGEN='$(abs_top_builddir)/tests/helpers/pagegen';
# Every output format against the shared hostile names
# (tests/lib/harness_hostile.c, printed by tests/helpers/hostile), read by
# python3-markdown, python3-junitparser and headless chromium.
check_PROGRAMS += tests/helpers/hostile
tests_helpers_hostile_SOURCES = tests/helpers/hostile.c
tests_helpers_hostile_CFLAGS = $(TEST_CFLAGS)
tests_helpers_hostile_LDADD = $(HARNESS_LIBS)
TESTS += tests/service/test_hostile_names.sh
EXTRA_DIST += tests/service/test_hostile_names.sh
AM_TESTS_ENVIRONMENT += export \
	HOSTRANGE_TEST_HOSTILE='$(abs_top_builddir)/tests/helpers/hostile';
# history detect and check as JUnit (python3-junitparser) and Markdown
# (python3-markdown).
TESTS += tests/service/test_history_formats.sh
EXTRA_DIST += tests/service/test_history_formats.sh
# A machine that survives hosted CI runners: a new host name every job
# (unshare --uts), --machine and $HOSTRANGE_MACHINE, bad names, and a
# history of schema 3 re-keyed.
TESTS += tests/service/test_history_machines.sh
EXTRA_DIST += tests/service/test_history_machines.sh
# The numbers --help, the man pages and doc/ state (thresholds, steps, the
# significance level) against the constants that define them.
TESTS += tests/service/test_rules.sh
EXTRA_DIST += tests/service/test_rules.sh

# Every doc/ page and man page README.md names exists.
TESTS += tests/source/test_readme_links.sh
EXTRA_DIST += tests/source/test_readme_links.sh

# Every variable of the client is reset by its file's fork hook or kept.
TESTS += tests/source/test_fork_state.sh
EXTRA_DIST += tests/source/test_fork_state.sh
# --- rounds (issue 39): the run-level test of diff on round medians
# (lib/stat/rounds.c), and rounds end to end: record --rounds, merge as
# rounds, diff at the run level, ab ---------------------------------------
check_PROGRAMS += tests/unit/test_rounds
TESTS += tests/unit/test_rounds
tests_unit_test_rounds_SOURCES = tests/unit/test_rounds.c
tests_unit_test_rounds_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_rounds_LDADD = $(HRD_TEST_LIBS)
TESTS += tests/service/test_rounds.sh
EXTRA_DIST += tests/service/test_rounds.sh
# The smallest change a run-level comparison could have shown
# (lib/stat/detect.c).
check_PROGRAMS += tests/unit/test_detect
TESTS += tests/unit/test_detect
tests_unit_test_detect_SOURCES = tests/unit/test_detect.c
tests_unit_test_detect_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_detect_LDADD = $(HRD_TEST_LIBS)
# The fastest-half test and the decision of a sequential comparison
# (lib/stat/rounds.c, lib/stat/decide.c).
check_PROGRAMS += tests/unit/test_decide
TESTS += tests/unit/test_decide
tests_unit_test_decide_SOURCES = tests/unit/test_decide.c
tests_unit_test_decide_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_decide_LDADD = $(HRD_TEST_LIBS)
# Stopping record, record --rounds and ab: signals, a failing
# round, record stopped at random moments; nothing lost, nothing left.
TESTS += tests/service/test_stop.sh
EXTRA_DIST += tests/service/test_stop.sh
# A clean exit is never a crash: programs idle 0 to 30 s before a normal
# exit under record --strict deliver their final counters; a killed one is
# named.
TESTS += tests/service/test_clean_exit.sh
EXTRA_DIST += tests/service/test_clean_exit.sh
# --- at the limits (doc/limits.md): names the daemon would refuse caught
# where they enter, a full context table, refused batches counted lost,
# unfinished clients named -------------------------------------------------
check_PROGRAMS += tests/helpers/limits tests/service/test_at_limits
TESTS += tests/service/test_at_limits
tests_helpers_limits_SOURCES = tests/helpers/limits.c
tests_helpers_limits_LDADD = client/libhostrange.la
tests_service_test_at_limits_SOURCES = tests/service/test_at_limits.c
tests_service_test_at_limits_CFLAGS = $(TEST_CFLAGS)
tests_service_test_at_limits_LDADD = $(HARNESS_LIBS)
# Names at their limits through every later stage: restarts, save, merge,
# diff, dump --from, the history, the report formats, and their losses.
TESTS += tests/service/test_limits_chain.sh
EXTRA_DIST += tests/service/test_limits_chain.sh
# --- the run history (issue 33): change points, run ids ----------------
HISTORY_UNIT_TESTS = tests/unit/test_changepoint tests/unit/test_runid \
	tests/unit/test_look tests/unit/test_history_fromrun
check_PROGRAMS += $(HISTORY_UNIT_TESTS)
TESTS += $(HISTORY_UNIT_TESTS)
tests_unit_test_changepoint_SOURCES = tests/unit/test_changepoint.c
tests_unit_test_changepoint_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_changepoint_LDADD = lib/stat/libhrstat.la $(CMOCKA_LIBS) -lm
# One look at a suite's history: the rule over all series, findings.
tests_unit_test_look_SOURCES = tests/unit/test_look.c \
	tests/lib/harness_suite.c tests/lib/harness_suite.h
tests_unit_test_look_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_look_LDADD = lib/history/libhrhistory.la lib/stat/libhrstat.la \
	lib/util/libhrutil.la $(CMOCKA_LIBS) -lm
# A run read for the history in one pass, and a run judged against it.
tests_unit_test_history_fromrun_SOURCES = tests/unit/test_history_fromrun.c
tests_unit_test_history_fromrun_CFLAGS = $(TEST_CFLAGS) $(SQLITE3_CFLAGS)
tests_unit_test_history_fromrun_LDADD = lib/history/libhrhistory.la \
	$(HRD_STORE_TEST_LIBS) -lm
tests_unit_test_runid_SOURCES = tests/unit/test_runid.c
tests_unit_test_runid_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_runid_LDADD = $(HRD_STORE_TEST_LIBS)
# Made-up run files of made-up machines, for the history's tests.
check_PROGRAMS += tests/helpers/mkrun
tests_helpers_mkrun_SOURCES = tests/helpers/mkrun.c
tests_helpers_mkrun_CFLAGS = $(TEST_CFLAGS)
tests_helpers_mkrun_LDADD = $(HRD_STORE_TEST_LIBS)
# A suite's history written straight through lib/history, and detect on
# it: one finding per real step (issue 47).
check_PROGRAMS += tests/helpers/mkhistory
tests_helpers_mkhistory_SOURCES = tests/helpers/mkhistory.c \
	tests/lib/harness_suite.c tests/lib/harness_suite.h \
	tests/lib/harness_suite_db.c
tests_helpers_mkhistory_CFLAGS = $(TEST_CFLAGS) $(SQLITE3_CFLAGS)
tests_helpers_mkhistory_LDADD = lib/history/libhrhistory.la \
	$(HRD_STORE_TEST_LIBS) -lm
TESTS += tests/service/test_history_suite.sh
EXTRA_DIST += tests/service/test_history_suite.sh
# history plot of the same suite: the page opens on its finding, loads the
# rest on demand, in headless chromium.
TESTS += tests/service/test_history_suite_page.sh
EXTRA_DIST += tests/service/test_history_suite_page.sh
# The history end to end, against SQLite and a real PostgreSQL server.
TESTS += tests/service/test_history.sh
EXTRA_DIST += tests/service/test_history.sh tests/helpers/pgserver.sh
# How the history is reached (issue 46): names not UTF-8, read-only and
# missing histories, a server that never answers, a password in argv, a
# full disk; SQLite and a real PostgreSQL server.
TESTS += tests/service/test_history_access.sh
EXTRA_DIST += tests/service/test_history_access.sh

# The pytest plugin's --host-range-rounds (skips, 77, without the module).
TESTS += tests/python/test_python_plugin_rounds.sh
EXTRA_DIST += tests/python/test_python_plugin_rounds.sh \
	tests/python/test_plugin_rounds.py

# --- other tools' results in the history (issue 51) --------------------
# The strict JSON reader, and the conversion of Google Benchmark,
# pytest-benchmark and CSV results into runs.
IMPORT_UNIT_TESTS = tests/unit/test_json tests/unit/test_import
check_PROGRAMS += $(IMPORT_UNIT_TESTS)
TESTS += $(IMPORT_UNIT_TESTS)
tests_unit_test_json_SOURCES = tests/unit/test_json.c
tests_unit_test_json_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_json_LDADD = lib/util/libhrutil.la $(CMOCKA_LIBS) -lm
tests_unit_test_import_SOURCES = tests/unit/test_import.c
tests_unit_test_import_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_import_LDADD = lib/history/libhrhistory.la \
	lib/run/libhrrun.la lib/util/libhrutil.la proto/libhrproto.la \
	$(CMOCKA_LIBS) $(PROTOBUF_C_LIBS) -lm
# The same end to end, from the real producers: a Google Benchmark program
# built against libbenchmark-dev and a pytest-benchmark suite, each over
# commits with a known step, found by detect (each skips, 77, without its
# tool); CSV as any tool writes it.
TESTS += tests/service/test_history_gbench.sh \
	tests/service/test_history_pytest_benchmark.sh \
	tests/service/test_history_csv.sh
# The names of their benchmarks at the limits of a key's (4,096 bytes,
# none empty, no NUL), and a large CSV file read in memory of its size.
TESTS += tests/service/test_history_import_limits.sh
EXTRA_DIST += tests/service/test_history_import_limits.sh
# history's inputs at their edges: times past 64-bit nanoseconds or that
# do not exist (add, record --history), check --from --machine with a bad
# name, plot -o '', numbers past their bounds.
TESTS += tests/service/test_history_inputs.sh
EXTRA_DIST += tests/service/test_history_inputs.sh
EXTRA_DIST += tests/service/test_history_gbench.sh \
	tests/service/test_history_pytest_benchmark.sh \
	tests/service/test_history_csv.sh tests/data/import/bench_work.cc \
	tests/data/import/test_work.py
# dump for benchmark dashboards: Bencher Metric Format and
# github-action-benchmark's list, read back by Python's json module.
TESTS += tests/service/test_dump_dashboards.sh
EXTRA_DIST += tests/service/test_dump_dashboards.sh
# pip install . of the module and plugin into a virtual environment, the
# example suite run from it against a real daemon, and python -m build's
# sdist and wheel (skips, 77, without python3-venv or python3-build).
TESTS += tests/python/test_python_pip.sh
EXTRA_DIST += tests/python/test_python_pip.sh
# The Debian packages built, checked by lintian, installed, used by a
# member of the hostrange group against the packaged daemon, and purged
# leaving nothing (root; skips, 77, without dpkg-buildpackage or lintian).
TESTS += tests/service/test_debian_package.sh
EXTRA_DIST += tests/service/test_debian_package.sh
# bisect (issue 50): a real git repository of 33 commits of a small
# program linked with libhostrange, built and measured commit by commit;
# the search (lib/stat/bisect.c).
TESTS += tests/service/test_bisect.sh
EXTRA_DIST += tests/service/test_bisect.sh
AM_TESTS_ENVIRONMENT += export HOSTRANGE_TEST_CC='$(CC)';
check_PROGRAMS += tests/unit/test_bisect
TESTS += tests/unit/test_bisect
tests_unit_test_bisect_SOURCES = tests/unit/test_bisect.c
tests_unit_test_bisect_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_bisect_LDADD = $(HRD_TEST_LIBS)
