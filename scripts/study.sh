#!/usr/bin/env bash
# A small study to open in the window or give to `compare` (issue 35): presets x seeds, one run file each, in
# OUT/<preset>/seed<S>.h5. Two runs at a time, one torch thread each (as the window runs seeds).
#
#   bash scripts/study.sh OUT [PRESETS] [SEEDS] [SIZE]
#   bash scripts/study.sh runs/study                                  # vit-adamw vit-ham vit-horst x 0 1 2, quick
#   build/app/descentlab-cli compare runs/study --pair optimizer.name=horst optimizer.name=adamw
#   build/app/descentlab runs/study                                   # the window opens the study
#
# Finished runs are kept (a second call trains only what is missing); each run's output is in OUT.logs/.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
out=${1:?usage: study.sh OUT [PRESETS] [SEEDS] [SIZE]}
read -r -a presets <<<"${2:-vit-adamw vit-ham vit-horst}"
read -r -a seeds <<<"${3:-0 1 2}"
size=${4:-quick}
export DESCENTLAB_THREADS=1

# Each run's output and its "done" mark go to OUT.logs/, so OUT holds run files only.
one() {
  local preset=$1 seed=$2 run="$out/$1/seed$2.h5" log="$out.logs/$1-seed$2"
  [ -f "$log.done" ] && return 0
  mkdir -p "$out/$preset" "$out.logs"
  "$cli" train --preset "$preset" --size "$size" --set "train.seed=$seed" --set "data.split_seed=$seed" \
    --out "$run" --overwrite > "$log.log" 2>&1 || { echo "failed: $run (see $log.log)" >&2; return 1; }
  touch "$log.done"
  echo "trained $run"
}
export -f one
export cli out size
for preset in "${presets[@]}"; do
  for seed in "${seeds[@]}"; do echo "$preset $seed"; done
done | xargs -P 2 -n 2 bash -c 'one "$0" "$1"'
