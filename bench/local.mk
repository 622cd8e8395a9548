# bench: hostrange-bench (cold, warm and end_to_end populations of the
# example operators, calibration, the overhead control), the instrumented
# demo, and the benchmarks of `make bench`, each printing JSON lines
# {"bench":...,"value":...,"baseline":...,"ratio":...}.
EXTRA_DIST += bench/local.mk bench/gpu-check bench/gpu-libs

# hostrange-bench: cold, warm and end_to_end populations of the operators.
bin_PROGRAMS += bench/hostrange-bench
bench_hostrange_bench_SOURCES = bench/bench.c bench/bench.h \
	bench/bench_cases.c bench/bench_daemon.c bench/bench_run.c bench/bench_control.c \
	bench/bench_calib.c bench/ref.c bench/ref.h ops/hrops_raw.h
bench_hostrange_bench_CPPFLAGS = $(AM_CPPFLAGS) $(HROPS_PROFILING_CPPFLAGS)
bench_hostrange_bench_LDADD = ops/libhrops.la $(HROPS_PROFILING_LIBS)

# `make bench` runs the CPU cases with their baseline (--raw).
BENCHES += bench/hostrange-bench-cpu
CLEANFILES += bench/hostrange-bench-cpu
bench/hostrange-bench-cpu: Makefile
	$(AM_V_GEN)$(MKDIR_P) bench && { \
	  echo '#!/bin/sh'; \
	  echo '# The CPU cases of hostrange-bench with their baseline.'; \
	  echo 'exec "$$(dirname "$$0")/hostrange-bench" --raw --backend cpu "$$@"'; \
	} > $@ && chmod +x $@

# `make bench` also runs the overhead control: every case on every backend
# available, collection active against inactive (--control).
BENCHES += bench/hostrange-bench-control
CLEANFILES += bench/hostrange-bench-control
bench/hostrange-bench-control: Makefile
	$(AM_V_GEN)$(MKDIR_P) bench && { \
	  echo '#!/bin/sh'; \
	  echo '# What collecting costs: hostrange-bench --control.'; \
	  echo 'exec "$$(dirname "$$0")/hostrange-bench" --control "$$@"'; \
	} > $@ && chmod +x $@

# The instrumented demo (see the README).
bin_PROGRAMS += bench/hostrange-demo
bench_hostrange_demo_SOURCES = bench/demo.c
bench_hostrange_demo_LDADD = client/libhostrange.la

# The client's cost per scope and per event.
noinst_PROGRAMS += bench/bench_client
bench_bench_client_SOURCES = bench/bench_client.c bench/bench_clock.h
bench_bench_client_LDADD = client/libhostrange.la
BENCHES += bench/bench_client

# The clock reads the client could use: cost, and bias against block timing.
noinst_PROGRAMS += bench/bench_clock_options
bench_bench_clock_options_SOURCES = bench/bench_clock_options.c
BENCHES += bench/bench_clock_options

# The whole pipeline's CPU per event (client process plus daemon) against
# two reads of the clock, in four configurations.
noinst_PROGRAMS += bench/bench_pipeline
bench_bench_pipeline_SOURCES = bench/bench_pipeline.c bench/bench_clock.h \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
bench_bench_pipeline_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
bench_bench_pipeline_LDADD = client/libhostrange.la proto/libhrproto.la \
	$(NANOMSG_LIBS) $(PROTOBUF_C_LIBS)
BENCHES += bench/bench_pipeline

# hostrange against the reference design on the operators' nested ranges:
# in-thread and total CPU per range, on both clock paths.
noinst_PROGRAMS += bench/bench_reference
bench_bench_reference_SOURCES = bench/bench_reference.c bench/bench_clock.h \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
bench_bench_reference_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
bench_bench_reference_LDADD = tests/lib/libharness_refd.la \
	$(bench_bench_pipeline_LDADD)
BENCHES += bench/bench_reference

# Benchmarks (make bench): each prints JSON lines with a same-run baseline.
BENCHES += bench/bench_daemon_ingest bench/bench_daemon_memory \
	bench/bench_daemon_dump bench/bench_daemon_pause
noinst_PROGRAMS += bench/bench_daemon_ingest bench/bench_daemon_memory \
	bench/bench_daemon_dump bench/bench_daemon_pause
bench_bench_daemon_ingest_SOURCES = bench/bench_daemon_ingest.c \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
bench_bench_daemon_ingest_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
bench_bench_daemon_ingest_LDADD = proto/libhrproto.la $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
bench_bench_daemon_memory_SOURCES = bench/bench_daemon_memory.c \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
bench_bench_daemon_memory_CFLAGS = $(bench_bench_daemon_ingest_CFLAGS)
bench_bench_daemon_memory_LDADD = $(bench_bench_daemon_ingest_LDADD)
bench_bench_daemon_dump_SOURCES = bench/bench_daemon_dump.c \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
bench_bench_daemon_dump_CFLAGS = $(bench_bench_daemon_ingest_CFLAGS)
bench_bench_daemon_dump_LDADD = daemon/libhrd.la \
	$(bench_bench_daemon_ingest_LDADD)
bench_bench_daemon_pause_SOURCES = bench/bench_daemon_pause.c \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
bench_bench_daemon_pause_CFLAGS = $(bench_bench_daemon_ingest_CFLAGS)
bench_bench_daemon_pause_LDADD = $(bench_bench_daemon_ingest_LDADD)

# Run files: save and merge against cp of the same bytes, diff of 10,000
# keys x 10,000 samples.
BENCHES += bench/bench_runs bench/bench_runs_diff
noinst_PROGRAMS += bench/bench_runs bench/bench_runs_diff
bench_bench_runs_SOURCES = bench/bench_runs.c \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
bench_bench_runs_CFLAGS = $(bench_bench_daemon_ingest_CFLAGS)
bench_bench_runs_LDADD = $(bench_bench_daemon_ingest_LDADD)
bench_bench_runs_diff_SOURCES = bench/bench_runs_diff.c \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h \
	tests/lib/harness_runfile.c tests/lib/harness_runfile.h
bench_bench_runs_diff_CFLAGS = $(bench_bench_daemon_ingest_CFLAGS)
bench_bench_runs_diff_LDADD = $(HRD_LIBS) \
	$(bench_bench_daemon_ingest_LDADD)
# merge's peak memory against --max-memory: 100 files of 1M events.
BENCHES += bench/bench_runs_memory
noinst_PROGRAMS += bench/bench_runs_memory
bench_bench_runs_memory_SOURCES = bench/bench_runs_memory.c \
	bench/bench_daemon_util.c bench/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h \
	tests/lib/harness_runfile.c tests/lib/harness_runfile.h
bench_bench_runs_memory_CFLAGS = $(bench_bench_daemon_ingest_CFLAGS)
bench_bench_runs_memory_LDADD = $(bench_bench_runs_diff_LDADD)

# The NVTX tool's cost per range against hr_begin/hr_end (nvtx.scope); its
# wrapper loads the tool of the build tree through NVTX_INJECTION64_PATH.
EXTRA_DIST += bench/bench_nvtx.c
if HAVE_NVTX
noinst_PROGRAMS += bench/bench_nvtx
bench_bench_nvtx_SOURCES = bench/bench_nvtx.c
bench_bench_nvtx_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CFLAGS)
bench_bench_nvtx_LDADD = client/libhostrange.la
BENCHES += bench/bench-nvtx
CLEANFILES += bench/bench-nvtx
bench/bench-nvtx: Makefile
	$(AM_V_GEN)$(MKDIR_P) bench && { \
	  echo '#!/bin/sh'; \
	  echo '# nvtx.scope: bench_nvtx with the NVTX tool of the build tree.'; \
	  echo 'd=$$(dirname "$$0")'; \
	  echo 'NVTX_INJECTION64_PATH="$$d/../nvtx/.libs/libhostrange-nvtx.so" \'; \
	  echo '  exec "$$d/bench_nvtx" "$$@"'; \
	} > $@ && chmod +x $@
endif
