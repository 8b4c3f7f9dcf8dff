#!/usr/bin/env bash
# Sanitizer stages of CI (.ci/run runs them after the two suites, on the Debian 12 host only; README.md, Developing).
#
#   bash scripts/sanitize.sh setup   # install clang, compiler-rt (sanitizer and libFuzzer runtimes), llvm-symbolizer
#   bash scripts/sanitize.sh asan    # build-asan/: the engine, the CLI and their tests (not the GUI, not the
#                                    #   benchmarks), clang with -fsanitize=address,undefined -fno-sanitize-recover=all;
#                                    #   the unit tests in one process per job (gtest's sharding), then the rest of
#                                    #   that build's ctest suite but the labels large and examples. The
#                                    #   GUI's own code is left out to keep a fresh machine's CI within its hour
#                                    #   (README); its controller, the part that runs threads, is built and tested
#                                    #   under ThreadSanitizer below.
#   bash scripts/sanitize.sh tsan    # build-tsan/: the threaded tests (staging buffer, run writer, trainer control,
#                                    #   the GUI's controller driving training and sweep sessions) under ThreadSanitizer
#
# LibTorch, Qt and HDF5 are Debian's prebuilt, uninstrumented libraries. ASan and UBSan still check every access our
# code makes; ThreadSanitizer cannot see synchronisation inside uninstrumented code, so its suppressions
# (scripts/sanitizers/tsan.supp) name third-party code only, each with its reason. Any report fails the stage.
# Needs the datasets (bash scripts/lab.sh setup fetches them; tests that need a missing one are skipped).
#
# Environment: DESCENTLAB_JOBS (default: the number of cores) for compile and test jobs.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs="${DESCENTLAB_JOBS:-$(nproc)}"
sanitizers="$repo/scripts/sanitizers"

# shellcheck source=scripts/common.sh
. "$repo/scripts/common.sh"  # say, fail, as_root, install_missing

# clang (the sanitizer builds and libFuzzer), its compiler-rt runtimes, llvm-symbolizer (file:line in reports).
packages=(clang libclang-rt-dev llvm)

setup() {
  say "Checking the sanitizer packages"
  command -v apt-get >/dev/null || fail "apt-get not found: the sanitizer stages need Debian 12"
  install_missing "${packages[@]}"
  local fuzzer
  fuzzer=$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
  [ -f "$fuzzer" ] || fuzzer="$(clang++ -print-resource-dir)/lib/linux/libclang_rt.fuzzer-x86_64.a"
  [ -f "$fuzzer" ] || fail "libFuzzer's runtime (libclang_rt.fuzzer-x86_64.a) is missing after installing libclang-rt-dev"
}

# The runtime options every sanitized binary of these stages runs with (exported: ctest, the CLI checks' child
# processes and gtest's test discovery at build time all see them).
export_sanitizer_options() {
  local symbolizer
  symbolizer=$(command -v llvm-symbolizer || true)
  [ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
  export ASAN_OPTIONS="abort_on_error=0:halt_on_error=1:detect_leaks=1:check_initialization_order=1"
  export LSAN_OPTIONS="suppressions=$sanitizers/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$sanitizers/ubsan.supp"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0:suppressions=$sanitizers/tsan.supp:print_suppressions=0"
  export QT_QPA_PLATFORM=offscreen
}

# configure BUILD_DIR SANITIZERS [extra cmake arguments]: clang, -O1 with line tables (stacks with file:line), the
# precompiled torch header kept (it saves most of a cold build), no benchmarks.
configure() {
  local dir=$1 sanitize=$2
  shift 2
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$repo" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
      -DDESCENTLAB_SANITIZE="$sanitize" -DDESCENTLAB_BUILD_BENCH=OFF "$@" ||
      fail "CMake configuration of $dir failed (see above)"
  fi
}

# unit_shards DIR SANITIZER FILTER: descentlab_tests' cases matching the gtest FILTER in one process per job, each
# taking its share (gtest's sharding), as ASan and TSan both run them: a sanitized process start loads LibTorch for
# about 2 s, which one process per case paid hundreds of times. Fails naming the shard, with its log's end.
unit_shards() {
  local dir=$1 sanitizer=$2 filter=$3 shard pids=() failed=0
  for ((shard = 0; shard < jobs; ++shard)); do
    (cd "$dir/tests" && GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$shard timeout 3000 ./descentlab_tests \
      --gtest_brief=1 --gtest_filter="$filter" >"$dir/unit-shard-$shard.log" 2>&1) &
    pids+=($!)
  done
  for shard in "${!pids[@]}"; do
    if ! wait "${pids[$shard]}"; then
      failed=1
      echo "---- unit tests, shard $shard of $jobs, failed under $sanitizer:"
      tail -n 200 "$dir/unit-shard-$shard.log"
    fi
  done
  [ "$failed" = 0 ] || fail "unit tests failed under $sanitizer (the report is above)"
  grep -h "tests ran\|PASSED\|SKIPPED \]" "$dir"/unit-shard-*.log || true
}

asan() {
  local dir="$repo/build-asan"
  export_sanitizer_options
  say "AddressSanitizer + UndefinedBehaviorSanitizer: building in $dir"
  configure "$dir" address,undefined -DDESCENTLAB_BUILD_GUI=OFF
  cmake --build "$dir" --parallel "$jobs" || fail "the ASan/UBSan build failed (see above)"
  # The unit tests (label "unit": descentlab_tests' cases) as one process per job, each taking its share of the
  # cases (gtest's sharding): under ASan every process start loads LibTorch for 1.9 s, and one process per case
  # spent about 600 s of the stage's CPU on starting. Then the rest through ctest, all but the labels "large"
  # (tests/test_large_run.cpp: one step of a 25 M-parameter model takes minutes here) and "examples" (the examples'
  # Python scripts and CLI runs: 140 s of test time, tests/CMakeLists.txt says why).
  say "AddressSanitizer + UndefinedBehaviorSanitizer: the unit tests in $jobs processes"
  unit_shards "$dir" "ASan/UBSan" "*"
  say "AddressSanitizer + UndefinedBehaviorSanitizer: the rest of the suite but the large-size test and the examples"
  ctest --test-dir "$dir" --output-on-failure --parallel "$jobs" -LE "large|examples|unit" ||
    fail "tests failed under ASan/UBSan (the report is above each failure)"
}

# The tests that run threads of ours: the staging buffer's producers and consumer, the run writer's background
# flush, the trainer's pause/stop control from another thread (descentlab_tests' cases, run as one process per job
# like ASan's unit tests: a TSan process start loads LibTorch for about 2 s), and the GUI controller (LabTest) driving
# training and sweep sessions on worker threads that hand their results to the GUI thread (LabController::postToGui),
# one process per case through ctest. Left out: LabTest.EveryTourStartsFromHelpToursWhileARunTrains, 174 s under
# TSan, the longest case of the stage: it starts each tour's run while one trains, the same worker start, stop and
# hand-off paths that the other LabTest cases run (two runs at once: SeedsFromThePanelTrainTwoAtATimeAsOneGroup);
# its tours are checked without TSan in both Debian suites.
tsan_unit_filter='StagingBuffer.*:RunFile.*:RunLog.*:RunFollower.*:CheckpointFiles.*:Trainer.*:TrainingSessionResume.*'
tsan_gui_tests='^(LabTest|StudyBrowserTest)\.'
tsan_left_out='^LabTest\.EveryTourStartsFromHelpToursWhileARunTrains$'

tsan() {
  local dir="$repo/build-tsan"
  export_sanitizer_options
  # One OpenBLAS thread. Debian's OpenBLAS (uninstrumented) hands a matrix product to its own worker threads and
  # waits for them by spinning on plain memory, which TSan cannot see: a worker's memset of the output (sgemm_beta)
  # then reads as racing with the training thread's later free of that tensor (seen in every LabTest on a machine
  # whose environment does not set OPENBLAS_NUM_THREADS, where OpenBLAS starts a worker per core). A called_from_lib
  # suppression cannot take it: Debian's OpenBLAS is mapped twice under one name and TSan refuses the ambiguity.
  export OPENBLAS_NUM_THREADS=1
  say "ThreadSanitizer: building the threaded tests in $dir"
  configure "$dir" thread
  cmake --build "$dir" --parallel "$jobs" --target descentlab_tests descentlab_gui_tests ||
    fail "the TSan build failed (see above)"
  say "ThreadSanitizer: the threaded unit tests in $jobs processes (--gtest_filter='$tsan_unit_filter')"
  unit_shards "$dir" "ThreadSanitizer" "$tsan_unit_filter"
  say "ThreadSanitizer: the GUI controller's tests (ctest -R '$tsan_gui_tests')"
  ctest --test-dir "$dir" --output-on-failure --parallel "$jobs" -R "$tsan_gui_tests" -E "$tsan_left_out" ||
    fail "tests failed under ThreadSanitizer (the report is above each failure)"
}

case "${1:-}" in
  setup) setup ;;
  asan) setup; asan ;;
  tsan) setup; tsan ;;
  *) echo "usage: bash scripts/sanitize.sh setup|asan|tsan" >&2; exit 2 ;;
esac
