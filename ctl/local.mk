# ctl: hostrangectl, the command-line client: one file per command behind
# the table in hostrangectl.c.
bin_PROGRAMS += ctl/hostrangectl
ctl_hostrangectl_SOURCES = ctl/hostrangectl.c ctl/ctl_cmd.h ctl/ctl_conn.h \
	ctl/ctl_options.h \
	ctl/ctl_report.h ctl/ctl_paths.h ctl/ctl_fingerprint.h ctl/ctl_save.h \
	ctl/ctl_losses.h ctl/ctl_exit.h \
	ctl/ctl_conn.c ctl/ctl_dump.c ctl/ctl_stats.c \
	ctl/ctl_reset.c ctl/ctl_ping.c ctl/ctl_record.c \
	ctl/ctl_save.c ctl/ctl_merge.c ctl/ctl_diff.c \
	ctl/ctl_diffside.c ctl/ctl_diffside.h ctl/ctl_from.c \
	ctl/ctl_paths.c ctl/ctl_fingerprint.c ctl/ctl_report.c \
	ctl/ctl_plot.c ctl/ctl_options.c
# What record --rounds, ab and bisect share (ctl_rounds.c: --rounds,
# this program's path, a merge of rounds said; the processes themselves
# are lib/runner's), and ab.
ctl_hostrangectl_SOURCES += ctl/ctl_rounds.c ctl/ctl_rounds.h ctl/ctl_ab.c
# What a session lost or refused, said where the user looks.
ctl_hostrangectl_SOURCES += ctl/ctl_losses.c
# bisect: from a change between two commits to the commit (options, the
# answer, the state file; worktrees, builds and rounds, given to
# lib/runner/bisect.c's measuring as callbacks).
ctl_hostrangectl_SOURCES += ctl/ctl_bisect.c ctl/ctl_bisect_out.c \
	ctl/ctl_bisect_run.c ctl/ctl_bisect_from.c ctl/ctl_bisect.h
# The run history: the subcommand table (ctl_history_cmd.c); add, list,
# show and the helpers of the others (ctl_history.c); detect
# (ctl_history_detect.c), its findings (ctl_history_look.c), check
# (ctl_history_check.c) and what those two share (ctl_history_judge.c);
# plot (ctl_history_plot.c); add --from, other tools' results
# (ctl_history_import.c).
ctl_hostrangectl_SOURCES += ctl/ctl_history_cmd.c ctl/ctl_history.c \
	ctl/ctl_history.h ctl/ctl_history_detect.c ctl/ctl_history_look.c \
	ctl/ctl_history_check.c ctl/ctl_history_judge.c \
	ctl/ctl_history_judge.h ctl/ctl_history_plot.c \
	ctl/ctl_history_import.c
ctl_hostrangectl_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
# Where record --nvtx finds the installed NVTX tool.
ctl_hostrangectl_CPPFLAGS = $(AM_CPPFLAGS) -DHR_LIBDIR='"$(libdir)"'
# What hostrangectl links, highest layer first.
HRCTL_LIBS = lib/runner/libhrrunner.la lib/history/libhrhistory.la lib/view/libhrview.la lib/run/libhrrun.la lib/agg/libhragg.la \
	lib/stat/libhrstat.la lib/util/libhrutil.la proto/libhrproto.la
ctl_hostrangectl_LDADD = $(HRCTL_LIBS) $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
# hostrangectl(1); tests/service/test_man.sh keeps it in step with --help.
dist_man_MANS += ctl/hostrangectl.1 ctl/hostrangectl-history.1 \
	ctl/hostrangectl-bisect.1
EXTRA_DIST += ctl/local.mk
