#!/bin/sh
# Fills a template of the installed tree's description (hostrange.pc, the
# CMake package) so that the tree is relocatable: each file finds the
# prefix from its own place, ${pcfiledir} or ${CMAKE_CURRENT_LIST_DIR},
# and the library and header directories below it. A directory that is not
# below the prefix is written as the absolute path it is.
#
# Usage: reloc.sh IN OUT PREFIX LIBDIR INCLUDEDIR VERSION LIBS_PRIVATE
#
# The template's placeholders: @VERSION@, @LIBS_PRIVATE@; @PC_PREFIX@,
# @PC_LIBDIR@, @PC_INCLUDEDIR@ (pkg-config variables); @CMAKE_PREFIX@,
# @CMAKE_LIBDIR@, @CMAKE_INCLUDEDIR@ (CMake paths, the latter two in terms
# of ${_hostrange_prefix}).
set -eu
in=$1 out=$2 prefix=${3%/} libdir=${4%/} includedir=${5%/} version=$6
libs_private=$7

# below DIR: DIR's path under the prefix ("lib", "lib/x86_64-linux-gnu"),
# or nothing when it is not under it.
below() {
    case $1 in
        "$prefix"/*) printf '%s\n' "${1#"$prefix"/}" ;;
    esac
}
# up PATH: as many ".." as PATH has components ("../.." for a/b).
up() { printf '%s\n' "$1" | sed -e 's|[^/][^/]*|..|g'; }

lib=$(below "$libdir")
inc=$(below "$includedir")
if [ -n "$lib" ] && [ -n "$inc" ]; then
    pc_prefix="\${pcfiledir}/../$(up "$lib")"
    pc_libdir="\${prefix}/$lib"
    pc_includedir="\${prefix}/$inc"
    cm_prefix="\${CMAKE_CURRENT_LIST_DIR}/../../$(up "$lib")"
    cm_libdir="\${_hostrange_prefix}/$lib"
    cm_includedir="\${_hostrange_prefix}/$inc"
else
    pc_prefix=$prefix pc_libdir=$libdir pc_includedir=$includedir
    cm_prefix=$prefix cm_libdir=$libdir cm_includedir=$includedir
fi
# sed replacements: | and & and \ in a value are escaped.
esc() { printf '%s\n' "$1" | sed -e 's/[|&\\]/\\&/g'; }
sed -e "s|@VERSION@|$(esc "$version")|g" \
    -e "s|@LIBS_PRIVATE@|$(esc "$libs_private")|g" \
    -e "s|@PC_PREFIX@|$(esc "$pc_prefix")|g" \
    -e "s|@PC_LIBDIR@|$(esc "$pc_libdir")|g" \
    -e "s|@PC_INCLUDEDIR@|$(esc "$pc_includedir")|g" \
    -e "s|@CMAKE_PREFIX@|$(esc "$cm_prefix")|g" \
    -e "s|@CMAKE_LIBDIR@|$(esc "$cm_libdir")|g" \
    -e "s|@CMAKE_INCLUDEDIR@|$(esc "$cm_includedir")|g" \
    "$in" > "$out.tmp"
mv "$out.tmp" "$out"
