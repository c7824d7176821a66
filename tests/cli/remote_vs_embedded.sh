#!/usr/bin/env bash
# `ccsim run SCENE --server E` against a separately started ccsimd must print the same
# final state, to the last bit (%.17g round-trips doubles), as the embedded run.
# usage: remote_vs_embedded.sh CCSIM CCSIMD SCENE
set -euo pipefail
ccsim=$1 ccsimd=$2 scene=$3
tmp=$(mktemp -d)
. "$(dirname "$0")/ccsimd_start.sh"
trap 'stop_ccsimd; rm -rf "$tmp"' EXIT
start_ccsimd "$ccsimd" "$tmp"
pid=$ccsimd_pid

"$ccsim" ping --server "$endpoint"
"$ccsim" run "$scene" --duration 1 --dt 0.001 --server "$endpoint" --quiet >"$tmp/remote.txt"
"$ccsim" run "$scene" --duration 1 --dt 0.001 --quiet >"$tmp/embedded.txt"
if ! diff -u "$tmp/embedded.txt" "$tmp/remote.txt"; then
  echo "FAIL: remote and embedded final states differ"
  exit 1
fi
grep -q '^final state at t = ' "$tmp/remote.txt" || { echo "FAIL: no final state printed"; exit 1; }

# an interrupted run (SIGTERM, or Ctrl-C at a terminal) closes its session before it exits
"$ccsim" run "$scene" --duration 100000 --dt 0.001 --server "$endpoint" --quiet \
  >"$tmp/long.txt" 2>"$tmp/long.err" &
run_pid=$!
for _ in $(seq 1 100); do
  "$ccsim" sessions --server "$endpoint" | grep -q '^1 session$' && break
  sleep 0.05
done
sleep 0.2
kill -TERM "$run_pid"
run_status=0
wait "$run_pid" || run_status=$?
[ "$run_status" = 143 ] || { echo "FAIL: interrupted run exited with $run_status"; cat "$tmp/long.err"; exit 1; }
grep -q 'interrupted after' "$tmp/long.err" || { echo "FAIL: no interruption message"; exit 1; }
"$ccsim" sessions --server "$endpoint" | grep -q '^0 sessions$' ||
  { echo "FAIL: the interrupted run's session is still open"; exit 1; }

# clean shutdown on SIGTERM, with exit status 0
kill -TERM "$pid"
wait "$pid"
status=$?
ccsimd_pid=""
grep -q 'stopping' "$tmp/server.log" || { echo "FAIL: ccsimd did not report stopping"; exit 1; }
cat "$tmp/remote.txt"
echo "remote and embedded final states are identical; ccsimd exited with $status"
