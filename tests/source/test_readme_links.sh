#!/bin/sh
# Every page README.md sends its reader to exists: each link to a file of
# the tree (doc/*.md, a picture) and each man page it names as NAME(N),
# which must be a page NAME.N of the tree (hostrangectl(1):
# ctl/hostrangectl.1). Pages of other projects' programs (pprof(1) and the
# like) are not named in README. The check first runs on a small README
# with a missing page, which it must report, then on the real one; it
# lists every missing page, one per line.
set -u
src=${srcdir:-.}

# check_readme ROOT: prints "missing: WHAT (README: HOW)" for each page
# README.md under ROOT names that ROOT lacks; returns 1 when there is one
# or when README names no page at all.
check_readme() {
    root=$1
    readme=$root/README.md
    [ -f "$readme" ] || { echo "missing: README.md"; return 1; }
    n=0
    bad=0
    # Links: ](path) or ](path#anchor), not URLs.
    for link in $(grep -o '](\([^)#]*\)' "$readme" | sed 's/^](//' |
                  grep -v '^[a-z]*:' | sort -u); do
        n=$((n + 1))
        [ -e "$root/$link" ] ||
            { echo "missing: $link (README links to it)"; bad=1; }
    done
    # Man pages: hostrange*(N), the project's own.
    for page in $(grep -o 'hostrange[a-z-]*([1-8])' "$readme" | sort -u); do
        n=$((n + 1))
        name=${page%(*}
        sect=${page#*(}
        sect=${sect%)}
        found=$(find "$root" -name "$name.$sect" -not -path '*/.git/*' \
                -not -path '*/_*' -not -path '*/tests/cmake-stage/*' \
                2>/dev/null | head -n 1)
        [ -n "$found" ] ||
            { echo "missing: man page $name.$sect (README names $page)"; bad=1; }
    done
    [ "$n" -gt 0 ] || { echo "README names no page: nothing checked"; return 1; }
    echo "$n pages named"
    return $bad
}

# The checker must see a missing page and a present one.
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/doc"
printf '# x\n[a](doc/a.md) [b](doc/b.md) and x-tool(1), hostrange-x(1)\n' \
    >"$tmp/README.md"
: >"$tmp/doc/a.md"
out=$(check_readme "$tmp")
if [ $? -eq 0 ] || ! echo "$out" | grep -q '^missing: doc/b.md' ||
        ! echo "$out" | grep -q '^missing: man page hostrange-x.1' ||
        echo "$out" | grep -q 'doc/a.md'; then
    echo "FAIL: the checker got the test README wrong:"
    echo "$out"
    exit 1
fi

if ! check_readme "$src"; then
    echo "FAIL: README.md names pages that do not exist (listed above)"
    exit 1
fi
