#!/usr/bin/env bash
# Reproduces docs/results-layerwise.md: full-size ERM and constrained runs with several seeds, their robustness
# sweeps, then the summary. Each finished run leaves a small JSON summary in results/layerwise/ (committed); the run
# files (.h5) stay beside them (git-ignored). Finished runs are skipped and interrupted ones resumed, so the script
# can be stopped and started again.
#
#   bash scripts/results-layerwise.sh main [SEEDS...]   # text and video, ERM and constrained, full size (default seeds 0 1 2)
#   bash scripts/results-layerwise.sh text [SEEDS...]   # only the text runs
#   bash scripts/results-layerwise.sh video [SEEDS...]  # only the video runs
#   bash scripts/results-layerwise.sh summary           # rewrite docs/results-layerwise.md from the JSON files
#
# Two runs go in parallel (one per core, one torch thread each). A full text run takes about 13 minutes on these
# 2-core machines, a full video run about 15, each followed by its sweep.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
size="${DESCENTLAB_RESULTS_SIZE:-full}"  # "quick" only to try the script itself
out="$repo/results/layerwise"
[ "$size" = full ] || out="$repo/results/layerwise-$size"
mkdir -p "$out"
export DESCENTLAB_THREADS=1

# One run: NAME PRESET SEED. Trains (or resumes), sweeps, then writes NAME-seedS.json.
run_one() {
  local name=$1 preset=$2 seed=$3
  local base="$out/$name-seed$seed" noise gamma
  [ -f "$base.json" ] && { echo "done already: $base.json"; return 0; }
  case "$preset" in
    text-*) noise="gaussian,uniform,discrete"; gamma="0:2:0.5" ;;
    video-*) noise="video"; gamma="0:3:0.5" ;;
  esac
  if [ -f "$base.h5" ]; then
    "$cli" train --resume "$base.h5" --json >"$base.train.json" 2>"$base.log"
  else
    "$cli" train --preset "$preset" --size "$size" --set "train.seed=$seed" --out "$base.h5" --json \
      >"$base.train.json" 2>"$base.log"
  fi
  "$cli" sweep "$base.h5" --checkpoint latest --noise "$noise" --gamma "$gamma" --seeds 3 --limit 2000 --json \
    >"$base.sweep.json" 2>>"$base.log"
  "$cli" inspect "$base.h5" --json >"$base.inspect.json"
  /usr/bin/python3 - "$base" "$name" "$preset" "$seed" <<'PY'
import json, sys
base, name, preset, seed = sys.argv[1:5]
inspect = json.load(open(base + ".inspect.json"))
sweep = json.load(open(base + ".sweep.json"))
metrics = inspect["metrics"]
summary = {
    "name": name, "preset": preset, "seed": int(seed), "config": inspect["config"],
    "test_layer_loss": metrics["test_layer_loss"]["last"],
    "test_descending_frequency": metrics["test_descending_frequency"]["last"],
    "test_metric": metrics.get("test_accuracy", metrics.get("test_rmse"))["last"],
    "metric": "accuracy" if "test_accuracy" in metrics else "rmse",
    "lambda": metrics.get("lambda", {}).get("last"),
    "steps": metrics["loss"]["last_step"],
    "sweeps": sweep["sweeps"],
}
json.dump(summary, open(base + ".json", "w"), indent=1)
PY
  rm -f "$base.inspect.json"
  echo "finished: $base.json"
}
export -f run_one
export cli out size

jobs_for() {  # prints "NAME PRESET SEED" lines
  local which=$1; shift
  local seeds=("$@")
  [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
  local seed
  for seed in "${seeds[@]}"; do
    if [ "$which" = main ] || [ "$which" = text ]; then
      echo "text-erm text-erm $seed"; echo "text-constrained text-constrained $seed"
    fi
    if [ "$which" = main ] || [ "$which" = video ]; then
      echo "video-erm video-erm $seed"; echo "video-constrained video-constrained $seed"
    fi
  done
}

case "${1:-}" in
  main|text|video)
    which=$1; shift
    jobs_for "$which" "$@" | xargs -P 2 -L 1 bash -c 'run_one "$0" "$1" "$2"'
    if [ "$size" = full ]; then
      /usr/bin/python3 "$repo/scripts/summarize_layerwise.py" "$out" "$repo/docs/results-layerwise.md"
    else
      /usr/bin/python3 "$repo/scripts/summarize_layerwise.py" "$out" "$out/summary.md"
    fi
    ;;
  summary) /usr/bin/python3 "$repo/scripts/summarize_layerwise.py" "$out" "$repo/docs/results-layerwise.md" ;;
  *) echo "usage: bash scripts/results-layerwise.sh main|text|video [SEEDS...] | summary" >&2; exit 2 ;;
esac
