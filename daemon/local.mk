# hostranged (the daemon) and hostrangectl (its command-line client). The
# pure logic lives in libhrd (no I/O), which the unit tests link
# (tests/local.mk); the storage (record files, the state directory, the
# runtime directory, snapshots and run files) in libhrdstore, which needs
# libhrd after it.
noinst_LTLIBRARIES += daemon/libhrd.la
daemon_libhrd_la_SOURCES = daemon/agg.c daemon/agg.h daemon/paths.c daemon/rows.c \
	daemon/rows.h daemon/hist.c daemon/hist.h daemon/stats.c \
	daemon/stats.h \
	daemon/ingest.c daemon/ingest.h daemon/control.c daemon/control.h \
	daemon/report.c daemon/report.h daemon/numfmt.c daemon/numfmt.h \
	daemon/crc32c.c daemon/crc32c.h daemon/observer.c \
	daemon/observer.h daemon/signif.c daemon/signif.h daemon/runkey.c \
	daemon/runkey.h daemon/runload.c daemon/runload.h daemon/runput.c \
	daemon/runput.h daemon/runscan.c \
	daemon/runscan.h daemon/runjoin.c daemon/runjoin.h daemon/pbuf.h \
	daemon/flame.c daemon/flame.h daemon/svg.c daemon/svg.h \
	daemon/events.c daemon/events.h daemon/pprof.c daemon/pprof.h \
	daemon/limits.c daemon/limits.h
daemon_libhrd_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
daemon_libhrd_la_LIBADD = proto/libhrproto.la $(ZLIB_LIBS)
noinst_LTLIBRARIES += daemon/libhrdstore.la
daemon_libhrdstore_la_SOURCES = daemon/rundir.c daemon/rundir.h \
	daemon/journal.c daemon/journal.h daemon/snapshot.c \
	daemon/snapshot.h daemon/state.c daemon/state.h daemon/run.c \
	daemon/run.h daemon/runmerge.c daemon/runmerge.h \
	daemon/fingerprint.c daemon/fingerprint.h
daemon_libhrdstore_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
# The daemon's libraries, storage first.
HRD_LIBS = daemon/libhrdstore.la daemon/libhrd.la

bin_PROGRAMS += daemon/hostranged daemon/hostrangectl
daemon_hostranged_SOURCES = daemon/hostranged.c daemon/server.c \
	daemon/server.h daemon/notify.h
daemon_hostranged_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
daemon_hostranged_LDADD = $(HRD_LIBS) $(UV_LIBS) $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
# Readiness for systemd: sd_notify with libsystemd, nothing without.
if HAVE_SYSTEMD
daemon_hostranged_SOURCES += daemon/notify_systemd.c
daemon_hostranged_CFLAGS += $(SYSTEMD_CFLAGS)
daemon_hostranged_LDADD += $(SYSTEMD_LIBS)
else
daemon_hostranged_SOURCES += daemon/notify_none.c
endif
EXTRA_DIST += daemon/notify_systemd.c daemon/notify_none.c
daemon_hostrangectl_SOURCES = daemon/hostrangectl.c daemon/ctl.h \
	daemon/ctl_conn.c daemon/ctl_dump.c daemon/ctl_stats.c \
	daemon/ctl_reset.c daemon/ctl_ping.c daemon/ctl_record.c \
	daemon/ctl_save.c daemon/ctl_merge.c daemon/ctl_diff.c \
	daemon/ctl_diffside.c daemon/ctl_diffside.h daemon/ctl_from.c \
	daemon/ctl_paths.c daemon/ctl_fingerprint.c
daemon_hostrangectl_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
# Where record --nvtx finds the installed NVTX tool.
daemon_hostrangectl_CPPFLAGS = $(AM_CPPFLAGS) -DHR_LIBDIR='"$(libdir)"'
daemon_hostrangectl_LDADD = $(HRD_LIBS) $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
# hostranged(8) and hostrangectl(1); tests/service/test_man.sh keeps them
# in step with --help.
dist_man_MANS += daemon/hostranged.8 daemon/hostrangectl.1
EXTRA_DIST += daemon/local.mk
