#!/usr/bin/env bash
# A small ViT tuning grid for the Study dock's hyper-parameter view (issue 35): vit-horst at each learning rate x
# alpha, seeds 0 and 1, one run file each in OUT/lr<LR>-alpha<A>/seed<S>.h5. Two runs at a time, one torch thread
# each. Open OUT in the window (`build/app/descentlab OUT`), take the Hyper-parameters tab and choose train.lr.
#
#   bash scripts/tuning-grid.sh OUT [LRS] [ALPHAS] [SEEDS] [SIZE]
#   bash scripts/tuning-grid.sh runs/grid                       # lr 0.001 0.003 0.01 x alpha 1 5 20 x seeds 0 1
#
# Finished runs are kept (a second call trains only what is missing); each run's output is in OUT.logs/.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
out=${1:?usage: tuning-grid.sh OUT [LRS] [ALPHAS] [SEEDS] [SIZE]}
read -r -a rates <<<"${2:-0.001 0.003 0.01}"
read -r -a alphas <<<"${3:-1 5 20}"
read -r -a seeds <<<"${4:-0 1}"
size=${5:-quick}
export DESCENTLAB_THREADS=1

one() {
  local lr=$1 alpha=$2 seed=$3 cell="lr$1-alpha$2"
  local run="$out/$cell/seed$seed.h5" log="$out.logs/$cell-seed$seed"
  [ -f "$log.done" ] && return 0
  mkdir -p "$out/$cell" "$out.logs"
  "$cli" train --preset vit-horst --size "$size" --set "train.lr=$lr" --set "optimizer.alpha=$alpha" \
    --set "train.seed=$seed" --set "data.split_seed=$seed" --out "$run" --overwrite > "$log.log" 2>&1 ||
    { echo "failed: $run (see $log.log)" >&2; return 1; }
  touch "$log.done"
  echo "trained $run"
}
export -f one
export cli out size
for lr in "${rates[@]}"; do
  for alpha in "${alphas[@]}"; do
    for seed in "${seeds[@]}"; do echo "$lr $alpha $seed"; done
  done
done | xargs -P 2 -n 3 bash -c 'one "$0" "$1" "$2"'
