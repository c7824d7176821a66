#!/usr/bin/env bash
# The mean contact force over each step, as a user sees it. ccsim run --csv keeps its
# columns in their places and appends NAME.mfx, NAME.mfy, NAME.mfz per body; at 1 ms steps
# sphere_drop's second impact (about 0.58 s), shorter than a step, carries its impulse
# in the mean. ccsim compare reports the support as a mean over a window, and on the
# Rock-N-Stack the two modes' means agree within 1 % (their end samples need not).
# usage: mean_force.sh CCSIM SOURCE_DIR
set -uo pipefail
ccsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# the example with the ball's mass given (its density would give the mass of the
# tessellated sphere, which the check below would have to recompute)
sed 's/"density": 1000/"mass": 0.5/' "$src/examples/sphere_drop.json" > "$tmp/sd.json"
grep -q '"mass": 0.5' "$tmp/sd.json" || fail "the example no longer has the ball's density"
"$ccsim" run "$tmp/sd.json" --csv "$tmp/sd.csv" --quiet > /dev/null || fail "ccsim run sphere_drop"
body="px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,fx,fy,fz,contacts"
want="t,$(echo "$body" | sed 's/[^,]*/floor.&/g'),$(echo "$body" | sed 's/[^,]*/ball.&/g')"
want="$want,floor.mfx,floor.mfy,floor.mfz,ball.mfx,ball.mfy,ball.mfz"
[ "$(head -1 "$tmp/sd.csv")" = "$want" ] || fail "header: $(head -1 "$tmp/sd.csv")"
# every row as wide as the header; between 0.5 s and 0.65 s (the second impact) the
# ball's mean vertical force is positive in some step, and its impulse sum(mfz dt) is
# m (v_out - v_in) - m g T from the ball's vertical velocity before and after that window
awk -F, -v lo=0.5 -v hi=0.65 '
  NR == 1 { n = NF; for (i = 1; i <= NF; i++) col[$i] = i; next }
  NF != n { bad++ }
  { t = $1; vz = $col["ball.vz"]; mfz = $col["ball.mfz"] }
  t <= lo { v0 = vz; t0 = t }
  t > lo && t <= hi { imp += mfz * (t - tp); if (mfz > 0) hit++; v1 = vz; t1 = t }
  { tp = t }
  END {
    if (bad) { print "rows of another width: " bad; exit 1 }
    if (!hit) { print "no mean force in the second impact"; exit 1 }
    m = 0.5
    want = m * (v1 - v0) + m * 9.81 * (t1 - t0)
    rel = (imp - want) / want; if (rel < 0) rel = -rel
    printf "second impact: impulse %.6g N s, momentum change %.6g N s (%.2g)\n", imp, want, rel
    exit rel < 1e-3 ? 0 : 1
  }' "$tmp/sd.csv" || fail "the second impact's mean force"

"$ccsim" compare "$src/examples/rock_n_stack.json" --duration 2 > "$tmp/cmp" ||
  fail "ccsim compare"
grep -q '^support, mean of the last 0.5 s \[N\]' "$tmp/cmp" || { fail "no window mean:"; cat "$tmp/cmp"; }
rel=$(awk '/^  rigid \/ compliant - 1/ { print $NF }' "$tmp/cmp")
awk -v r="${rel:-nan}" 'BEGIN { exit (r == r && r < 0.01 && r > -0.01) ? 0 : 1 }' ||
  fail "Rock-N-Stack window means differ by ${rel:-?} between the modes"
[ $fails = 0 ] && echo "mean_force: ok"
exit $fails
