# proto: the wire protocol. The protobuf-c code is generated at build time
# from hostrange.proto and never committed; protocol.[ch] hold the
# constants both sides agree on. libhrproto is linked by the client, the
# daemon and the tests.
EXTRA_DIST += proto/local.mk proto/hostrange.proto
BUILT_SOURCES += proto/hostrange.pb-c.c proto/hostrange.pb-c.h
CLEANFILES += proto/hostrange.pb-c.c proto/hostrange.pb-c.h
proto/hostrange.pb-c.c proto/hostrange.pb-c.h: proto/hostrange.proto
	$(AM_V_GEN)$(MKDIR_P) proto && \
	$(PROTOC_C) --proto_path=$(srcdir) --c_out=$(builddir) \
		$(srcdir)/proto/hostrange.proto

noinst_LTLIBRARIES += proto/libhrproto.la
nodist_proto_libhrproto_la_SOURCES = proto/hostrange.pb-c.c \
	proto/hostrange.pb-c.h
proto_libhrproto_la_SOURCES = proto/protocol.c proto/protocol.h \
	proto/spool.c proto/spool.h \
	proto/stream.h proto/monotonic.h proto/unpack.h
proto_libhrproto_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS) -fPIC
proto_libhrproto_la_LIBADD = $(PROTOBUF_C_LIBS)
