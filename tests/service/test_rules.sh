#!/bin/sh
# The rules that --help, the man pages and doc/ state in numbers say what
# the code does: each number is read from the constant that defines it
# (lib/agg/observer.h, lib/stat/signif.h) and compared with every place
# that states it, as test_man.sh does for options:
#   unstable            HRA_OBSERVER_UNSTABLE_PCT, _FAST_PCT (percent)
#   resolution_limited  HRA_RESOLUTION_STEPS (clock steps)
#   quantized (diff)    HRA_QUANTIZED_STEPS (clock steps)
#   --alpha defaults    HRS_SIGNIF_ALPHA (diff and plot --diff)
#   detectable change   HRS_DETECT_POWER ("with power P")
#   two-step rule       HRS_ROUNDS_STEP_SLACK ("by S of a step")
# A test of this checker comes first: a text with a wrong number must fail.
set -eu
src=${srcdir:-.}
top=${top_builddir:-.}
ctl=${HOSTRANGECTL:-$top/ctl/hostrangectl}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hostrange-rules-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# define NAME FILE: the value of #define NAME in FILE.
define() {
    v=$(sed -n "s/^#define $1 \\([0-9.]*\\)\$/\\1/p" "$2")
    [ -n "$v" ] || { echo "FAIL: no #define $1 in $2"; exit 1; }
    echo "$v"
}
U=$(define HRA_OBSERVER_UNSTABLE_PCT "$src/lib/agg/observer.h")
UF=$(define HRA_OBSERVER_UNSTABLE_FAST_PCT "$src/lib/agg/observer.h")
R=$(define HRA_RESOLUTION_STEPS "$src/lib/agg/observer.h")
Q=$(define HRA_QUANTIZED_STEPS "$src/lib/agg/observer.h")
A=$(define HRS_SIGNIF_ALPHA "$src/lib/stat/signif.h")
P=$(define HRS_DETECT_POWER "$src/lib/stat/detect.h")
S=$(define HRS_ROUNDS_STEP_SLACK "$src/lib/stat/rounds.h")
echo "constants: unstable ${U}% (fast path ${UF}%), resolution_limited" \
    "under $R steps, quantized within $Q steps, alpha $A"

# flat FILE: the text on one line, roff requests and font changes taken
# out, quotes and backticks dropped, spaces squeezed.
flat() {
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em/-/g' \
        -e 's/^\.[A-Za-z][A-Za-z]* *//' -e 's/[`"]//g' "$1" |
        tr '\n' ' ' | tr -s ' '
}

# check NAME FILE: every statement of the rules in FILE quotes the
# constants (fails otherwise, saying which on stderr); prints how many
# statements it saw.
check() {
    flat "$2" | awk -v name="$1" -v U="$U" -v UF="$UF" -v R="$R" -v Q="$Q" \
            -v A="$A" -v P="$P" -v S="$S" '
        function fail(msg) {
            printf "FAIL: %s: %s\n", name, msg > "/dev/stderr"; bad = 1
        }
        {
            t = $0
            # unstable: the percentages up to the next rule are U and UF.
            s = t
            while ((i = index(s, "unstable")) > 0) {
                s = substr(s, i + 8)
                w = substr(s, 1, 400)
                j = match(w, /resolution_limited|quantized/)
                if (j == 0) continue
                w = substr(w, 1, j - 1)
                if (w !~ /[0-9]%/) continue
                seen++
                while (match(w, /[0-9.]+%/)) {
                    p = substr(w, RSTART, RLENGTH - 1)
                    if (p != U && p != UF)
                        fail("unstable at " p "%, the code says " U "% (" UF "% on the fast path)")
                    w = substr(w, RSTART + RLENGTH)
                }
            }
            s = t
            while (match(s, /resolution_limited \(a median under [0-9]+ steps/)) {
                n = substr(s, RSTART, RLENGTH); sub(/ steps$/, "", n); sub(/.* /, "", n)
                seen++
                if (n != R) fail("resolution_limited under " n " steps, the code says " R)
                s = substr(s, RSTART + RLENGTH)
            }
            s = t
            while (match(s, /quantized when a median is within [0-9a-z]+ steps/)) {
                n = substr(s, RSTART, RLENGTH); sub(/ steps$/, "", n); sub(/.* /, "", n)
                seen++
                if (n != Q) fail("quantized within " n " steps, the code says " Q)
                s = substr(s, RSTART + RLENGTH)
            }
            s = t
            while (match(s, /--alpha ?=P/)) {
                s = substr(s, RSTART + RLENGTH)
                w = substr(s, 1, 120)
                if (!match(w, /default [0-9.]+/)) continue
                n = substr(w, RSTART + 8, RLENGTH - 8); sub(/\.$/, "", n)
                seen++
                if (n + 0 != A + 0) fail("--alpha default " n ", the code says " A)
            }
            s = t
            while (match(s, /p < 0\.[0-9]+/)) {
                n = substr(s, RSTART + 4, RLENGTH - 4)
                seen++
                if (n + 0 != A + 0) fail("p < " n ", the code says " A)
                s = substr(s, RSTART + RLENGTH)
            }
            s = t
            while (match(s, /with power [0-9.]+[0-9]/)) {
                n = substr(s, RSTART + 11, RLENGTH - 11)
                seen++
                if (n + 0 != P + 0) fail("power " n ", the code says " P)
                s = substr(s, RSTART + RLENGTH)
            }
            s = t
            while (match(s, /by [0-9.]+ of a step/)) {
                n = substr(s, RSTART + 3, RLENGTH - 13)
                seen++
                if (n + 0 != S + 0) fail("slack " n " of a step, the code says " S)
                s = substr(s, RSTART + RLENGTH)
            }
        }
        END { print seen + 0; exit bad }'
}

# The checker must catch a wrong number, and see a right one.
printf 'unstable (share of 7%% or more), resolution_limited\n' >"$tmp/wrong"
if check self-test "$tmp/wrong" >"$tmp/self" 2>&1 ||
        ! grep -q "FAIL: self-test: unstable at 7%" "$tmp/self"; then
    echo "FAIL: the checker missed a wrong number:"; cat "$tmp/self"; exit 1
fi
printf 'unstable (share of %s%% or more), resolution_limited\n' "$U" >"$tmp/right"
[ "$(check self-test "$tmp/right")" = 1 ] ||
    { echo "FAIL: the checker missed a right statement"; exit 1; }

# expect NAME FILE MIN: FILE states the rules at least MIN times, rightly.
expect() {
    n=$(check "$1" "$2") || fail=1
    echo "$1: $n statements"
    [ "$n" -ge "$3" ] || bad "$1: $n statements of the rules seen, $3 expected"
}
"$ctl" dump --help >"$tmp/dump"
"$ctl" diff --help >"$tmp/diff"
"$ctl" plot --help >"$tmp/plot"
expect "dump --help" "$tmp/dump" 2
expect "diff --help" "$tmp/diff" 5
expect "plot --help" "$tmp/plot" 1
expect hostrangectl.1 "$src/ctl/hostrangectl.1" 8
for page in "$src"/doc/*.md; do
    [ -f "$page" ] || continue
    expect "doc/${page##*/}" "$page" 0
done
exit $fail
