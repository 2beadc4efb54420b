#!/usr/bin/env bash
# Local Neo4j 5.26 LTS community server for EviGraph's tests and for developers.
#
# Why this exists: there is no Docker and no neo4j.com tarball on our machines, only Maven Central.
# Neo4j publishes the whole community DBMS there as jars, so we resolve them with Maven (see pom.xml)
# and run the server's own entry point, org.neo4j.server.CommunityEntryPoint, on the JVM.
#
# TEST-ONLY: authentication is disabled and Bolt is bound to 127.0.0.1 (loopback) only.
#
# Usage: neo4j-server.sh install
#        neo4j-server.sh start  [--port P] [--home DIR]
#        neo4j-server.sh stop   [--home DIR]
#        neo4j-server.sh status [--port P] [--home DIR]
# See README.md next to this file for the environment variables.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$SCRIPT_DIR/pom.xml"

CACHE_DIR="${EVIGRAPH_NEO4J_CACHE:-$HOME/.cache/evigraph/neo4j-5.26}"
LIB_DIR="$CACHE_DIR/lib"
STAMP_FILE="$CACHE_DIR/install.stamp"
DEFAULT_PORT=7697
HEAP="${EVIGRAPH_NEO4J_HEAP:-512m}"
PAGECACHE="${EVIGRAPH_NEO4J_PAGECACHE:-64m}"
START_TIMEOUT="${EVIGRAPH_NEO4J_START_TIMEOUT:-120}"
STOP_TIMEOUT="${EVIGRAPH_NEO4J_STOP_TIMEOUT:-60}"
ENTRY_POINT="org.neo4j.server.CommunityEntryPoint"

# Java 17 modules are closed by default; Neo4j's Netty/page-cache code reflects into them. Same list
# Neo4j's own launcher passes via server.jvm.additional. Without it: "module java.base does not open java.nio".
JVM_OPENS=(
    --add-opens=java.base/java.nio=ALL-UNNAMED
    --add-opens=java.base/java.io=ALL-UNNAMED
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    -Dio.netty.tryReflectionSetAccessible=true
)

log() { printf '[neo4j-server] %s\n' "$*"; }
die() {
    printf '[neo4j-server] ERROR: %s\n' "$*" >&2
    exit 1
}

neo4j_version() { sed -n 's:.*<neo4j.version>\(.*\)</neo4j.version>.*:\1:p' "$POM"; }

# The stamp records what was installed, so a pom bump (new version) triggers a reinstall.
expected_stamp() { printf '%s %s\n' "$(neo4j_version)" "$(sha256sum "$POM" | cut -d' ' -f1)"; }

require_java() {
    command -v java >/dev/null 2>&1 || die "java not found on PATH (need Java 17 or 21: apt-get install -y openjdk-17-jre-headless)"
    local major
    major="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)"
    [[ -n "$major" && "$major" -ge 17 ]] || die "Neo4j 5.26 needs Java 17+, found: $(java -version 2>&1 | head -n1)"
}

is_installed() { [[ -f "$STAMP_FILE" && "$(cat "$STAMP_FILE")" == "$(expected_stamp)" ]]; }

cmd_install() {
    if is_installed; then
        log "already installed: Neo4j $(neo4j_version) in $LIB_DIR"
        return 0
    fi
    command -v mvn >/dev/null 2>&1 || die "mvn not found on PATH: apt-get install -y maven"
    require_java
    mkdir -p "$CACHE_DIR"
    # A lock, so parallel test runs on one machine do not fetch into the same directory at once.
    # Closed before returning so the server JVM started later does not inherit (and hold) it.
    exec 8>"$CACHE_DIR/install.lock"
    flock 8
    if is_installed; then # another process finished the install while we waited
        exec 8>&-
        log "already installed: Neo4j $(neo4j_version) in $LIB_DIR"
        return 0
    fi
    log "fetching Neo4j $(neo4j_version) jars from Maven Central into $LIB_DIR ..."
    local tmp_dir="$CACHE_DIR/lib.partial"
    rm -rf "$tmp_dir" "$STAMP_FILE"
    local mvn_output
    # Output captured: Maven 3.8 prints stray ANSI resets even with -q; shown in full only on failure.
    if ! mvn_output="$(mvn -B -q -f "$POM" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$tmp_dir" 2>&1)"; then
        printf '%s\n' "$mvn_output" >&2
        die "mvn dependency:copy-dependencies failed (is Maven Central reachable?)"
    fi
    ls "$tmp_dir"/neo4j-server-*.jar >/dev/null 2>&1 || die "neo4j-server jar missing after mvn run"
    rm -rf "$LIB_DIR"
    mv "$tmp_dir" "$LIB_DIR"
    # Written last: its presence means the jar set is complete.
    expected_stamp >"$STAMP_FILE"
    exec 8>&-
    log "installed $(find "$LIB_DIR" -name '*.jar' | wc -l) jars"
}

# Per-instance paths live under the home dir, so one home = one server.
set_instance_paths() {
    HOME_DIR="$(mkdir -p "$1" && cd "$1" && pwd)"
    PID_FILE="$HOME_DIR/evigraph-neo4j.pid"
    PORT_FILE="$HOME_DIR/evigraph-neo4j.port"
    LOG_FILE="$HOME_DIR/logs/console.log"
}

# Prints the pid of the server running for HOME_DIR, or nothing. Checks the command line so a stale
# pid file whose pid was reused by an unrelated process is not mistaken for our server.
running_pid() {
    [[ -f "$PID_FILE" ]] || return 0
    local pid
    pid="$(cat "$PID_FILE")"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    if [[ -r "/proc/$pid/cmdline" ]] \
        && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$ENTRY_POINT --home-dir=$HOME_DIR "; then
        echo "$pid"
    fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A real Bolt handshake (magic 6060B017, then 4 proposed versions: 5.0-5.4, 4.4, none, none).
# Non-zero agreed version = the Bolt server is up and accepting sessions, not just a bound socket.
bolt_answers() {
    local reply
    reply="$(
        exec 2>/dev/null
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf '\x60\x60\xb0\x17\x00\x04\x04\x05\x00\x00\x04\x04\x00\x00\x00\x00\x00\x00\x00\x00' >&3
        timeout 5 head -c 4 <&3 | od -An -tx1 | tr -d ' \n'
    )" || return 1
    [[ -n "$reply" && "$reply" != "00000000" ]]
}

print_log_tail() {
    if [[ -f "$LOG_FILE" ]]; then
        printf -- '--- last 40 lines of %s ---\n' "$LOG_FILE" >&2
        tail -n 40 "$LOG_FILE" >&2
    fi
    if [[ -f "$HOME_DIR/logs/debug.log" ]]; then
        printf -- '--- last 15 lines of %s ---\n' "$HOME_DIR/logs/debug.log" >&2
        tail -n 15 "$HOME_DIR/logs/debug.log" >&2
    fi
}

cmd_start() {
    local port="$1"
    [[ "$port" =~ ^[0-9]+$ ]] || die "invalid port: $port"
    local pid
    pid="$(running_pid)"
    if [[ -n "$pid" ]]; then
        local running_port
        running_port="$(cat "$PORT_FILE" 2>/dev/null || echo '?')"
        [[ "$running_port" == "$port" ]] \
            || die "a server for home $HOME_DIR already runs on port $running_port (pid $pid); stop it or use another --home"
        log "already running (pid $pid) on bolt://127.0.0.1:$port"
        return 0
    fi
    port_open "$port" && die "port $port on 127.0.0.1 is already in use by another process; choose another --port"

    cmd_install
    require_java
    rm -f "$PID_FILE"
    mkdir -p "$HOME_DIR/logs"
    [[ -f "$LOG_FILE" ]] && mv -f "$LOG_FILE" "$LOG_FILE.1"

    local started_at=$SECONDS
    # setsid: own session, so Ctrl-C in the calling terminal or test runner does not kill the server.
    # The thread_pool/connection shutdown waits default to 5 s each and only delay SIGTERM shutdown;
    # databases are checkpointed before they apply.
    setsid java -Xms128m -Xmx"$HEAP" "${JVM_OPENS[@]}" \
        -XX:+ExitOnOutOfMemoryError -Djdk.nio.maxCachedBufferSize=1024 -Dlog4j2.disable.jmx=true \
        -cp "$LIB_DIR/*" "$ENTRY_POINT" --home-dir="$HOME_DIR" --console-mode \
        -c server.default_listen_address=127.0.0.1 \
        -c server.bolt.listen_address="127.0.0.1:$port" \
        -c server.bolt.advertised_address="127.0.0.1:$port" \
        -c server.http.enabled=false \
        -c server.https.enabled=false \
        -c dbms.security.auth_enabled=false \
        -c dbms.usage_report.enabled=false \
        -c server.memory.pagecache.size="$PAGECACHE" \
        -c internal.server.bolt.thread_pool_shutdown_wait_time=1s \
        -c internal.server.bolt.connection_shutdown_wait_time=1s \
        </dev/null >>"$LOG_FILE" 2>&1 &
    pid=$!
    echo "$pid" >"$PID_FILE"
    echo "$port" >"$PORT_FILE"
    log "starting Neo4j $(neo4j_version) (pid $pid), home $HOME_DIR, log $LOG_FILE"

    while ((SECONDS - started_at < START_TIMEOUT)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$PID_FILE"
            print_log_tail
            die "Neo4j exited during startup (see log above)"
        fi
        if bolt_answers "$port" && grep -q 'INFO  Started\.' "$LOG_FILE"; then
            log "ready on bolt://127.0.0.1:$port after $((SECONDS - started_at)) s (auth disabled, test-only)"
            return 0
        fi
        sleep 0.5
    done
    print_log_tail
    terminate_and_wait "$pid"
    rm -f "$PID_FILE"
    die "Bolt did not answer on 127.0.0.1:$port within ${START_TIMEOUT} s; server stopped"
}

# SIGTERM runs Neo4j's shutdown hook (checkpoint, clean store); SIGKILL only if that hangs.
terminate_and_wait() {
    local pid="$1"
    kill -TERM "$pid" 2>/dev/null || true
    local started_at=$SECONDS
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS - started_at >= STOP_TIMEOUT)); then
            log "no exit after ${STOP_TIMEOUT} s, sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.2
    done
}

cmd_stop() {
    local pid
    pid="$(running_pid)"
    if [[ -z "$pid" ]]; then
        rm -f "$PID_FILE"
        log "not running (home $HOME_DIR)"
        return 0
    fi
    log "stopping pid $pid ..."
    terminate_and_wait "$pid"
    rm -f "$PID_FILE"
    log "stopped"
}

cmd_status() {
    local port="$1"
    local pid
    pid="$(running_pid)"
    if [[ -n "$pid" ]]; then
        local running_port
        running_port="$(cat "$PORT_FILE" 2>/dev/null || echo '?')"
        if bolt_answers "$running_port"; then
            log "running (pid $pid) on bolt://127.0.0.1:$running_port, home $HOME_DIR"
        else
            log "process running (pid $pid) but Bolt not answering yet on port $running_port, home $HOME_DIR"
        fi
        return 0
    fi
    if port_open "$port"; then
        log "not running from home $HOME_DIR, but another process listens on 127.0.0.1:$port"
    else
        log "not running (home $HOME_DIR, port $port free)"
    fi
    return 3
}

usage() {
    sed -n '10,14p' "${BASH_SOURCE[0]}" | sed 's/^# //'
    exit 2
}

main() {
    [[ $# -ge 1 ]] || usage
    local command="$1"
    shift
    local port="$DEFAULT_PORT"
    local home="${EVIGRAPH_NEO4J_HOME:-$HOME/.cache/evigraph/neo4j-run}"
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --port) port="${2:?--port needs a value}"; shift 2 ;;
            --port=*) port="${1#*=}"; shift ;;
            --home) home="${2:?--home needs a value}"; shift 2 ;;
            --home=*) home="${1#*=}"; shift ;;
            -h | --help) usage ;;
            *) die "unknown argument: $1" ;;
        esac
    done
    case "$command" in
        install) cmd_install ;;
        start) set_instance_paths "$home"; cmd_start "$port" ;;
        stop) set_instance_paths "$home"; cmd_stop ;;
        status) set_instance_paths "$home"; cmd_status "$port" ;;
        -h | --help | help) usage ;;
        *) die "unknown command: $command (install|start|stop|status)" ;;
    esac
}

main "$@"
