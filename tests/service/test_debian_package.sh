#!/bin/sh
# The Debian packages (debian/): built from a copy of the tree with
# dpkg-buildpackage -us -uc -b, checked by lintian (no error, no warning
# that debian/*.lintian-overrides does not explain), installed with
# dpkg -i; the hostrange group made and the unit enabled; the packaged
# hostranged started as its unit starts it (user and group hostrange,
# /run/hostrange 0750, /var/lib/hostrange 0700), a user in the group
# running /usr/bin/hostrange-bench against it and reading the report with
# /usr/bin/hostrangectl, and hostrangectl record -- hostrange-bench from
# /usr/bin; the Python module imported from its package, and pip install
# of the tree linking the packaged library (pkg-config); then dpkg
# --purge of the four packages leaving none of their files, directories,
# user, group or state behind. Needs root (it installs packages) and
# skips (77) without dpkg-buildpackage, lintian or the build's
# dependencies, or where a hostrange package, user, group, state
# directory or runtime directory is there already (it would not leave it
# as it was).
set -u
src=$(cd "${srcdir:-.}" && pwd)
pkgs="hostrange libhostrange0 libhostrange-dev python3-hostrange"
skip() { echo "$*: skipped"; exit 77; }
command -v dpkg-buildpackage >/dev/null 2>&1 || skip "no dpkg-buildpackage (dpkg-dev, debhelper)"
command -v lintian >/dev/null 2>&1 || skip "no lintian"
[ "$(id -u)" -eq 0 ] || skip "not root: packages cannot be installed"
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed' &&
        skip "package $p is installed already"
done
getent passwd hostrange >/dev/null && skip "a user hostrange exists already"
getent group hostrange >/dev/null && skip "a group hostrange exists already"
[ -e /var/lib/hostrange ] && skip "/var/lib/hostrange exists already"
# root's own hostranged serves /run/hostrange by default: the packaged
# daemon would take it over, and the purge remove it.
[ -e /run/hostrange ] && skip "/run/hostrange exists already"

dir=$(mktemp -d) || exit 99
chmod 755 "$dir"
user=hrpkg$$
pid=
installed=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    [ -n "$installed" ] && dpkg --purge $pkgs >/dev/null 2>&1
    getent passwd "$user" >/dev/null && userdel "$user" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() { echo "FAIL: $*"; exit 1; }

# A copy of the tree: its files as git knows them, else (a distribution
# tarball) all of it.
mkdir "$dir/hostrange"
if [ -e "$src/.git" ] && command -v git >/dev/null 2>&1; then
    git -C "$src" ls-files -co --exclude-standard |
        (cd "$src" && tar -cf - -T -) | tar -xf - -C "$dir/hostrange" ||
        fail "cannot copy the tree"
else
    cp -R "$src/." "$dir/hostrange/" || fail "cannot copy the tree"
fi
chmod -R u+w "$dir/hostrange"
cd "$dir/hostrange" || exit 99
dpkg-checkbuilddeps > "$dir/deps" 2>&1 || skip "$(cat "$dir/deps")"
DEB_BUILD_OPTIONS="parallel=2 nocheck noautodbgsym" dpkg-buildpackage -us -uc -b \
    > "$dir/build.log" 2>&1 || fail "dpkg-buildpackage: $(tail -30 "$dir/build.log")"
cd "$dir" || exit 99
for p in $pkgs; do
    ls "$dir/${p}_"*.deb > /dev/null 2>&1 || fail "no package $p"
done
TMPDIR="$dir" lintian --fail-on error,warning "$dir"/hostrange_*.changes > "$dir/lintian" 2>&1 ||
    fail "lintian: $(cat "$dir/lintian")"
grep -E '^[EW]: ' "$dir/lintian" && fail "lintian warns"

# What the packages hold, and which of their directories were here before.
debs=
for p in $pkgs; do
    debs="$debs $(ls "$dir/${p}_"*.deb)"
done
for d in $debs; do
    dpkg-deb -c "$d" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||'
done | sort -u > "$dir/paths"
while read -r p; do
    [ -d "$p" ] && echo "$p"
done < "$dir/paths" > "$dir/dirs-before"

installed=yes
# shellcheck disable=SC2086
dpkg -i $debs > "$dir/install.log" 2>&1 || fail "dpkg -i: $(cat "$dir/install.log")"
getent group hostrange >/dev/null || fail "no group hostrange"
getent passwd hostrange >/dev/null || fail "no user hostrange"
[ -L /etc/systemd/system/multi-user.target.wants/hostranged.service ] ||
    fail "the unit is not enabled"

# The daemon as the unit starts it.
unit=/lib/systemd/system/hostranged.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
case $exec_start in /usr/bin/hostranged\ *) ;; *) fail "ExecStart=$exec_start";; esac
[ "$(sed -n 's/^User=//p' "$unit")" = hostrange ] || fail "unit's User"
mkdir -p /run/hostrange /var/lib/hostrange
chown hostrange:hostrange /run/hostrange /var/lib/hostrange
chmod 0750 /run/hostrange
chmod 0700 /var/lib/hostrange
# shellcheck disable=SC2086
setpriv --reuid=hostrange --regid=hostrange --init-groups \
    sh -c "umask 0077; exec $exec_start" > "$dir/daemon.log" 2>&1 & pid=$!
useradd --no-create-home -G hostrange "$user" || fail "useradd"
as_user() { runuser -u "$user" -- env HOME="$dir" TMPDIR="$dir/utmp" "$@"; }
mkdir "$dir/utmp" && chown "$user" "$dir/utmp"
as_user env HOSTRANGE_RUNTIME_DIR=/run/hostrange /usr/bin/hostrangectl ping -w 10000 \
    > /dev/null || fail "the packaged daemon does not answer: $(cat "$dir/daemon.log")"
as_user env HOSTRANGE_RUNTIME_DIR=/run/hostrange /usr/bin/hostrange-bench --op add \
    --calls 20 --blocks 2 > "$dir/bench.out" 2>&1 || fail "hostrange-bench: $(cat "$dir/bench.out")"
as_user env HOSTRANGE_RUNTIME_DIR=/run/hostrange /usr/bin/hostrangectl dump > "$dir/report" ||
    fail "dump"
grep -q '^{"nodeid":"ops/add\[cpu-float32-13x4\]","operator":"add","backend":"cpu","phase":"warm","range":"dispatch.call","metric":"inclusive","count":' \
    "$dir/report" || fail "report: $(head -3 "$dir/report")"
# A user outside the group is refused.
runuser -u nobody -- env HOSTRANGE_RUNTIME_DIR=/run/hostrange /usr/bin/hostrangectl ping \
    > /dev/null 2>&1 && fail "a user outside the group reached the daemon"
# record: a private daemon, the one beside /usr/bin/hostrangectl.
(cd "$dir/utmp" && as_user /usr/bin/hostrangectl record -o "$dir/utmp/rec.jsonl" -- \
    /usr/bin/hostrange-bench --op gemm --calls 20 --blocks 2) > "$dir/record.out" 2>&1 ||
    fail "record: $(cat "$dir/record.out")"
grep -q '"operator":"gemm","backend":"cpu","phase":"warm","range":"operator.invoke","metric":"self"' \
    "$dir/utmp/rec.jsonl" || fail "record's report: $(head -3 "$dir/utmp/rec.jsonl")"
# The Python module from its package, in Debian's interpreter, with the
# programs of the package.
(cd / && env -u PYTHONPATH /usr/bin/python3 -c 'import hostrange, hostrange_pytest
assert hostrange.__file__.startswith("/usr/lib/python3/dist-packages/"), hostrange.__file__
assert hostrange._bindir == "/usr/bin"') || fail "python3-hostrange"
# pip install against the packaged library: pkg-config finds
# libhostrange-dev, the module links libhostrange.so.0 and finds the
# packaged programs (where python3-venv is installed).
if /usr/bin/python3 -c 'import venv, ensurepip, setuptools' 2>/dev/null; then
    /usr/bin/python3 -m venv --system-site-packages "$dir/venv" || fail venv
    (cd "$dir" && env -u PYTHONPATH "$dir/venv/bin/python" -m pip install -q \
        --no-build-isolation --no-index "$dir/hostrange") > "$dir/pip.log" 2>&1 ||
        fail "pip install: $(tail -20 "$dir/pip.log")"
    (cd / && env -u PYTHONPATH "$dir/venv/bin/python" -c 'import hostrange
assert hostrange.__file__.startswith("'"$dir"'/venv/"), hostrange.__file__
assert hostrange._bindir == "/usr/bin", hostrange._bindir
print(hostrange.__file__)') > "$dir/pipmod" || fail "the pip-installed module"
    # (/lib is /usr/lib on a merged /usr: the loader may name either.)
    ldd "$(cat "$dir/pipmod")" > "$dir/ldd" 2>&1
    grep -q -E 'libhostrange\.so\.0 => (/usr)?/lib/' "$dir/ldd" ||
        fail "the pip-installed module does not link the packaged library: $(cat "$dir/ldd")"
fi
kill "$pid"; wait "$pid"; pid=

installed=
dpkg --purge $pkgs > "$dir/purge.log" 2>&1 || fail "dpkg --purge: $(cat "$dir/purge.log")"
userdel "$user" || fail userdel
left=$(while read -r p; do
    if [ -d "$p" ]; then
        grep -qxF "$p" "$dir/dirs-before" || echo "$p"
    elif [ -e "$p" ] || [ -L "$p" ]; then
        echo "$p"
    fi
done < "$dir/paths")
[ -z "$left" ] || fail "left behind: $left"
for p in /var/lib/hostrange /run/hostrange \
    /etc/systemd/system/multi-user.target.wants/hostranged.service \
    /var/lib/systemd/deb-systemd-helper-enabled/hostranged.service.dsh-also; do
    [ -e "$p" ] && fail "left behind: $p"
done
getent passwd hostrange >/dev/null && fail "user hostrange left behind"
getent group hostrange >/dev/null && fail "group hostrange left behind"
echo ok
