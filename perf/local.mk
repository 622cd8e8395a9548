# perf: the benchmarks of `make bench`. Each runs under a private daemon
# and prints JSON lines {"bench":...,"value":...,"baseline":...,"ratio":...},
# the baseline measured in the same run.
EXTRA_DIST += perf/local.mk
# The client's cost per scope and per event.
noinst_PROGRAMS += perf/bench_client
perf_bench_client_SOURCES = perf/bench_client.c perf/bench_clock.h \
	perf/bench_report.c perf/bench_report.h
perf_bench_client_LDADD = client/libhostrange.la
BENCHES += perf/bench_client

# The clock reads the client could use: cost, and bias against block timing.
noinst_PROGRAMS += perf/bench_clock_options
perf_bench_clock_options_SOURCES = perf/bench_clock_options.c
BENCHES += perf/bench_clock_options

# The whole pipeline's CPU per event (client process plus daemon) against
# two reads of the clock, in four configurations.
noinst_PROGRAMS += perf/bench_pipeline
perf_bench_pipeline_SOURCES = perf/bench_pipeline.c perf/bench_clock.h \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_pipeline_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
perf_bench_pipeline_LDADD = client/libhostrange.la proto/libhrproto.la \
	$(NANOMSG_LIBS) $(PROTOBUF_C_LIBS)
BENCHES += perf/bench_pipeline

# hostrange against the reference design on the operators' nested ranges:
# in-thread and total CPU per range, on both clock paths.
noinst_PROGRAMS += perf/bench_reference
perf_bench_reference_SOURCES = perf/bench_reference.c perf/bench_clock.h \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_reference_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
perf_bench_reference_LDADD = tests/lib/libharness_refd.la \
	$(perf_bench_pipeline_LDADD)
BENCHES += perf/bench_reference

# The same against the reference design on an operator call's shape: 11
# ranges in the layer tree, each layer a function with a little real work,
# the reference design interleaved in the same process.
noinst_PROGRAMS += perf/bench_operator
perf_bench_operator_SOURCES = perf/bench_operator.c perf/bench_clock.h \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_operator_CFLAGS = $(perf_bench_reference_CFLAGS)
perf_bench_operator_LDADD = $(perf_bench_reference_LDADD)
BENCHES += perf/bench_operator

# Benchmarks (make bench): each prints JSON lines with a same-run baseline.
BENCHES += perf/bench_daemon_ingest perf/bench_daemon_memory \
	perf/bench_daemon_dump perf/bench_daemon_pause
noinst_PROGRAMS += perf/bench_daemon_ingest perf/bench_daemon_memory \
	perf/bench_daemon_dump perf/bench_daemon_pause
perf_bench_daemon_ingest_SOURCES = perf/bench_daemon_ingest.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_daemon_ingest_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
perf_bench_daemon_ingest_LDADD = proto/libhrproto.la $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
perf_bench_daemon_memory_SOURCES = perf/bench_daemon_memory.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_daemon_memory_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_daemon_memory_LDADD = $(perf_bench_daemon_ingest_LDADD)
perf_bench_daemon_dump_SOURCES = perf/bench_daemon_dump.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_daemon_dump_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_daemon_dump_LDADD = lib/stat/libhrstat.la \
	$(perf_bench_daemon_ingest_LDADD)
perf_bench_daemon_pause_SOURCES = perf/bench_daemon_pause.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_daemon_pause_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_daemon_pause_LDADD = $(perf_bench_daemon_ingest_LDADD)

# The state directory: the final snapshot's time and size, and a start
# on it, against a save of the same keys and a start on an empty one.
BENCHES += perf/bench_daemon_state
noinst_PROGRAMS += perf/bench_daemon_state
perf_bench_daemon_state_SOURCES = perf/bench_daemon_state.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_daemon_state_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_daemon_state_LDADD = $(perf_bench_daemon_ingest_LDADD)

# The daemon's aggregation per event (unpack and feed), in process,
# against unpacking alone.
BENCHES += perf/bench_daemon_feed
noinst_PROGRAMS += perf/bench_daemon_feed
perf_bench_daemon_feed_SOURCES = perf/bench_daemon_feed.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_daemon_feed_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_daemon_feed_LDADD = lib/agg/libhragg.la lib/stat/libhrstat.la \
	lib/util/libhrutil.la $(perf_bench_daemon_ingest_LDADD)

# The daemon's exact store: huge pages against 4 KiB pages.
BENCHES += perf/bench_agg_store
noinst_PROGRAMS += perf/bench_agg_store
perf_bench_agg_store_SOURCES = perf/bench_agg_store.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_agg_store_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_agg_store_LDADD = lib/agg/libhragg.la lib/stat/libhrstat.la \
	lib/util/libhrutil.la $(perf_bench_daemon_ingest_LDADD)

# Run files: save and merge against cp of the same bytes, diff of 10,000
# keys x 10,000 samples.
BENCHES += perf/bench_runs perf/bench_runs_diff
noinst_PROGRAMS += perf/bench_runs perf/bench_runs_diff
perf_bench_runs_SOURCES = perf/bench_runs.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h
perf_bench_runs_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_runs_LDADD = $(perf_bench_daemon_ingest_LDADD)
perf_bench_runs_diff_SOURCES = perf/bench_runs_diff.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h \
	tests/lib/harness_runfile.c tests/lib/harness_runfile.h
perf_bench_runs_diff_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_runs_diff_LDADD = lib/run/libhrrun.la lib/agg/libhragg.la \
	lib/stat/libhrstat.la lib/util/libhrutil.la \
	$(perf_bench_daemon_ingest_LDADD)
# merge's peak memory against --max-memory: 100 files of 1M events.
BENCHES += perf/bench_runs_memory
noinst_PROGRAMS += perf/bench_runs_memory
perf_bench_runs_memory_SOURCES = perf/bench_runs_memory.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h \
	tests/lib/harness_runfile.c tests/lib/harness_runfile.h
perf_bench_runs_memory_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_runs_memory_LDADD = $(perf_bench_runs_diff_LDADD)

# The NVTX tool's cost per range against hr_begin/hr_end (nvtx.scope); its
# wrapper loads the tool of the build tree through NVTX_INJECTION64_PATH.
EXTRA_DIST += perf/bench_nvtx.c perf/bench_report.c perf/bench_report.h
if HAVE_NVTX
noinst_PROGRAMS += perf/bench_nvtx
perf_bench_nvtx_SOURCES = perf/bench_nvtx.c perf/bench_report.c \
	perf/bench_report.h
perf_bench_nvtx_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CFLAGS)
perf_bench_nvtx_LDADD = client/libhostrange.la
BENCHES += perf/bench-nvtx
# Made with the build, so that it can be run by hand as README shows.
noinst_SCRIPTS += perf/bench-nvtx
CLEANFILES += perf/bench-nvtx
perf/bench-nvtx: Makefile
	$(AM_V_GEN)$(MKDIR_P) perf && { \
	  echo '#!/bin/sh'; \
	  echo '# nvtx.scope: bench_nvtx with the NVTX tool of the build tree.'; \
	  echo 'd=$$(dirname "$$0")'; \
	  echo 'NVTX_INJECTION64_PATH="$$d/../nvtx/.libs/libhostrange-nvtx.so" \'; \
	  echo '  exec "$$d/bench_nvtx" "$$@"'; \
	} > $@ && chmod +x $@
endif

# Rounds (issue 39): ab's false alarms (A/A), its power on a synthetic +10%
# in binding.body (A/B), and what rounds cost; a script, as it runs
# hostrangectl ab.
BENCHES += perf/gate_rounds.sh
EXTRA_DIST += perf/gate_rounds.sh
# The sequential comparison (issue 49): ab at its defaults (looks at 5 to
# 20 pairs) against ab --rounds 5 --max-rounds 5, A/A and A/B, and what
# each costs.
BENCHES += perf/gate_decide.sh
EXTRA_DIST += perf/gate_decide.sh
# The run history: the power of detect's method on synthetic series, and
# what history add, its database and detect cost.
noinst_PROGRAMS += perf/bench_history
perf_bench_history_SOURCES = perf/bench_history.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h \
	tests/lib/harness_runfile.c tests/lib/harness_runfile.h
perf_bench_history_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_history_LDADD = $(perf_bench_runs_diff_LDADD)
BENCHES += perf/bench_history
# The history at a suite's size (issue 47): add of a 60,000-key run,
# detect over 120,000 series, the look's growth to 500 runs; CPU and peak
# memory.
noinst_PROGRAMS += perf/bench_history_suite
perf_bench_history_suite_SOURCES = perf/bench_history_suite.c \
	perf/bench_daemon_util.c perf/bench_daemon_util.h \
	tests/lib/harness_batch.c tests/lib/harness_batch.h \
	tests/lib/harness_runfile.c tests/lib/harness_runfile.h \
	tests/lib/harness_suite.c tests/lib/harness_suite.h \
	tests/lib/harness_suite_db.c
perf_bench_history_suite_CFLAGS = $(perf_bench_daemon_ingest_CFLAGS)
perf_bench_history_suite_LDADD = lib/history/libhrhistory.la \
	$(perf_bench_runs_diff_LDADD) -lm
BENCHES += perf/bench_history_suite
