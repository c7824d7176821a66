#!/usr/bin/env bash
# examples/hover.c, the README's client example, against a separately started ccsimd: its
# PID force must lift the ball of sphere_drop.json to 20 cm and hold it there without
# touching the floor (with its inputs ignored the ball would fall and rest on the floor,
# 15 cm lower), and its errors must reach the user.
# usage: example_hover.sh HOVER CCSIMD SCENE
set -euo pipefail
hover=$1 ccsimd=$2 scene=$3
tmp=$(mktemp -d)
. "$(dirname "$0")/ccsimd_start.sh"
trap 'stop_ccsimd; rm -rf "$tmp"' EXIT
start_ccsimd "$ccsimd" "$tmp"

"$hover" "$endpoint" "$scene" 0.2 3 >"$tmp/out.txt"
cat "$tmp/out.txt"
awk '/^final: z = / {
       found = 1; z = $4; n = $(NF - 5)
       if (z < 0.1995 || z > 0.2005) { print "FAIL: ball at z = " z ", not within 0.5 mm of 0.2"; exit 1 }
       if (n != 0) { print "FAIL: " n " contact pairs on a ball held in the air"; exit 1 }
     }
     END { if (!found) { print "FAIL: no final line"; exit 1 } }' "$tmp/out.txt"

# a scene without the controlled body: a message and exit status 1
status=0
"$hover" "$endpoint" "$(dirname "$scene")/tumble.json" >/dev/null 2>"$tmp/err.txt" || status=$?
[ "$status" = 1 ] && grep -q 'no body named "ball"' "$tmp/err.txt" ||
  { echo "FAIL: hover without a ball exited $status:"; cat "$tmp/err.txt"; exit 1; }
echo "the example held the ball at 20 cm"
