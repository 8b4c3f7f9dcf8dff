#!/usr/bin/env bash
# How close the memory check's estimate (core/config/footprint.h, the figure a run is refused on) is to what a run
# uses (issue 38, item 2): presets of three tasks at the three sizes, and a batch larger than the training set,
# each trained for 2 steps on the CPU; `train --json`'s "memory" gives the estimate and the process's peak resident
# size less what it held before the run was set up. Prints a Markdown table (docs/benchmarks.md); the measured
# figures are kept in tests/fixtures/memory-peaks.json, which Footprint.EstimatesStayWithinAFactorOfMeasuredPeaks
# checks the estimate against.
#   bash scripts/memory_estimate.sh [OUT.json]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
python=${DESCENTLAB_PYTHON:-/usr/bin/python3}
out=${1:-/dev/null}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export DESCENTLAB_THREADS=1 DESCENTLAB_MEMORY_CHECK=0
cases=()
for preset in video-constrained vit-horst gpt-adamw; do
  for size in quick full large; do cases+=("$preset $size"); done
done
cases+=("video-constrained quick train.batch_size=1048576" "vit-horst quick train.batch_size=1048576")
echo "| preset | size | override | estimate | used (peak − before) | estimate / used |"
echo "|---|---|---|---|---|---|"
: >"$scratch/all.jsonl"
for entry in "${cases[@]}"; do
  read -r preset size override <<<"$entry"
  extra=()
  [ -n "${override:-}" ] && extra=(--set "$override")
  "$cli" train --preset "$preset" --size "$size" --device cpu --max-steps 2 --out "$scratch/run.h5" --overwrite \
    --json "${extra[@]}" >"$scratch/summary.json" 2>"$scratch/log" || { cat "$scratch/log" >&2; exit 1; }
  "$python" - "$preset" "$size" "${override:-}" "$scratch/summary.json" "$scratch/all.jsonl" <<'PY'
import json, sys
preset, size, override, path, out = sys.argv[1:6]
memory = json.load(open(path))["memory"]
estimate, used = memory["estimated_bytes"], memory["used_bytes"]
print(f"| {preset} | {size} | {override or '-'} | {estimate / 2**20:,.0f} MiB | {used / 2**20:,.0f} MiB | "
      f"{estimate / used:.2f} |")
with open(out, "a") as f:
    f.write(json.dumps({"preset": preset, "size": size, "override": override, "used_bytes": used,
                        "estimated_bytes": estimate}) + "\n")
PY
done
"$python" -c "import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])], indent=1))" \
  "$scratch/all.jsonl" >"$out"
