#!/usr/bin/env bash
# Checks that a change which only reorganises code changes no result: a quick run of every preset (and a run of
# each engine stopped part-way and resumed) gives bit-identical metrics, histograms, checkpoints and `train --json`
# summaries before and after (scripts/run_fingerprint.py says exactly what is compared; wall times and throughput
# are clocks and left out).
#
#   bash scripts/same-results.sh fingerprint BUILD OUT    # every preset with BUILD/app/descentlab-cli -> OUT/*.json
#   bash scripts/same-results.sh compare OUT_A OUT_B      # exit 1 and the differing entries when they differ
#   bash scripts/same-results.sh against REF [BUILD]      # REF (a commit) built headless in a git worktree, then
#                                                         # fingerprint both and compare (BUILD default build/)
#
# One torch thread, CPU: the runs are deterministic there. About 6 minutes per build on 2 cores (both in
# parallel when `against` fingerprints). Needs the datasets (scripts/lab.sh setup) and python3-h5py.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
presets=(text-erm text-constrained video-erm video-constrained vit-adamw vit-ham vit-horst gpt-adamw gpt-ham gpt-horst)
resumed=(text-constrained vit-horst)  # stopped after RESUME_AT steps, then resumed
resume_at=7
python=${DESCENTLAB_PYTHON:-/usr/bin/python3}  # Debian's, with python3-h5py
fail() { printf '\nERROR: %s\n' "$*" >&2; exit 1; }

fingerprint() {
  local build=${1:?usage: fingerprint BUILD OUT} out=${2:?usage: fingerprint BUILD OUT}
  local cli="$build/app/descentlab-cli" preset
  [ -x "$cli" ] || fail "no $cli (build first)"
  mkdir -p "$out/runs"
  export DESCENTLAB_THREADS=1
  export DESCENTLAB_DATA=${DESCENTLAB_DATA:-$repo/datasets/cache}  # one dataset cache for both builds
  for preset in "${presets[@]}"; do
    "$cli" train --preset "$preset" --size quick --device cpu --out "$out/runs/$preset.h5" --overwrite --json \
      >"$out/runs/$preset.summary.json" 2>"$out/runs/$preset.log" || fail "$preset failed with $cli (see $out/runs/$preset.log)"
    "$python" "$repo/scripts/run_fingerprint.py" "$out/runs/$preset.h5" "$out/runs/$preset.summary.json" >"$out/$preset.json"
    echo "fingerprinted $preset ($cli)"
  done
  for preset in "${resumed[@]}"; do
    local run="$out/runs/$preset-resumed.h5"
    "$cli" train --preset "$preset" --size quick --device cpu --out "$run" --overwrite --max-steps $resume_at \
      >/dev/null 2>"$out/runs/$preset-resumed.log" || fail "$preset (first part) failed with $cli"
    "$cli" train --resume "$run" --json >"$out/runs/$preset-resumed.summary.json" 2>>"$out/runs/$preset-resumed.log" ||
      fail "$preset (resumed) failed with $cli"
    "$python" "$repo/scripts/run_fingerprint.py" "$run" "$out/runs/$preset-resumed.summary.json" >"$out/$preset-resumed.json"
    echo "fingerprinted $preset stopped at step $resume_at and resumed ($cli)"
  done
}

compare() {
  local a=${1:?usage: compare OUT_A OUT_B} b=${2:?usage: compare OUT_A OUT_B}
  "$python" - "$a" "$b" <<'PY'
import json, os, sys
a, b = sys.argv[1:3]
names = sorted(n for n in os.listdir(a) if n.endswith(".json"))
missing = sorted(set(n for n in os.listdir(b) if n.endswith(".json")) ^ set(names))
differences = [f"{name}: only in one of the two" for name in missing]
def walk(x, y, where):
    if isinstance(x, dict) and isinstance(y, dict):
        for key in sorted(set(x) | set(y)):
            if key not in x or key not in y:
                differences.append(f"{where}/{key}: only in {'the second' if key not in x else 'the first'}")
            else:
                walk(x[key], y[key], f"{where}/{key}")
    elif x != y:
        differences.append(f"{where}: {json.dumps(x)[:80]} != {json.dumps(y)[:80]}")
compared = 0
for name in names:
    if not os.path.exists(os.path.join(b, name)):
        continue
    walk(json.load(open(os.path.join(a, name))), json.load(open(os.path.join(b, name))), name[:-5])
    compared += 1
if differences:
    print(f"DIFFERENT: {len(differences)} entries differ over {compared} runs")
    print("\n".join(differences[:60]))
    sys.exit(1)
print(f"same results: {compared} runs, every metric, histogram, checkpoint and summary bit-identical")
PY
}

against() {
  local ref=${1:?usage: against REF [BUILD]} build=${2:-$repo/build}
  local commit work
  commit=$(git -C "$repo" rev-parse --verify "$ref^{commit}") || fail "no commit $ref"
  work=${DESCENTLAB_SAME_RESULTS_DIR:-/tmp/descentlab-same-results}
  mkdir -p "$work"
  if [ ! -d "$work/source/.git" ] && [ ! -f "$work/source/.git" ]; then
    git -C "$repo" worktree add --detach "$work/source" "$commit" >/dev/null
  else
    git -C "$work/source" checkout -q --detach "$commit"
  fi
  echo "building $ref ($commit) headless in $work/build"
  cmake -S "$work/source" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DDESCENTLAB_HEADLESS=ON >"$work/configure.log" ||
    fail "configuring $ref failed (see $work/configure.log)"
  cmake --build "$work/build" --target descentlab-cli -j"$(nproc)" >"$work/build.log" 2>&1 ||
    fail "building $ref failed (see $work/build.log)"
  rm -rf "$work/before" "$work/after"
  fingerprint "$work/build" "$work/before" &
  local before=$!
  fingerprint "$build" "$work/after"
  wait $before || fail "fingerprinting $ref failed"
  compare "$work/before" "$work/after"
}

case "${1:-}" in
  fingerprint) shift; fingerprint "$@" ;;
  compare) shift; compare "$@" ;;
  against) shift; against "$@" ;;
  *) sed -n '2,13p' "${BASH_SOURCE[0]}" >&2; exit 2 ;;
esac
