#!/bin/sh
# The output of every hostrangectl command that reads run files or a
# history, in each of its formats, byte for byte against the expected
# outputs in tests/data/golden: a change of any printed byte fails, and
# the failure shows the difference (diff -u).
#
# The inputs are fixed: run files written here by tests/helpers/mkrun with
# fixed ids, times, machines and values (the same bytes each time), and
# the other tools' results in tests/data/golden/in. Each command runs in
# the temporary directory with relative names, so no temporary path
# reaches an output (but the daemon's answers, below). hostranged's --help
# is compared too. Each expected file NAME.out holds the command line,
# its standard output, then "--- stderr" and its standard error, then
# "--- exit N"; a file the command writes (-o) is expected as it is, in
# NAME.* beside it; a directory (history plot) file by file under NAME/;
# a pprof profile (gzip) as its inflated bytes (zlib's deflated bytes may
# differ between its versions).
#
# The commands that ask a daemon (dump, stats, ping, save, reset) ask a
# real hostranged serving a fixed run file (--load), on a private runtime
# directory.
#
# Normalised (sed, in normalise below), as inherently variable: the
# version of hostrange (PACKAGE_VERSION, as hostrangectl --version says
# it) becomes @VERSION@; and in the daemon's answers only, the temporary
# directory becomes @DIR@ and the daemon's pid, uptime, resident and
# aggregation memory (stats, ping) become @N@. Nothing else is: the
# outputs hold no wall time.
#
# Left out: record and ab (they time a command: no two runs alike) and
# bisect's search (it builds and times commits of a git tree); their
# --help texts are compared, and bisect's refusal outside a git tree.
#
# To rewrite the expected files from the current code (after a change of
# output that is meant), run with HOSTRANGE_GOLDEN_UPDATE=1, e.g.
#   HOSTRANGE_GOLDEN_UPDATE=1 make check \
#       TESTS=tests/service/test_outputs_golden.sh
# and review the difference (git diff tests/data/golden) before
# committing it.
set -u
: "${HOSTRANGECTL:?}" "${HOSTRANGED:?}"
mkrun=${top_builddir:-.}/tests/helpers/mkrun
[ -x "$mkrun" ] || { echo "no tests/helpers/mkrun: skipped"; exit 77; }
src=$(cd "${srcdir:-.}" && pwd) || exit 99
golden=$src/tests/data/golden
mkrun=$(cd "$(dirname "$mkrun")" && pwd)/mkrun
ctlbin=$HOSTRANGECTL
update=${HOSTRANGE_GOLDEN_UPDATE:-}
dir=$(mktemp -d) || exit 99
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
# The same answers whatever the caller's environment.
export LC_ALL=C TZ=UTC
unset HOSTRANGE_MACHINE HOSTRANGE_RUNTIME_DIR XDG_RUNTIME_DIR
fail() { echo "FAIL: $*"; exit 1; }
version=$("$ctlbin" --version | sed 's/^hostrangectl //')
[ -n "$version" ] || fail "no version"
cd "$dir" || exit 99
mkdir got || exit 99
# Rewriting starts afresh: the expected outputs go, the inputs stay.
if [ -n "$update" ]; then
    find "$golden" -mindepth 1 -maxdepth 1 ! -name in -exec rm -rf {} + ||
        fail "cannot clear $golden"
fi
failed=0

# normalise: the version (a literal string; its dots matched as dots).
vre=$(printf '%s' "$version" | sed 's/[].[\*^$/]/\\&/g')
normalise() { LC_ALL=C sed "s/$vre/@VERSION@/g"; }
# normalise_live: the daemon's answers also name its directory and pid.
dre=$(printf '%s' "$dir" | sed 's/[].[\*^$/]/\\&/g')
normalise_live() {
    LC_ALL=C sed -E -e "s/$dre/@DIR@/g" \
        -e 's/^(daemon\.(pid|uptime_s|rss_bytes|memory_bytes)) .*/\1 @N@/' \
        -e 's/^hostranged pid [0-9]+ /hostranged pid @N@ /'
}

# compare NAME: got/NAME against the expected file (or rewrite it).
compare() {
    if [ -n "$update" ]; then
        mkdir -p "$(dirname "$golden/$1")" && cp "got/$1" "$golden/$1" ||
            fail "cannot write $golden/$1"
    elif [ ! -f "$golden/$1" ]; then
        echo "FAIL: no expected output $1"; failed=$((failed + 1))
    elif ! cmp -s "$golden/$1" "got/$1"; then
        echo "FAIL: $1 differs:"
        diff -u "$golden/$1" "got/$1" | head -n 60
        failed=$((failed + 1))
    fi
}

# out NAME ARG...: $bin (hostrangectl unless set) ARG... run, its output,
# errors and exit status kept as NAME.out and compared.
out() {
    name=$1; shift
    rc=0
    "$bin" "$@" > o.tmp 2> e.tmp || rc=$?
    mkdir -p "$(dirname "got/$name")"
    {
        echo "\$ ${bin##*/} $*"
        cat o.tmp
        echo "--- stderr"
        cat e.tmp
        echo "--- exit $rc"
    } | normalise | $live > "got/$name.out"
    compare "$name.out"
}
live=cat
bin=$ctlbin

# keep_file NAME PATH: a file a command wrote, compared as NAME.
keep_file() {
    [ -f "$2" ] ||
        { echo "FAIL: $2 not written"; failed=$((failed + 1)); return; }
    mkdir -p "$(dirname "got/$1")"
    normalise < "$2" > "got/$1"
    compare "$1"
}

# keep_tree NAME DIR: every file under DIR, compared as NAME/..., and
# their list as NAME.files.
keep_tree() {
    [ -d "$2" ] ||
        { echo "FAIL: $2 not written"; failed=$((failed + 1)); return; }
    (cd "$2" && find . -type f | LC_ALL=C sort) > "got/$1.files"
    compare "$1.files"
    while read -r f; do
        keep_file "$1/${f#./}" "$2/$f"
    done < "got/$1.files"
}

# --- the inputs -----------------------------------------------------------
mk() { "$mkrun" "$@" || fail "mkrun $*"; }
# Two runs of one suite: backend.submit 20% slower in the second,
# io.close in the first only, io.flush in the second only; a cold key.
mk -o base.hrs -i g0000000000000000000000000000base -m time=1700000000 \
    -m commit=b1 -k n1/backend.submit=1000 -k n1/cache.lookup=500 \
    -c n2/io.open=8000 -k n2/io.read=3000 -k n2/io.close=200
mk -o new.hrs -i g00000000000000000000000000000new -m time=1700000600 \
    -m commit=b2 -k n1/backend.submit=1200 -k n1/cache.lookup=500 \
    -c n2/io.open=8000 -k n2/io.read=3000 -k n2/io.flush=400
# Rounds: eight runs of each side (backend.submit 20% slower in the
# second), merged into runs of eight rounds.
for i in 1 2 3 4 5 6 7 8; do
    mk -o rb$i.hrs -i "$(printf 'g%031d' "$((100 + i))")" \
        -m time=$((1700001000 + i)) -m commit=r1 \
        -k "n1/backend.submit=$((996 + (i * 7) % 9))" \
        -k "n1/cache.lookup=$((498 + (i * 3) % 5))"
    mk -o rn$i.hrs -i "$(printf 'g%031d' "$((200 + i))")" \
        -m time=$((1700002000 + i)) -m commit=r2 \
        -k "n1/backend.submit=$((1196 + (i * 5) % 9))" \
        -k "n1/cache.lookup=$((498 + (i * 2) % 5))"
done
# Calling contexts, cold and warm, nested three deep; gemm under two
# parents; a name with a space and a %.
mk -o paths.hrs -i g000000000000000000000000000paths -m time=1700003000 \
    -m commit=p1 \
    -P 'model/init=9000' -P 'model/init;load=6000' \
    -p 'model/step=5000' -p 'model/step;forward=3000' \
    -p 'model/step;forward;gemm=2000,step;backward;gemm=1000' \
    -p 'model/step;forward;add=400' -p 'model/step;backward=1500' \
    -p 'model/step;backward;odd name%=50' \
    -p 'data/load=700' -k 'data/flat=300'
# The same, gemm under forward 20% slower (and so forward and step).
mk -o paths2.hrs -i g00000000000000000000000000paths2 -m time=1700003060 \
    -m commit=p2 \
    -P 'model/init=9000' -P 'model/init;load=6000' \
    -p 'model/step=5400' -p 'model/step;forward=3400' \
    -p 'model/step;forward;gemm=2400,step;backward;gemm=1000' \
    -p 'model/step;forward;add=400' -p 'model/step;backward=1500' \
    -p 'model/step;backward;odd name%=50' \
    -p 'data/load=700' -k 'data/flat=300'
# A history: twelve runs of machine A, backend.submit 10% slower from
# c8; four of machine B at its own level; a pull request's run, slower.
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
    v=1000; [ "$i" -ge 8 ] && v=1100
    mk -o "h$i.hrs" -i "$(printf 'a%031d' "$i")" -H hostA \
        -m time=$((1700010000 + i * 60)) -m commit=c$i \
        -k "n1/backend.submit=$((v + (i * 7) % 11))" \
        -k "n1/cache.lookup=$((500 + (i * 3) % 7))" \
        -c "n1/setup=$((4000 + (i * 5) % 7))"
done
for i in 0 1 2 3; do
    mk -o "hb$i.hrs" -i "$(printf 'b%031d' "$i")" -H hostB \
        -C "Test CPU 4000" \
        -m time=$((1700010030 + i * 60)) -m commit=c$i \
        -k "n1/backend.submit=$((900 + i))"
done
mk -o pr.hrs -i c0000000000000000000000000000pr1 -H hostA -m commit=pr1 \
    -k n1/backend.submit=1300 -k n1/cache.lookup=503 -k n1/new.key=10
cp "$golden/in/gbench.json" "$golden/in/results.csv" \
    "$golden/in/pytest-benchmark.json" . || exit 99

# --- help: the main one, each command's, each history subcommand's ------
out version --version
out help --help
for c in dump stats reset ping record save merge diff plot ab bisect \
    history; do
    out "help-$c" "$c" --help
done
for c in add list show detect check plot; do
    out "help-history-$c" history "$c" --help
done
out bad-command nope
bin=$HOSTRANGED
out help-hostranged --help
bin=$ctlbin

# --- merge ----------------------------------------------------------------
out merge-rounds-base merge -o rbase.hrs -m time=1700004000 rb1.hrs \
    rb2.hrs rb3.hrs rb4.hrs rb5.hrs rb6.hrs rb7.hrs rb8.hrs
out merge-rounds-new merge -o rnew.hrs -m time=1700004060 -m side=new \
    rn1.hrs rn2.hrs rn3.hrs rn4.hrs rn5.hrs rn6.hrs rn7.hrs rn8.hrs
out merge-unsorted merge --unsorted -o unsorted.hrs -m time=1700004120 \
    rb1.hrs rn1.hrs
out dump-unsorted dump --from unsorted.hrs --fields all,rounds
out merge-shards merge -o shards.hrs -m time=1700004180 base.hrs paths.hrs
out merge-duplicate merge -o dup.hrs rb1.hrs rb1.hrs
out merge-allow-duplicates merge --allow-duplicates --max-memory 64M \
    -o dup.hrs -m time=1700004240 rb1.hrs rb1.hrs
out dump-duplicates dump --from dup.hrs --fields all,rounds
out dump-merged dump --from shards.hrs --fields all

# --- dump --from: every format, every field set, by range and by path -----
for f in jsonl csv table bmf benchmark-action; do
    out "dump-$f" dump --from base.hrs --format "$f"
    out "dump-paths-$f" dump --from paths.hrs --format "$f"
done
for f in reference all observer all,observer rounds all,rounds; do
    out "dump-fields-$f" dump --from rbase.hrs --fields "$f"
done
out dump-correct dump --from paths.hrs --correct-observer
for f in jsonl csv table; do
    out "dump-by-path-$f" dump --from paths.hrs --by path --format "$f"
done
out dump-by-path-all dump --from paths.hrs --by path --fields all
for v in total median count; do
    out "dump-folded-$v" dump --from paths.hrs --format folded --value "$v"
done
out dump-tree dump --from paths.hrs --format tree
out dump-filter dump --from paths.hrs --node 'mod*' --phase warm \
    --range 'g*'
out dump-filter-none dump --from paths.hrs --range nothing
out dump-output dump --from paths.hrs --format csv -o dump-o.csv
keep_file dump-output.csv dump-o.csv
out dump-pprof dump --from paths.hrs --format pprof -o prof.pb.gz
if gzip -dc prof.pb.gz > prof.pb 2>/dev/null; then
    keep_file dump-pprof.pb prof.pb
else
    echo "FAIL: the pprof profile is not gzip"; failed=$((failed + 1))
fi
# To standard output: the same profile (compared inflated: zlib's
# deflated bytes may differ between its versions).
"$ctlbin" dump --from paths.hrs --format pprof > prof2.pb.gz 2> e.tmp ||
    { echo "FAIL: pprof to stdout: $(cat e.tmp)"; failed=$((failed + 1)); }
gzip -dc prof2.pb.gz > prof2.pb 2>/dev/null &&
    cmp -s prof.pb prof2.pb ||
    { echo "FAIL: pprof to stdout differs"; failed=$((failed + 1)); }
out dump-bad-format dump --from base.hrs --format nope
out dump-missing dump --from missing.hrs

# --- diff: every format; rounds; --max-rounds; gates ----------------------
for f in table jsonl junit markdown; do
    out "diff-$f" diff --format "$f" base.hrs new.hrs
    out "diff-rounds-$f" diff --format "$f" rbase.hrs rnew.hrs
done
out diff-limit diff --format markdown --limit 1 base.hrs new.hrs
out diff-fail-above diff --fail-above 'backend.*=3,*=50' base.hrs new.hrs
out diff-warn-above diff --warn-above 10 --format junit base.hrs new.hrs
out diff-rounds-fail diff --fail-above 5 --format jsonl rbase.hrs rnew.hrs
out diff-min-rounds diff --min-rounds 9 rbase.hrs rnew.hrs
out diff-alpha diff --alpha 0.001 --threshold 1 base.hrs new.hrs
for f in table jsonl; do
    out "diff-max-rounds-$f" diff --max-rounds 8 --first-look 4 \
        --format "$f" rbase.hrs rnew.hrs
done
out diff-normalize diff --normalize cache.lookup --format jsonl \
    rbase.hrs rnew.hrs
out diff-machines diff --strict h0.hrs hb0.hrs
out diff-machines-loose diff h0.hrs hb0.hrs
out diff-same diff base.hrs base.hrs

# --- plot: one node, several nodes (a directory), --diff ------------------
out plot-one plot --from paths.hrs --node model -o model.svg
keep_file plot-one.svg model.svg
out plot-all plot --from paths.hrs -o all.svg
keep_tree plot-all all
out plot-diff plot --diff -o diff.svg base.hrs new.hrs
keep_tree plot-diff diff
out plot-diff-one plot --diff --node n1 -o diff1.svg base.hrs new.hrs
keep_file plot-diff-one.svg diff1.svg
out plot-diff-alpha plot --diff --alpha 0.001 --node n1 -o diff2.svg \
    base.hrs new.hrs
keep_file plot-diff-alpha.svg diff2.svg
out plot-diff-paths plot --diff -o pdiff.svg paths.hrs paths2.hrs
keep_tree plot-diff-paths pdiff
out diff-paths diff paths.hrs paths2.hrs

# --- history: add, list, show, detect, check, plot ------------------------
db=h.db
out history-add history add --db $db h0.hrs h1.hrs h2.hrs h3.hrs
out history-add-rest history add --db $db h4.hrs h5.hrs h6.hrs h7.hrs h8.hrs \
    h9.hrs h10.hrs h11.hrs hb0.hrs hb1.hrs hb2.hrs hb3.hrs
out history-add-again history add --db $db h0.hrs
out history-add-machine history add --db $db --machine named -m note=x \
    rbase.hrs
out history-list history list --db $db
for f in table jsonl csv; do
    out "history-show-$f" history show --db $db --format "$f"
done
out history-show-filter history show --db $db --range backend.submit \
    --machine 'Test CPU 4000*'
for f in text jsonl junit markdown; do
    out "history-detect-$f" history detect --db $db --format "$f"
    out "history-detect-series-$f" history detect --db $db --series \
        --format "$f"
done
out history-detect-fail history detect --db $db --fail-above 5
out history-detect-window history detect --db $db --window 5 \
    --min-change 20
for f in text jsonl junit markdown; do
    out "history-check-$f" history check --db $db --format "$f" pr.hrs
done
out history-check-fail history check --db $db --fail-above 10 pr.hrs
out history-check-threshold history check --db $db --threshold 50 \
    --alpha 0.05 --window 3 --format jsonl pr.hrs
out history-check-min history check --db $db --min-history 20 pr.hrs
out history-check-rounds history check --db $db --format jsonl rnew.hrs
out history-plot history plot --db $db -o page
keep_tree history-plot page
out history-plot-filter history plot --db $db -o page2 --range cache.lookup
keep_tree history-plot-filter page2
out history-missing history list --db missing.db

# --- history add --from: other tools' results -----------------------------
idb=i.db
out history-import-gbench history add --db $idb --from gbench gbench.json
out history-import-pytest history add --db $idb --from pytest-benchmark \
    pytest-benchmark.json
out history-import-csv history add --db $idb --from csv results.csv
out history-import-list history list --db $idb
out history-import-show history show --db $idb --format jsonl
out history-import-detect history detect --db $idb --series
out history-import-check-many history check --db $idb --from csv results.csv
printf '%s\n' commit,time,machine,name,value,unit \
    k4,1700000180,csvbox,parse,1905,ns k4,1700000180,csvbox,render,2.5,us \
    > one.csv
out history-import-check history check --db $idb --from csv one.csv

# --- a real daemon serving a fixed run: its answers -----------------------
export HOSTRANGE_RUNTIME_DIR="$dir/rt"
timeout 60 "$HOSTRANGED" -q -l paths.hrs & pid=$!
"$ctlbin" ping -w 10000 >/dev/null || fail "no daemon"
live=normalise_live
out live-ping ping
out live-stats stats
out live-stats-losses stats --losses
for f in jsonl csv table folded tree bmf benchmark-action; do
    out "live-dump-$f" dump --format "$f"
done
out live-dump-by-path dump --by path --fields all
out live-dump-filter dump --node data --format csv
out live-save save -o live.hrs -m time=1700005000
out live-dump-saved dump --from live.hrs --fields all
out live-save-unsorted save --unsorted -o live-u.hrs -m time=1700005060
out live-dump-saved-unsorted dump --from live-u.hrs --by path --fields all
out live-plot plot -o live.svg
keep_tree live-plot live
out live-reset reset --node data
out live-dump-reset dump --format table
kill "$pid" && wait "$pid" || fail "daemon stop"
pid=
out live-no-daemon ping
live=cat
unset HOSTRANGE_RUNTIME_DIR

# --- bisect: refused outside a git tree, with --from-detect's history -----
export GIT_DIR="$dir/no-git" GIT_CEILING_DIRECTORIES="$dir"
out bisect-no-git bisect --from-detect 'backend.submit inclusive' --db $db \
    -- true
unset GIT_DIR GIT_CEILING_DIRECTORIES

[ -n "$update" ] && { echo "expected outputs rewritten in $golden"; exit 0; }
# Every expected output was made (none left over from a command gone).
(cd "$golden" && find . -type f ! -path './in/*' | LC_ALL=C sort) > want.list
(cd got && find . -type f | LC_ALL=C sort) > got.list
cmp -s want.list got.list || {
    echo "FAIL: the outputs made are not those expected:"
    diff -u want.list got.list; failed=$((failed + 1))
}
[ "$failed" -eq 0 ] || fail "$failed outputs differ from tests/data/golden"
exit 0
