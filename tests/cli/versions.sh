#!/usr/bin/env bash
# One version number: ccsim --version and ccsimd --version both print the project's
# (CMake's project() VERSION), and exit 0.
# usage: versions.sh CCSIM CCSIMD VERSION
set -uo pipefail
ccsim=$1 ccsimd=$2 version=$3
fails=0
for tool in "$ccsim" "$ccsimd"; do
  out=$("$tool" --version)
  rc=$?
  want="$(basename "$tool") $version"
  if [ $rc != 0 ] || [ "$out" != "$want" ]; then
    echo "FAIL: $tool --version exited $rc printing '$out' (wanted '$want')"
    fails=$((fails + 1))
  fi
done
[ $fails = 0 ] && echo "versions: ok ($version)"
exit $fails
