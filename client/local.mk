# libhostrange: the client library, its public header (and the C++ face
# over it, hostrange.hpp) and its man page hostrange(3).
include_HEADERS += client/include/hostrange.h client/include/hostrange.hpp
dist_man_MANS += client/hostrange.3
# The client's pure parts (the clock, the intern tables, the batch encoder),
# built once: libhostrange, the unit tests and the fuzz seed generator link
# them (their hr__ names are hidden outside libhostrange). The encoder needs
# libhrproto after it.
noinst_LTLIBRARIES += client/libhrclient.la
client_libhrclient_la_SOURCES = client/client.h client/stack.h \
	client/clock.c client/intern.c client/encode.c client/encode.h
client_libhrclient_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
lib_LTLIBRARIES += client/libhostrange.la
client_libhostrange_la_SOURCES = client/hostrange.c client/client.h \
	client/stack.h client/ship.c
client_libhostrange_la_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
client_libhostrange_la_LIBADD = client/libhrclient.la proto/libhrproto.la \
	$(NANOMSG_LIBS) $(PROTOBUF_C_LIBS)
client_libhostrange_la_LDFLAGS = -version-info 0:0:0
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = client/hostrange.pc
EXTRA_DIST += client/hostrange.pc.in client/local.mk
