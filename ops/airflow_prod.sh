#!/usr/bin/env bash
# The Airflow production profile on one machine: Postgres metadata database, CeleryExecutor
# with Redis as broker and Postgres as result backend, and the processes a production
# deployment runs: scheduler, dag-processor, api-server, triggerer and N Celery workers
# (distinct hostnames w1@<host>, w2@<host>, ...). The project store is on Postgres too.
# docs/production.md draws the topology and lists the settings.
#
#   ops/airflow_prod.sh start    # create the databases (idempotent), migrate, start everything, wait for health
#   ops/airflow_prod.sh stop     # stop every process this profile started (its pid files), TERM then KILL
#   ops/airflow_prod.sh status   # each process running or not, and the API server's health
#   ops/airflow_prod.sh env      # the exported settings, for `source <(ops/airflow_prod.sh env)` then `airflow ...`
#
# Settings (environment; defaults in brackets):
#   AIRFLOW_PROD_DIR            state: AIRFLOW_HOME, logs, pid files, secrets [var/airflow-prod]
#   AIRFLOW_PROD_POSTGRES       Postgres server, no database [postgresql://postgres@127.0.0.1:5432]
#   AIRFLOW_PROD_AIRFLOW_DB     Airflow's metadata database (also Celery's result backend) [marketintel_airflow]
#   AIRFLOW_PROD_STORE_DB       the project store (MARKETINTEL_DATABASE_URL) [marketintel]
#   AIRFLOW_PROD_REDIS_URL      Celery broker [redis://127.0.0.1:6379/0]
#   AIRFLOW_PROD_QUEUE          Celery queue the tasks go to and the workers serve [marketintel]
#   AIRFLOW_PROD_API_PORT       api-server port (UI, REST API, execution API) [8080]
#   AIRFLOW_PROD_LOG_PORT       log server port of the first worker; the triggerer's is the next one [8793]
#   AIRFLOW_PROD_WORKERS        Celery workers [2]
#   AIRFLOW_PROD_CONCURRENCY    task slots per worker [2]
#   AIRFLOW_PROD_START_TIMEOUT  seconds to wait for the components to report healthy [180]
# Other MARKETINTEL_* settings (runs folder, exchange URL, webhook) pass through to the tasks.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${AIRFLOW_PROD_VENV:-$ROOT/.venv}/bin"
STATE="${AIRFLOW_PROD_DIR:-$ROOT/var/airflow-prod}"
PG="${AIRFLOW_PROD_POSTGRES:-postgresql://postgres@127.0.0.1:5432}"
PG="${PG%/}"
AIRFLOW_DB="${AIRFLOW_PROD_AIRFLOW_DB:-marketintel_airflow}"
STORE_DB="${AIRFLOW_PROD_STORE_DB:-marketintel}"
REDIS_URL="${AIRFLOW_PROD_REDIS_URL:-redis://127.0.0.1:6379/0}"
QUEUE="${AIRFLOW_PROD_QUEUE:-marketintel}"
API_PORT="${AIRFLOW_PROD_API_PORT:-8080}"
LOG_PORT="${AIRFLOW_PROD_LOG_PORT:-8793}"
WORKERS="${AIRFLOW_PROD_WORKERS:-2}"
CONCURRENCY="${AIRFLOW_PROD_CONCURRENCY:-2}"
START_TIMEOUT="${AIRFLOW_PROD_START_TIMEOUT:-180}"
PIDS="$STATE/pids"
LOGS="$STATE/logs"

die() { echo "airflow_prod: $*" >&2; exit 2; }

check_settings() {
    local name value
    for name in AIRFLOW_DB STORE_DB; do
        value="${!name}"
        [[ "$value" =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || die "database name '$value' must be lower-case letters, digits and _ (AIRFLOW_PROD_${name})"
    done
    [[ "$AIRFLOW_DB" != "$STORE_DB" ]] || die "the Airflow metadata database and the project store must differ (both '$AIRFLOW_DB')"
    for name in API_PORT LOG_PORT; do
        value="${!name}"
        [[ "$value" =~ ^[0-9]+$ ]] && (( value >= 1024 && value <= 65534 )) || die "port '$value' must be a number from 1024 to 65534 (AIRFLOW_PROD_${name})"
    done
    for name in WORKERS CONCURRENCY START_TIMEOUT; do
        value="${!name}"
        [[ "$value" =~ ^[0-9]+$ ]] && (( value >= 1 )) || die "'$value' must be a whole number >= 1 (AIRFLOW_PROD_${name})"
    done
    [[ "$PG" =~ ^postgres(ql)?:// ]] || die "AIRFLOW_PROD_POSTGRES must be a postgresql:// server URL, not '$PG'"
    [[ "$REDIS_URL" =~ ^rediss?:// ]] || die "AIRFLOW_PROD_REDIS_URL must be a redis:// URL, not '$REDIS_URL'"
    [[ "$QUEUE" =~ ^[A-Za-z0-9_.-]+$ ]] || die "queue name '$QUEUE' must be letters, digits, _ . - (AIRFLOW_PROD_QUEUE)"
    [[ -x "$BIN/airflow" ]] || die "no $BIN/airflow: run make install first"
}

# psycopg-style URLs for the two databases; Airflow, Celery and the store all use psycopg 3.
db_url() { echo "postgresql+psycopg://${PG#*://}/$1"; }

secret() {  # a random value kept in $STATE/secrets/<name> (mode 0600), the same for every process
    local file="$STATE/secrets/$1"
    if [[ ! -s "$file" ]]; then
        mkdir -p "$STATE/secrets" && chmod 700 "$STATE/secrets"
        (umask 077 && "$BIN/python" -c 'import secrets; print(secrets.token_urlsafe(32))' > "$file")
    fi
    cat "$file"
}

export_settings() {
    export AIRFLOW_HOME="$STATE/home"
    export AIRFLOW__CORE__DAGS_FOLDER="$ROOT/dags"
    export AIRFLOW__CORE__LOAD_EXAMPLES=False
    export AIRFLOW__CORE__EXECUTOR=CeleryExecutor
    export AIRFLOW__CORE__PARALLELISM="${AIRFLOW__CORE__PARALLELISM:-$(( WORKERS * CONCURRENCY ))}"
    export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN="$(db_url "$AIRFLOW_DB")"
    # Airflow's async engine would default to asyncpg; psycopg 3 is async too, and installed.
    export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC="$(db_url "$AIRFLOW_DB")"
    export AIRFLOW__CELERY__BROKER_URL="$REDIS_URL"
    export AIRFLOW__CELERY__RESULT_BACKEND="db+$(db_url "$AIRFLOW_DB")"
    export AIRFLOW__CELERY__WORKER_CONCURRENCY="$CONCURRENCY"
    # celery_taskmeta keeps which worker ran each task (its `worker` column), beside the
    # task instance's own hostname and queue in Airflow.
    export AIRFLOW__CELERY__EXTRA_CELERY_CONFIG='{"result_extended": true}'
    export AIRFLOW__OPERATORS__DEFAULT_QUEUE="$QUEUE"
    export AIRFLOW__API__HOST=0.0.0.0
    export AIRFLOW__API__PORT="$API_PORT"
    export AIRFLOW__API__BASE_URL="http://127.0.0.1:$API_PORT"
    export AIRFLOW__CORE__EXECUTION_API_SERVER_URL="http://127.0.0.1:$API_PORT/execution/"
    export AIRFLOW__API__SECRET_KEY="$(secret api_secret_key)"
    export AIRFLOW__API_AUTH__JWT_SECRET="$(secret jwt_secret)"
    export AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT="$LOG_PORT"
    export AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT="$(( LOG_PORT + 1 ))"
    export AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS:-admin:admin}"
    export MARKETINTEL_DATABASE_URL="$(db_url "$STORE_DB")"
}

create_databases() {  # idempotent: an existing database is left as it is
    "$BIN/python" - "$PG/postgres" "$AIRFLOW_DB" "$STORE_DB" <<'PY'
import sys

import psycopg

server, names = sys.argv[1], sys.argv[2:]
try:
    conn = psycopg.connect(server, autocommit=True, connect_timeout=5)
except Exception as exc:  # noqa: BLE001 - one line for the operator
    sys.exit(f"airflow_prod: no Postgres server at {server}: {str(exc).strip().splitlines()[0]}")
with conn:
    for name in names:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            print(f"database {name}: exists")
        else:
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"database {name}: created")
PY
}

check_redis() {
    "$BIN/python" - "$REDIS_URL" <<'PY'
import sys

import redis

try:
    redis.Redis.from_url(sys.argv[1], socket_connect_timeout=5).ping()
except Exception as exc:  # noqa: BLE001
    sys.exit(f"airflow_prod: no Redis server at {sys.argv[1]}: {exc}")
PY
}

running() { [[ -s "$PIDS/$1.pid" ]] && kill -0 "$(cat "$PIDS/$1.pid")" 2>/dev/null; }

components() {
    echo scheduler dag-processor triggerer api-server
    local i
    for (( i = 1; i <= WORKERS; i++ )); do echo "worker-$i"; done
}

launch() {  # launch NAME COMMAND...: its own session (pid = process group), output to logs/NAME.log
    local name="$1"; shift
    if running "$name"; then
        echo "$name: already running (pid $(cat "$PIDS/$name.pid"))"
        return
    fi
    setsid "$@" >> "$LOGS/$name.log" 2>&1 < /dev/null &
    echo $! > "$PIDS/$name.pid"
    echo "$name: started (pid $!, log $LOGS/$name.log)"
}

health() {
    "$BIN/python" - "http://127.0.0.1:$API_PORT/api/v2/monitor/health" <<'PY'
import json
import sys
import urllib.request

try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as response:
        body = json.load(response)
except Exception as exc:  # noqa: BLE001
    print(f"api-server: not answering ({exc})")
    sys.exit(1)
parts = {name: (body.get(name) or {}).get("status") for name in ("metadatabase", "scheduler", "triggerer", "dag_processor")}
print(" ".join(f"{name}={status}" for name, status in parts.items()))
sys.exit(0 if all(status == "healthy" for status in parts.values()) else 1)
PY
}

start() {
    check_settings
    mkdir -p "$PIDS" "$LOGS"
    check_redis
    create_databases
    export_settings
    mkdir -p "$AIRFLOW_HOME"
    echo "migrating the Airflow metadata database $AIRFLOW_DB and the project store $STORE_DB"
    "$BIN/airflow" db migrate > "$LOGS/migrate.log" 2>&1 || { tail -20 "$LOGS/migrate.log" >&2; die "airflow db migrate failed (log $LOGS/migrate.log)"; }
    "$BIN/marketintel" db upgrade >> "$LOGS/migrate.log" 2>&1 || { tail -20 "$LOGS/migrate.log" >&2; die "marketintel db upgrade failed (log $LOGS/migrate.log)"; }
    "$BIN/airflow" dags reserialize >> "$LOGS/migrate.log" 2>&1 || { tail -20 "$LOGS/migrate.log" >&2; die "airflow dags reserialize failed (log $LOGS/migrate.log)"; }
    env_file

    launch api-server "$BIN/airflow" api-server --port "$API_PORT"
    launch scheduler "$BIN/airflow" scheduler
    launch dag-processor "$BIN/airflow" dag-processor
    launch triggerer "$BIN/airflow" triggerer
    local i
    for (( i = 1; i <= WORKERS; i++ )); do
        # One log server per machine is enough: the workers here share one log folder.
        launch "worker-$i" "$BIN/airflow" celery worker --celery-hostname "w$i@%h" --queues "$QUEUE" \
            --concurrency "$CONCURRENCY" $( (( i > 1 )) && echo --skip-serve-logs )
    done

    local waited=0
    until health > "$STATE/health.txt" 2>&1; do
        for name in $(components); do
            running "$name" || { tail -30 "$LOGS/$name.log" >&2; stop > /dev/null; die "$name exited during start-up (log $LOGS/$name.log)"; }
        done
        (( waited >= START_TIMEOUT )) && { cat "$STATE/health.txt" >&2; stop > /dev/null; die "not healthy after ${START_TIMEOUT} s"; }
        sleep 2; waited=$(( waited + 2 ))
    done
    echo "healthy: $(cat "$STATE/health.txt")"
    echo "UI and REST API: http://127.0.0.1:$API_PORT (user admin, password in $AIRFLOW_HOME/simple_auth_manager_passwords.json.generated)"
    echo "workers: $(for (( i = 1; i <= WORKERS; i++ )); do printf 'w%d@%s ' "$i" "$(hostname)"; done)on queue $QUEUE; stop with: make airflow-prod-stop"
}

settings_lines() {
    env | grep -E '^(AIRFLOW_HOME=|AIRFLOW__|MARKETINTEL_DATABASE_URL=)' | sort | sed -E "s/^([^=]+)=(.*)$/export \1='\2'/"
}

env_file() {  # $STATE/env.sh: the settings, so `source` gives a shell the profile's airflow CLI
    (umask 077 && settings_lines > "$STATE/env.sh")
}

stop() {
    [[ -d "$PIDS" ]] || { echo "nothing to stop: no $PIDS"; return 0; }
    local file name pid waited
    for file in "$PIDS"/*.pid; do
        [[ -e "$file" ]] || continue
        name="$(basename "$file" .pid)"; pid="$(cat "$file")"
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        fi
    done
    for file in "$PIDS"/*.pid; do
        [[ -e "$file" ]] || continue
        name="$(basename "$file" .pid)"; pid="$(cat "$file")"
        waited=0
        while kill -0 -- "-$pid" 2>/dev/null && (( waited < 60 )); do
            # once more at 10 and 20 s: a component busy forking its parsers has been seen to
            # go on for 30 s after the first TERM without acting on it
            (( waited == 20 || waited == 40 )) && kill -TERM -- "-$pid" 2>/dev/null
            sleep 0.5; waited=$(( waited + 1 ))
        done
        if kill -0 -- "-$pid" 2>/dev/null; then
            kill -KILL -- "-$pid" 2>/dev/null || true
            # returns when the group is gone, not while its processes are still being reaped
            waited=0
            while kill -0 -- "-$pid" 2>/dev/null && (( waited < 20 )); do sleep 0.5; waited=$(( waited + 1 )); done
            echo "$name: killed (pid $pid did not stop within 30 s of TERM)"
        else
            echo "$name: stopped"
        fi
        rm -f "$file"
    done
}

status() {
    check_settings
    local name state=0
    for name in $(components); do
        if running "$name"; then echo "$name: running (pid $(cat "$PIDS/$name.pid"))"; else echo "$name: not running"; state=1; fi
    done
    health || state=1
    return $state
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    env) check_settings; export_settings; settings_lines ;;
    *) die "usage: ops/airflow_prod.sh start|stop|status|env (got '${1:-}')" ;;
esac
