#!/usr/bin/env bash
# Where do the layerwise constraints bind, and do they pay off? (issue 4's study; docs/study-layerwise.md)
#
#   bash scripts/study-layerwise.sh run [SEEDS...]   # the grid below for each seed (default: seed 0), then the summary
#   bash scripts/study-layerwise.sh erm-seeds [SEEDS...]  # ERM only, other seeds (default 1 2): the seed spread
#   bash scripts/study-layerwise.sh summary          # rewrite docs/study-layerwise.md from results/study-layerwise/
#
# The grid, on IMDb at a "study" size (4,000 training reviews, 2,000 test reviews, 3 epochs; otherwise the text
# presets), for depth 4 and depth 8:
#   ERM;  alpha in {0.02, 0.05, 0.1, 0.2} x { per-batch dual steps, per-epoch dual steps on a held-out constraint
#   batch };  the stop-gradient variant (per-batch) at alpha 0.1 and 0.2;  per-layer heads at alpha 0.1 (depth 4).
# Per-epoch dual steps use dual_lr 1.0 instead of the per-batch 0.01: an epoch here is 125 batches, and with 0.01 per
# epoch lambda could not move more than a few thousandths in 3 epochs, which would only measure ERM again.
# Every run is followed by a short sweep (gaussian and discrete, gamma 0, 1, 2, 2 noise seeds, 1,000 test reviews).
# Finished runs are skipped and interrupted ones resumed. Two runs go in parallel, one torch thread each; the whole
# grid takes about 70 minutes per seed on these 2-core machines (a depth-8 run about 7 minutes, two at a time).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
out="${DESCENTLAB_STUDY_OUT:-$repo/results/study-layerwise}"
export DESCENTLAB_THREADS=1
study_size=(--set data.train_limit=4000 --set data.test_limit=2000 --set train.epochs=3)
if [ "${DESCENTLAB_STUDY_SIZE:-}" = smoke ]; then  # only to try the script itself, in a minute or two
  study_size=(--set data.train_limit=256 --set data.test_limit=128 --set train.epochs=1)
  out="${DESCENTLAB_STUDY_OUT:-$repo/results/study-layerwise-smoke}"
fi
mkdir -p "$out"

# shellcheck source=scripts/layerwise_runs.sh
. "$repo/scripts/layerwise_runs.sh"  # layerwise_one NAME SEED PRESET SIZE SWEEP [--set k=v ...], run_layerwise_jobs

jobs_for_seed() {  # prints one job per line: NAME SEED PRESET SIZE SWEEP SETS...
  local seed=$1 depth alpha common
  for depth in 8 4; do  # the longer runs first, so the two lanes end together
    common="${study_size[*]} --set model.layers=$depth"
    echo "d$depth-erm $seed text-erm quick study $common"
    for alpha in 0.02 0.05 0.1 0.2; do
      echo "d$depth-a$alpha-batch $seed text-constrained quick study $common --set constraints.alpha=$alpha"
      echo "d$depth-a$alpha-epoch $seed text-constrained quick study $common --set constraints.alpha=$alpha" \
        "--set constraints.dual_update=epoch --set constraints.dual_lr=1.0"
    done
    # The degenerate way to satisfy the constraints (make earlier layers worse) needs constraints that bind:
    # the stop-gradient variant at the two larger alphas.
    for alpha in 0.1 0.2; do
      echo "d$depth-a$alpha-batch-sg $seed text-constrained quick study $common --set constraints.alpha=$alpha" \
        "--set constraints.stop_gradient=true"
    done
    if [ "$depth" = 4 ]; then
      echo "d$depth-a0.1-batch-heads $seed text-constrained quick study $common --set constraints.alpha=0.1" \
        "--set model.readout=per_layer"
    fi
  done
}

case "${1:-}" in
  run)
    shift
    seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(0)
    for seed in "${seeds[@]}"; do jobs_for_seed "$seed"; done |
      run_layerwise_jobs
    if [ "${DESCENTLAB_STUDY_SIZE:-}" = smoke ]; then
      /usr/bin/python3 "$repo/scripts/summarize_study.py" "$out" "$out/study.md"
    else
      /usr/bin/python3 "$repo/scripts/summarize_study.py" "$out" "$repo/docs/study-layerwise.md"
    fi
    ;;
  erm-seeds)
    # ERM again with other seeds, at both depths: the seed-to-seed spread that every single-seed difference in the
    # grid has to be read against.
    shift
    seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(1 2)
    for seed in "${seeds[@]}"; do jobs_for_seed "$seed" | grep -- "-erm "; done |
      run_layerwise_jobs
    /usr/bin/python3 "$repo/scripts/summarize_study.py" "$out" "$repo/docs/study-layerwise.md"
    ;;
  summary) /usr/bin/python3 "$repo/scripts/summarize_study.py" "$out" "$repo/docs/study-layerwise.md" ;;
  *) echo "usage: bash scripts/study-layerwise.sh run [SEEDS...] | erm-seeds [SEEDS...] | summary" >&2; exit 2 ;;
esac
