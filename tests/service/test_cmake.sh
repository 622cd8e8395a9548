#!/bin/sh
# The installed tree as its users meet it: make install into a staging
# directory (DESTDIR, done by make check before the tests), the tree moved
# elsewhere (so a prefix baked into a file would show), then hostrange.pc
# gives the moved paths and a small
# CMake project (tests/cmake) finds the package with find_package(hostrange
# CONFIG), builds a C++ program with hostrange::hostrange (hostrange.hpp
# included) and runs it against a real daemon; a version the package does
# not offer is refused. Skips (77) without cmake or a C++ compiler.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}" "${HOSTRANGE_TEST_PREFIX:?}"
: "${HOSTRANGE_TEST_LIBDIR:?}" "${HOSTRANGE_TEST_INCLUDEDIR:?}"
top=${top_builddir:-.}
src=${srcdir:-.}
command -v cmake >/dev/null 2>&1 || { echo "cmake not found: skipped"; exit 77; }
cxx=${HOSTRANGE_TEST_CXX:-c++}
command -v "${cxx%% *}" >/dev/null 2>&1 ||
    { echo "no C++ compiler ($cxx): skipped"; exit 77; }
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
case $HOSTRANGE_TEST_LIBDIR in
    "$HOSTRANGE_TEST_PREFIX"/*) lib=${HOSTRANGE_TEST_LIBDIR#"$HOSTRANGE_TEST_PREFIX"/} ;;
    *) echo "libdir not under the prefix: the tree cannot move; skipped"
       exit 77 ;;
esac
case $HOSTRANGE_TEST_INCLUDEDIR in
    "$HOSTRANGE_TEST_PREFIX"/*) inc=${HOSTRANGE_TEST_INCLUDEDIR#"$HOSTRANGE_TEST_PREFIX"/} ;;
    *) echo "includedir not under the prefix: skipped"; exit 77 ;;
esac

# The tree make check installed before the tests (tests/local.mk: installing
# relinks the build tree's libraries in place), copied and moved.
[ -d "$top/tests/cmake-stage$HOSTRANGE_TEST_PREFIX" ] ||
    fail "no staged install in $top/tests/cmake-stage (make check makes it)"
mkdir -p "$dir/moved"
cp -a "$top/tests/cmake-stage$HOSTRANGE_TEST_PREFIX" "$dir/moved/tree" ||
    fail "copy"
t=$dir/moved/tree
for f in "$t/$lib/cmake/hostrange/hostrangeConfig.cmake" \
         "$t/$lib/cmake/hostrange/hostrangeConfigVersion.cmake" \
         "$t/$lib/cmake/hostrange/hostrangeTargets.cmake" \
         "$t/$lib/pkgconfig/hostrange.pc" "$t/$inc/hostrange.hpp"; do
    [ -f "$f" ] || fail "not installed: $f"
    grep -q -F "$HOSTRANGE_TEST_PREFIX/" "$f" &&
        fail "$f names the prefix $HOSTRANGE_TEST_PREFIX"
done

# pkg-config: the moved paths.
if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH="$t/$lib/pkgconfig" PKG_CONFIG_LIBDIR= \
            pkg-config --cflags --libs hostrange) || fail "pkg-config"
    # Each -I and -L is the moved directory (written relative to the .pc
    # file's own); -lhostrange is there.
    real() { (cd "$1" 2>/dev/null && pwd -P); }
    seen=
    for f in $flags; do
        case $f in
            -I*) [ "$(real "${f#-I}")" = "$(real "$t/$inc")" ] ||
                     fail "pkg-config: $f is not $t/$inc"
                 seen="$seen I" ;;
            -L*) [ "$(real "${f#-L}")" = "$(real "$t/$lib")" ] ||
                     fail "pkg-config: $f is not $t/$lib"
                 seen="$seen L" ;;
            -lhostrange) seen="$seen l" ;;
        esac
    done
    [ "$seen" = " I L l" ] || fail "pkg-config gives '$flags'"
fi

# The CMake project, built against the moved tree.
build() {
    cmake -S "$src/tests/cmake" -B "$dir/build" \
        -DCMAKE_PREFIX_PATH="$t" -DCMAKE_CXX_COMPILER="${cxx%% *}" \
        -DCMAKE_EXE_LINKER_FLAGS="${HOSTRANGE_TEST_LDFLAGS:-}" \
        -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
        -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF "$@" \
        > "$dir/cmake.log" 2>&1
}
# The version asked for: this one's major.minor; refused: the next major
# and the next minor.
version=$("$HOSTRANGECTL" -V | sed 's/^hostrangectl //')
major=${version%%.*} rest=${version#*.}
minor=${rest%%.*}
build -DHOSTRANGE_WANT="$major.$minor" ||
    { tail -n 30 "$dir/cmake.log"; fail "cmake configure"; }
grep -q -F -- "-- hostrange $version from" "$dir/cmake.log" ||
    fail "no version: $(grep hostrange "$dir/cmake.log")"
grep -q -F "from $t/$lib/cmake/hostrange" "$dir/cmake.log" ||
    fail "the package found elsewhere: $(grep hostrange "$dir/cmake.log")"
cmake --build "$dir/build" > "$dir/build.log" 2>&1 ||
    { tail -n 30 "$dir/build.log"; fail "cmake --build"; }

# Run against a real daemon.
export HOSTRANGE_RUNTIME_DIR="$dir/rt"
timeout 120 "$HOSTRANGED" -q & pid=$!
"$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "no daemon"
timeout 60 "$dir/build/consumer" 5 > "$dir/out" ||
    fail "consumer: $(cat "$dir/out")"
grep -q '^samples=10 delivered=10$' "$dir/out" || fail "$(cat "$dir/out")"
# The library it ran with is the moved one.
if command -v ldd >/dev/null 2>&1; then
    ldd "$dir/build/consumer" | grep -q -F "$t/$lib/libhostrange.so" ||
        fail "not the moved library: $(ldd "$dir/build/consumer")"
fi
"$HOSTRANGECTL" dump --format folded --value count > "$dir/got" || fail dump
printf '%s\n' 'cmake/demo;warm;run_call 5' \
    'cmake/demo;warm;run_call;consumer.step 5' > "$dir/want"
diff "$dir/want" "$dir/got" || fail "paths and counts"

# Versions the package does not offer (another major version; before 1.0,
# another minor one): refused by find_package, which names the package's
# own.
for v in "$((major + 1)).0" "$major.$((minor + 1))"; do
    [ "$major" -eq 0 ] || [ "$v" = "$((major + 1)).0" ] || continue
    rm -rf "$dir/build"
    build -DHOSTRANGE_WANT="$v" && fail "hostrange $v accepted"
    grep -q "compatible with requested version \"$v\"" "$dir/cmake.log" &&
        grep -q -F "hostrangeConfig.cmake, version: $version" \
            "$dir/cmake.log" ||
        fail "the refusal of $v: $(tail -n 20 "$dir/cmake.log")"
done
exit 0
