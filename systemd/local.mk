# systemd: the system unit, the per-user unit and the sysusers.d file of
# the system unit's user and group, with the install paths and the service
# type (notify when built with libsystemd) filled in. Installed under
# --prefix unless configure is told the directories.
systemdsystemunit_DATA = systemd/hostranged.service
systemduserunit_DATA = systemd/user/hostranged.service
sysusers_DATA = systemd/hostrange.conf
CLEANFILES += systemd/hostranged.service systemd/user/hostranged.service \
	systemd/hostrange.conf
EXTRA_DIST += systemd/hostranged.service.in systemd/hostranged-user.service.in \
	systemd/hostrange.sysusers systemd/local.mk systemd/test-units.sh

edit_unit = sed -e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@SERVICE_TYPE[@]|$(SERVICE_TYPE)|g'

systemd/hostranged.service: systemd/hostranged.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	$(edit_unit) $(srcdir)/systemd/hostranged.service.in > $@
systemd/user/hostranged.service: systemd/hostranged-user.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd/user && \
	$(edit_unit) $(srcdir)/systemd/hostranged-user.service.in > $@
systemd/hostrange.conf: systemd/hostrange.sysusers
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	cp $(srcdir)/systemd/hostrange.sysusers $@

# systemd-analyze verify of both units (skipped where it is missing).
TESTS += systemd/test-units.sh
