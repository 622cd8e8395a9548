#!/bin/sh
# The client's process-wide state after fork: every variable a file of
# client/ defines at file scope is either reset by that file's fork hook
# (named in the body of its *fork_child function, client.h) or listed
# below as kept across fork, with the reason. A variable added without
# either fails here. The checker first runs on a small file with a
# variable its hook forgets, which it must name.
set -u
src=${srcdir:-.}

# Kept across fork, per file, and why.
kept_clock='hr__g_tsc hr__g_ordered hr__g_fenced hr__g_fast cal_tsc0 cal_mono0 cal_once
cal_mult cal_step_ns'                  # the same clock, calibrated once
kept_hostrange='hr__g_window hr__g_label hr__g_label_warm hr__g_labels_refused' # a window open at
                                       # the fork is open in both processes
kept_hostrange="$kept_hostrange tls_thread" # the forking thread's state,
                                       # which the registry's hook empties
kept_hostrange="$kept_hostrange g_enabled g_key g_once g_init_ok" # set up
                                       # once per process image
kept_intern='sites labels ctx_parent ctx_site ctx_index ctx_n ctx_roots
ctx_dropped ctx_full_root'             # the tables: ids given stay valid
kept_registry='hr__active'             # the window, as hostrange.c's
kept_ship='thread'                     # no shipper in the child: started 0
kept_ship="$kept_ship queue_head queue_tail queue_bytes spares nspare spares_out"
                                       # queue_free
kept_ship="$kept_ship enc"             # hr__enc_clear
kept_ship="$kept_ship queue_max spool_dir spool_max process_label
ingest_path ingest_url enc_ok lost_cap" # settings read once, and sizes
kept_ship="$kept_ship sent_at_ms"      # read only while a batch is in flight
kept_spool='' kept_encode=''

# The code of C file $1 without its comments.
code() { ${CC:-cc} -fpreprocessed -dD -E -P "$1" 2>/dev/null; }

# check FILE KEPT: prints each file-scope variable of FILE that its
# *fork_child function does not name and KEPT does not list; returns 1
# when there is one.
check() {
    code "$1" >"$tmp/code"
    # File-scope variables: definitions at column 0 that are no function.
    grep -E '^(static |_Atomic |__thread |_Alignas\([0-9]+\) )*[A-Za-z_][A-Za-z0-9_ ]*[ *]+[A-Za-z_][A-Za-z0-9_]*( *\[[^]]*\])?( *=[^;(]*)?(, *\**[A-Za-z_][A-Za-z0-9_]*( *\[[^]]*\])?( *=[^;(]*)?)*; *$' \
            "$tmp/code" | grep -v -E '^(static )?const |^(typedef|extern|return) ' |
        sed -E 's/=[^,;]*//g; s/\[[^]]*\]//g; s/; *$//' |
        awk -F, '{ for (i = 1; i <= NF; i++) {
            s = $i; sub(/ +$/, "", s); n = split(s, w, /[ *]+/); print w[n] } }' |
        grep . | sort -u >"$tmp/vars"
    # The bodies of the file's fork_child functions.
    awk '/^[a-z].*fork_child\(/ { on = 1 } on { print } on && /^}/ { on = 0 }' \
        "$tmp/code" >"$tmp/hook"
    bad=0
    for v in $(cat "$tmp/vars"); do
        case " $(echo $2) " in *" $v "*) continue ;; esac
        grep -q -w -e "$v" "$tmp/hook" && continue
        echo "$1: $v is neither reset by its fork hook nor kept (see $0)"
        bad=1
    done
    [ -s "$tmp/vars" ] || { echo "$1: no variable seen"; bad=1; }
    return $bad
}

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# The checker must name a variable the hook forgets, and no other.
cat >"$tmp/x.c" <<'CODE'
static int reset_me, kept_me;
static uint64_t forgotten = 1; /* a comment naming reset_me */
void hr__x_fork_child(void)
{
    reset_me = 0;
}
CODE
out=$(check "$tmp/x.c" kept_me)
if [ $? -eq 0 ] || ! echo "$out" | grep -q ': forgotten is neither' ||
        echo "$out" | grep -q 'reset_me\|kept_me'; then
    echo "FAIL: the checker got the test file wrong:"
    echo "$out"
    exit 1
fi

fail=0
for f in clock hostrange intern registry ship; do
    eval "k=\$kept_$f"
    check "$src/client/$f.c" "$k" || fail=1
done
[ $fail -eq 0 ] && echo "ok: every variable of the client is reset at fork or kept, with its reason"
exit $fail
