#!/bin/sh
# The soak (make soak): a private hostranged, 8 client processes reporting
# range samples as fast as they can for SOAK_SECONDS (default 600), and
# `hostrangectl dump` every second meanwhile. It stops by itself and prints
# the daemon's resident memory at the start and the end, the events per
# second, and the events lost, which must be 0; it fails (exit status 1)
# when anything was lost or rejected, a dump failed, a client failed, or
# the daemon did not stop cleanly.
#
# The programs come from the environment that make sets: HOSTRANGED,
# HOSTRANGECTL and HOSTRANGE_TEST_RECORDER (tests/helpers/recorder).
set -u

seconds=${SOAK_SECONDS:-600}
clients=${SOAK_CLIENTS:-8}
: "${HOSTRANGED:?run through make soak}"
: "${HOSTRANGECTL:?run through make soak}"
: "${HOSTRANGE_TEST_RECORDER:?run through make soak}"

dir=$(mktemp -d "${TMPDIR:-/tmp}/hostrange-soak-XXXXXX") || exit 1
dpid=
cleanup() {
    [ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

rss_kib() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

stat_value() {
    awk -v k="$1" '$1 == k { print $2 }' "$dir/stats"
}

# Eight clients at full speed make samples faster than one daemon on a
# small machine takes them: each may hold its whole buffer of batches
# (HOSTRANGE_BUFFER_MB) when its run ends. The soak checks that nothing is
# lost, so it gives them the time to deliver it at exit.
HOSTRANGE_FLUSH_TIMEOUT_MS=${HOSTRANGE_FLUSH_TIMEOUT_MS:-120000}
export HOSTRANGE_FLUSH_TIMEOUT_MS

"$HOSTRANGED" --quiet --runtime-dir "$dir/run" 2>"$dir/daemon.err" &
dpid=$!
if ! "$HOSTRANGECTL" -r "$dir/run" ping --wait 10000 >/dev/null; then
    echo "soak: hostranged did not start" >&2
    cat "$dir/daemon.err" >&2
    exit 1
fi
rss_start=$(rss_kib "$dpid")
echo "soak: $clients clients for $seconds s, a dump every second"

i=0
pids=
while [ "$i" -lt "$clients" ]; do
    HOSTRANGE_RUNTIME_DIR="$dir/run" "$HOSTRANGE_TEST_RECORDER" -R \
        -N "soak/client$i" -s "$seconds" >"$dir/client$i.out" 2>&1 &
    pids="$pids $!"
    i=$((i + 1))
done

# A dump every second until every client has stopped (and at most two
# minutes past the end: then the soak fails). A dump may take several
# seconds while the clients keep the daemon's CPU busy and its keys hold a
# million exact values each (their medians are sorted): each answer may
# take up to a minute, and the times are printed.
dumps=0
dump_failures=0
dump_ms=0
dump_max_ms=0
rss_mid=
curve_s=$(( seconds >= 60 ? 60 : 10 ))
next_curve=0
start=$(date +%s)
while :; do
    running=0
    for p in $pids; do
        kill -0 "$p" 2>/dev/null && running=$((running + 1))
    done
    [ "$running" -eq 0 ] && break
    now=$(date +%s)
    if [ $((now - start)) -gt $((seconds + 120)) ]; then
        echo "soak: the clients did not stop" >&2
        for p in $pids; do kill -KILL "$p" 2>/dev/null; done
        exit 1
    fi
    if [ -z "$rss_mid" ] && [ $((now - start)) -ge $((seconds / 10)) ]; then
        rss_mid=$(rss_kib "$dpid")
    fi
    # The memory curve, every curve_s seconds: the daemon's resident
    # memory beside what it holds (keys, events, the samples' bytes).
    if [ $((now - start)) -ge "$next_curve" ]; then
        next_curve=$((next_curve + curve_s))
        if "$HOSTRANGECTL" -r "$dir/run" stats >"$dir/curve" 2>/dev/null; then
            awk -v t=$((now - start)) -v rss="$(rss_kib "$dpid")" '
                $1 == "daemon.keys" { k = $2 }
                $1 == "daemon.histogram_keys" { h = $2 }
                $1 == "daemon.events" { e = $2 }
                $1 == "daemon.memory_bytes" { m = $2 }
                END { printf "soak: at %d s: rss %.1f MiB, keys %d (%d in histograms), events held %.0f, samples %.1f MiB\n", t, rss / 1024, k, h, e, m / 1048576 }' "$dir/curve"
        fi
    fi
    t0=$(date +%s%N)
    if "$HOSTRANGECTL" -r "$dir/run" -t 60000 dump >"$dir/dump" \
        2>"$dir/dump.err"; then
        t=$((($(date +%s%N) - t0) / 1000000))
        dumps=$((dumps + 1))
        dump_ms=$((dump_ms + t))
        [ "$t" -gt "$dump_max_ms" ] && dump_max_ms=$t
    else
        dump_failures=$((dump_failures + 1))
        cat "$dir/dump.err" >&2
    fi
    sleep 1
done
elapsed=$(( $(date +%s) - start ))

failed=0
for p in $pids; do
    wait "$p" || failed=$((failed + 1))
done

# The clients' own counters, after their exit flush.
lost=0
delivered=0
samples=0
i=0
while [ "$i" -lt "$clients" ]; do
    line=$(grep '^final ' "$dir/client$i.out")
    if [ -z "$line" ]; then
        echo "soak: client $i printed no counters:" >&2
        cat "$dir/client$i.out" >&2
        failed=$((failed + 1))
    else
        s=$(echo "$line" | sed 's/.* samples=\([0-9]*\).*/\1/')
        d=$(echo "$line" | sed 's/.* delivered=\([0-9]*\).*/\1/')
        l=$(echo "$line" | sed 's/.* lost=\([0-9]*\).*/\1/')
        samples=$((samples + s))
        delivered=$((delivered + d))
        lost=$((lost + l))
    fi
    i=$((i + 1))
done

"$HOSTRANGECTL" -r "$dir/run" stats >"$dir/stats" || exit 1
rss_end=$(rss_kib "$dpid")
# Sums printed as whole numbers: awk's default format would print a sum
# past 10^6 as 8.82671e+09, which the shell cannot compare.
rejected=$(awk '$1 ~ /^rejected\./ { n += $2 } END { printf "%.0f\n", n }' "$dir/stats")
daemon_lost=$(awk '$1 ~ /^client\.[0-9]+\.lost_events$/ { n += $2 } END { printf "%.0f\n", n }' "$dir/stats")
daemon_events=$(awk '$1 ~ /^client\.[0-9]+\.events$/ { n += $2 } END { printf "%.0f\n", n }' "$dir/stats")

kill -TERM "$dpid"
wait "$dpid"
status=$?
dpid=

echo "soak: $elapsed s, $clients clients, $dumps dumps ($dump_failures failed; each took $((dump_ms / (dumps > 0 ? dumps : 1))) ms on average, at most $dump_max_ms ms)"
echo "soak: events: $samples collected, $delivered delivered, $daemon_events taken by the daemon, $((delivered / (seconds > 0 ? seconds : 1))) per second"
echo "soak: lost events: $lost (the daemon counted $daemon_lost); rejected batches: $rejected"
echo "soak: daemon resident memory: start $((rss_start / 1024)) MiB, at $((seconds / 10)) s ${rss_mid:+$((rss_mid / 1024)) MiB}, end $((rss_end / 1024)) MiB (growth $(((rss_end - rss_start) / 1024)) MiB; from $((seconds / 10)) s: ${rss_mid:+$(((rss_end - rss_mid) / 1024)) MiB})"
echo "soak: daemon exit status on SIGTERM: $status"

ok=1
[ "$lost" -eq 0 ] && [ "$daemon_lost" -eq 0 ] || ok=0
[ "$delivered" -eq "$samples" ] && [ "$daemon_events" -eq "$delivered" ] || ok=0
[ "$rejected" -eq 0 ] && [ "$dump_failures" -eq 0 ] || ok=0
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ] || ok=0
if [ "$ok" -ne 1 ]; then
    echo "soak: FAILED" >&2
    exit 1
fi
echo "soak: passed"
