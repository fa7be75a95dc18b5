#!/usr/bin/env bash
# `make airflow`: Airflow 3 standalone for development (scheduler, dag-processor, triggerer
# and api-server under one `airflow standalone` parent), after `airflow db migrate` and
# `airflow dags reserialize`.
#
# The Makefile exports the settings (AIRFLOW_HOME, the DAGs folder, example DAGs off,
# parallelism); this script adds none of its own but two:
#   - the virtualenv's bin goes first on PATH: `airflow standalone` starts its components
#     by the bare name `airflow`, so without an activated virtualenv they all failed with
#     FileNotFoundError and the port never opened;
#   - AIRFLOW__API__PORT set without AIRFLOW__API__BASE_URL (or the execution API URL): the
#     base URL follows the port, since Airflow otherwise sends tasks to localhost:8080.
#
# Stopping: `airflow standalone` runs in a process group of its own, out of the terminal's
# reach. SIGINT (Ctrl-C), SIGTERM or SIGHUP to this script (make passes SIGTERM on) becomes
# one SIGINT to the standalone parent, which stops each component with one SIGTERM. (With
# a terminal's Ctrl-C reaching them all, each component got that SIGTERM on top of a SIGINT,
# and the dag-processor was seen to hang in a lock for good, deaf to SIGTERM, its parent
# waiting on it with the exited components defunct.) Whatever of the group is still
# there after AIRFLOW_STANDALONE_STOP_TIMEOUT seconds [30] gets SIGTERM, and after as many
# again SIGKILL; the same when standalone ends by itself. The script returns only once the
# group is gone, then ends by the signal it got, so make reports the interrupt.
#
# Settings (environment; defaults in brackets):
#   AIRFLOW_STANDALONE_VENV          the virtualenv [.venv beside ops/; make passes $(VENV)]
#   AIRFLOW_STANDALONE_STOP_TIMEOUT  seconds each stop step waits for the group [30]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${AIRFLOW_STANDALONE_VENV:-$ROOT/.venv}"
STOP_TIMEOUT="${AIRFLOW_STANDALONE_STOP_TIMEOUT:-30}"

die() { echo "airflow_standalone: $*" >&2; exit 2; }

[[ -x "$VENV/bin/airflow" ]] || die "no $VENV/bin/airflow: run make install first"
[[ -n "${AIRFLOW_HOME:-}" ]] || die "AIRFLOW_HOME is not set: start it with make airflow (the Makefile sets it and the DAGs folder)"
[[ "$STOP_TIMEOUT" =~ ^[0-9]+$ ]] && (( STOP_TIMEOUT >= 1 )) || die "'$STOP_TIMEOUT' must be a whole number >= 1 (AIRFLOW_STANDALONE_STOP_TIMEOUT)"
BIN="$(cd "$VENV/bin" && pwd)"
export PATH="$BIN:$PATH"
if [[ -n "${AIRFLOW__API__PORT:-}" && -z "${AIRFLOW__API__BASE_URL:-}" && -z "${AIRFLOW__CORE__EXECUTION_API_SERVER_URL:-}" ]]; then
    export AIRFLOW__API__BASE_URL="http://localhost:$AIRFLOW__API__PORT"
fi

SIGNAL=""
PID=""
end_by_signal() {  # so the caller (make, a shell) sees an interrupt, not an exit status
    trap - INT TERM HUP
    kill -s "$SIGNAL" "$$"
    exit 1  # not reached
}
on_signal() {
    SIGNAL="$1"
    trap '' INT TERM HUP  # a second Ctrl-C while stopping changes nothing
    PID="${PID:-$!}"  # a signal between `&` and PID=$! below
    [[ -n "$PID" ]] || end_by_signal  # before standalone started: nothing to stop
    stop_group
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

airflow db migrate
airflow dags reserialize

group_alive() { kill -0 -- "-$PID" 2>/dev/null; }

wait_group() {  # wait_group SECONDS: true once the group is gone
    local ticks=$(( $1 * 5 ))
    while group_alive && (( ticks > 0 )); do sleep 0.2; ticks=$(( ticks - 1 )); done
    ! group_alive
}

stop_group() {  # SIGINT to the parent, then SIGTERM and SIGKILL to the group; returns once it is gone
    group_alive || return 0
    kill -INT "$PID" 2>/dev/null || true
    wait_group "$STOP_TIMEOUT" && return 0
    echo "airflow_standalone: still running after ${STOP_TIMEOUT} s: SIGTERM to process group $PID" >&2
    kill -TERM -- "-$PID" 2>/dev/null || true
    wait_group "$STOP_TIMEOUT" && return 0
    echo "airflow_standalone: still running after another ${STOP_TIMEOUT} s: SIGKILL to process group $PID" >&2
    kill -KILL -- "-$PID" 2>/dev/null || true
    wait_group 5 || true
}

# Job control on: the background job below gets a process group of its own (pgid = its pid),
# in this session, so a signal can reach every process it starts and nothing else.
set -m
airflow standalone &
PID=$!
set +m

STATUS=0
# A trapped signal ends `wait` early (its handler runs then): loop until the standalone
# parent itself has exited and been reaped.
while :; do
    wait "$PID" && STATUS=0 || STATUS=$?
    kill -0 "$PID" 2>/dev/null || break
done
stop_group  # the parent has gone; a component it left behind goes too
[[ -z "$SIGNAL" ]] || end_by_signal
exit "$STATUS"
