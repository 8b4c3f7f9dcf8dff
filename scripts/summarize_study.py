#!/usr/bin/env python3
"""The layerwise study (scripts/study-layerwise.sh).

  summarize_study.py --one BASE NAME SEED   reads BASE.h5, BASE.train.json and BASE.sweep.json and writes BASE.json
  summarize_study.py FOLDER TARGET.md       writes the study's tables from every FOLDER/*-seed*.json, then issue 18's
                                            second look from results/second-look-layerwise (or $DESCENTLAB_SECOND_LOOK)
                                            when it holds finished runs
  summarize_study.py --video-alpha FOLDER   reads FOLDER/video-alpha*-probe.h5 and writes FOLDER/video-alpha.json: how
                                            often and how hard λ bound at each α, and the α the second look uses

Everything reported is read from the run files: how often and how hard the constraints bound during training (share
of metric rows with lambda_l > 0, mean lambda_l, share of rows whose training-batch slack g_l was > 0), the test-set
per-layer losses and descending frequencies, accuracy, and accuracy under noise."""
import glob
import json
import os
import statistics
import sys

import h5py
import numpy as np

import study_second_look as second_look
from summary_page import write_json, write_page


def summarize_one(base, name, seed):
    train = json.load(open(base + ".train.json"))
    sweep = json.load(open(base + ".sweep.json"))
    with h5py.File(base + ".h5", "r") as run:
        config = json.loads(run.attrs["config"])
        metrics = run["metrics"]
        test_layer_loss = metrics["test_layer_loss/value"][-1].tolist()
        test_frequency = metrics["test_descending_frequency/value"][-1].tolist()
        binding = {}
        if "lambda" in metrics:
            lam = metrics["lambda/value"][()]
            slack = metrics["slack/value"][()]
            binding = {
                "lambda_final": lam[-1].tolist(),
                "lambda_mean": lam.mean(axis=0).tolist(),
                "lambda_active_share": (lam > 0).mean(axis=0).tolist(),
                "slack_violated_share": (slack > 0).mean(axis=0).tolist(),
            }
    sweeps = {noise: {f"{row['gamma']:g}": row["mean"] for row in table["rows"]}
              for noise, table in sweep["sweeps"].items()}
    summary = {
        "name": name, "seed": int(seed), "config": config, "steps": train["steps"],
        "seconds": train["seconds"], "metric": train["test"]["metric"], "accuracy": train["test"]["value"],
        "test_layer_loss": test_layer_loss, "test_descending_frequency": test_frequency,
        "sweeps": sweeps, **binding,
    }
    write_json(base + ".json", summary)


def mean_std(values):
    if not values:
        return None, None
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def cell(values, digits=3, signed=False):
    mean, std = mean_std(values)
    if mean is None:
        return "-"
    text = f"{mean:+.{digits}f}" if signed else f"{mean:.{digits}f}"
    return text if len(values) == 1 else f"{text} ± {std:.{digits}f}"


def monotone(losses):
    return all(b <= a for a, b in zip(losses, losses[1:]))


def variant_order(name):
    # d8-erm, d8-a0.02-batch, d8-a0.02-batch-sg, d8-a0.02-epoch, ..., d8-a0.1-batch-heads
    depth, _, rest = name.partition("-")
    if rest == "erm":
        return (int(depth[1:]), 0, 0.0, "")
    alpha, _, mode = rest.partition("-")
    return (int(depth[1:]), 1, float(alpha[1:]), mode)


def describe(name):
    rest = name.partition("-")[2]
    if rest == "erm":
        return "ERM"
    alpha, _, mode = rest.partition("-")
    text = {"batch": "per-batch", "batch-sg": "per-batch, stop-gradient", "epoch": "per-epoch (η_λ = 1)",
            "batch-heads": "per-batch, per-layer heads"}[mode]
    return f"α = {alpha[1:]}, {text}"


def write_summary(folder, target):
    runs = load_runs(folder)
    groups = {}
    for run in runs:
        groups.setdefault(run["name"], []).append(run)
    erm = {}  # (depth, seed) -> run
    for run in runs:
        if run["name"].endswith("-erm"):
            erm[(run["name"].split("-")[0], run["seed"])] = run
    seeds = sorted({r["seed"] for r in runs})
    lines = [
        "# Study: where the layerwise constraints bind and pay off", "",
        "Produced by `bash scripts/study-layerwise.sh run 0` (the grid, seed 0) and "
        "`bash scripts/study-layerwise.sh erm-seeds 1 2` (ERM, seeds 1 and 2; training seeds present: "
        + ", ".join(map(str, seeds)) + "); rewritten by `bash scripts/study-layerwise.sh summary`. IMDb at a study size: 4,000 training reviews, "
        "2,000 test reviews, 3 epochs, width 64; depth 4 and 8. Sweeps: 1,000 test reviews, 2 noise seeds.",
        "Cells with one seed are single runs; with more, mean ± std over training seeds. "
        "Δ columns are the run minus ERM of the same depth and seed; in the ERM row they give the standard deviation "
        "of the same quantity over ERM seeds, the yardstick for every single-seed Δ. "
        "λ active: the largest share, over layers, of metric rows with λ_l > 0; mean λ: the largest per-layer mean "
        "over training; violated g: the largest share of metric rows whose training-batch slack g_l was > 0. "
        "Per-epoch dual steps use η_λ = 1 (per-batch: 0.01) and hold 256 training reviews out as the constraint "
        "batch. Whatever the numbers show is reported as is.", ""]
    if not runs:
        lines.append("No finished runs yet.")
    for depth in sorted({variant_order(n)[0] for n in groups}):
        names = sorted((n for n in groups if variant_order(n)[0] == depth), key=variant_order)
        lines += [f"## Depth {depth}", "",
                  "| variant | accuracy | Δ acc | Δ acc gaussian γ=2 | Δ acc discrete γ=2 | test f_0 | test f_L "
                  "| monotone | desc. freq. last layer | λ active (share of rows, any layer) | mean λ (max layer) "
                  "| violated g (share, max layer) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for name in names:
            group = groups[name]

            def delta(get):
                values = []
                for r in group:
                    base = erm.get((f"d{depth}", r["seed"]))
                    if base is not None:
                        values.append(get(r) - get(base))
                return values

            row = [describe(name), cell([r["accuracy"] for r in group], 4)]
            if name.endswith("-erm"):
                # The seed spread (std over ERM seeds) of the quantities the Δ columns compare.
                def spread(get):
                    values = [get(r) for r in group]
                    return f"seed std {statistics.stdev(values):.4f}" if len(values) > 1 else "-"
                row += [spread(lambda r: r["accuracy"]), spread(lambda r: r["sweeps"]["gaussian"]["2"]),
                        spread(lambda r: r["sweeps"]["discrete"]["2"])]
            else:
                row += [cell(delta(lambda r: r["accuracy"]), 4, True),
                        cell(delta(lambda r: r["sweeps"]["gaussian"]["2"]), 4, True),
                        cell(delta(lambda r: r["sweeps"]["discrete"]["2"]), 4, True)]
            row += [cell([r["test_layer_loss"][0] for r in group]), cell([r["test_layer_loss"][-1] for r in group]),
                    f"{sum(monotone(r['test_layer_loss']) for r in group)}/{len(group)}",
                    cell([r["test_descending_frequency"][-1] for r in group])]
            if "lambda_mean" in group[0]:
                row += [cell([float(np.max(r["lambda_active_share"])) for r in group], 2),
                        cell([float(np.max(r["lambda_mean"])) for r in group], 3),
                        cell([float(np.max(r["slack_violated_share"])) for r in group], 2)]
            else:
                row += ["-", "-", "-"]
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", "Per-layer test loss f_0 .. f_L (first seed):", ""]
        for name in names:
            r = groups[name][0]
            lines.append(f"- {describe(name)}: " + " ".join(f"{v:.3f}" for v in r["test_layer_loss"]))
        lines.append("")
    second = os.environ.get("DESCENTLAB_SECOND_LOOK") or os.path.join(
        os.path.dirname(os.path.abspath(folder)), "second-look-layerwise")
    second_runs = load_runs(second)
    if second_runs:
        notes = os.path.join(folder, "notes.md")
        if os.path.exists(notes):  # the first look's reading stays with the first look's tables
            lines += ["## Reading the numbers", "", open(notes).read().strip(), ""]
        lines += second_look.sections(second, second_runs)
        write_page(folder, target, lines, len(runs) + len(second_runs), with_notes=False)
    else:
        write_page(folder, target, lines, len(runs))


def load_runs(folder):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(folder, "*-seed*.json")))
            if not p.endswith((".train.json", ".sweep.json"))]


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        summarize_one(*sys.argv[2:5])
    elif len(sys.argv) == 3 and sys.argv[1] == "--video-alpha":
        second_look.choose_video_alpha(sys.argv[2])
    elif len(sys.argv) == 3:
        write_summary(*sys.argv[1:3])
    else:
        sys.exit("usage: summarize_study.py --one BASE NAME SEED | --video-alpha FOLDER | FOLDER TARGET.md")
