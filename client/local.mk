# libhostrange: the client library, its one public header and its man page
# hostrange(3).
include_HEADERS += client/include/hostrange.h
dist_man_MANS += client/hostrange.3
lib_LTLIBRARIES += client/libhostrange.la
client_libhostrange_la_SOURCES = client/hostrange.c client/client.h \
	client/stack.h client/clock.c client/intern.c client/encode.c \
	client/encode.h client/ship.c
client_libhostrange_la_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
client_libhostrange_la_LIBADD = proto/libhrproto.la $(NANOMSG_LIBS) \
	$(PROTOBUF_C_LIBS)
client_libhostrange_la_LDFLAGS = -version-info 0:0:0
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = client/hostrange.pc
EXTRA_DIST += client/hostrange.pc.in client/local.mk
