# The sparse-training runs of the results scripts (results-horst.sh, second-look.sh): one run trained, resumed when
# its run file is there but unfinished, pruned when asked and summarized; and two such runs at a time.
# Needs: cli, out, repo and the array extra (more --set options, for smoke runs) set by the caller before sourcing.
# `tuned` reads a choice of `summarize_horst.py --tune` from OUT/tuning.json (or from $tuning_json when set);
# `made_with_choice` tells whether a run already made (finished or not) used a given lr and alpha.

# One run: NAME PRESET SIZE PRUNE(yes|no) [--set k=v ...]. Trains (or resumes), prunes when asked, writes NAME.json.
horst_one() {
  local name=$1 preset=$2 run_size=$3 prune=$4
  shift 4
  local base="$out/$name"
  [ -f "$base.json" ] && { echo "done already: $base.json"; return 0; }
  # A run that fails or is stopped (Ctrl-C, SIGTERM: exit code 130) writes no NAME.json, so the next call resumes
  # it from its run file instead of counting it as finished.
  if [ -f "$base.h5" ]; then
    "$cli" train --resume "$base.h5" --json >"$base.train.json" 2>"$base.log" ||
      { echo "not finished (exit $?): $base, see $base.log" >&2; return 1; }
  else
    "$cli" train --preset "$preset" --size "$run_size" "$@" "${extra[@]}" --out "$base.h5" --json \
      >"$base.train.json" 2>"$base.log" || { echo "not finished (exit $?): $base, see $base.log" >&2; return 1; }
  fi
  if /usr/bin/python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("stopped") else 1)' \
    "$base.train.json"; then
    echo "stopped before its last step: $base (run again to resume it)" >&2
    return 1
  fi
  if [ "$prune" = yes ]; then
    "$cli" prune "$base.h5" --sparsity 0.5,0.6,0.7,0.8,0.9 --json >"$base.prune.json" 2>>"$base.log" ||
      { echo "pruning failed: $base, see $base.log" >&2; return 1; }
  else
    echo '{}' >"$base.prune.json"
  fi
  /usr/bin/python3 "$repo/scripts/summarize_horst.py" --one "$base" "$name" "$preset"
  echo "finished: $base.json"
}
export -f horst_one
export cli out repo
export DESCENTLAB_EXTRA="${extra[*]}"

# Trailing blanks are cut first: `xargs -L` joins a line that ends in a blank to the next one.
run_jobs() { sed 's/[[:blank:]]*$//' | xargs -P 2 -L 1 bash -c 'extra=($DESCENTLAB_EXTRA); horst_one "$@"' _; }

tuned() {  # tuned VALUE_NAME TASK OPTIMIZER -> the lr or alpha chosen in ${tuning_json:-$out/tuning.json}
  /usr/bin/python3 - "${tuning_json:-$out/tuning.json}" "$1" "$2" "$3" <<'PY'
import json, sys
path, what, task, optimizer = sys.argv[1:5]
print(json.load(open(path))[task][optimizer][what])
PY
}

# made_with_choice BASE LR [ALPHA]: true when no run BASE exists yet, or when BASE.json (a finished run) or BASE.h5
# (one to be resumed) was made at LR (and ALPHA); otherwise says so and is false, so that a changed tuning choice
# never mixes with runs made at the old one, nor resumes one.
made_with_choice() {
  /usr/bin/python3 - "$@" <<'PY'
import json, os, sys
base, lr, alpha = sys.argv[1], float(sys.argv[2]), (float(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else None)
if os.path.exists(base + ".json"):
    source, config = base + ".json", json.load(open(base + ".json"))["config"]
elif os.path.exists(base + ".h5"):
    import h5py
    with h5py.File(base + ".h5", "r") as run:
        source, config = base + ".h5", json.loads(run.attrs["config"])
else:
    sys.exit(0)
made = (config["train"]["lr"], config.get("optimizer", {}).get("alpha"))
if made[0] != lr or (alpha is not None and made[1] != alpha):
    sys.exit(f"ERROR: {source} was made at lr {made[0]:g}" + (f", alpha {made[1]:g}" if alpha is not None else "")
             + f"; the choice now is lr {lr:g}" + (f", alpha {alpha:g}" if alpha is not None else "")
             + f". Move {base}.* aside to run it at the choice.")
PY
}
