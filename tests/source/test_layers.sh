#!/bin/sh
# The layers of the source tree: every `#include "..."` of a folder's C,
# CUDA and header files must name a file of a layer that folder may use.
# Arrows point one way:
#
#   lib/util, proto <- lib/stat <- lib/agg <- {lib/run, lib/view}
#                      (lib/util below every library: the growable array)
#                   <- {daemon, ctl}; lib/util, lib/run, lib/view, lib/agg,
#                   lib/stat, proto <- lib/history <- ctl (the history: runs
#                   read from run files; JSON of imported results; its
#                   page built into lib/view's page types, so that lib/view
#                   stays formatting, linked and fuzzed without databases)
#                   lib/util, lib/run, lib/agg, lib/stat, proto <- lib/runner
#                   <- ctl (the processes and directories of the commands
#                   that run others: record, ab, bisect)
#   proto <- client (its public header: hostrange.h) <- nvtx, ops, demo
#   ops <- bench, python; the benchmarks of perf/ may use the test library
#
# so the daemon and the CLI never include each other, no library includes
# a program, and nothing outside client/ sees the client's internals. The
# checker is first run on a small tree with a known wrong arrow, which it
# must reject, then on the sources.
set -u
src=${srcdir:-.}

# folder: the layers its files may include ("public" is hostrange.h).
rules='
proto: proto
lib/util: lib/util
client: client proto public
lib/stat: lib/stat lib/util
lib/agg: lib/agg lib/stat lib/util proto
lib/view: lib/view lib/agg lib/stat lib/util proto
lib/run: lib/run lib/agg lib/stat lib/util proto
daemon: daemon lib/run lib/agg lib/stat lib/util proto
lib/history: lib/history lib/view lib/run lib/agg lib/stat lib/util proto
lib/runner: lib/runner lib/run lib/agg lib/stat lib/util proto
ctl: ctl lib/runner lib/history lib/view lib/run lib/agg lib/stat lib/util proto
nvtx: nvtx public
ops: ops public
demo: public
bench: bench ops proto public
python: python ops public
perf: perf lib/history lib/run lib/agg lib/stat lib/util proto tests/lib public
'

# check_tree ROOT: prints each include against the layers and returns 1 when
# there is one, or when a folder of the rules has no include at all (a
# check that saw nothing has checked nothing).
check_tree() {
    root=$1
    bad=0
    echo "$rules" | while IFS=: read -r folder allowed; do
        [ -n "$folder" ] || continue
        [ -d "$root/$folder" ] || { echo "no folder $folder"; exit 1; }
        files=$(find "$root/$folder" -name '*.[ch]' -o -name '*.cu' \
                -o -name '*.hpp' -o -name '*.cc')
        [ -n "$files" ] || { echo "$folder: no source file"; exit 1; }
        # file:line:#include "target"
        grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files |
        sed 's|^'"$root"'/||' |
        awk -v folder="$folder" -v allowed="$allowed" '
            BEGIN { n = split(allowed, a, " "); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
            {
                seen++
                t = $0; sub(/^[^"]*"/, "", t); sub(/".*$/, "", t)
                if (t == "config.h") next
                if (t == "hostrange.h" || t == "hostrange.hpp") layer = "public"
                else if (t ~ /^lib\//) { split(t, p, "/"); layer = "lib/" p[2] }
                else if (t ~ /^tests\/lib\//) layer = "tests/lib"
                else if (t ~ /\//) { split(t, p, "/"); layer = p[1] }
                else layer = folder   # beside the file: its own folder
                if (!(layer in ok)) {
                    file = $0; sub(/:.*/, "", file)
                    printf "%s: includes %s (%s may not use %s)\n", file, t, folder, layer
                    bad = 1
                }
            }
            END { if (seen == 0) { print folder ": no include seen"; bad = 1 } exit bad }' ||
            exit 1
    done
}

# The checker must see a wrong arrow: lib/agg including the daemon.
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
echo "$rules" | while IFS=: read -r folder allowed; do
    [ -n "$folder" ] || continue
    mkdir -p "$tmp/$folder"
    echo '#include "config.h"' >"$tmp/$folder/x.c"
done
echo '#include "daemon/ingest.h"' >>"$tmp/lib/agg/x.c"
if check_tree "$tmp" >"$tmp/out"; then
    echo "FAIL: the checker passed a tree where lib/agg includes the daemon"
    exit 1
fi
grep -q 'lib/agg/x.c: includes daemon/ingest.h' "$tmp/out" || {
    echo "FAIL: the checker did not name the wrong arrow:"; cat "$tmp/out"
    exit 1
}

# hostranged never links the history or its databases.
if grep -n -E 'libhrhistory|SQLITE3_|PQ_' "$src/daemon/local.mk"; then
    echo "FAIL: daemon/local.mk links the history (above)"
    exit 1
fi

if check_tree "$src"; then
    echo "ok: every include follows the layers"
else
    echo "FAIL: includes against the layers (above)"
    exit 1
fi

# Run files are lib/run's: ctl/ keeps options, calls and printing, and no
# file of ctl/ names a run file's records (the protobuf-c types, functions
# and initializers of RunHeader, RunKey, RunEnd, RoundKey and the rest).
records_re='Hostrange__(Run|RoundKey)|hostrange__(run|round_key)_|HOSTRANGE__(RUN|ROUND_KEY)_'

# check_records ROOT: prints each line of ROOT/ctl that names a run
# record, and returns 1 when there is one.
check_records() {
    found=0
    for f in "$1"/ctl/*.[ch]; do
        [ -f "$f" ] || continue
        rel=${f#"$1"/}
        if lines=$(grep -n -E "$records_re" "$f"); then
            printf '%s\n' "$lines" | sed "s|^|$rel:|"
            found=1
        fi
    done
    return $found
}

# The checker must see a run record named in ctl/.
mkdir -p "$tmp/records/ctl"
printf 'static void f(Hostrange__RunEnd *e)\n{\n}\n' >"$tmp/records/ctl/x.c"
printf 'static int g(struct hrr_whole *r);\n' >"$tmp/records/ctl/y.c"
if check_records "$tmp/records" >"$tmp/out"; then
    echo "FAIL: the checker passed a ctl/ file that names a run record"
    exit 1
fi
grep -q '^ctl/x.c:1:' "$tmp/out" && ! grep -q ctl/y.c "$tmp/out" || {
    echo "FAIL: the checker did not name the file:"; cat "$tmp/out"
    exit 1
}

if check_records "$src"; then
    echo "ok: no file of ctl/ names a run file's records"
else
    echo "FAIL: ctl/ files that name run records (above): lib/run reads them"
    exit 1
fi

# Within a folder, calls between files point one way too: no file calls
# (or reads a variable of) a file that calls it back, directly or round a
# longer circle. A file's names are the functions and variables it
# defines at file scope without `static`; comments are left out. Folders
# not checked, and why: lib/agg (agg.c, rows.c and paths.c call each
# other), ops (nocuda.c defines what cuda_*.c define, one or the other is
# built), python (the module's parts call module.c and back).
acyclic='proto lib/util lib/stat lib/run lib/runner lib/view daemon ctl client nvtx
bench perf'

# The code of C file $1 without its comments.
code() { ${CC:-cc} -fpreprocessed -dD -E -P "$1" 2>/dev/null; }

# file_edges DIR: "CALLER CALLEE" for each file of DIR that names what
# another file of DIR defines.
file_edges() {
    for f in "$1"/*.c; do
        [ -f "$f" ] || continue
        code "$f" | awk -v f="$f" '
            /^[A-Za-z]/ && !/^(static|typedef|extern|enum|union|#)/ &&
            !/^struct [a-z_0-9]+ \{/ && !/;[[:space:]]*$/ ||
            /^[a-z].*\[[^]]*\];$/ && !/^(static|extern)/ {
                if (match($0, /[A-Za-z_][A-Za-z0-9_]*(\(|\[| =)/)) {
                    id = substr($0, RSTART, RLENGTH)
                    sub(/(\(|\[| =)$/, "", id)
                    if (id != "main") print f, id
                }
            }'
    done >"$tmp/defs"
    for f in "$1"/*.c; do
        [ -f "$f" ] || continue
        code "$f" | grep -o '[A-Za-z_][A-Za-z0-9_]*' | sort -u |
        awk -v f="$f" 'NR == FNR { def[$2] = $1; next }
                       ($1 in def) && def[$1] != f { print f, def[$1] }' \
            "$tmp/defs" -
    done | sort -u
}

# check_circles ROOT FOLDER...: prints the files of each circle (tsort
# names them) and returns 1 when there is one.
check_circles() {
    root=$1
    shift
    bad=0
    for folder in "$@"; do
        file_edges "$root/$folder" >"$tmp/edges"
        [ -s "$tmp/edges" ] || continue
        if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
            echo "$folder: files that call each other:"
            sed -n 's|^tsort: '"$root"'/|    |p' "$tmp/loop"
            bad=1
        fi
    done
    return $bad
}

# The checker must see a circle: a.c calls b.c, which calls a.c back.
mkdir -p "$tmp/circle/x"
printf 'int x_a(void)\n{\n    return x_b();\n}\n' >"$tmp/circle/x/a.c"
printf '/* x_a() in a comment is no call */\nint x_c(void);\n' \
    >"$tmp/circle/x/c.c"
printf 'int x_b(void)\n{\n    return x_a();\n}\n' >"$tmp/circle/x/b.c"
if check_circles "$tmp/circle" x >"$tmp/out"; then
    echo "FAIL: the checker passed files that call each other"
    exit 1
fi
grep -q 'x/a.c' "$tmp/out" && grep -q 'x/b.c' "$tmp/out" &&
    ! grep -q 'x/c.c' "$tmp/out" || {
    echo "FAIL: the checker did not name the circle:"; cat "$tmp/out"
    exit 1
}

if check_circles "$src" $acyclic; then
    echo "ok: within each folder checked, calls between files point one way"
else
    echo "FAIL: files that call each other (above)"
    exit 1
fi
