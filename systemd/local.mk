# systemd unit files, with the install paths filled in.
systemdsystemunit_DATA = systemd/hostranged.service
CLEANFILES += systemd/hostranged.service
EXTRA_DIST += systemd/hostranged.service.in systemd/local.mk
systemd/hostranged.service: systemd/hostranged.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed -e 's|@bindir[@]|$(bindir)|g' $(srcdir)/systemd/hostranged.service.in > $@
