#!/usr/bin/env bash
# Data-parallel scaling on this machine (issue 19; docs/scale-out.md): for a full preset of each engine, the same
# STEPS training steps (no epoch end, no frontier: training only) with 1 process and with --nproc 2, 4, ... (one torch
# thread each; more processes than cores are labelled "oversubscribed"). Reported per run, from the run's own --json
# summary: steps/s, examples/s (the global batch per step), the speed-up against 1 process in the same script, the
# seconds per step rank 0 spent waiting in collectives, the bytes all-reduced per step (every trainable parameter,
# float32), and the model's network bandwidth at which a ring all-reduce over N machines would take as long as the
# computation of a step: 2 (N - 1) / N * bytes / (t1 / N), t1 = one process's seconds per step.
# Usage: bash bench/data_parallel_scaling.sh [BUILD_DIR] [STEPS] [PROCESSES...]   (defaults: build, 120, 1 2 4)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../build}
steps=${2:-120}
shift 2 || shift $# || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 2 4)
cli="$build/app/descentlab-cli"
cores=$(nproc)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export DESCENTLAB_THREADS=1
presets=("text-constrained" "vit-horst --set sparsity.frontier_interval=0")
echo "| preset | processes | steps/s | examples/s | speed-up | collective wait s/step (rank 0) | MB all-reduced/step | bandwidth where comm = compute |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for entry in "${presets[@]}"; do
  read -r -a preset <<<"$entry"
  base=""
  for n in "${counts[@]}"; do
    launch=()
    [ "$n" -gt 1 ] && launch=(--nproc "$n")
    # shellcheck disable=SC2068
    "$cli" train --preset ${preset[@]} --size full --device cpu --max-steps "$steps" --out "$scratch/run.h5" \
      --overwrite --json "${launch[@]}" >"$scratch/summary.json" 2>"$scratch/log" ||
      { cat "$scratch/log" >&2; exit 1; }
    base=$(/usr/bin/python3 - "$scratch/run.h5" "$scratch/summary.json" "${preset[0]}" "$n" "$cores" "$base" <<'PY'
import json, sys
import h5py
path, summary_path, preset, n, cores, base = sys.argv[1:7]
n, cores = int(n), int(cores)
summary = json.load(open(summary_path))
with h5py.File(path, "r") as run:
    config = json.loads(run.attrs["config"])
    model = run["checkpoints/latest/model"]
    parameters = sum(model[name].size for name in model if model[name].dtype.kind == "f")
batch = config["train"]["batch_size"]
rate = summary["steps_per_second"]
t1 = 1.0 / float(base) if base else 1.0 / rate
wait = summary.get("data_parallel", {}).get("communication_seconds", 0.0) / summary["steps"]
megabytes = parameters * 4 / 1e6
label = f"{n}" + (" (oversubscribed: %d cores)" % cores if n > cores else "")
speedup = rate * t1
bandwidth = "-" if n == 1 else f"{2 * (n - 1) / n * megabytes * 8 / (t1 / n) / 1000:.2f} Gbit/s"
print(f"| {preset} | {label} | {rate:.2f} | {rate * batch:.0f} | {speedup:.2f} | {wait:.4f} | {megabytes:.2f} | "
      f"{bandwidth} |", file=sys.stderr)
print(base if base else rate)
PY
    )
  done 2>&1
done
