# libFuzzer targets, built when configured with --enable-fuzzing (CC=clang):
# the daemon's ingest path (decode, validate, aggregate), control requests,
# the state directory's snapshot and journal loaders, the spool's reader,
# and the client's reading of the daemon's answers. The code under test is compiled again
# into fuzz/libhrfuzz.la with coverage, AddressSanitizer and UBSan; the seed
# corpus (valid messages and files from the real encoders) is written by
# fuzz/fuzz_seeds into fuzz/corpus.
#
# make fuzz runs every target for FUZZ_SECONDS (default 300) each, two at a
# time with -j2; any crash, leak, sanitizer report or failed check fails it
# and leaves the input in fuzz/artifacts. New inputs go to fuzz/found.
EXTRA_DIST += fuzz/local.mk fuzz/common.h fuzz/common.c fuzz/fuzz_ingest.c \
	fuzz/fuzz_control.c fuzz/fuzz_state.c fuzz/fuzz_ack.c fuzz/fuzz_seeds.c \
	fuzz/fuzz_spool.c fuzz/run.sh

FUZZ_SECONDS = 300
# Extra libFuzzer options for make fuzz (for example -jobs=N or -dict=FILE).
FUZZ_FLAGS =
FUZZ_RUN = $(SHELL) $(srcdir)/fuzz/run.sh $(FUZZ_SECONDS) "$(FUZZ_FLAGS)"

if FUZZING
noinst_LTLIBRARIES += fuzz/libhrfuzz.la
fuzz_libhrfuzz_la_SOURCES = $(daemon_libhrdaemon_la_SOURCES) \
	$(lib_run_libhrrun_la_SOURCES) $(lib_view_libhrview_la_SOURCES) \
	$(lib_agg_libhragg_la_SOURCES) \
	$(lib_stat_libhrstat_la_SOURCES) $(lib_util_libhrutil_la_SOURCES) \
	proto/protocol.c proto/spool.c client/encode.c \
	fuzz/common.c fuzz/common.h
nodist_fuzz_libhrfuzz_la_SOURCES = proto/hostrange.pb-c.c
fuzz_libhrfuzz_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS) \
	$(FUZZ_CFLAGS)

noinst_PROGRAMS += fuzz/fuzz_ingest fuzz/fuzz_control fuzz/fuzz_state \
	fuzz/fuzz_ack fuzz/fuzz_spool fuzz/fuzz_seeds
FUZZ_LDADD = fuzz/libhrfuzz.la $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
fuzz_fuzz_ingest_SOURCES = fuzz/fuzz_ingest.c
fuzz_fuzz_ingest_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) $(FUZZ_CFLAGS)
fuzz_fuzz_ingest_LDFLAGS = $(FUZZ_LDFLAGS)
fuzz_fuzz_ingest_LDADD = $(FUZZ_LDADD)
fuzz_fuzz_control_SOURCES = fuzz/fuzz_control.c
fuzz_fuzz_control_CFLAGS = $(fuzz_fuzz_ingest_CFLAGS)
fuzz_fuzz_control_LDFLAGS = $(FUZZ_LDFLAGS)
fuzz_fuzz_control_LDADD = $(FUZZ_LDADD)
fuzz_fuzz_state_SOURCES = fuzz/fuzz_state.c
fuzz_fuzz_state_CFLAGS = $(fuzz_fuzz_ingest_CFLAGS)
fuzz_fuzz_state_LDFLAGS = $(FUZZ_LDFLAGS)
fuzz_fuzz_state_LDADD = $(FUZZ_LDADD)
fuzz_fuzz_ack_SOURCES = fuzz/fuzz_ack.c
fuzz_fuzz_ack_CFLAGS = $(fuzz_fuzz_ingest_CFLAGS)
fuzz_fuzz_ack_LDFLAGS = $(FUZZ_LDFLAGS)
fuzz_fuzz_ack_LDADD = $(FUZZ_LDADD)
fuzz_fuzz_spool_SOURCES = fuzz/fuzz_spool.c
fuzz_fuzz_spool_CFLAGS = $(fuzz_fuzz_ingest_CFLAGS)
fuzz_fuzz_spool_LDFLAGS = $(FUZZ_LDFLAGS)
fuzz_fuzz_spool_LDADD = $(FUZZ_LDADD)
# The seed generator is an ordinary program on the ordinary libraries.
fuzz_fuzz_seeds_SOURCES = fuzz/fuzz_seeds.c
fuzz_fuzz_seeds_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
fuzz_fuzz_seeds_LDADD = client/libhrclient.la $(HRDAEMON_LIBS) $(PROTOBUF_C_LIBS)

noinst_DATA = fuzz/corpus.stamp
fuzz/corpus.stamp: fuzz/fuzz_seeds$(EXEEXT)
	$(AM_V_GEN)rm -rf fuzz/corpus && \
	fuzz/fuzz_seeds$(EXEEXT) fuzz/corpus && touch $@
CLEANFILES += fuzz/corpus.stamp

# Only the targets, their seed writer and the sources they include are
# built, not the whole tree.
fuzz: $(BUILT_SOURCES)
	@$(MAKE) $(AM_MAKEFLAGS) fuzz-ingest fuzz-control fuzz-state fuzz-ack \
		fuzz-spool
fuzz-ingest: fuzz/fuzz_ingest$(EXEEXT) fuzz/corpus.stamp
	@$(FUZZ_RUN) ingest
fuzz-control: fuzz/fuzz_control$(EXEEXT) fuzz/corpus.stamp
	@$(FUZZ_RUN) control
fuzz-state: fuzz/fuzz_state$(EXEEXT) fuzz/corpus.stamp
	@$(FUZZ_RUN) state
fuzz-ack: fuzz/fuzz_ack$(EXEEXT) fuzz/corpus.stamp
	@$(FUZZ_RUN) ack
fuzz-spool: fuzz/fuzz_spool$(EXEEXT) fuzz/corpus.stamp
	@$(FUZZ_RUN) spool
else
fuzz:
	@echo "make fuzz needs a build configured with --enable-fuzzing" \
		"(CC=clang; Debian: clang, libclang-rt-14-dev)" >&2
	@exit 1
endif
clean-local: clean-fuzz
clean-fuzz:
	-rm -rf fuzz/corpus fuzz/found fuzz/artifacts fuzz/fuzz-*.log
.PHONY: fuzz fuzz-ingest fuzz-control fuzz-state fuzz-ack fuzz-spool \
	clean-fuzz
