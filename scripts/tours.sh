#!/usr/bin/env bash
# Tours (issue 17): each tour in resources/tours/*.json is a prepared pair or trio of runs that the lab starts with
# one click, with a caption saying what to watch. This script measures whether each tour shows its effect.
#
#   bash scripts/tours.sh run [TOUR...]   # every tour's runs (default: all tours) over seeds 0 1 2, then the summary
#   bash scripts/tours.sh summary         # results/tours/<tour>.json and docs/tours.md from the run files
#
# A tour's runs are its presets with its --set overrides, plus train.seed=S and data.split_seed=S for seed S (the
# GUI starts seed 0). Each seed's runs go as the lab starts them: side by side, two at a time, one torch thread each
# (DESCENTLAB_THREADS=1); the wall time of every run and of every tour-and-seed group is recorded next to the run
# files, with the run's CPU time (on a loaded machine the wall time grows, the CPU time does not). Tours whose views
# include "frontier" (sparsity frontier) also get one-shot pruning of each finished run (descentlab-cli prune).
# Finished runs are skipped and interrupted ones resumed; a run that stopped before its end is refused.
# Run files go to $DESCENTLAB_TOURS_OUT (default runs/tours, git-ignored); seeds: $DESCENTLAB_TOURS_SEEDS.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
out="${DESCENTLAB_TOURS_OUT:-$repo/runs/tours}"
read -r -a seeds <<<"${DESCENTLAB_TOURS_SEEDS:-0 1 2}"
prune_sparsities=0.5,0.6,0.7,0.8,0.9
export DESCENTLAB_THREADS=1

# One run: TOUR SEED SLUG PRESET SIZE PRUNE [--set k=v ...]. Trains (or resumes), prunes when PRUNE=1, then writes
# SLUG-seedS.done holding "wall user system start end" (seconds; start and end since the Unix epoch).
tour_one() {
  local tour=$1 seed=$2 slug=$3 preset=$4 size=$5 prune=$6
  shift 6
  local base="$out/$tour/$slug-seed$seed" start end timing
  [ -f "$base.done" ] && { echo "done already: $base.h5"; return 0; }
  start=$(date +%s.%N)
  TIMEFORMAT='%R %U %S'
  if [ -f "$base.h5" ]; then
    { time "$cli" train --resume "$base.h5" --json >"$base.train.json" 2>"$base.log"; } 2>"$base.time" ||
      { echo "training failed: $base.h5 (see $base.log: $(tail -n 1 "$base.log"))" >&2; return 1; }
  elif [[ "$preset" == branch:* ]]; then  # a branch (issue 55): PRESET is branch:PARENT-SLUG@STEP
    local from=${preset#branch:}
    { time "$cli" train --branch "$out/$tour/${from%@*}-seed$seed.h5@${from#*@}" "$@" \
      --out "$base.h5" --json >"$base.train.json" 2>"$base.log"; } 2>"$base.time" ||
      { echo "training failed: $base.h5 (see $base.log: $(tail -n 1 "$base.log"))" >&2; return 1; }
  else
    { time "$cli" train --preset "$preset" --size "$size" "$@" --set "train.seed=$seed" --set "data.split_seed=$seed" \
      --out "$base.h5" --json >"$base.train.json" 2>"$base.log"; } 2>"$base.time" ||
      { echo "training failed: $base.h5 (see $base.log: $(tail -n 1 "$base.log"))" >&2; return 1; }
  fi
  end=$(date +%s.%N)
  /usr/bin/python3 -c 'import json, sys; sys.exit(1 if json.load(open(sys.argv[1])).get("stopped") else 0)' \
    "$base.train.json" || { echo "stopped before its end: $base.h5 (resume with: bash scripts/tours.sh run $tour)" >&2; return 1; }
  if [ "$prune" = 1 ]; then
    "$cli" prune "$base.h5" --sparsity "$prune_sparsities" --json >"$base.prune.json" 2>>"$base.log"
  fi
  timing=$(tail -n 1 "$base.time")
  echo "$timing $start $end" >"$base.done"
  echo "finished: $base.h5 (wall, user, system seconds: $timing)"
}
export -f tour_one
export cli out prune_sparsities

# Prints one job per line for TOUR and SEED: TOUR SEED SLUG PRESET SIZE PRUNE --set k=v ...; with a third argument
# "branches", the tour's branch runs (PRESET branch:PARENT-SLUG@STEP), which start once their parents are done.
jobs_for() {
  /usr/bin/python3 - "$repo/resources/tours/$1.json" "$1" "$2" "${3:-}" <<'EOF'
import json, re, sys
path, tour, seed, which = sys.argv[1:]
spec = json.load(open(path))
prune = "1" if "frontier" in spec.get("views", []) else "0"
def slug_of(label):
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
for run in spec["runs"]:
    if "example" in run:  # a run of an example's module (horst-your-cnn): not run here, measured by hand
        continue
    if ("branch_of" in run) != (which == "branches"):
        continue
    if "branch_of" in run:
        run = dict(run, preset="branch:%s@%d" % (slug_of(run["branch_of"]), run["branch_step"]))
    slug = slug_of(run["label"])
    sets = " ".join("--set %s=%s" % (k, json.dumps(v, separators=(",", ":")) if isinstance(v, (list, bool)) else v)
                    for k, v in run.get("set", {}).items())
    print(tour, seed, slug, run["preset"], run.get("size", "quick"), prune, sets)
EOF
}

run_tour() {  # TOUR: each seed's runs two at a time; the group's wall time goes to seedS.wall when all ran fresh
  local tour=$1 seed fresh start end
  if [ -z "$(jobs_for "$tour" 0)" ]; then
    # A tour without preset runs: the playground's (measured elsewhere), or an example's (horst-your-cnn: the
    # commands and numbers are in results/tours/TOUR.md, which the summary appends as it is).
    echo "no preset runs in tour $tour (see results/tours/$tour.md): skipped"
    return 0
  fi
  mkdir -p "$out/$tour"
  for seed in "${seeds[@]}"; do
    fresh=1
    if compgen -G "$out/$tour/*-seed$seed.h5" >/dev/null; then fresh=0; fi
    start=$(date +%s.%N)
    jobs_for "$tour" "$seed" | xargs -r -P 2 -L 1 bash -c 'tour_one "$@"' _
    jobs_for "$tour" "$seed" branches | xargs -r -P 2 -L 1 bash -c 'tour_one "$@"' _
    end=$(date +%s.%N)
    if [ "$fresh" = 1 ]; then echo "$start $end" >"$out/$tour/seed$seed.wall"; fi
  done
}

summary() { /usr/bin/python3 "$repo/scripts/summarize_tours.py" "$out" "$repo"; }

case "${1:-}" in
  run)
    shift
    tours=("$@")
    if [ ${#tours[@]} -eq 0 ]; then
      for spec in "$repo"/resources/tours/*.json; do tours+=("$(basename "$spec" .json)"); done
    fi
    for tour in "${tours[@]}"; do
      [ -f "$repo/resources/tours/$tour.json" ] || { echo "no such tour: $tour (resources/tours/$tour.json)" >&2; exit 2; }
      run_tour "$tour"
    done
    summary
    ;;
  summary) summary ;;
  *) echo "usage: bash scripts/tours.sh run [TOUR...] | summary" >&2; exit 2 ;;
esac
