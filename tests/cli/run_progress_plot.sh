#!/usr/bin/env bash
# ccsim run on a terminal shows a progress line (time, real-time factor, time left) about
# once a second, and none without a terminal or with --quiet; --plot draws a body whose
# name has underscores, with a contact force that is zero throughout, and leaves nothing on
# the terminal (gnuplot's own warnings are kept unless it fails).
# usage: run_progress_plot.sh CCSIM SOURCE_DIR
set -uo pipefail
ccsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# a run of well over a second (the Rock-N-Stack runs at about 2x real time, slower under
# sanitizers), on a pseudo-terminal made by script(1)
scene=$src/examples/rock_n_stack.json
script -qec "'$ccsim' run '$scene' --duration 3" /dev/null > "$tmp/tty" 2>&1
grep -aq 'real-time factor .*s left' "$tmp/tty" || { fail "no progress line on a terminal:"; cat "$tmp/tty"; }
grep -aq 'final state' "$tmp/tty" || fail "the run on a terminal did not finish"
"$ccsim" run "$scene" --duration 3 > "$tmp/pipe" 2>&1
grep -q 's left' "$tmp/pipe" && fail "a progress line without a terminal"
script -qec "'$ccsim' run '$scene' --duration 3 --quiet" /dev/null > "$tmp/quiet" 2>&1
grep -aq 's left' "$tmp/quiet" && fail "a progress line with --quiet"

if command -v gnuplot > /dev/null; then
  sed 's/"racket"/"box3_4_4"/g' "$src/examples/tumble.json" > "$tmp/t.json"
  "$ccsim" run "$tmp/t.json" --duration 0.2 --plot "$tmp/t.png" --quiet > "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ $rc = 0 ] || fail "--plot exited $rc"
  [ -s "$tmp/err" ] && { fail "--plot wrote to stderr:"; cat "$tmp/err"; }
  [ -s "$tmp/t.png" ] || fail "--plot made no picture"
  grep -q "plot: $tmp/t.png (box3_4_4's" "$tmp/out" || fail "--plot did not say what it drew"
else
  fail "gnuplot is not installed (scripts/setup installs gnuplot-nox)"
fi
[ $fails = 0 ] && echo "run_progress_plot: ok"
exit $fails
