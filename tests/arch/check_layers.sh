#!/usr/bin/env bash
# The layering of DESIGN's arrows, checked on the sources and on the built libraries:
#   geometry <- server/core <- server/service -> proto <- client
# 1. no file of geometry includes a header of ours outside geometry; no file of server/core
#    includes one outside server/core, geometry and proto/common (so nothing of the service,
#    the client or protobuf's generated code);
# 2. the core library references no ZeroMQ or protobuf symbol;
# 3. within one library (one folder), no two object files call each other both ways.
# Usage: check_layers.sh SOURCE_DIR CORE_LIB [LIB...]   (LIBs: static archives to check for 3)
set -euo pipefail
src=$1; core_lib=$2; shift 2
fail=0

# headers of ours, by folder
declare -A home
while IFS= read -r h; do home[$(basename "$h")]=$(dirname "${h#"$src"/}"); done < <(
  find "$src/geometry" "$src/server" "$src/proto" "$src/client" -name '*.h' -not -path '*/fuzz/*')
home[ccsim.pb-c.h]=proto/generated

check_includes() {  # folder, allowed folders...
  local dir=$1; shift
  local f inc where ok a
  for f in "$src/$dir"/*.[ch]; do
    while IFS= read -r inc; do
      where=${home[$inc]:-}
      [ -n "$where" ] || continue  # a system or third-party header
      ok=0
      for a in "$@"; do [ "$where" = "$a" ] && ok=1; done
      if [ $ok = 0 ]; then
        echo "layering: ${f#"$src"/} includes $inc (from $where; $dir may use only: $*)"
        fail=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  done
}
check_includes geometry geometry
check_includes proto/common proto/common
check_includes server/core server/core geometry proto/common

# the core's undefined symbols: nothing of ZeroMQ, protobuf-c or the generated messages
bad=$(nm -u "$core_lib" | awk '{print $NF}' | grep -E '^(zmq_|protobuf_c_|ccsim__)' | sort -u || true)
if [ -n "$bad" ]; then
  echo "layering: $(basename "$core_lib") references the wire:"; echo "$bad" | sed 's/^/  /'
  fail=1
fi

# calls both ways between two objects of one library
for lib in "$core_lib" "$@"; do
  tmp=$(mktemp -d)
  nm -A --defined-only "$lib" 2>/dev/null | awk '$(NF-1) ~ /^[TDBR]$/ {split($1, p, ":"); print p[2], $NF}' \
    | sed 's/:$//' > "$tmp/def"
  nm -A -u "$lib" 2>/dev/null | awk '{split($1, p, ":"); print p[2], $NF}' | sed 's/:$//' > "$tmp/und"
  # edges "caller callee" between distinct objects
  awk 'NR == FNR {d[$2] = $1; next} ($2 in d) && d[$2] != $1 {print $1, d[$2]}' \
    "$tmp/def" "$tmp/und" | sort -u > "$tmp/edges"
  while read -r a b; do
    if [[ "$a" < "$b" ]] && grep -qx "$b $a" "$tmp/edges"; then
      echo "layering: in $(basename "$lib"), $a and $b call each other"
      fail=1
    fi
  done < "$tmp/edges"
  rm -rf "$tmp"
done

[ $fail = 0 ] && echo "layering: ok"
exit $fail
