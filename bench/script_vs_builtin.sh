#!/usr/bin/env bash
# Issue 53 item 8, against the built-in architecture: the built-in ViT of vit-adamw (quick) and its TorchScript
# export (examples/export_builtin_vit.py; the same initial weights, data, order and config, as tests/same_engine_check.sh
# sets them up), each trained STEPS steps, REPEATS times in alternating order, on one thread (torch and OpenBLAS).
# Prints each run's median samples/s over its 20-step intervals after the first, and the module's step time over the
# built-in's. Needs Fashion-MNIST (bash scripts/lab.sh setup). Numbers in docs/benchmarks.md.
#   bash bench/script_vs_builtin.sh [DESCENTLAB_CLI] [STEPS] [REPEATS]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli=${1:-$repo/build/app/descentlab-cli}
steps=${2:-160}
repeats=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 DESCENTLAB_THREADS=1
python=/usr/bin/python3
builtin=(--preset vit-adamw --size quick --set sparsity.exclude_embeddings_and_readout=false)
common=(--max-steps "$steps" --set train.metric_interval=20 --set sparsity.frontier_interval=0 --overwrite)
"$cli" data export fashion-mnist "$work/data.h5" --preset vit-adamw --size quick >/dev/null
"$cli" train "${builtin[@]}" --max-steps 0 --out "$work/init.h5" >/dev/null 2>&1
"$python" "$repo/examples/export_builtin_vit.py" "$work/init.h5" --data "$work/data.h5" --out-dir "$work/vit" >/dev/null

median_rate() {
  HDF5_EXTFILE_PREFIX='${ORIGIN}' "$python" -c '
import h5py, statistics, sys
values = h5py.File(sys.argv[1], "r")["metrics/throughput/value"][()]
print(f"{statistics.median(values[1:]):.0f} {values[0]:.0f}")' "$1"
}

printf '%-7s %18s %18s %12s\n' repeat "built-in samples/s" "module samples/s" "module/built-in"
for repeat in $(seq "$repeats"); do
  # Alternating which goes first, so neither side always meets a warmer or a cooler machine.
  if [ $((repeat % 2)) = 1 ]; then order="builtin script"; else order="script builtin"; fi
  for side in $order; do
    if [ "$side" = builtin ]; then
      "$cli" train "${builtin[@]}" "${common[@]}" --out "$work/builtin.h5" >/dev/null 2>&1
    else
      "$cli" train --config "$work/vit/vit-same.json" "${common[@]}" --out "$work/script.h5" >/dev/null 2>&1
    fi
  done
  read -r b b_first <<<"$(median_rate "$work/builtin.h5")"
  read -r s s_first <<<"$(median_rate "$work/script.h5")"
  ratio=$("$python" -c "print(f'{$b / $s:.3f}')")
  first=$("$python" -c "print(f'{$b_first / $s_first:.3f}')")
  printf '%-7s %18s %18s %12s   (first interval: %s)\n' "$repeat" "$b" "$s" "$ratio" "$first"
done
