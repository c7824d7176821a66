#!/usr/bin/env bash
# The CLI refuses what it cannot do, with a message and an exit status, instead of running
# for ever or reporting success: step counts out of range, a CSV that cannot be written;
# and does what it can (an embedded run beside a CURVE environment).
# ccsimd refuses an option's value it cannot take, instead of rounding it.
# usage: cli_errors.sh CCSIM SCENE CCSIMD
set -uo pipefail
ccsim=$1 scene=$2 ccsimd=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect STATUS TEXT -- COMMAND...: the command exits with STATUS and says TEXT on stderr
expect() {
  local want=$1 text=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ] || ! grep -qF -- "$text" "$tmp/err"; then
    echo "FAIL: $* exited $got (wanted $want) saying:"
    cat "$tmp/err"
    fails=$((fails + 1))
  fi
}

for cmd in run compare; do
  expect 2 "between 1 and 1e9 steps" -- "$ccsim" "$cmd" "$scene" --duration 1e300 --dt 1e-300
  expect 2 "between 1 and 1e9 steps" -- "$ccsim" "$cmd" "$scene" --duration 1e-9 --dt 1
  if [ -w /dev/full ]; then
    expect 1 "error writing /dev/full" -- "$ccsim" "$cmd" "$scene" --duration 0.05 --csv /dev/full
  fi
done
expect 2 "--timeout wants seconds" -- "$ccsim" run "$scene" --timeout 0
# output that cannot be written is a failure (it exited 0)
if [ -w /dev/full ]; then
  expect 1 "error writing the standard output" -- sh -c '"$0" run "$1" --duration 0.01 >/dev/full' "$ccsim" "$scene"
fi
# a sub-millisecond timeout is 1 ms, not the library's 30 s default
expect 1 "within 1 ms" -- timeout 10 "$ccsim" ping --server tcp://127.0.0.1:1 --timeout 0.0005
# nothing listening (port 1 needs root to bind) is said within about a second, not after
# three attempts of 10 s
expect 1 "nothing accepts connections at tcp://127.0.0.1:1 — is ccsimd running?" -- \
  timeout 8 "$ccsim" run "$scene" --server tcp://127.0.0.1:1
# an admin token that cannot be written stops ccsimd at start
expect 1 "cannot write the admin token to $tmp/none/admin.token" -- \
  timeout 8 "$ccsimd" --bind 'tcp://127.0.0.1:*' --stream none --admin-token "$tmp/none/admin.token"
expect 2 "--dir is empty" -- "$ccsim" keygen k --dir ""
expect 2 "expected a finite distance" -- "$ccsim" geom proximity box:1,1,1 box:1,1,1 --standoff ""
expect 2 "--count wants a whole number" -- "$ccsim" watch 0123 --count 1.5
# counts take whole numbers (1.5 sessions was taken as 1)
expect 2 "--max-sessions wants a whole number, got '1.5'" -- "$ccsimd" --max-sessions 1.5
expect 2 "--workers wants a number in [1, 1024], got 'two'" -- "$ccsimd" --workers two
# an empty value (an unset variable) is no number: it was taken as 0 (no idle timeout,
# heartbeats off)
expect 2 "--idle-timeout wants a number in [0, " -- "$ccsimd" --idle-timeout ""
expect 2 "--heartbeat-ms wants a number in [0, " -- "$ccsimd" --heartbeat-ms ""

# A scene's impossible body is refused naming the key path, the value and the rule: the
# inertia [1, 1, 3] was taken; a floor mesh missing its top face, and a part's inside-out
# mesh with its mass and inertia given, were accepted silently.
cat >"$tmp/inertia.json" <<'JSON'
{"bodies": [{"name": "ball", "mass": 1, "inertia": [1, 1, 3],
             "shape": {"sphere": {"radius": 0.1}}}]}
JSON
expect 1 'bodies[0] ("ball").inertia = [1, 1, 3]: principal moments must satisfy the triangle inequality (Ixx + Iyy >= Izz' \
  -- "$ccsim" run "$tmp/inertia.json" --duration 0.01
# a unit cube without its top face (z = 1), and a tetrahedron wound inward
cat >"$tmp/open_box.obj" <<'OBJ'
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
v 0 0 1
v 1 0 1
v 1 1 1
v 0 1 1
f 1 4 3 2
f 1 2 6 5
f 2 3 7 6
f 3 4 8 7
f 4 1 5 8
OBJ
cat >"$tmp/inv.obj" <<'OBJ'
v 0 0 0
v 1 0 0
v 0 1 0
v 0 0 1
f 1 2 3
f 1 4 2
f 1 3 4
f 2 4 3
OBJ
cat >"$tmp/mesh.json" <<'JSON'
{"gravity": [0, 0, -9.81],
 "bodies": [{"name": "floor", "fixed": true, "shape": {"mesh": "open_box.obj"}},
            {"name": "ball", "mass": 1, "inertia": [0.004, 0.004, 0.004],
             "shape": {"sphere": {"radius": 0.1}}, "pose": {"p": [0.5, 0.5, 1.5]}}]}
JSON
expect 1 'bodies[0] ("floor").shape.mesh: open_box.obj: open mesh: 4 edges used by one triangle only' \
  -- "$ccsim" run "$tmp/mesh.json" --duration 0.01
sed -e 's/open_box.obj/inv.obj/' -e 's/"fixed": true,/"mass": 1, "inertia": [0.1, 0.1, 0.1],/' \
  "$tmp/mesh.json" >"$tmp/inv.json"
expect 1 'bodies[0] ("floor").shape.mesh: inv.obj: inside out: signed volume -0.166667 m^3 is not positive' \
  -- "$ccsim" run "$tmp/inv.json" --duration 0.01

# The embedded server has no CURVE: keys in the environment, meant for remote servers,
# must not stop a run against it (they did: "does not use CURVE").
"$ccsim" keygen me --dir "$tmp" >/dev/null 2>&1 || { echo "FAIL: keygen"; fails=$((fails + 1)); }
if ! CCSIM_SERVER_KEY="$tmp/me.pub" CCSIM_CLIENT_KEY="$tmp/me.secret" \
    "$ccsim" run "$scene" --duration 0.01 --quiet >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: an embedded run with CURVE keys in the environment:"
  cat "$tmp/err"
  fails=$((fails + 1))
fi

[ "$fails" = 0 ] && echo "all refusals as expected"
exit "$fails"
