# libhostrange: the client library, its public header (and the C++ face
# over it, hostrange.hpp) and its man page hostrange(3).
include_HEADERS += client/include/hostrange.h client/include/hostrange.hpp
dist_man_MANS += client/hostrange.3
# The client's pure parts (the clock, the intern tables, the batch encoder,
# the spool file's writer), built once: libhostrange, the unit tests and the
# fuzz seed generator link them (their hr__ names are hidden outside
# libhostrange). The encoder needs libhrproto after it.
noinst_LTLIBRARIES += client/libhrclient.la
client_libhrclient_la_SOURCES = client/client.h client/stack.h \
	client/clock.c client/intern.c client/encode.c client/encode.h \
	client/spool.c client/spool.h
client_libhrclient_la_CFLAGS = $(AM_CFLAGS) $(PROTOBUF_C_CFLAGS)
lib_LTLIBRARIES += client/libhostrange.la
client_libhostrange_la_SOURCES = client/hostrange.c client/client.h \
	client/stack.h client/ship.c client/registry.c
client_libhostrange_la_CFLAGS = $(AM_CFLAGS) $(NANOMSG_CFLAGS) \
	$(PROTOBUF_C_CFLAGS)
client_libhostrange_la_LIBADD = client/libhrclient.la proto/libhrproto.la \
	$(NANOMSG_LIBS) $(PROTOBUF_C_LIBS)
client_libhostrange_la_LDFLAGS = -version-info 0:0:0
# The descriptions of the installed library: hostrange.pc for pkg-config,
# and the CMake package (find_package(hostrange CONFIG) gives the imported
# target hostrange::hostrange). Both are made from their templates by
# client/reloc.sh so that the installed tree is relocatable: each finds the
# prefix from its own place.
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = client/hostrange.pc
cmakedir = $(libdir)/cmake/hostrange
cmake_DATA = client/cmake/hostrangeConfig.cmake \
	client/cmake/hostrangeConfigVersion.cmake \
	client/cmake/hostrangeTargets.cmake
CLEANFILES += $(pkgconfig_DATA) $(cmake_DATA)
EXTRA_DIST += client/hostrange.pc.in client/local.mk client/reloc.sh \
	client/cmake/hostrangeConfig.cmake.in \
	client/cmake/hostrangeConfigVersion.cmake.in \
	client/cmake/hostrangeTargets.cmake.in
HR_RELOC = $(SHELL) $(srcdir)/client/reloc.sh
HR_RELOC_ARGS = '$(prefix)' '$(libdir)' '$(includedir)' \
	'$(PACKAGE_VERSION)' '$(NANOMSG_LIBS) $(PROTOBUF_C_LIBS) -lpthread'
HR_RELOC_DEPS = $(srcdir)/client/reloc.sh Makefile
client/hostrange.pc: $(srcdir)/client/hostrange.pc.in $(HR_RELOC_DEPS)
	$(AM_V_GEN)$(MKDIR_P) client && \
	$(HR_RELOC) $(srcdir)/client/hostrange.pc.in $@ $(HR_RELOC_ARGS)
client/cmake/hostrangeConfig.cmake: \
		$(srcdir)/client/cmake/hostrangeConfig.cmake.in $(HR_RELOC_DEPS)
	$(AM_V_GEN)$(MKDIR_P) client/cmake && \
	$(HR_RELOC) $(srcdir)/client/cmake/hostrangeConfig.cmake.in $@ \
		$(HR_RELOC_ARGS)
client/cmake/hostrangeConfigVersion.cmake: \
		$(srcdir)/client/cmake/hostrangeConfigVersion.cmake.in \
		$(HR_RELOC_DEPS)
	$(AM_V_GEN)$(MKDIR_P) client/cmake && \
	$(HR_RELOC) $(srcdir)/client/cmake/hostrangeConfigVersion.cmake.in $@ \
		$(HR_RELOC_ARGS)
client/cmake/hostrangeTargets.cmake: \
		$(srcdir)/client/cmake/hostrangeTargets.cmake.in $(HR_RELOC_DEPS)
	$(AM_V_GEN)$(MKDIR_P) client/cmake && \
	$(HR_RELOC) $(srcdir)/client/cmake/hostrangeTargets.cmake.in $@ \
		$(HR_RELOC_ARGS)
