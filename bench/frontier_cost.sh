#!/usr/bin/env bash
# The live sparsity frontier's cost (issue 17: "default cheap enough to cost <= 5 % of training time — measure it").
# For each preset, in one script and alternating, the same run with the frontier at its default settings and with
# it off (sparsity.frontier_interval=0), one torch thread each, FRONTIER_BENCH_REPEATS times (default 2):
#   - in-process share: the seconds the trainer spent in the frontier over the run's training seconds (both from
#     the run's own --json summary: frontier.seconds and seconds);
#   - wall ratio: the run's training seconds with the frontier over those without (median over the repeats).
# Usage: bash bench/frontier_cost.sh [BUILD_DIR] [PRESET...]   (default presets: vit-horst gpt-horst, size quick)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../build}
shift || true
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(vit-horst gpt-horst)
repeats=${FRONTIER_BENCH_REPEATS:-2}
size=${FRONTIER_BENCH_SIZE:-quick}
cli="$build/app/descentlab-cli"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export DESCENTLAB_THREADS=1
field() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for preset in "${presets[@]}"; do
  shares=() ratios=()
  for ((repeat = 1; repeat <= repeats; ++repeat)); do
    on=$("$cli" train --preset "$preset" --size "$size" --out "$scratch/on.h5" --overwrite --json 2>/dev/null)
    off=$("$cli" train --preset "$preset" --size "$size" --out "$scratch/off.h5" --overwrite --json \
      --set sparsity.frontier_interval=0 2>/dev/null)
    on_seconds=$(field 'd["seconds"]' <<<"$on")
    off_seconds=$(field 'd["seconds"]' <<<"$off")
    frontier_seconds=$(field 'd["frontier"]["seconds"]' <<<"$on")
    evaluations=$(field 'd["frontier"]["evaluations"]' <<<"$on")
    steps=$(field 'd["steps"]' <<<"$on")
    share=$(awk -v f="$frontier_seconds" -v t="$on_seconds" 'BEGIN { printf "%.4f", f / t }')
    ratio=$(awk -v a="$on_seconds" -v b="$off_seconds" 'BEGIN { printf "%.4f", a / b }')
    echo "$preset $size repeat $repeat: steps $steps, frontier evaluations $evaluations," \
      "train ${on_seconds}s with / ${off_seconds}s without, frontier ${frontier_seconds}s:" \
      "in-process share $share, wall ratio $ratio"
    shares+=("$share") ratios+=("$ratio")
  done
  echo "$preset $size: frontier_share_of_training $(median "${shares[@]}")" \
    "wall_ratio_with_over_without $(median "${ratios[@]}") (medians of $repeats)"
done
