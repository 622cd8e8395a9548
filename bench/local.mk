# bench: hostrange-bench, the installed driver of the example operators
# (cold, warm and end_to_end populations, calibration, the overhead
# control), and the scripts that run it on a GPU machine. The programs of
# `make bench` are in perf/, the demo in demo/.
EXTRA_DIST += bench/local.mk bench/gpu-check bench/gpu-libs bench/gpu-python

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
