#!/usr/bin/env bash
# libFuzzer runs of the fuzz targets in fuzz/ (fuzz/README.md), built with clang, ASan and UBSan into build-fuzz/.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]   # each target for SECONDS (default 60), DESCENTLAB_JOBS at a time
#
# CI (.ci/run) runs every target for 30 s (the default here is 60 s); give more for a longer hunt (bash scripts/fuzz.sh 600 idx). Each target
# starts from its committed seeds (fuzz/corpus/TARGET) and its kept crashes (fuzz/regressions/TARGET) and grows a
# working corpus in fuzz-out/TARGET/corpus (git-ignored; later runs go on from it). A crash, leak, timeout or
# out-of-memory input is written to fuzz-out/TARGET/ and fails the run: fix the bug, then keep the input as
# fuzz/regressions/TARGET/NAME so ctest's fuzz.replay.TARGET replays it in every build. The summary gives each
# target's executions, coverage, corpus size and findings.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs="${DESCENTLAB_JOBS:-$(nproc)}"
seconds="${1:-60}"
shift || true
all_targets=(config run_file idx reviews corpus catalog sprites run_log study_folder)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
build_dir="$repo/build-fuzz"
out="$repo/fuzz-out"
sanitizers="$repo/scripts/sanitizers"

# shellcheck source=scripts/common.sh
. "$repo/scripts/common.sh"  # say, fail

[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || fail "SECONDS must be a positive whole number, got '$seconds'"
for target in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $target "* ]] || fail "unknown fuzz target '$target' (known: ${all_targets[*]})"
done

bash "$repo/scripts/sanitize.sh" setup

say "Building the fuzz targets in $build_dir (clang, libFuzzer, ASan + UBSan)"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  # Headless: the fuzz targets need only the torch-free core, so nothing of LibTorch, Qt or the tests is built.
  cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DDESCENTLAB_HEADLESS=ON \
    -DDESCENTLAB_FUZZ=ON -DDESCENTLAB_SANITIZE=address,undefined -DDESCENTLAB_USE_PCH=OFF ||
    fail "CMake configuration of $build_dir failed (see above)"
fi
binaries=()
for target in "${targets[@]}"; do binaries+=("fuzz_$target"); done
cmake --build "$build_dir" --parallel "$jobs" --target "${binaries[@]}" || fail "the fuzz build failed (see above)"

symbolizer=$(command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
export ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$sanitizers/ubsan.supp"

# fuzz_one TARGET: one libFuzzer run; its log is fuzz-out/TARGET/fuzz.log.
fuzz_one() {
  local target=$1 dir="$out/$1"
  mkdir -p "$dir/corpus"
  find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
    -delete
  local seeds=("$repo/fuzz/corpus/$target")
  [ -d "$repo/fuzz/regressions/$target" ] && seeds+=("$repo/fuzz/regressions/$target")
  local code=0
  "$build_dir/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" "${seeds[@]}" >"$dir/fuzz.log" 2>&1 || code=$?
  echo "$code" >"$dir/exit"
}

say "Fuzzing ${targets[*]} for $seconds s each, $jobs at a time (logs: fuzz-out/TARGET/fuzz.log)"
running=0
for target in "${targets[@]}"; do
  rm -f "$out/$target/exit"
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait
declare -A status
failed=0
for target in "${targets[@]}"; do status[$target]=$(cat "$out/$target/exit" 2>/dev/null || echo '?'); done

printf '\n%-9s %8s %10s %6s %7s %6s  %s\n' target seconds execs cov ft corpus findings
for target in "${targets[@]}"; do
  dir="$out/$target"
  log="$dir/fuzz.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  features=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  corpus=$(find "$dir/corpus" -type f | wc -l)
  findings=$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) -printf '%f ')
  if [ "${status[$target]}" != 0 ] || [ -n "$findings" ]; then
    failed=1
    findings="${findings:-exit ${status[$target]}} (see fuzz-out/$target/fuzz.log)"
  fi
  printf '%-9s %8s %10s %6s %7s %6s  %s\n' "$target" "$seconds" "${execs:-?}" "${coverage:-?}" "${features:-?}" \
    "$corpus" "${findings:-none}"
done
if [ "$failed" != 0 ]; then
  for target in "${targets[@]}"; do
    [ "${status[$target]}" = 0 ] && continue
    printf '\n---- fuzz-out/%s/fuzz.log (end) ----\n' "$target"
    tail -n 60 "$out/$target/fuzz.log"
  done
  fail "fuzzing found a problem (above); fix it and keep the input in fuzz/regressions/TARGET/"
fi
echo "no findings"
