#!/usr/bin/env bash
# Issue 53 item 7, the same engine shown: the built-in ViT of preset vit-adamw (quick), written as a TorchScript module
# by examples/export_builtin_vit.py from the run's initial weights (train --max-steps 0) and trained as a model of
# your own on its data as the task feeds it (data export --preset vit-adamw --size quick), with the run's own config
# (so the same seed, the same data order, the same AdamW and AC/DC schedule), gives the built-in run's loss curve:
# every row of `loss` over 50 steps within a relative 1e-4 (measured on LibTorch 1.13: bitwise equal). Exit 77
# (skipped) when Fashion-MNIST is not fetched.
#   bash tests/same_engine_check.sh DESCENTLAB_CLI PYTHON3
set -euo pipefail
cli=$1
python=$2
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
steps=50

# AC/DC compresses within the 50 steps: the built-in run prunes every weight, as a module of your own (which names no
# embedding or readout) is pruned. A metric row at every step.
builtin=(--preset vit-adamw --size quick --set sparsity.exclude_embeddings_and_readout=false
  --set train.metric_interval=1)

run() {  # LOG COMMAND...: runs it, and on failure shows its log and stops
  local log=$1
  shift
  "$@" >"$work/$log" 2>&1 || { status=$?; cat "$work/$log"; echo "FAILED ($status): $*"; exit 1; }
}

status=0
"$cli" data export fashion-mnist "$work/data.h5" --preset vit-adamw --size quick >"$work/export.log" 2>&1 || status=$?
if [ "$status" = 2 ] && grep -q "data fetch" "$work/export.log"; then
  echo "skipped: Fashion-MNIST is not fetched"; cat "$work/export.log"; exit 77
fi
[ "$status" = 0 ] || { cat "$work/export.log"; echo "FAILED: data export exited $status"; exit 1; }
run init.log "$cli" train "${builtin[@]}" --max-steps 0 --out "$work/init.h5"
run export.log "$python" "$repo/examples/export_builtin_vit.py" "$work/init.h5" --data "$work/data.h5" \
  --out-dir "$work/vit"
run builtin.log "$cli" train "${builtin[@]}" --max-steps $steps --out "$work/builtin.h5"
run script.log "$cli" train --config "$work/vit/vit-same.json" --max-steps $steps --out "$work/script.h5"

"$python" - "$work/builtin.h5" "$work/script.h5" "$steps" <<'PY'
import json
import sys

import h5py
import numpy as np

builtin, script, steps = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), int(sys.argv[3])
assert json.loads(script.attrs["config"])["task"] == "torchscript", "the second run is not of the torchscript task"
rows = {name: (f["metrics/loss/step"][()], f["metrics/loss/value"][()]) for name, f in
        (("built-in", builtin), ("torchscript", script))}
for name, (step, _) in rows.items():
    assert list(step) == list(range(1, steps + 1)), f"{name}: loss rows at steps {list(step)}, not 1..{steps}"
a, b = rows["built-in"][1], rows["torchscript"][1]
relative = np.abs(a - b) / np.abs(a)
worst = int(np.argmax(relative))
print(f"loss over {steps} steps: max relative difference {relative[worst]:.3g} at step {worst + 1} "
      f"(built-in {a[worst]:.9g}, torchscript {b[worst]:.9g}); first {a[0]:.6g}, last {a[-1]:.6g}")
assert a[-1] < a[0], "the built-in run did not learn: the comparison would show nothing"
assert relative[worst] <= 1e-4, "the TorchScript copy's loss curve is not the built-in run's (relative 1e-4)"
print("ok: the same engine")
PY
