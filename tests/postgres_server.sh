#!/usr/bin/env bash
# Throw-away local Postgres cluster for EviGraph's checkpointer tests (tests/postgres_fixture.py, .ci/run).
#
# Why this exists: the Postgres checkpointer option is only real if it runs against a real server, and
# our machines have no Docker, only Debian's `postgresql` package. Debian's own cluster (pg_ctlcluster)
# needs systemd and a fixed port, so we run our own cluster from the package's binaries instead.
#
# TEST-ONLY: trust authentication (no password), listening on 127.0.0.1 only, fsync off. The cluster
# lives in /tmp/evigraph-pg-PORT and `stop` deletes it. Postgres refuses to run as root, so as root the
# server runs as the `postgres` system user (created by the Debian package); otherwise as yourself.
#
# Usage: postgres_server.sh start  [--port P]   (does nothing if something already answers on P)
#        postgres_server.sh stop   [--port P]   (stops the cluster started here and removes its files)
#        postgres_server.sh status [--port P]   (exit 0 when something answers on P)
# Port: --port, else EVIGRAPH_TEST_PG_PORT, else 5499. The database `evigraph_test` is created on start;
# connect with postgresql://postgres@127.0.0.1:PORT/evigraph_test
set -euo pipefail

PORT="${EVIGRAPH_TEST_PG_PORT:-5499}"
DATABASE="evigraph_test"
START_TIMEOUT="${EVIGRAPH_TEST_PG_START_TIMEOUT:-60}"

log() { printf '[postgres-server] %s\n' "$*"; }
die() {
    printf '[postgres-server] ERROR: %s\n' "$*" >&2
    exit 1
}

# The newest installed major version's binaries (Debian keeps them off PATH, one dir per version).
find_bin_dir() {
    local initdb
    initdb="$(ls -1 /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n1 || true)"
    [[ -n "$initdb" ]] || die "no Postgres server binaries under /usr/lib/postgresql/*/bin: run \`apt-get install -y postgresql\`"
    dirname "$initdb"
}

# Postgres refuses to run as root: as root, run server commands as the `postgres` system user.
as_server_user() {
    if [[ "$(id -u)" -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

port_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

cmd_start() {
    if port_answers "$PORT"; then
        log "something already answers on 127.0.0.1:$PORT; leaving it as it is"
        return 0
    fi
    local bin_dir cluster_dir data_dir
    bin_dir="$(find_bin_dir)"
    cluster_dir="/tmp/evigraph-pg-$PORT"
    data_dir="$cluster_dir/data"
    # Nothing answers, so whatever is left in the cluster dir is a dead cluster's: start afresh.
    if [[ -d "$data_dir" ]]; then
        as_server_user "$bin_dir/pg_ctl" -D "$data_dir" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$cluster_dir"
    mkdir -p "$cluster_dir"
    [[ "$(id -u)" -ne 0 ]] || chown postgres: "$cluster_dir"
    cd "$cluster_dir" # the server user may not be able to read the caller's working directory
    log "initdb ($("$bin_dir/postgres" --version)) into $data_dir"
    as_server_user "$bin_dir/initdb" -D "$data_dir" -U postgres -A trust -E UTF8 --locale=C --no-sync \
        >"$cluster_dir/initdb.log" 2>&1 || die "initdb failed:
$(cat "$cluster_dir/initdb.log")"
    log "starting on 127.0.0.1:$PORT"
    as_server_user "$bin_dir/pg_ctl" -D "$data_dir" -l "$cluster_dir/server.log" -w -t "$START_TIMEOUT" \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories=$cluster_dir -c fsync=off" \
        start >/dev/null || die "the server did not start:
$(cat "$cluster_dir/server.log")"
    as_server_user "$bin_dir/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$DATABASE" ||
        die "could not create database $DATABASE"
    log "ready: postgresql://postgres@127.0.0.1:$PORT/$DATABASE"
}

cmd_stop() {
    local cluster_dir="/tmp/evigraph-pg-$PORT"
    if [[ ! -d "$cluster_dir/data" ]]; then
        log "no cluster of ours in $cluster_dir"
        rm -rf "$cluster_dir"
        return 0
    fi
    local bin_dir
    bin_dir="$(find_bin_dir)"
    cd "$cluster_dir"
    as_server_user "$bin_dir/pg_ctl" -D "$cluster_dir/data" -m fast -w stop >/dev/null 2>&1 || true
    cd /
    rm -rf "$cluster_dir"
    log "stopped and removed $cluster_dir"
}

cmd_status() {
    if port_answers "$PORT"; then
        log "answering on 127.0.0.1:$PORT"
    else
        log "nothing answers on 127.0.0.1:$PORT"
        return 1
    fi
}

COMMAND="${1:-}"
[[ $# -gt 0 ]] && shift
while [[ $# -gt 0 ]]; do
    case "$1" in
    --port)
        PORT="${2:?--port needs a value}"
        shift 2
        ;;
    *) die "unknown argument: $1" ;;
    esac
done
[[ "$PORT" =~ ^[0-9]+$ ]] || die "port must be a number, got: $PORT"

case "$COMMAND" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
*) die "usage: postgres_server.sh start|stop|status [--port P]" ;;
esac
