# Sourced by the CLI tests: start_ccsimd CCSIMD DIR [ARGS...] starts ccsimd on a free
# loopback port with its log in DIR/server.log and sets ccsimd_pid and endpoint; the
# caller's EXIT trap calls stop_ccsimd, which kills it if it still runs.
ccsimd_pid=""
endpoint=""

start_ccsimd() {
  local exe=$1 dir=$2
  shift 2
  # a free port chosen by the kernel; ccsimd prints the endpoint it bound. The log exists
  # before the server starts: the background job may not have opened it when sed first reads.
  : >"$dir/server.log"
  "$exe" --bind 'tcp://127.0.0.1:*' "$@" >"$dir/server.log" 2>&1 &
  ccsimd_pid=$!
  for _ in $(seq 1 100); do
    endpoint=$(sed -n 's/^ccsimd .* listening on \(tcp:[^ ]*\)$/\1/p' "$dir/server.log")
    [ -n "$endpoint" ] && return 0
    sleep 0.05
  done
  echo "ccsimd did not start:"
  cat "$dir/server.log"
  return 1
}

stop_ccsimd() {
  if [ -n "$ccsimd_pid" ]; then
    kill "$ccsimd_pid" 2>/dev/null || true
    wait "$ccsimd_pid" 2>/dev/null || true
  fi
}
