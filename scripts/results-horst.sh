#!/usr/bin/env bash
# Reproduces docs/results-horst.md (issue 5): HORST against AdamW and HAM, each at its own best learning rate.
#
#   bash scripts/results-horst.sh tune             # short lr sweeps (all three) and an alpha sweep (HORST), ViT and GPT
#   bash scripts/results-horst.sh vit [SEEDS...]   # ViT, Fashion-MNIST and MNIST, AC/DC at 70/80/90%, full size
#   bash scripts/results-horst.sh gpt [SEEDS...]   # char GPT on Moby Dick, dense, then one-shot pruning 50-90%
#   bash scripts/results-horst.sh summary          # rewrite docs/results-horst.md from results/horst/*.json
#
# "tune" must run first: vit and gpt read the chosen learning rates (and HORST's alpha) from
# results/horst/tuning.json. Tuning runs are short (one epoch of the full data) at the hardest setting (90%
# sparsity for the ViT); they take about 40 minutes in all. Finished runs are skipped, so the script can be stopped and started
# again. Two runs go in parallel (one torch thread each). DESCENTLAB_RESULTS_SIZE=smoke only tries the script.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
size="${DESCENTLAB_RESULTS_SIZE:-full}"
out="$repo/results/horst"
summary="$repo/docs/results-horst.md"
extra=()
if [ "$size" = smoke ]; then
  out="$repo/results/horst-smoke"
  summary="$out/summary.md"
  extra=(--set data.train_limit=256 --set data.test_limit=128 --set model.layers=1 --set model.width=32
         --set model.ff_width=64 --set train.epochs=1)
fi
mkdir -p "$out"
export DESCENTLAB_THREADS=1

# shellcheck source=scripts/horst_runs.sh
. "$repo/scripts/horst_runs.sh"  # horst_one NAME PRESET SIZE PRUNE [--set k=v ...], run_jobs


case "${1:-}" in
  tune)
    # One epoch of the full data (ViT: AC/DC to 90% compressed into it; GPT: dense), one seed, scored on 5,000
    # images / windows held out of the training data: the test splits are never used for choosing.
    tune_vit="--set train.epochs=1 --set sparsity.target=0.9 --set data.evaluate_on=validation"
    tune_gpt="--set train.epochs=1 --set data.evaluate_on=validation"
    {
      for optimizer in adamw ham horst; do
        for lr in 0.0003 0.001 0.003 0.01; do
          echo "tune-vit-$optimizer-lr$lr vit-$optimizer full no --set train.lr=$lr $tune_vit"
          echo "tune-gpt-$optimizer-lr$lr gpt-$optimizer full no --set train.lr=$lr $tune_gpt"
        done
      done
      # HORST's lr and alpha together: the best alpha moves with the learning rate.
      for lr in 0.0003 0.003 0.01; do
        for alpha in 2 5 20 50; do
          echo "tune-vit-horst-a$alpha-lr$lr vit-horst full no --set train.lr=$lr --set optimizer.alpha=$alpha $tune_vit"
          echo "tune-gpt-horst-a$alpha-lr$lr gpt-horst full no --set train.lr=$lr --set optimizer.alpha=$alpha $tune_gpt"
        done
      done
      for alpha in 2 5 20 50 100; do
        echo "tune-vit-horst-alpha$alpha vit-horst full no --set optimizer.alpha=$alpha $tune_vit"
        echo "tune-gpt-horst-alpha$alpha gpt-horst full no --set optimizer.alpha=$alpha $tune_gpt"
      done
    } | run_jobs
    /usr/bin/python3 "$repo/scripts/summarize_horst.py" --tune "$out"
    ;;
  vit)
    shift
    seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    for seed in "${seeds[@]}"; do
      for dataset in fashion-mnist mnist; do
        for target in 0.7 0.8 0.9; do
          for optimizer in adamw ham horst; do
            sets="--set data.dataset=$dataset --set sparsity.target=$target --set train.seed=$seed"
            sets="$sets --set train.lr=$(tuned lr vit "$optimizer")"
            [ "$optimizer" = horst ] && sets="$sets --set optimizer.alpha=$(tuned alpha vit horst)"
            echo "vit-$dataset-s$target-$optimizer-seed$seed vit-$optimizer full no $sets"
          done
        done
      done
    done | run_jobs
    /usr/bin/python3 "$repo/scripts/summarize_horst.py" "$out" "$summary"
    ;;
  gpt)
    shift
    seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    for seed in "${seeds[@]}"; do
      for optimizer in adamw ham horst; do
        sets="--set train.seed=$seed --set train.lr=$(tuned lr gpt "$optimizer")"
        [ "$optimizer" = horst ] && sets="$sets --set optimizer.alpha=$(tuned alpha gpt horst)"
        echo "gpt-$optimizer-seed$seed gpt-$optimizer full yes $sets"
      done
    done | run_jobs
    /usr/bin/python3 "$repo/scripts/summarize_horst.py" "$out" "$summary"
    ;;
  summary) /usr/bin/python3 "$repo/scripts/summarize_horst.py" "$out" "$summary" ;;
  *) echo "usage: bash scripts/results-horst.sh tune | vit [SEEDS...] | gpt [SEEDS...] | summary" >&2; exit 2 ;;
esac
