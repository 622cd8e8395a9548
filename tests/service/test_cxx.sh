#!/bin/sh
# hostrange.hpp through a real daemon (tests/helpers/cxx_scopes.cpp): the
# macros and hostrange::scope give exactly the calling paths and counts of
# the program, two scopes in one block nested in order and an exception
# ending the scopes it leaves innermost first (no range out of order or
# left open); built with HOSTRANGE_DISABLE, the program references no hr_
# symbol and collects nothing. Skips (77) without a C++ compiler.
set -u
: "${HOSTRANGED:?}" "${HOSTRANGECTL:?}"
b=${top_builddir:-.}/tests/helpers
[ -x "$b/cxx_scopes" ] ||
    { echo "no C++ compiler (cxx_scopes not built): skipped"; exit 77; }
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

export HOSTRANGE_RUNTIME_DIR="$dir/rt"
timeout 120 "$HOSTRANGED" -q & pid=$!
"$HOSTRANGECTL" ping -w 10000 >/dev/null || fail "no daemon"
timeout 60 "$b/cxx_scopes" -c 10 > "$dir/out" || fail "cxx_scopes: $(cat "$dir/out")"
grep -q '^compiled=1 caught=10 samples=100 delivered=100 out_of_order=0 open_at_window_end=0 foreign_thread=0$' \
    "$dir/out" || fail "counters: $(cat "$dir/out")"

cat > "$dir/want" <<'END'
tests/cxx;warm;outer 10
tests/cxx;warm;outer;cxx.first 10
tests/cxx;warm;outer;cxx.first;cxx.second 10
tests/cxx;warm;cxx.catch 10
tests/cxx;warm;cxx.catch;cxx.throw 10
tests/cxx;warm;cxx.catch;cxx.throw;cxx.inner 10
tests/cxx;warm;cxx.explicit 10
tests/cxx;warm;cxx.loop 30
END
"$HOSTRANGECTL" dump --format folded --value count > "$dir/got" ||
    fail "dump --format folded"
diff "$dir/want" "$dir/got" || fail "paths and counts"
# The daemon saw no range error from the program either.
"$HOSTRANGECTL" stats > "$dir/stats" || fail stats
awk '$1 ~ /^client\.[0-9]+\.errors\./ && $2 != 0 { bad = 1; print }
     END { exit bad }' "$dir/stats" || fail "range errors in stats"
grep -q '^client\.1\.errors\.out_of_order 0$' "$dir/stats" ||
    fail "no out-of-order count in stats: $(grep client "$dir/stats")"

# Compiled out: gone, and nothing collected.
if command -v nm >/dev/null 2>&1; then
    nm "$b/cxx_scopes-cxx_scopes.o" | grep -q ' U hr__begin$' ||
        fail "cxx_scopes does not call hr__begin: the check proves nothing"
    for f in "$b/cxx_scopes_off-cxx_scopes.o" "$b/cxx_scopes_off"; do
        if nm "$f" | grep -E ' hr_'; then
            fail "$f references hr_ symbols (above)"
        fi
    done
fi
"$HOSTRANGECTL" reset >/dev/null || fail reset
"$b/cxx_scopes_off" -c 10 > "$dir/off" || fail "cxx_scopes_off: $(cat "$dir/off")"
grep -q '^compiled=0 caught=10 samples=0 ' "$dir/off" ||
    fail "compiled out: $(cat "$dir/off")"
[ -z "$("$HOSTRANGECTL" dump)" ] || fail "the compiled-out program reported"
exit 0
