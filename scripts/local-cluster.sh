#!/usr/bin/env bash
# A 3-node cluster on this machine (README "Three ways to run"):
#   scripts/local-cluster.sh start|stop|status
# start: three `java -jar cluster-config/target/otl-node.jar run --config cluster-config/src/main/resources/localN.conf`
#        in the background (HTTP 8080-8082, cluster 25520-25522, management 7626-7628, the Trinity simulator on
#        8265 inside node 1), logs in ./data/logs/nodeN.log, pid files in ./data/pids; waits until every node
#        answers 200 on /health/ready (at most OTL_READY_TIMEOUT seconds, default 120).
# stop:  SIGTERM (graceful leave), then SIGKILL after 30 s.
# Needs the jar (mvn -B -q package -DskipTests) and PostgreSQL on 127.0.0.1:5432 (database postgres, user
# postgres; OTL_DB_URL, OTL_DB_USER, OTL_DB_PASSWORD override). JAVA_OPTS is passed to every node.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JAR="cluster-config/target/otl-node.jar"
LOGS="data/logs"
PIDS="data/pids"
NODES=(1 2 3)
JAVA_OPTS="${JAVA_OPTS:--Xmx256m}"
READY_TIMEOUT="${OTL_READY_TIMEOUT:-120}"

http_port() { echo $((8079 + $1)); }
pid_of() { [ -f "$PIDS/node$1.pid" ] && cat "$PIDS/node$1.pid" || true; }
alive() { local pid; pid="$(pid_of "$1")"; [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
ready_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 3 "http://127.0.0.1:$(http_port "$1")/health/ready" || true; }

start() {
  [ -f "$JAR" ] || { echo "no $JAR: build it first with: mvn -B -q package -DskipTests" >&2; exit 1; }
  mkdir -p "$LOGS" "$PIDS"
  for n in "${NODES[@]}"; do
    if alive "$n"; then echo "node$n already running (pid $(pid_of "$n"))"; continue; fi
    # shellcheck disable=SC2086
    nohup java $JAVA_OPTS -jar "$JAR" run --config "cluster-config/src/main/resources/local$n.conf" \
      >"$LOGS/node$n.log" 2>&1 </dev/null &
    echo $! >"$PIDS/node$n.pid"
    echo "node$n started (pid $!, http :$(http_port "$n"), log $LOGS/node$n.log)"
  done
  local deadline=$((SECONDS + READY_TIMEOUT))
  for n in "${NODES[@]}"; do
    until [ "$(ready_code "$n")" = "200" ]; do
      if ! alive "$n"; then echo "node$n exited; last lines of $LOGS/node$n.log:" >&2; tail -n 30 "$LOGS/node$n.log" >&2; exit 1; fi
      if [ "$SECONDS" -ge "$deadline" ]; then echo "node$n not ready after ${READY_TIMEOUT}s (see $LOGS/node$n.log)" >&2; exit 1; fi
      sleep 1
    done
    echo "node$n ready: http://127.0.0.1:$(http_port "$n")/health/ready"
  done
}

stop() {
  for n in "${NODES[@]}"; do
    if alive "$n"; then kill -TERM "$(pid_of "$n")"; echo "node$n stopping (pid $(pid_of "$n"))"; fi
  done
  for n in "${NODES[@]}"; do
    local waited=0
    while alive "$n" && [ "$waited" -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
    if alive "$n"; then kill -KILL "$(pid_of "$n")"; echo "node$n killed after 30 s"; fi
    rm -f "$PIDS/node$n.pid"
  done
  echo "stopped"
}

status() {
  local rc=0
  for n in "${NODES[@]}"; do
    if alive "$n"; then
      echo "node$n pid $(pid_of "$n") http :$(http_port "$n") ready=$(ready_code "$n")"
    else
      echo "node$n not running"; rc=3
    fi
  done
  return $rc
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
