# A PostgreSQL server of a test's own, for the history's tests (sourced):
# started as an unprivileged user (postgres when the test runs as root:
# PostgreSQL refuses root) on a Unix socket in a temporary directory, with
# no TCP listener. The test defines fail. pg_start starts it, failing the
# test when it cannot; pg_stop stops it and removes its directory (call it
# on every way out); new_pg makes an empty database, its connection
# string in $db and its name in $pgname; pg DB SQL runs SQL in database DB.
pgbin=/usr/lib/postgresql/15/bin
pgdir=
n_pg=0
if [ "$(id -u)" -eq 0 ]; then
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi
pg_start() {
    [ -x "$pgbin/initdb" ] ||
        fail "no PostgreSQL 15 ($pgbin/initdb; Debian's postgresql-15)"
    pgdir=$(mktemp -d "${TMPDIR:-/tmp}/hostrange-pg-XXXXXX") || exit 99
    [ "$(id -u)" -eq 0 ] && chown postgres "$pgdir"
    as_pg "$pgbin/initdb" -D "$pgdir/data" -A trust -U hostrange \
        --no-locale -E UTF8 --no-sync > "$pgdir/initdb.log" 2>&1 ||
        fail "initdb: $(cat "$pgdir/initdb.log")"
    as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -w -t 60 -l "$pgdir/log" \
        -o "-k $pgdir -c listen_addresses= -F" start > /dev/null 2>&1 ||
        fail "PostgreSQL did not start: $(cat "$pgdir/log")"
}
pg_stop() {
    [ -n "$pgdir" ] || return 0
    as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -m immediate stop \
        > /dev/null 2>&1
    rm -rf "$pgdir"
    pgdir=
}
pg() {
    "$pgbin/psql" -X -q -v ON_ERROR_STOP=1 \
        "host=$pgdir user=hostrange dbname=$1" -c "$2"
}
new_pg() {
    n_pg=$((n_pg + 1))
    pgname=h$n_pg
    pg postgres "CREATE DATABASE $pgname" || fail "CREATE DATABASE"
    db="host=$pgdir user=hostrange dbname=$pgname"
}
