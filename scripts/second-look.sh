#!/usr/bin/env bash
# Issue 18's second look at the papers' claims. Each part writes its runs' summaries (JSON, committed) to
# results/second-look-horst or results/second-look-layerwise; `summary` rewrites docs/results-horst.md with the
# second-look sections after the first look's.
#
#   bash scripts/second-look.sh ridge [SEEDS...]   # claim 3 along HORST's (lr, α) ridge: char GPT, dense, α 5 / 20 / 50,
#                                                  # each at its best lr on results/horst/tuning.json's grid, and AdamW at
#                                                  # its tuned lr, pruned one-shot at 50-90 % (12 runs for 3 seeds,
#                                                  # about 45 min on 2 idle cores)
#   bash scripts/second-look.sh vit-tune           # claim 1 under a schedule, tuning: ViT, Fashion-MNIST, AC/DC to 95 %,
#                                                  # 2 epochs with 5 % warm-up and cosine decay, scored on 5,000
#                                                  # held-out training images: AdamW and HAM at lr 0.001 / 0.003 / 0.01,
#                                                  # HORST along its ridge (α 5 / 20 / 50 at the first look's best lr
#                                                  # for that α, 3x and 9x it), AdamW and HAM also at 0.03
#                                                  # (both peaked at the edge, 0.01): 17 runs, about 20 min
#   bash scripts/second-look.sh vit-tune-long      # the tuning again at the study's length (10 epochs, same schedule,
#                                                  # 95 %, validation): AdamW and HAM at lr 0.001 / 0.003 / 0.01 / 0.03,
#                                                  # HORST at α 5 / 20 / 50 around its ridge (16 runs, about 50 min); the
#                                                  # 2-epoch choice of HORST did not hold at 10 epochs. Its choice
#                                                  # (tuning-long.json; an exact tie keeps the 2-epoch choice) is vit's
#   bash scripts/second-look.sh vit [SEEDS...]     # claim 1: ViT on Fashion-MNIST and MNIST, AC/DC to 90 % and 95 %,
#                                                  # 10 epochs, warm-up + cosine, each optimizer at its vit-tune-long
#                                                  # choice (36 runs for 3 seeds, about 3.3 h)
#   bash scripts/second-look.sh summary            # rewrite docs/results-horst.md from results/horst and the second look
#                                                  # and docs/study-layerwise.md from results/study-layerwise and its own
#   bash scripts/second-look.sh all [SEEDS...]     # everything in order: ridge, vit-tune, video-alpha, then for each
#                                                  # seed the layerwise and the vit runs (so that every cell has its
#                                                  # paired seeds early), then summary: about 7 h on 2 idle cores
#   bash scripts/second-look.sh video-alpha        # claims 1-2 on video, where λ binds: short probes (full-size model,
#                                                  # 2,048 clips, 2 epochs) at α 0.05 / 0.1 / 0.2 / 0.4; the smallest α
#                                                  # whose λ is positive in at least half of the metric rows of the
#                                                  # second half of training at some layer is the video cell's (4 runs,
#                                                  # about 10 min)
#   bash scripts/second-look.sh layerwise [SEEDS...]  # claims 1-3 of the layerwise paper on the full IMDb training set
#                                                  # (25,000 reviews, 3 epochs): the first look's three most promising
#                                                  # cells (depth 8 α 0.2 per-batch, depth 4 α 0.2 stop-gradient,
#                                                  # depth 4 α 0.1 per-batch) and ERM at both depths, each swept under
#                                                  # gaussian, uniform and discrete noise to γ 2 with 3 noise seeds;
#                                                  # then video (full size) ERM and the video-alpha cell, direct
#                                                  # readout. 21 runs for 3 seeds, about 3 h; summary in
#                                                  # docs/study-layerwise.md
#
# Needs the first look's tuning (results/horst/tuning.json, committed). Finished runs are skipped and interrupted ones
# resume from their run files, so the script can be stopped and started again. Two runs go in parallel (one torch
# thread each). DESCENTLAB_RESULTS_SIZE=smoke only tries the script, on tiny models, into results/second-look-smoke.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli="${DESCENTLAB_CLI:-$repo/build/app/descentlab-cli}"
size="${DESCENTLAB_RESULTS_SIZE:-full}"
out="$repo/results/second-look-horst"
extra=()
if [ "$size" = smoke ]; then
  out="$repo/results/second-look-smoke"
  extra=(--set data.train_limit=256 --set data.test_limit=128 --set model.layers=1 --set model.width=32
         --set model.ff_width=64 --set train.epochs=1)
fi
mkdir -p "$out"
export DESCENTLAB_THREADS=1
[ -x "$cli" ] || { echo "ERROR: no $cli: build first (bash scripts/lab.sh setup)" >&2; exit 1; }

# shellcheck source=scripts/horst_runs.sh
. "$repo/scripts/horst_runs.sh"  # horst_one NAME PRESET SIZE PRUNE [--set k=v ...], run_jobs

# The layerwise part writes to its own folder; its summary goes after the study's first look.
layerwise_out="$repo/results/second-look-layerwise"
[ "$size" = smoke ] && layerwise_out="$repo/results/second-look-layerwise-smoke"
# shellcheck source=scripts/layerwise_runs.sh
. "$repo/scripts/layerwise_runs.sh"  # layerwise_one NAME SEED PRESET SIZE SWEEP [--set k=v ...], run_layerwise_jobs
study_summary() {
  if [ "$size" = smoke ]; then
    DESCENTLAB_SECOND_LOOK="$layerwise_out" /usr/bin/python3 "$repo/scripts/summarize_study.py" \
      "$repo/results/study-layerwise" "$layerwise_out/study.md"
  else
    bash "$repo/scripts/study-layerwise.sh" summary
  fi
}

ridge_lr() {  # ridge_lr TASK ALPHA -> HORST's best lr at ALPHA on the first look's tuning grid of TASK (vit, gpt)
  /usr/bin/python3 - "$repo/results/horst/tuning.json" "$1" "$2" <<'PY'
import json, re, sys
grid = json.load(open(sys.argv[1]))[sys.argv[2]]["horst"]["by_lr_alpha"]
alpha = float(sys.argv[3])
at_alpha = {float(m.group(1)): v for k, v in grid.items()
            if (m := re.fullmatch(r"lr ([0-9.e-]+), α ([0-9.e-]+)", k)) and float(m.group(2)) == alpha}
if not at_alpha:
    sys.exit(f"no tuning run of HORST at alpha {alpha:g} in {sys.argv[1]}")
best = max if sys.argv[2] == "vit" else min  # accuracy up, perplexity down
print(f"{best(at_alpha, key=at_alpha.get):g}")
PY
}

# The ViT tuning's protocol (vit-tune, vit-tune-long): the study's schedule at its hardest sparsity, scored on held-out
# training images (the test split is never used for choosing).
tuning_protocol="--set train.lr_schedule=cosine --set train.warmup=0.05 --set sparsity.target=0.95"
tuning_protocol="$tuning_protocol --set data.evaluate_on=validation"

case "${1:-}" in
  ridge)
    shift
    seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    # AdamW at the first look's tuned lr is run again with this build: the first look's GPT runs are not reproduced
    # bit for bit by it (see the summary), so only runs of one build are compared.
    adamw_lr=$(out="$repo/results/horst" tuned lr gpt adamw)
    for seed in "${seeds[@]}"; do
      for alpha in 5 20 50; do
        lr=$(ridge_lr gpt "$alpha")
        echo "ridge-gpt-horst-a$alpha-seed$seed gpt-horst full yes --set train.seed=$seed --set train.lr=$lr --set optimizer.alpha=$alpha"
      done
      echo "ridge-gpt-adamw-seed$seed gpt-adamw full yes --set train.seed=$seed --set train.lr=$adamw_lr"
    done | run_jobs
    [ "$size" = smoke ] || bash "$repo/scripts/results-horst.sh" summary
    ;;
  vit-tune)
    # The tuning protocol, compressed into 2 epochs.
    tune="--set train.epochs=2 $tuning_protocol"
    {
      for optimizer in adamw ham; do
        # 0.03 too: at 0.001 / 0.003 / 0.01 both peaked at 0.01, the grid's edge (results/second-look-horst/tuning.json)
        for lr in 0.001 0.003 0.01 0.03; do
          echo "tune-vit-$optimizer-lr$lr vit-$optimizer full no --set train.lr=$lr $tune"
        done
      done
      for alpha in 5 20 50; do
        ridge=$(ridge_lr vit "$alpha")
        # 9x too: α 50 peaked at 3x, the edge of the first two
        for factor in 1 3 9; do
          lr=$(/usr/bin/python3 -c "print(f'{$factor * float(\"$ridge\"):g}')")
          echo "tune-vit-horst-a$alpha-lr$lr vit-horst full no --set train.lr=$lr --set optimizer.alpha=$alpha $tune"
        done
      done
    } | run_jobs
    /usr/bin/python3 "$repo/scripts/summarize_horst.py" --tune "$out"
    ;;
  vit-tune-long)
    # Does the 2-epoch choice hold at the study's 10 epochs? It did not for HORST (session 16: α 50 at lr 0.0009 gave
    # 0.838 on validation after 10 epochs, α 5 at 0.003 0.892, AdamW at 0.01 0.885), so the tuning is repeated at the
    # study's length: the same schedule, 95 %, Fashion-MNIST, scored on held-out training images. 16 runs, about 50 min.
    long="--set train.epochs=10 $tuning_protocol"
    {
      for optimizer in adamw ham; do
        # 0.001 too: at 0.003 / 0.01 / 0.03 AdamW peaked at 0.003, the grid's edge, and HAM tied 0.003 with 0.01
        for lr in 0.001 0.003 0.01 0.03; do
          echo "long-vit-$optimizer-lr$lr vit-$optimizer full no --set train.lr=$lr $long"
        done
      done
      for pair in 5:0.001 5:0.003 5:0.009 20:0.0003 20:0.001 20:0.003 50:0.0003 50:0.0009; do
        echo "long-vit-horst-a${pair%%:*}-lr${pair#*:} vit-horst full no --set train.lr=${pair#*:}" \
          "--set optimizer.alpha=${pair%%:*} $long"
      done
    } | run_jobs
    /usr/bin/python3 "$repo/scripts/summarize_horst.py" --tune-long "$out"
    ;;
  vit)
    shift
    seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    tuning_json="$out/tuning-long.json"
    [ -f "$tuning_json" ] || { echo "ERROR: run vit-tune-long first (no $tuning_json)" >&2; exit 1; }
    # The job list is made first, so that a run made at another choice stops the script before anything trains.
    vit_jobs=$(
      for seed in "${seeds[@]}"; do
        for dataset in fashion-mnist mnist; do
          for target in 0.9 0.95; do
            for optimizer in adamw ham horst; do
              sets="--set data.dataset=$dataset --set sparsity.target=$target --set train.seed=$seed"
              sets="$sets --set train.epochs=10 --set train.lr_schedule=cosine --set train.warmup=0.05"
              sets="$sets --set sparsity.compression_samples=0"  # the whole test split, as at epoch ends
              lr=$(tuned lr vit "$optimizer") alpha=""
              sets="$sets --set train.lr=$lr"
              [ "$optimizer" = horst ] && alpha=$(tuned alpha vit horst) && sets="$sets --set optimizer.alpha=$alpha"
              name="vit-$dataset-s$target-$optimizer-seed$seed"
              made_with_choice "$out/$name" "$lr" "$alpha" || exit 1
              echo "$name vit-$optimizer full no $sets"
            done
          done
        done
      done
    )
    printf '%s\n' "$vit_jobs" | run_jobs
    [ "$size" = smoke ] || bash "$repo/scripts/results-horst.sh" summary
    ;;
  video-alpha)
    out="$layerwise_out"
    mkdir -p "$out"
    probe="--set data.train_clips=2048 --set train.epochs=2"
    [ "$size" = smoke ] && probe="--set data.train_clips=64 --set data.test_clips=32 --set train.epochs=1"
    probe_one() {  # probe_one ALPHA: a probe is short, so an interrupted one starts again
      local base="$out/video-alpha$1-probe"
      [ -f "$base.done" ] && { echo "done already: $base"; return 0; }
      rm -f "$base.h5"
      # shellcheck disable=SC2086
      "$cli" train --preset video-constrained --size full $probe --set "constraints.alpha=$1" --out "$base.h5" \
        --json >"$base.train.json" 2>"$base.log" || { echo "probe failed: $base, see $base.log" >&2; return 1; }
      touch "$base.done"
    }
    export -f probe_one
    export probe
    printf '%s\n' 0.05 0.1 0.2 0.4 | xargs -P 2 -L 1 bash -c 'probe_one "$1"' _
    /usr/bin/python3 "$repo/scripts/summarize_study.py" --video-alpha "$out"
    ;;
  layerwise)
    shift
    seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    out="$layerwise_out"
    mkdir -p "$out"
    [ -f "$out/video-alpha.json" ] || { echo "ERROR: run video-alpha first (no $out/video-alpha.json)" >&2; exit 1; }
    video_alpha=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["alpha"])' \
      "$out/video-alpha.json")
    text_sets="" video_sets=""
    if [ "$size" = smoke ]; then
      text_sets="--set data.train_limit=256 --set data.test_limit=128 --set train.epochs=1"
      video_sets="--set data.train_clips=64 --set data.test_clips=32 --set train.epochs=1"
    fi
    for seed in "${seeds[@]}"; do
      # Depth 8 first, the longest runs, so the two lanes end together.
      echo "d8-erm $seed text-erm full text $text_sets --set model.layers=8"
      echo "d8-a0.2-batch $seed text-constrained full text $text_sets --set model.layers=8 --set constraints.alpha=0.2"
      echo "d4-erm $seed text-erm full text $text_sets --set model.layers=4"
      echo "d4-a0.1-batch $seed text-constrained full text $text_sets --set model.layers=4 --set constraints.alpha=0.1"
      echo "d4-a0.2-batch-sg $seed text-constrained full text $text_sets --set model.layers=4" \
        "--set constraints.alpha=0.2 --set constraints.stop_gradient=true"
      echo "video-erm $seed video-erm full video $video_sets"
      echo "video-a$video_alpha-batch $seed video-constrained full video $video_sets" \
        "--set constraints.alpha=$video_alpha"
    done | run_layerwise_jobs
    study_summary
    ;;
  summary)
    [ "$size" = smoke ] || bash "$repo/scripts/results-horst.sh" summary
    study_summary
    ;;
  all)
    shift
    seeds=("$@")
    [ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
    self="$repo/scripts/second-look.sh"
    bash "$self" ridge "${seeds[@]}"
    bash "$self" vit-tune
    bash "$self" vit-tune-long
    bash "$self" video-alpha
    for seed in "${seeds[@]}"; do
      bash "$self" layerwise "$seed"
      bash "$self" vit "$seed"
    done
    bash "$self" summary
    ;;
  *)
    echo "usage: bash scripts/second-look.sh ridge [SEEDS...] | vit-tune | vit-tune-long | vit [SEEDS...] | video-alpha |" \
      "layerwise [SEEDS...] | summary | all [SEEDS...]" >&2
    exit 2
    ;;
esac
