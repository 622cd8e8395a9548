# daemon: hostranged, the server. Its parts (ingest of batches, control
# requests, the state directory and its snapshots, the runtime directory)
# are built into libhrdaemon, which the daemon's unit tests link too.
noinst_LTLIBRARIES += daemon/libhrdaemon.la
daemon_libhrdaemon_la_SOURCES = daemon/ingest.c daemon/ingest.h \
	daemon/control.c daemon/control.h daemon/snapshot.c \
	daemon/snapshot.h daemon/snapshot_legacy.c daemon/state.c daemon/state.h \
	daemon/runtime_dir.c daemon/runtime_dir.h \
	daemon/save.c daemon/save.h daemon/spool.c daemon/spool.h
daemon_libhrdaemon_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
# What a program linking the daemon's parts names, highest layer first.
HRDAEMON_LIBS = daemon/libhrdaemon.la lib/run/libhrrun.la \
	lib/agg/libhragg.la lib/stat/libhrstat.la lib/util/libhrutil.la \
	proto/libhrproto.la

bin_PROGRAMS += daemon/hostranged
daemon_hostranged_SOURCES = daemon/hostranged.c daemon/server.c \
	daemon/server.h daemon/notify.h
daemon_hostranged_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
daemon_hostranged_LDADD = $(HRDAEMON_LIBS) $(UV_LIBS) $(NANOMSG_LIBS) \
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
# hostranged(8); tests/service/test_man.sh keeps it in step with --help.
dist_man_MANS += daemon/hostranged.8
EXTRA_DIST += daemon/local.mk
