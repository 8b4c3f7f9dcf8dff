#!/usr/bin/env bash
# Measures DescentLab's build and test times from a fresh clone of HEAD, in one run, so the figures in
# docs/build.md are ratios against a baseline taken on the same machine at the same time:
#   1. clean build, precompiled torch header ON  (ccache disabled)
#   2. clean build, precompiled torch header OFF (ccache disabled)  -- the baseline for 1
#   3. rebuild after touching one torch source (core/tasks/dataset_tensors.cpp), PCH on vs off: the edit-compile loop
#   4. clean build in a second fresh clone with ccache warm (filled by an untimed build in the first clone)
#   5. the test suite through ctest on 2 parallel jobs
# Usage: bash scripts/measure-build.sh [JOBS]   (needs the packages of scripts/lab.sh and the fetched datasets)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${1:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

git clone -q "$repo" "$work/a"
git clone -q "$repo" "$work/b"

timed_build() {  # timed_build SOURCE BUILD_DIR [cmake args...] -> seconds
  local source=$1 build=$2; shift 2
  [ -f "$build/CMakeCache.txt" ] || cmake -S "$source" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  local start end
  start=$(now)
  cmake --build "$build" --parallel "$jobs" >"$build.log" 2>&1 || { tail -20 "$build.log" >&2; exit 1; }
  end=$(now)
  elapsed "$start" "$end"
}

export CCACHE_DISABLE=1
pch_on=$(timed_build "$work/a" "$work/a/build-pch" -DDESCENTLAB_USE_PCH=ON)
pch_off=$(timed_build "$work/a" "$work/a/build-nopch" -DDESCENTLAB_USE_PCH=OFF)
touch "$work/a/core/tasks/dataset_tensors.cpp"
edit_pch_on=$(timed_build "$work/a" "$work/a/build-pch")
touch "$work/a/core/tasks/dataset_tensors.cpp"
edit_pch_off=$(timed_build "$work/a" "$work/a/build-nopch")
unset CCACHE_DISABLE
timed_build "$work/a" "$work/a/build" >/dev/null          # fills ccache (untimed)
ccache_warm=$(timed_build "$work/b" "$work/b/build")     # another folder, as a fresh CI clone

start=$(now)
ctest --test-dir "$work/b/build" --parallel 2 >"$work/ctest.log" 2>&1 || { tail -30 "$work/ctest.log" >&2; exit 1; }
end=$(now)
tests=$(elapsed "$start" "$end")
summary=$(grep -E 'tests passed' "$work/ctest.log")

printf 'jobs: %s, cores: %s, commit: %s\n' "$jobs" "$(nproc)" "$(git -C "$repo" rev-parse --short HEAD)"
printf 'clean build, PCH on,  no ccache : %6.1f s\n' "$pch_on"
printf 'clean build, PCH off, no ccache : %6.1f s   (PCH on / off = %s)\n' "$pch_off" "$(ratio "$pch_on" "$pch_off")"
printf 'rebuild after editing core/tasks/dataset_tensors.cpp, PCH on : %6.1f s\n' "$edit_pch_on"
printf 'rebuild after editing core/tasks/dataset_tensors.cpp, PCH off: %6.1f s   (on / off = %s)\n' "$edit_pch_off" \
  "$(ratio "$edit_pch_on" "$edit_pch_off")"
printf 'clean build, fresh clone, warm ccache: %6.1f s   (/ PCH on, no ccache = %s)\n' "$ccache_warm" \
  "$(ratio "$ccache_warm" "$pch_on")"
printf 'test suite (ctest -j2): %s s, %s\n' "$tests" "$summary"
