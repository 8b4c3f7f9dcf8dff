#!/usr/bin/env bash
# Checks descentlab-cli the way a user runs it: bash cli_checks.sh CHECK PATH_TO_CLI
# Exit 0 = pass, 77 = skipped (ctest SKIP_RETURN_CODE), anything else = fail with a reason on stderr.
set -uo pipefail
check=$1 cli=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL ($check): $*" >&2; exit 1; }
expect_in() { grep -qF -- "$1" "$2" || { cat "$2" >&2; fail "expected '$1' in $(basename "$2")"; }; }

case "$check" in
  help)
    "$cli" --help >"$scratch/out" 2>&1 || fail "--help exited $?"
    expect_in "data" "$scratch/out"
    expect_in "--version" "$scratch/out"
    "$cli" data info --help >"$scratch/info" 2>&1 || fail "data info --help exited $?"
    expect_in "--json" "$scratch/info"
    ;;
  help_config)
    # train --help-config lists every key with its explanation, and docs/config.md is exactly that text.
    "$cli" train --help-config >"$scratch/out" 2>&1 || fail "train --help-config exited $?"
    expect_in '- `model.readout` (shared | per_layer; default shared): ' "$scratch/out"
    expect_in '- `train.lr` (number, 0 … 10; default 0.001): ' "$scratch/out"
    expect_in '- `vit-horst`: ' "$scratch/out"
    docs="$(dirname "$0")/../docs/config.md"
    diff -u "$docs" "$scratch/out" >"$scratch/diff" ||
      { cat "$scratch/diff" >&2; fail "docs/config.md differs from train --help-config (regenerate it: descentlab-cli train --help-config > docs/config.md)"; }
    ;;
  version)
    "$cli" --version >"$scratch/out" 2>&1 || fail "--version exited $?"
    expect_in "descentlab-cli " "$scratch/out"
    expect_in "LibTorch: " "$scratch/out"
    expect_in "CUDA runtime: " "$scratch/out"
    expect_in "cuDNN: " "$scratch/out"
    expect_in "BLAS: " "$scratch/out"
    ;;
  data_info_missing)
    # An empty data folder: every dataset reported missing, exit code 2, the fetch command named.
    "$cli" data info --json --data-dir "$scratch/empty" >"$scratch/out" 2>"$scratch/err"
    status=$?
    [ "$status" = 2 ] || fail "expected exit code 2 for missing data, got $status"
    expect_in '"all_ok": false' "$scratch/out"
    [ "$(grep -c '"present": false' "$scratch/out")" = 4 ] || { cat "$scratch/out" >&2; fail "expected 4 datasets missing"; }
    expect_in '"checksum": "missing"' "$scratch/out"
    expect_in "bash datasets/fetch.sh" "$scratch/err"
    ;;
  data_info_unknown_dataset)
    "$cli" data info --dataset cifar >"$scratch/out" 2>&1 && fail "an unknown dataset was accepted"
    expect_in "cifar" "$scratch/out"
    ;;
  data_info_real)
    # The real datasets, when fetched (README command 1 or 2 does it): the counts of the issue's "done when".
    "$cli" data info --json >"$scratch/out" 2>"$scratch/err"
    status=$?
    if grep -q '"present": false' "$scratch/out"; then echo "real datasets not fetched: skipped"; exit 77; fi
    [ "$status" = 0 ] || { cat "$scratch/out" "$scratch/err" >&2; fail "data info exited $status"; }
    tr -d ' \n' <"$scratch/out" >"$scratch/flat"
    for expected in \
      '"name":"imdb"' '"test":{"count":25000,"unit":"reviews"},"train":{"count":25000,"unit":"reviews"}' \
      '"name":"mnist"' '"test":{"count":10000,"unit":"images"},"train":{"count":60000,"unit":"images"}' \
      '"train":{"count":1072044,"unit":"characters"},"validation":{"count":119116,"unit":"characters"}' \
      '"all_ok":true'; do
      expect_in "$expected" "$scratch/flat"
    done
    [ "$(grep -o '"checksum":"ok"' "$scratch/flat" | wc -l)" = 4 ] || fail "expected 4 verified datasets"
    [ "$(grep -o '"test":{"count":10000,"unit":"images"},"train":{"count":60000,"unit":"images"}' "$scratch/flat" | wc -l)" = 2 ] ||
      fail "expected MNIST and Fashion-MNIST at 60,000 / 10,000"
    ;;
  inspect)
    # bash cli_checks.sh inspect CLI SAMPLE_RUN: the summary of the sample run, as JSON and as text.
    run=$3
    "$cli" inspect "$run" --json >"$scratch/out" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "inspect exited $?"; }
    tr -d ' \n' <"$scratch/out" >"$scratch/flat"
    for expected in '"format_version":2' '"preset":"test"' '"loss":{"kind":"scalar","last":0.02,"last_step":100,"rows":100,"width":1}' \
      '"last":[0.69,0.5,0.26]' '{"created":' '"label":"best","step":80' '"label":"latest","step":100' \
      '"mean":[0.905,0.81,0.625]' '"global":{"bins":3,"last_step":100,"snapshots":4}'; do
      expect_in "$expected" "$scratch/flat"
    done
    "$cli" inspect "$run" >"$scratch/text" 2>&1 || fail "inspect (text) exited $?"
    expect_in "checkpoints (2):" "$scratch/text"
    # A file that is not a run: a clear error naming it, exit code 1.
    printf 'not hdf5' >"$scratch/bad.h5"
    "$cli" inspect "$scratch/bad.h5" >"$scratch/out" 2>"$scratch/err" && fail "inspect accepted a text file"
    expect_in "$scratch/bad.h5: not an HDF5 file" "$scratch/err"
    ;;
  train_resume)
    # bash cli_checks.sh train_resume CLI PYTHON COMPARE_SCRIPT: a run stopped by --max-steps, and one stopped by
    # Ctrl-C (SIGINT), each resumed with --resume, end bitwise identical to an uninterrupted run.
    python=$3 compare=$4
    tiny=(--preset video-constrained --set data.train_clips=96 --set data.test_clips=16 --set data.frames=4
          --set data.height=16 --set data.width=16 --set model.layers=3 --set model.width=32 --set model.ff_width=64
          --set train.batch_size=4 --set train.metric_interval=2 --set model.dropout=0.1 --device cpu)
    "$cli" train "${tiny[@]}" --set train.epochs=3 --out "$scratch/straight.h5" --json >"$scratch/a.json" 2>"$scratch/a.err" ||
      { cat "$scratch/a.err" >&2; fail "uninterrupted run failed"; }
    "$cli" train "${tiny[@]}" --set train.epochs=3 --out "$scratch/budget.h5" --max-steps 30 --json >"$scratch/b.json" 2>"$scratch/b.err" ||
      { cat "$scratch/b.err" >&2; fail "budgeted run failed"; }
    expect_in '"stopped": true' "$scratch/b.json"
    "$cli" train --resume "$scratch/budget.h5" --json >"$scratch/c.json" 2>"$scratch/c.err" ||
      { cat "$scratch/c.err" >&2; fail "resume failed"; }
    expect_in '"stopped": false' "$scratch/c.json"
    "$python" "$compare" "$scratch/straight.h5" "$scratch/budget.h5" || fail "resumed run differs from the uninterrupted one"

    # Ctrl-C: a longer run, interrupted once its first epoch is reported.
    "$cli" train "${tiny[@]}" --set train.epochs=12 --out "$scratch/long.h5" >/dev/null 2>&1 || fail "long run failed"
    "$cli" train "${tiny[@]}" --set train.epochs=12 --out "$scratch/interrupted.h5" >/dev/null 2>"$scratch/d.err" &
    pid=$!
    for _ in $(seq 1 200); do grep -q "epoch 1 " "$scratch/d.err" 2>/dev/null && break; sleep 0.05; done
    kill -INT "$pid"
    wait "$pid"
    status=$?
    if [ "$status" = 130 ]; then
      expect_in "resume with: descentlab-cli train --resume" "$scratch/d.err"
      "$cli" train --resume "$scratch/interrupted.h5" >/dev/null 2>"$scratch/e.err" || { cat "$scratch/e.err" >&2; fail "resume after Ctrl-C failed"; }
      "$python" "$compare" "$scratch/long.h5" "$scratch/interrupted.h5" || fail "run resumed after Ctrl-C differs"
    elif [ "$status" = 0 ]; then
      echo "note: the run finished before Ctrl-C arrived; the interrupt path was not exercised this time"
    else
      cat "$scratch/d.err" >&2; fail "interrupted run exited $status"
    fi
    ;;
  sparse_train_prune)
    # bash cli_checks.sh sparse_train_prune CLI PYTHON COMPARE_SCRIPT: a tiny ViT trained with HORST and AC/DC
    # (stopped by --max-steps mid-compression and resumed: bitwise equal to an uninterrupted run), one-shot pruning
    # of it and of a tiny GPT, stored in the run files; sweeps are refused for these tasks with a clear message.
    python=$3 compare=$4
    "$cli" data info --no-verify --dataset fashion-mnist --json >"$scratch/info" 2>&1
    grep -q '"present": false' "$scratch/info" && { echo "fashion-mnist not fetched: skipped"; exit 77; }
    tiny=(--set data.train_limit=512 --set data.test_limit=128 --set model.layers=2 --set model.width=32
          --set model.ff_width=64 --set train.batch_size=32 --set train.epochs=2 --set train.metric_interval=4
          --set sparsity.target=0.8 --device cpu)
    "$cli" train --preset vit-horst "${tiny[@]}" --out "$scratch/straight.h5" --json >"$scratch/a.json" 2>"$scratch/a.err" ||
      { cat "$scratch/a.err" >&2; fail "uninterrupted ViT run failed"; }
    tr -d ' \n' <"$scratch/a.json" >"$scratch/flat"
    expect_in '"optimizer":"horst"' "$scratch/flat"
    # The exact share round(0.8 n) / n of the n prunable weights: within 1/n of the target.
    "$python" -c 'import json,sys; s=json.load(open(sys.argv[1]))["sparsity"]; sys.exit(0 if abs(s-0.8)<1e-4 else 1)' \
      "$scratch/a.json" || fail "final sparsity is not 0.8"
    # 32 steps: compressed phases start at steps 3, 6, ...; the budget stops at step 20, inside [19, 21).
    "$cli" train --preset vit-horst "${tiny[@]}" --out "$scratch/budget.h5" --max-steps 20 >/dev/null 2>"$scratch/b.err" ||
      { cat "$scratch/b.err" >&2; fail "budgeted ViT run failed"; }
    "$cli" train --resume "$scratch/budget.h5" >/dev/null 2>"$scratch/c.err" || { cat "$scratch/c.err" >&2; fail "resume failed"; }
    "$python" "$compare" "$scratch/straight.h5" "$scratch/budget.h5" || fail "resumed ViT run differs from the uninterrupted one"
    "$cli" prune "$scratch/straight.h5" --sparsity 0.5,0.9 --json >"$scratch/prune.json" 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "prune of the ViT run"; }
    tr -d ' \n' <"$scratch/prune.json" >"$scratch/flat"
    expect_in '"metric":"accuracy"' "$scratch/flat"
    expect_in '"sparsity":0.9' "$scratch/flat"
    "$cli" inspect "$scratch/straight.h5" --json | tr -d ' \n' >"$scratch/inspect"
    expect_in '"oneshot_pruning":{"gamma":[0.5,0.9]' "$scratch/inspect"
    expect_in '"mask_churn"' "$scratch/inspect"
    "$cli" sweep "$scratch/straight.h5" --noise gaussian >"$scratch/out" 2>&1 && fail "a sweep was accepted for a ViT run"
    expect_in "robustness sweeps apply to text and video runs" "$scratch/out"
    "$cli" train --preset gpt-ham --set data.train_limit=64 --set data.test_limit=16 --set data.context=32 \
      --set model.layers=1 --set model.width=32 --set model.ff_width=64 --set train.batch_size=16 --device cpu \
      --out "$scratch/gpt.h5" >/dev/null 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "GPT run"; }
    "$cli" prune "$scratch/gpt.h5" --sparsity 0.5 >"$scratch/out" 2>&1 || { cat "$scratch/out" >&2; fail "prune of the GPT run"; }
    expect_in "perplexity" "$scratch/out"
    ;;
  sweep_compare)
    # Two tiny video runs (ERM, constrained), a sweep stored in the run file, and the side-by-side comparison.
    tiny=(--set data.train_clips=32 --set data.test_clips=8 --set data.frames=4 --set data.height=16
          --set data.width=16 --set model.layers=2 --set model.width=16 --set model.ff_width=32 --set train.epochs=1
          --set train.batch_size=8 --device cpu)
    "$cli" train --preset video-erm "${tiny[@]}" --out "$scratch/erm.h5" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "erm run"; }
    "$cli" train --preset video-constrained "${tiny[@]}" --out "$scratch/con.h5" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "constrained run"; }
    for run in erm con; do
      "$cli" sweep "$scratch/$run.h5" --noise video --gamma 0:2:1 --seeds 2 --json >"$scratch/$run.sweep" 2>"$scratch/err" ||
        { cat "$scratch/err" >&2; fail "sweep of $run"; }
      tr -d ' \n' <"$scratch/$run.sweep" >"$scratch/flat"
      expect_in '"metric":"rmse"' "$scratch/flat"
      expect_in '"gamma":2.0' "$scratch/flat"
      "$cli" inspect "$scratch/$run.h5" --json | tr -d ' \n' >"$scratch/inspect"
      expect_in '"sweeps":{"video":{"gamma":[0.0,1.0,2.0]' "$scratch/inspect"
    done
    "$cli" sweep "$scratch/erm.h5" --noise gaussian >"$scratch/out" 2>&1 && fail "text noise accepted for a video run"
    expect_in "video models take --noise video" "$scratch/out"
    "$cli" compare "$scratch/erm.h5" "$scratch/con.h5" --json | tr -d ' \n' >"$scratch/compare"
    expect_in '"constrained":false' "$scratch/compare"
    expect_in '"constrained":true' "$scratch/compare"
    expect_in '"test_layer_loss":[' "$scratch/compare"
    "$cli" compare "$scratch/erm.h5" "$scratch/con.h5" >"$scratch/text" || fail "compare (text)"
    expect_in "video noise (rmse)" "$scratch/text"
    ;;
  gui_report)
    # descentlab report (the GUI binary, offscreen): two tiny video runs, one swept, rendered to PNG; a bad file
    # named in the error. Arguments: CLI GUI.
    gui=$3
    tiny=(--set data.train_clips=32 --set data.test_clips=8 --set data.frames=4 --set data.height=16
          --set data.width=16 --set model.layers=2 --set model.width=16 --set model.ff_width=32 --set train.epochs=1
          --set train.batch_size=8 --device cpu)
    "$cli" train --preset video-erm "${tiny[@]}" --out "$scratch/erm.h5" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "erm run"; }
    "$cli" train --preset video-constrained "${tiny[@]}" --out "$scratch/con.h5" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "constrained run"; }
    "$cli" sweep "$scratch/con.h5" --noise video --gamma 0:2:1 --seeds 2 --json >/dev/null 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "sweep"; }
    QT_QPA_PLATFORM=offscreen "$gui" report "$scratch/erm.h5" "$scratch/con.h5" --out "$scratch/report" \
      >"$scratch/out" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "report"; }
    for view in training-loss test-metric per-layer-loss lagrange-multipliers weight-geometry robustness dashboard; do
      [ -s "$scratch/report/$view.png" ] || fail "no $view.png"
    done
    grep -q "no data" "$scratch/out" && { cat "$scratch/out" >&2; fail "a view had no data"; }
    echo garbage >"$scratch/bad.h5"
    QT_QPA_PLATFORM=offscreen "$gui" report "$scratch/bad.h5" --out "$scratch/bad" >"$scratch/out" 2>&1 &&
      fail "a bad run file was accepted"
    expect_in "bad.h5" "$scratch/out"
    ;;
  *) fail "unknown check" ;;
esac
echo "ok: $check"
