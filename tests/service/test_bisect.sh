#!/bin/sh
# hostrangectl bisect in a real git repository of 33 commits of a small
# program linked with libhostrange: one commit makes range work.a 10%
# slower (a busy-wait of fixed length made longer), an earlier one makes
# range work.b 10% faster, and the commit in the middle of the line
# breaks the build (the next one mends it). bisect on work.a names the
# slower commit, within ceil(log2 32) + 3 steps, skips the broken commit
# and says so, in JSONL (one line per step, then the answer) and as
# text; --state resumes a bisect from its steps. No worktree, temporary
# directory or process is left. Skips (77) without git or a C compiler.
set -u
: "${HOSTRANGECTL:?}" "${top_builddir:?}"
command -v git >/dev/null 2>&1 || { echo "no git: skipped"; exit 77; }
cc=${HOSTRANGE_TEST_CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "no C compiler: skipped"; exit 77; }
lib=$(cd "$top_builddir/client/.libs" 2>/dev/null && pwd) ||
    { echo "libhostrange not built (no client/.libs): skipped"; exit 77; }
inc=$(cd "${srcdir:-.}/client/include" && pwd) || exit 99
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ctl() { "$HOSTRANGECTL" "$@"; }
export TMPDIR="$dir/tmp"
mkdir "$TMPDIR"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

# The repository: commit 0 is the good end, 32 the bad end; commit 8
# makes work.b faster (20 us to 18 us), 16 breaks the build, 17 mends it,
# 21 makes work.a slower (20 us to 22 us).
repo=$dir/repo
mkdir "$repo" && cd "$repo" || exit 99
git init -q . || fail "git init"
git config user.email bisect@example.org
git config user.name bisect
git config commit.gpgsign false
cat > prog.c <<'END'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "hostrange.h"
#include "cost.h"

static hr_site s_a = HR_SITE_INIT("work.a");
static hr_site s_b = HR_SITE_INIT("work.b");

static void spin(uint64_t ns)
{
    uint64_t t0 = hr_now_ns();

    while (hr_now_ns() - t0 < ns)
        ;
}

int main(void)
{
    const char *commit = getenv("HOSTRANGE_BISECT_COMMIT");

    if (commit == NULL || hr_labels_set("bisect", "prog", "cpu",
                                        HR_PHASE_WARM) != 0 ||
        hr_window_begin() != 0)
        return 1;
    for (int i = 0; i < CALLS; i++) {
        {
            HR_SCOPE(a, &s_a);
            spin(A_NS);
        }
        {
            HR_SCOPE(b, &s_b);
            spin(B_NS);
        }
    }
    hr_window_end();
    return hr_flush(5000) == 0 ? 0 : 1;
}
END
a=20000 b=20000
for i in $(seq 0 32); do
    case $i in
    8) b=18000 ;;
    21) a=22000 ;;
    esac
    {
        echo "/* version $i */"
        echo "#define CALLS 200"
        echo "#define A_NS $a"
        [ "$i" -eq 16 ] && echo "#error broken on purpose"
        echo "#define B_NS $b"
    } > cost.h
    git add prog.c cost.h && git commit -q -m "commit $i" || fail "commit $i"
    git tag "c$i"
done
# The build's linker flags too: a library built with the sanitizers needs
# their runtime in the program that loads it.
build="$cc -O1 -I'$inc' -o prog prog.c -L'$lib' -lhostrange -Wl,-rpath,'$lib' ${HOSTRANGE_TEST_LDFLAGS:-}"
want=$(git rev-parse c21)

# One bisect, in JSONL, its steps kept in a state file.
ctl bisect --good c0 --bad c32 --range work.a --build "$build" \
    --format jsonl --state "$dir/state" -- ./prog \
    > "$dir/out" 2> "$dir/err" ||
    fail "bisect exited $?: $(cat "$dir/err")"
last=$(tail -n 1 "$dir/out")
echo "$last" | grep -q "^{\"first_bad\":\"$want\",\"subject\":\"commit 21\",\"certain\":true," ||
    fail "not c21: $last; $(cat "$dir/err")"
echo "$last" | grep -q '"key":{"node":"bisect","operator":"prog","backend":"cpu","phase":"warm","range":"work.a","metric":"inclusive"},' ||
    fail "key: $last"
steps=$(echo "$last" | sed -n 's/.*"steps":\([0-9]*\),.*/\1/p')
[ -n "$steps" ] && [ "$steps" -le 8 ] || fail "steps: $steps (at most 8)"
# One line per step, numbered, then the answer.
[ "$(grep -c '^{"step":' "$dir/out")" -eq $((steps + 1)) ] ||
    fail "step lines: $(cat "$dir/out")"
head -n 1 "$dir/out" | grep -q '^{"step":0,.*"verdict":"slower",' ||
    fail "the ends: $(head -n 1 "$dir/out")"
# The change is about +10% (the busy-wait's 2 us on 20 us), its interval
# around it.
change=$(echo "$last" | sed -n 's/.*"change":\([-0-9.e+]*\),.*/\1/p')
awk -v c="$change" 'BEGIN { exit !(c > 7 && c < 13) }' ||
    fail "change $change"
# The broken commit is the first step: skipped, and said.
grep -q "^{\"step\":1,\"commit\":\"$(git rev-parse c16)\",\"subject\":\"commit 16\",\"verdict\":\"skipped\",.*\"why\":\"its build failed (status 1)\"" \
    "$dir/out" || fail "c16 not skipped: $(cat "$dir/out")"
grep -q "the build of $(git rev-parse --short=12 c16) failed" "$dir/err" ||
    fail "the failed build not said: $(cat "$dir/err")"
grep -q "#error broken on purpose" "$dir/err" ||
    fail "the build's output not shown: $(cat "$dir/err")"
# work.b's faster commit did not mislead it: every commit before c21 is
# like good, every one from c21 like bad.
for i in $(seq 1 31); do
    h=$(git rev-parse "c$i")
    v=$(grep "\"commit\":\"$h\"" "$dir/out" | sed -n 's/.*"subject":"[^"]*","verdict":"\([a-z ]*\)".*/\1/p')
    case $v in
    "") ;;
    skipped) [ "$i" -eq 16 ] || fail "c$i skipped" ;;
    "like good") [ "$i" -lt 21 ] || fail "c$i like good" ;;
    "like bad") [ "$i" -ge 21 ] || fail "c$i like bad" ;;
    *) fail "c$i $v" ;;
    esac
done
# Nothing left: no worktree, no temporary directory, no daemon.
[ -z "$(ls "$TMPDIR")" ] || fail "left in TMPDIR: $(ls "$TMPDIR")"
[ "$(git worktree list | wc -l)" -eq 1 ] ||
    fail "worktrees left: $(git worktree list)"
[ -z "$(git status --porcelain)" ] || fail "the tree changed: $(git status --porcelain)"

# Resumed from the state file: no step is measured again, the same answer
# as text.
[ "$(grep -c . "$dir/state")" -eq $((steps + 1)) ] ||
    fail "state: $(cat "$dir/state")"
ctl bisect --good c0 --bad c32 --range work.a --build "$build" \
    --state "$dir/state" -- ./prog > "$dir/text" 2> "$dir/err2" ||
    fail "resumed bisect exited $?: $(cat "$dir/err2")"
grep -q "^first bad commit: $want commit 21$" "$dir/text" ||
    fail "resumed: $(cat "$dir/text")"
grep -q "step [0-9]*:" "$dir/err2" && fail "a step measured again: $(cat "$dir/err2")"
[ "$(grep -c . "$dir/state")" -eq $((steps + 1)) ] ||
    fail "state grew: $(cat "$dir/state")"
# The same as Markdown (from the state, measuring nothing), read by
# python3-markdown with its tables extension: the answer, and a row for
# the ends and for each step.
ctl bisect --good c0 --bad c32 --range work.a --state "$dir/state" \
    --format markdown -- ./prog > "$dir/md" 2> /dev/null ||
    fail "markdown exited $?"
py=/usr/bin/python3
if "$py" -c 'import markdown' 2>/dev/null; then
    "$py" - "$dir/md" "$want" "$steps" <<'END' || fail "markdown: $(cat "$dir/md")"
import sys, markdown
from html.parser import HTMLParser
text = open(sys.argv[1]).read()
html = markdown.markdown(text, extensions=["tables"])
class P(HTMLParser):
    rows, cells, code = 0, [], []
    in_code = False
    def handle_starttag(self, tag, a):
        if tag == "tr": self.rows += 1
        if tag == "code": self.in_code = True
    def handle_endtag(self, tag):
        if tag == "code": self.in_code = False
    def handle_data(self, d):
        if self.in_code: self.code.append(d)
p = P()
p.feed(html)
assert sys.argv[2] in p.code, p.code
assert p.rows == int(sys.argv[3]) + 2, p.rows
assert "<h3>bisect: work.a inclusive (bisect, warm)</h3>" in html, html
END
else
    echo "no python3-markdown: the Markdown is not read back"
fi

# A state of other ends is refused.
ctl bisect --good c1 --bad c32 --range work.a --state "$dir/state" \
    -- ./prog > /dev/null 2> "$dir/err3"
[ $? -eq 2 ] || fail "another bisect's state was used"
grep -q "holds the steps of another bisect" "$dir/err3" ||
    fail "$(cat "$dir/err3")"

# Stopped by SIGTERM during a step: status 143, the steps done kept in
# the state file, nothing left behind.
"$HOSTRANGECTL" bisect --good c0 --bad c32 --range work.a --build "$build" \
    --state "$dir/state2" -- ./prog > /dev/null 2> "$dir/err4" &
pid=$!
n=0
until grep -q "^hostrangectl bisect: step 1:" "$dir/err4" 2>/dev/null || [ $n -ge 600 ]; do
    sleep 0.1
    n=$((n + 1))
done
kill -TERM $pid
wait $pid
st=$?
[ $st -eq 143 ] || fail "stopped bisect exited $st: $(cat "$dir/err4")"
grep -q "stopped by SIGTERM; the steps done are kept in" "$dir/err4" ||
    fail "$(cat "$dir/err4")"
head -n 1 "$dir/state2" | grep -q '^{"step":0,' || fail "state2: $(cat "$dir/state2")"
[ -z "$(ls "$TMPDIR")" ] || fail "left after SIGTERM: $(ls "$TMPDIR")"
ps -eo pid=,args= | grep -F -e "--runtime-dir $TMPDIR/" | grep -v grep &&
    fail "a daemon left after SIGTERM"
# ... and resumed: the steps kept are not measured again, the answer the
# same.
ctl bisect --good c0 --bad c32 --range work.a --build "$build" \
    --state "$dir/state2" -- ./prog > "$dir/text2" 2> "$dir/err6" ||
    fail "resumed after SIGTERM: exited $?: $(cat "$dir/err6")"
grep -q "^first bad commit: $want commit 21$" "$dir/text2" ||
    fail "resumed after SIGTERM: $(cat "$dir/text2")"
grep -q "step 1:" "$dir/err6" && fail "step 1 measured again: $(cat "$dir/err6")"
grep -q "^hostrangectl bisect: going on from .*: the ends and [1-9]" "$dir/err6" ||
    fail "not resumed: $(cat "$dir/err6")"
[ "$(git worktree list | wc -l)" -eq 1 ] ||
    fail "worktrees left after SIGTERM: $(git worktree list)"

# From the history: a run every few commits (c0, c4, ..., c32, c15 for
# the broken c16), so that detect's change point of work.a spans c20 to
# c24. detect prints the bisect command line for it, and bisect
# --from-detect takes its ends and key from it.
for i in 0 4 8 12 15 20 24 28 32; do
    git worktree add -q --detach "$dir/wt" "c$i" || fail "worktree c$i"
    (cd "$dir/wt" && sh -c "$build" > /dev/null 2>&1) || fail "build c$i"
    HOSTRANGE_BISECT_COMMIT=x ctl record --save "$dir/run$i.hrs" -o /dev/null \
        --meta commit="$(git rev-parse "c$i")" --meta time=$((1700000000 + i)) \
        -- "$dir/wt/prog" > /dev/null 2>&1 || fail "record c$i"
    ctl history add --db "$dir/h.db" "$dir/run$i.hrs" > /dev/null ||
        fail "history add c$i"
    git worktree remove --force "$dir/wt" || fail "worktree remove c$i"
done
ctl history detect --db "$dir/h.db" --range work.a > "$dir/detect" ||
    fail "detect: $(cat "$dir/detect")"
grep -q "slower by .* at commit $(git rev-parse c24) " "$dir/detect" ||
    fail "detect: $(cat "$dir/detect")"
grep -q "^  4 commits from $(git rev-parse c20) to $(git rev-parse c24): hostrangectl bisect --good $(git rev-parse c20) --bad $(git rev-parse c24) --range work.a --node bisect --phase warm --metric [a-z]* --build CMD -- COMMAND$" \
    "$dir/detect" || fail "no bisect line: $(cat "$dir/detect")"
ctl history detect --db "$dir/h.db" --range work.a --series -f jsonl |
    grep -q "\"commit\":\"$(git rev-parse c24)\",.*,\"commit_before\":\"$(git rev-parse c20)\"}$" ||
    fail "detect's commit_before"
ctl bisect --from-detect 'work.a inclusive' --db "$dir/h.db" --build "$build" \
    -- ./prog > "$dir/from" 2> "$dir/err5" ||
    fail "bisect --from-detect exited $?: $(cat "$dir/err5")"
grep -q "^first bad commit: $want commit 21$" "$dir/from" ||
    fail "--from-detect: $(cat "$dir/from") $(cat "$dir/err5")"
grep -q "^hostrangectl bisect: 4 commits after the good end" "$dir/err5" ||
    fail "--from-detect's ends: $(cat "$dir/err5")"

# Bad input: not a git working tree, not a commit, a key no run has, no
# command.
(cd "$TMPDIR" && GIT_CEILING_DIRECTORIES=$dir "$HOSTRANGECTL" bisect \
    --good c0 --bad c32 --range work.a \
    -- ./prog 2> "$dir/e" > /dev/null)
[ $? -eq 5 ] && grep -q "not in a git working tree" "$dir/e" ||
    fail "outside a repository: $(cat "$dir/e")"
ctl bisect --good nosuch --bad c32 --range work.a -- ./prog 2> "$dir/e" >/dev/null
[ $? -eq 5 ] && grep -q "is not a commit" "$dir/e" || fail "nosuch: $(cat "$dir/e")"
ctl bisect --good c0 --bad c32 --range work.a 2> "$dir/e" >/dev/null
[ $? -eq 2 ] || fail "no command accepted"
# A range or node that no key can have: a usage error, before any end is
# built or measured (an empty --range was found only after the good end).
long=$(printf '%04097d' 0)
for o in "--range=" "--node=" "--range=$long"; do
    ctl bisect --good c0 --bad c1 --range work.a "$o" --build "$build" \
        -- ./prog 2> "$dir/e" >/dev/null
    [ $? -eq 2 ] && grep -q "^hostrangectl bisect: bad --[a-z]* '0*\(\.\.\.\)\?' (a" \
        "$dir/e" && [ "$(wc -l < "$dir/e")" -eq 1 ] ||
        fail "bisect ${o%%=*} of ${#o} bytes: $(cat "$dir/e")"
done
ctl bisect --good c0 --bad c1 --range work.z --build "$build" -- ./prog \
    2> "$dir/e" >/dev/null
[ $? -eq 5 ] && grep -q "no key of range 'work.z'" "$dir/e" ||
    fail "work.z: $(cat "$dir/e")"

# A round's run file that cannot be read is said as bisect's, not
# diff's: the daemon of each round is a wrapper that, when record stops
# it (after the round's run was saved, before bisect reads it), damages
# the round's run file, then stops the real daemon.
real=${HOSTRANGED:-$top_builddir/daemon/hostranged}
cat > "$dir/damaging-hostranged" <<END
#!/bin/sh
"$real" "\$@" &
pid=\$!
trap 'for f in "\$TMPDIR"/hostrange-bisect-*/round-*.hrs; do
          [ -f "\$f" ] && echo damaged > "\$f"
      done
      kill \$pid; wait \$pid; exit 0' TERM
wait \$pid
END
chmod +x "$dir/damaging-hostranged"
HOSTRANGED=$dir/damaging-hostranged ctl bisect --good c0 --bad c1 \
    --range work.a --build "$build" -- ./prog 2> "$dir/e" >/dev/null
[ $? -eq 5 ] && grep -q "^hostrangectl bisect: .*/round-1.hrs: " "$dir/e" &&
    ! grep -q "hostrangectl diff" "$dir/e" ||
    fail "a damaged round: $(cat "$dir/e")"
[ -z "$(ls "$TMPDIR")" ] || fail "left in TMPDIR: $(ls "$TMPDIR")"
exit 0
