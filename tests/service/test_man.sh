#!/bin/sh
# The man pages: hostranged(8), hostrangectl(1) and hostrange(3) render with
# man -l without a warning, and say what the programs say: every option a
# --help shows appears in its page (an option of a hostrangectl command in
# that command's section), every command of hostrangectl has its section
# and every section is a command, and hostrange(3) names every function and
# environment variable of hostrange.h. Skips (77) without man.
set -eu
src=${srcdir:-.}
top=${top_builddir:-.}
d8=$src/daemon/hostranged.8
c1=$src/ctl/hostrangectl.1
h3=$src/client/hostrange.3
daemon=${HOSTRANGED:-$top/daemon/hostranged}
ctl=${HOSTRANGECTL:-$top/ctl/hostrangectl}
command -v man >/dev/null 2>&1 || { echo "man not found: skipped"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hostrange-man-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Renders page $1; its first line must carry the title $2.
render() {
    if ! MANWIDTH=80 MANPAGER=cat man --warnings -l "$1" >"$tmp/out" \
            2>"$tmp/err"; then
        bad "man -l $1 failed"; cat "$tmp/err"; return
    fi
    if [ -s "$tmp/err" ]; then
        bad "man -l $1 warns:"; cat "$tmp/err"
    fi
    head -n 1 "$tmp/out" | grep -q "^$2 " || bad "$1 does not render as $2"
    grep -q '^NAME' "$tmp/out" || bad "$1 has no NAME section"
}
render "$d8" 'HOSTRANGED(8)'
render "$c1" 'HOSTRANGECTL(1)'
render "$h3" 'HOSTRANGE(3)'

# The roff source as plain text: \- is -, no font changes.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1"; }

# The options a --help shows: long ones anywhere, short ones where they
# open a line.
options() {
    grep -oE -- '(^|[^A-Za-z0-9-])--[a-z][a-z-]*[a-z]' "$1" |
        sed 's/^[^-]*//' | sort -u
    grep -oE -- '^ +-[A-Za-z],' "$1" | tr -d ' ,' | sort -u
}

# Every option of help text $1 appears in text $2 (named $3 in messages).
check_options() {
    n=0
    for o in $(options "$1"); do
        n=$((n + 1))
        grep -q -F -e "$o" "$2" || bad "$3 lacks $o, which --help shows"
    done
    [ "$n" -gt 0 ] || bad "no option found in the --help for $3"
}

"$daemon" --help >"$tmp/help"
plain "$d8" >"$tmp/page"
check_options "$tmp/help" "$tmp/page" "hostranged(8)"

"$ctl" --help >"$tmp/help"
plain "$c1" >"$tmp/page"
check_options "$tmp/help" "$tmp/page" "hostrangectl(1)"
cmds=$(sed -n '/^Commands:/,/^$/p' "$tmp/help" |
       sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
[ -n "$cmds" ] || bad "hostrangectl --help lists no command"
for c in $cmds; do
    awk -v c="$c" '/^\.S[HS] / { in_c = ($1 == ".SS" && $2 == c) } in_c' \
        "$tmp/page" >"$tmp/section"
    if [ ! -s "$tmp/section" ]; then
        bad "hostrangectl(1) has no section for the command $c"
        continue
    fi
    "$ctl" "$c" --help >"$tmp/chelp"
    check_options "$tmp/chelp" "$tmp/section" "hostrangectl(1), $c,"
done
for s in $(sed -n 's/^\.SS \([a-z][a-z]*\)$/\1/p' "$tmp/page"); do
    echo "$cmds" | grep -q -x -e "$s" ||
        bad "hostrangectl(1) has a section $s, which --help does not list"
done

# hostrange(3): the functions and the environment of the public header.
hdr=$src/client/include/hostrange.h
plain "$h3" >"$tmp/page"
for f in $(grep -oE '\bhr_[a-z][a-z_]*\(' "$hdr" | tr -d '(' | sort -u) \
         HR_SCOPE HR_SITE_INIT HR_PHASE_COLD HR_PHASE_WARM HOSTRANGE_DISABLE; do
    grep -q -w -F -e "$f" "$tmp/page" || bad "hostrange(3) lacks $f"
done
envs=$(sed -n '/Environment:/,/^ \*$/p' "$hdr" |
       grep -oE '\bHOSTRANGE(_[A-Z_]+)?\b' | sort -u)
[ -n "$envs" ] || bad "no environment variable found in hostrange.h"
for e in $envs; do
    grep -q -w -F -e "$e" "$tmp/page" || bad "hostrange(3) lacks $e"
done

# hostrangectl-history(1): every option of each subcommand's --help in its
# section, and the defaults the help states (named constants) in the page.
hist=$src/ctl/hostrangectl-history.1
render "$hist" 'HOSTRANGECTL-HISTORY(1)'
plain "$hist" >"$tmp/page"
for c in add list show detect check plot; do
    awk -v c="$c" '/^\.S[HS] / { in_c = ($1 == ".SS" && $2 == c) } in_c' \
        "$tmp/page" >"$tmp/section"
    [ -s "$tmp/section" ] || { bad "hostrangectl-history(1) has no section $c"; continue; }
    "$ctl" history "$c" --help >"$tmp/chelp"
    check_options "$tmp/chelp" "$tmp/section" "hostrangectl-history(1), $c,"
done
"$ctl" history detect --help >"$tmp/chelp"
for o in alpha window; do
    d=$(sed -n "s/.*(default \([0-9.]*\)).*/\1/p" "$tmp/chelp" | head -n 1)
    [ "$o" = window ] && d=$(grep -A1 -e '--window' "$tmp/chelp" |
                             sed -n 's/.*(default \([0-9.]*\)).*/\1/p')
    grep -A2 -e "--$o =" "$tmp/page" | grep -q "(default $d)" ||
        bad "hostrangectl-history(1) does not give --$o's default $d"
done

# hostrangectl-bisect(1): every option of bisect's --help, and the
# defaults the help states.
bis=$src/ctl/hostrangectl-bisect.1
render "$bis" 'HOSTRANGECTL-BISECT(1)'
plain "$bis" >"$tmp/page"
"$ctl" bisect --help >"$tmp/chelp"
check_options "$tmp/chelp" "$tmp/page" "hostrangectl-bisect(1)"
for o in rounds alpha threshold; do
    d=$(grep -A1 -e "--$o=" "$tmp/chelp" | sed -n 's/.*(default \([0-9.]*\)).*/\1/p')
    [ -n "$d" ] || { bad "bisect --help gives no default for --$o"; continue; }
    grep -A3 -e "--$o =" "$tmp/page" | tr '\n' ' ' | grep -q "(default $d)" ||
        bad "hostrangectl-bisect(1) does not give --$o's default $d"
done
d=$(grep -A1 -e "--max-rounds=" "$tmp/chelp" | sed -n 's/.*(default \([0-9]*\);.*/\1/p')
grep -A4 -e "--max-rounds =" "$tmp/page" | tr '\n' ' ' | grep -q "(default $d;" ||
    bad "hostrangectl-bisect(1) does not give --max-rounds's default $d"

[ "$fail" -eq 0 ] && echo "ok: the man pages render and match --help"
exit "$fail"
