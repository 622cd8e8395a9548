# python: the extension module `hostrange` (the client and the example
# operators for Python programs), its pytest plugin (hostrange_pytest,
# enabled by the entry point of the dist-info directory installed beside
# them); their tests are in tests/local.mk. Built for the interpreter
# configure chose (--with-python) and installed in its site-packages under
# the prefix.

HRPY_SOURCES = python/hostrange_py.h python/module.c python/scope.c \
	python/convert.c python/ops.c python/device.c
HRPY_CPPFLAGS = $(AM_CPPFLAGS) $(PYTHON_CFLAGS) \
	-DHRPY_VERSION='"$(PACKAGE_VERSION)"' -DHRPY_BINDIR='"$(bindir)"'
HRPY_LDFLAGS = -module -avoid-version -shared -shrext $(PYTHON_EXT_SUFFIX)
HRPY_DISTINFO = python/hostrange-$(PACKAGE_VERSION).dist-info
HRPY_MODULE = hostrange$(PYTHON_EXT_SUFFIX)

EXTRA_DIST += python/local.mk python/entry_points.txt \
	python/hostrange_pytest.py

if HAVE_PYTHON
hrpythondir = $(HR_PYTHONDIR)
hrpython_LTLIBRARIES = python/hostrange.la
python_hostrange_la_SOURCES = $(HRPY_SOURCES)
python_hostrange_la_CPPFLAGS = $(HRPY_CPPFLAGS) $(HROPS_PROFILING_CPPFLAGS)
python_hostrange_la_LDFLAGS = $(HRPY_LDFLAGS)
python_hostrange_la_LIBADD = ops/libhrops.la $(HROPS_PROFILING_LIBS)
hrpython_DATA = python/hostrange_pytest.py

# The build tree is importable like the installed module: python/ holds the
# module (a link into .libs), the dist-info directory with the entry point,
# and, beside the sources, the plugin.
all-local: python/$(HRPY_MODULE) $(HRPY_DISTINFO)/METADATA \
	$(HRPY_DISTINFO)/entry_points.txt
python/$(HRPY_MODULE): python/hostrange.la
	$(AM_V_GEN)rm -f $@ && $(LN_S) .libs/$(HRPY_MODULE) $@
$(HRPY_DISTINFO)/METADATA: Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && { \
	  echo 'Metadata-Version: 2.1'; \
	  echo 'Name: hostrange'; \
	  echo 'Version: $(PACKAGE_VERSION)'; \
	  echo 'Summary: host-side range profiling, and its pytest plugin'; \
	} > $@
$(HRPY_DISTINFO)/entry_points.txt: python/entry_points.txt
	$(AM_V_GEN)$(MKDIR_P) $(@D) && cp $(srcdir)/python/entry_points.txt $@
CLEANFILES += python/$(HRPY_MODULE) $(HRPY_DISTINFO)/METADATA \
	$(HRPY_DISTINFO)/entry_points.txt python/check.env

# Installed: the dist-info directory makes pytest load the plugin; libtool's
# .la file has no use in site-packages (and so uninstall-local removes the
# module itself).
install-data-local: $(HRPY_DISTINFO)/METADATA $(HRPY_DISTINFO)/entry_points.txt
	$(MKDIR_P) '$(DESTDIR)$(hrpythondir)/hostrange-$(PACKAGE_VERSION).dist-info'
	$(INSTALL_DATA) $(HRPY_DISTINFO)/METADATA \
		$(HRPY_DISTINFO)/entry_points.txt \
		'$(DESTDIR)$(hrpythondir)/hostrange-$(PACKAGE_VERSION).dist-info'
install-data-hook:
	rm -f '$(DESTDIR)$(hrpythondir)/hostrange.la'
uninstall-local:
	rm -f '$(DESTDIR)$(hrpythondir)/$(HRPY_MODULE)'
	rm -rf '$(DESTDIR)$(hrpythondir)/hostrange-$(PACKAGE_VERSION).dist-info'
	rm -rf '$(DESTDIR)$(hrpythondir)/__pycache__/hostrange_pytest.'*

# What the test scripts need to know.
check_DATA += python/check.env
python/check.env: Makefile
	$(AM_V_GEN){ \
	  echo "HR_PYTHON='$(HR_PYTHON)'"; \
	  echo "HRPY_PATH='$(abs_builddir)/python:$(abs_srcdir)/python'"; \
	  echo "HRPY_OFF_PATH='$(HRPY_OFF_PATH)'"; \
	  echo "HRPY_OTHER_VERSION='$(abs_builddir)/tests/python/other_version_daemon'"; \
	  echo "HRPY_PROFILING='$(HRPY_PROFILING)'"; \
	} > $@

# The same module built without profiling (in python/off/), for the tests of
# the plugin's error when the module cannot collect.
if HOST_RANGE_PROFILING
HRPY_PROFILING = yes
HRPY_OFF_PATH = $(abs_builddir)/python/off/.libs:$(abs_builddir)/python:$(abs_srcdir)/python
check_LTLIBRARIES += python/off/hostrange.la
python_off_hostrange_la_SOURCES = $(HRPY_SOURCES)
python_off_hostrange_la_CPPFLAGS = $(HRPY_CPPFLAGS) -DHOSTRANGE_DISABLE
python_off_hostrange_la_LDFLAGS = $(HRPY_LDFLAGS) -rpath $(abs_builddir)
python_off_hostrange_la_LIBADD = ops/libhrops.la
else
HRPY_PROFILING = no
HRPY_OFF_PATH =
endif
endif
