#!/bin/sh
# The unit files pass `systemd-analyze verify`, run on copies that start
# the daemon just built. Skipped (77) where systemd-analyze is missing or
# cannot run at all here.
set -u
b=${top_builddir:-.}
command -v systemd-analyze >/dev/null 2>&1 ||
    { echo "systemd-analyze not found: skipped"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/system" "$tmp/user" "$tmp/xdg"
chmod 700 "$tmp/xdg"

# A unit that cannot be wrong tells whether verify works in this place.
cat > "$tmp/probe.service" <<PROBE
[Service]
ExecStart=$b/daemon/hostranged --help
PROBE
if ! systemd-analyze verify "$tmp/probe.service" >"$tmp/probe.log" 2>&1; then
    echo "systemd-analyze verify does not work here: skipped"
    cat "$tmp/probe.log"
    exit 77
fi

point() {
    sed -e "s|^ExecStart=[^ ]*/hostranged|ExecStart=$b/daemon/hostranged|" \
        "$1" > "$2"
}
point "$b/systemd/hostranged.service" "$tmp/system/hostranged.service"
point "$b/systemd/user/hostranged.service" "$tmp/user/hostranged.service"
grep -q "^ExecStart=$b/daemon/hostranged " "$tmp/system/hostranged.service" ||
    { echo "FAIL: no ExecStart to check in the system unit"; exit 1; }

status=0
for unit in "$tmp/system/hostranged.service" "$tmp/user/hostranged.service"
do
    case $unit in
    */user/*) mode=--user ;;
    *) mode=--system ;;
    esac
    # Any complaint is a failure: verify only warns about some mistakes.
    # A user manager's paths need a runtime directory of its own.
    if ! XDG_RUNTIME_DIR=$tmp/xdg systemd-analyze $mode verify "$unit" \
            >"$tmp/out" 2>&1 ||
       grep -q . "$tmp/out"; then
        echo "FAIL: systemd-analyze $mode verify $unit:"
        cat "$tmp/out"
        status=1
    else
        echo "ok: $mode unit"
    fi
done
exit $status
