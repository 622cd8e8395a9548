# libhostrange-nvtx: the NVTX v3 injection tool (NVTX_INJECTION64_PATH),
# built when configure finds the NVTX v3 headers.
EXTRA_DIST += nvtx/local.mk nvtx/nvtx.c nvtx/names.c nvtx/names.h
if HAVE_NVTX
lib_LTLIBRARIES += nvtx/libhostrange-nvtx.la
nvtx_libhostrange_nvtx_la_SOURCES = nvtx/nvtx.c nvtx/names.c nvtx/names.h
nvtx_libhostrange_nvtx_la_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CFLAGS)
nvtx_libhostrange_nvtx_la_LIBADD = client/libhostrange.la
# Loaded by dlopen only: no version in its name, no symbol but its entry.
nvtx_libhostrange_nvtx_la_LDFLAGS = -module -avoid-version -shared \
	-export-symbols-regex '^InitializeInjectionNvtx2$$'
endif
