#!/usr/bin/env bash
# The cost of evaluating the test metric around each AC/DC compression (issue 18: test_accuracy_before_compression
# and _after_compression, sparsity.compression_samples). For each sample count, one run of the preset, one torch
# thread, and from that run's own file: the wall time between the "before" and the "after" row of each compression
# is one evaluation (the mask in between costs microseconds), so two of them per compression over the run's span
# from its first to its last training-loss row is the share of the run they took. Both figures come from the same
# process's clock.
# Usage: bash bench/compression_evaluation_cost.sh [BUILD_DIR] [PRESET] [SAMPLES...]
#        (defaults: build, vit-horst at size quick, sample counts 0 (all 2,000) 500 256)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../build}
preset=${2:-vit-horst}
shift 2 || shift $# || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(0 500 256)
cli="$build/app/descentlab-cli"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export DESCENTLAB_THREADS=1
for samples in "${counts[@]}"; do
  "$cli" train --preset "$preset" --size "${COMPRESSION_BENCH_SIZE:-quick}" --out "$scratch/run.h5" --overwrite \
    --set sparsity.compression_samples="$samples" >/dev/null 2>&1
  /usr/bin/python3 - "$scratch/run.h5" "$preset" "$samples" <<'PY'
import sys
import h5py
path, preset, samples = sys.argv[1:4]
with h5py.File(path, "r") as run:
    names = [n for n in run["metrics"] if n.endswith("_before_compression")]
    before = run["metrics/" + names[0] + "/wall_time"][()]
    after = run["metrics/" + names[0].replace("_before_", "_after_") + "/wall_time"][()]
    loss = run["metrics/loss/wall_time"][()]
one = after - before
span = loss[-1] - loss[0]
print(f"{preset} compression_samples {samples}: {len(one)} compressions, one evaluation {one.mean():.3f} s "
      f"(median {sorted(one)[len(one) // 2]:.3f}), two per compression {2 * one.sum():.1f} s of a {span:.1f} s run: "
      f"share {2 * one.sum() / span:.1%}")
PY
done
