#!/usr/bin/env bash
# Issue 53 item 6: each example under examples/ writes its module and data with Debian's python3-torch, and
# descentlab-cli trains it for a few steps with AdamW and HORST, as the README's two commands do. Exit 77 (skipped)
# when a dataset an example reads is not fetched.
#   bash tests/examples_check.sh DESCENTLAB_CLI PYTHON3
set -euo pipefail
cli=$1
python=$2
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# example script, its module, its data, and the rows to write
examples=(
  "cnn_fashion_mnist.py cnn.pt fashion-mnist.h5 --train-rows 256 --test-rows 128"
  "mlp_regression.py mlp.pt regression.h5"
  "char_model.py char.pt moby-dick.h5 --train-rows 128 --test-rows 32"
)
for entry in "${examples[@]}"; do
  read -r script module data rows <<<"$entry"
  status=0
  # shellcheck disable=SC2086
  "$python" "$repo/examples/$script" --out-dir "$work" $rows >"$work/$script.log" 2>&1 || status=$?
  if [ "$status" = 2 ] && grep -q "data fetch" "$work/$script.log"; then
    echo "skipped: $script needs a dataset that is not fetched"; cat "$work/$script.log"; exit 77
  fi
  [ "$status" = 0 ] || { cat "$work/$script.log"; echo "FAILED: $script exited $status"; exit 1; }
  for optimizer in adamw horst; do
    out="$work/${module%.pt}-$optimizer.h5"
    if ! "$cli" train --model "$work/$module" --data "$work/$data" --optimizer "$optimizer" --max-steps 4 \
        --set train.batch_size=16 --set train.metric_interval=2 --out "$out" >"$work/train.log" 2>&1; then
      cat "$work/train.log"; echo "FAILED: training $module with $optimizer"; exit 1
    fi
    "$cli" inspect "$out" --json >"$work/inspect.json"
    "$python" - "$work/inspect.json" "$module" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
metrics = summary.get("metrics", {})
names = list(metrics) if isinstance(metrics, dict) else [m.get("name") for m in metrics]
assert "loss" in names, f"{sys.argv[2]}: no loss rows in {names}"
PY
    echo "ok: $module with $optimizer"
  done
  # Each example has layer_outputs: constrained layerwise descent, then a sweep and the probe of the run.
  out="$work/${module%.pt}-layerwise.h5"
  if ! "$cli" train --model "$work/$module" --data "$work/$data" --layerwise --set constraints.enabled=true \
      --max-steps 4 --set train.batch_size=16 --set train.metric_interval=2 --out "$out" >"$work/train.log" 2>&1; then
    cat "$work/train.log"; echo "FAILED: training $module by layerwise descent"; exit 1
  fi
  "$cli" inspect "$out" --json >"$work/inspect.json"
  "$python" - "$work/inspect.json" "$module" <<'PY'
import json, sys
metrics = json.load(open(sys.argv[1]))["metrics"]
for name in ("layer_loss", "lambda", "slack"):
    assert name in metrics, f"{sys.argv[2]}: no {name} rows in {list(metrics)}"
assert metrics["lambda"]["width"] == metrics["layer_loss"]["width"] - 1, metrics
PY
  "$cli" sweep "$out" --seeds 1 --gamma 0,1 --limit 32 >"$work/sweep.log" 2>&1 ||
    { cat "$work/sweep.log"; echo "FAILED: sweeping $module"; exit 1; }
  "$cli" probe "$out" --sample 3 --gamma 0.5 >"$work/probe.log" 2>&1 ||
    { cat "$work/probe.log"; echo "FAILED: probing $module"; exit 1; }
  echo "ok: $module by layerwise descent, swept and probed"
done
