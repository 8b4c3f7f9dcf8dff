# The layerwise runs of the study scripts (study-layerwise.sh, second-look.sh): one run trained, resumed when its run
# file is there but unfinished, swept under noise and summarized; and two such runs at a time.
# Needs: cli, out and repo set by the caller before sourcing.

# One run: NAME SEED PRESET SIZE SWEEP [--set k=v ...]. Trains (or resumes) OUT/NAME-seedSEED.h5, sweeps it, writes
# NAME-seedSEED.json. SWEEP names the noise sweep after training:
#   study  gaussian and discrete, γ 0, 1, 2, 2 noise seeds, 1,000 test reviews (the study's short sweep)
#   text   gaussian, uniform and discrete, γ 0 to 2 in steps of 0.5, 3 noise seeds, 2,000 test reviews
#   video  pixel noise, γ 0 to 3 (times the training level) in steps of 0.5, 3 noise seeds, 2,000 test clips
layerwise_one() {
  local name=$1 seed=$2 preset=$3 run_size=$4 sweep=$5
  shift 5
  local base="$out/$name-seed$seed" sweep_args
  case "$sweep" in
    study) sweep_args=(--noise gaussian,discrete --gamma 0:2:1 --seeds 2 --limit 1000) ;;
    text) sweep_args=(--noise gaussian,uniform,discrete --gamma 0:2:0.5 --seeds 3 --limit 2000) ;;
    video) sweep_args=(--noise video --gamma 0:3:0.5 --seeds 3 --limit 2000) ;;
    *) echo "unknown sweep '$sweep' for $name (study, text or video)" >&2; return 2 ;;
  esac
  [ -f "$base.json" ] && { echo "done already: $base.json"; return 0; }
  # A run that fails or is stopped (Ctrl-C, SIGTERM) writes no NAME.json, so the next call resumes it from its run
  # file instead of counting it as finished.
  if [ -f "$base.h5" ]; then
    "$cli" train --resume "$base.h5" --json >"$base.train.json" 2>"$base.log" ||
      { echo "not finished (exit $?): $base, see $base.log" >&2; return 1; }
  else
    "$cli" train --preset "$preset" --size "$run_size" "$@" --set "train.seed=$seed" --out "$base.h5" --json \
      >"$base.train.json" 2>"$base.log" || { echo "not finished (exit $?): $base, see $base.log" >&2; return 1; }
  fi
  if /usr/bin/python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("stopped") else 1)' \
    "$base.train.json"; then
    echo "stopped before its last step: $base (run again to resume it)" >&2
    return 1
  fi
  "$cli" sweep "$base.h5" --checkpoint latest "${sweep_args[@]}" --json >"$base.sweep.json" 2>>"$base.log" ||
    { echo "sweep failed: $base, see $base.log" >&2; return 1; }
  /usr/bin/python3 "$repo/scripts/summarize_study.py" --one "$base" "$name" "$seed"
  echo "finished: $base.json"
}
export -f layerwise_one
export cli out repo

# Reads job lines "NAME SEED PRESET SIZE SWEEP [--set k=v ...]" and runs two at a time. Trailing blanks are cut
# first: `xargs -L` joins a line that ends in a blank to the next one (a job line whose optional sets are empty).
run_layerwise_jobs() { sed 's/[[:blank:]]*$//' | xargs -P 2 -L 1 bash -c 'layerwise_one "$@"' _; }
