#!/usr/bin/env bash
# libccsim as a user gets it: the build installed into a fresh prefix, the README's C client
# block ("Driving the server from a client (C)") built out of tree against it, once with
# pkg-config (shared) and once as a CMake project using find_package(ccsim) (ccsim::ccsim,
# shared, and ccsim::ccsim_static), each run against the installed ccsimd. The block pushes
# examples/tumble.json's racket (1 kg, zero gravity, at rest in x) with 1 N along x for 1 s:
# x = t^2 / 2, printed every 0.1 s to 4 decimals. The installed headers must also compile
# on their own and bring in no protobuf-c, ZeroMQ or jansson header.
# usage: libccsim.sh CMAKE BUILD_DIR SOURCE_DIR CC PKG_CONFIG VERSION [CFLAGS]
set -euo pipefail
cmake=$1 build=$2 src=$3 cc=$4 pkg_config=$5 version=$6 cflags=${7:-}
tmp=$(mktemp -d)
. "$src/tests/cli/ccsimd_start.sh"
trap 'stop_ccsimd; rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "FAIL: $*"; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
for f in bin/ccsimd bin/ccsim lib/libccsim.so lib/libccsim.a include/ccsim/ccsim_client.h \
         lib/pkgconfig/ccsim.pc lib/cmake/ccsim/ccsimConfig.cmake; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
soname=$(objdump -p "$prefix/lib/libccsim.so" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libccsim.so.${version%.*}" ] || fail "soname '$soname', not libccsim.so.${version%.*}"

# the public headers: alone, strict, and only the C library behind them
for h in ccsim_client.h ccsim_scene.h ccsim_status.h; do
  echo "#include \"$h\"" >"$tmp/h.c"
  # shellcheck disable=SC2086
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags -I"$prefix/include/ccsim" \
    -fsyntax-only "$tmp/h.c" || fail "$h does not compile alone"
  if "$cc" -std=c11 -E -I"$prefix/include/ccsim" "$tmp/h.c" |
     grep -E '^# [0-9]+ "[^"]*(pb-c|protobuf|zmq|jansson)[^"]*"' | head -1 | grep -q .; then
    fail "$h includes a header of protobuf-c, ZeroMQ or jansson"
  fi
done

# the README's block, and a main that hands it the endpoint
awk '/^## Driving the server from a client \(C\)/ {h = 1; next}
     h && /^```c$/ {c = 1; next}
     c && /^```$/ {exit}
     c {print}' "$src/README.md" >"$tmp/readme.c"
grep -q 'int push_racket(const char \*endpoint)' "$tmp/readme.c" ||
  fail "no push_racket in the README's C block"
cat >"$tmp/main.c" <<'C'
#include <stdio.h>

int push_racket(const char *endpoint);

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: readme_client ENDPOINT\n");
    return 2;
  }
  return push_racket(argv[1]) == 0 ? 0 : 1;
}
C

# pkg-config, shared
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
mkdir "$tmp/pc"
# shellcheck disable=SC2046,SC2086
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags -o "$tmp/pc/readme_client" \
  "$tmp/readme.c" "$tmp/main.c" $("$pkg_config" --cflags --libs ccsim) \
  -Wl,-rpath,"$prefix/lib" || fail "the pkg-config build"

# find_package(ccsim), shared and static
mkdir "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(readme_client C)
find_package(ccsim $version EXACT REQUIRED)
add_executable(readme_client "$tmp/readme.c" "$tmp/main.c")
target_link_libraries(readme_client PRIVATE ccsim::ccsim)
add_executable(readme_client_static "$tmp/readme.c" "$tmp/main.c")
target_link_libraries(readme_client_static PRIVATE ccsim::ccsim_static)
CM
CFLAGS="$cflags" LDFLAGS="$cflags" "$cmake" -S "$tmp/cm" -B "$tmp/cm/build" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "find_package(ccsim)"; }
"$cmake" --build "$tmp/cm/build" >>"$tmp/cm.log" 2>&1 ||
  { cat "$tmp/cm.log"; fail "the find_package build"; }

needs_libccsim() { objdump -p "$1" | grep -q "NEEDED *libccsim\.so\.${version%.*}$"; }
needs_libccsim "$tmp/pc/readme_client" || fail "the pkg-config build does not load libccsim.so"
needs_libccsim "$tmp/cm/build/readme_client" || fail "ccsim::ccsim does not load libccsim.so"
! needs_libccsim "$tmp/cm/build/readme_client_static" || fail "ccsim::ccsim_static loads libccsim.so"

# each against the installed ccsimd, from the source folder (the block loads examples/...)
start_ccsimd "$prefix/bin/ccsimd" "$tmp"
for exe in "$tmp/pc/readme_client" "$tmp/cm/build/readme_client" \
           "$tmp/cm/build/readme_client_static"; do
  status=0
  (cd "$src" && timeout 60 "$exe" "$endpoint") >"$tmp/out.txt" 2>"$tmp/err.txt" || status=$?
  [ "$status" = 0 ] || { cat "$tmp/out.txt" "$tmp/err.txt"; fail "$exe exited $status"; }
  awk 'function bad(msg) { print "FAIL: " msg; failed = 1; exit 1 }
       {
         if ($0 !~ /^t = [0-9.]+ s  x = -?[0-9.]+ m$/) bad("line \"" $0 "\"")
         n++; t = $3; x = $7
         if (t + 0 != n / 10) bad("line " n " at t = " t)
         if (x - t * t / 2 > 1e-4 || t * t / 2 - x > 1e-4) bad("x = " x " at t = " t ", not t^2/2")
       }
       END { if (!failed && n != 10) { print "FAIL: " n " lines, not 10"; exit 1 } }' \
    "$tmp/out.txt" ||
    { cat "$tmp/out.txt"; fail "$exe printed something else"; }
done
cat "$tmp/out.txt"
echo "libccsim installed, built with pkg-config and find_package, ran against ccsimd"
