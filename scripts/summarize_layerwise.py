#!/usr/bin/env python3
"""Writes docs/results-layerwise.md from the JSON summaries in results/layerwise/ (scripts/results-layerwise.sh).
Reports what the runs show, as measured: mean and spread over seeds, per-layer test losses, monotonicity, the gap
at gamma = 0 and the sweep tables."""
import glob
import json
import os
import statistics
import sys


def mean_std(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def fmt(mean, std, digits=4):
    return "-" if mean is None else f"{mean:.{digits}f} ± {std:.{digits}f}"


def monotone(losses):
    return all(b <= a for a, b in zip(losses, losses[1:]))


def main(folder, target):
    runs = [json.load(open(path)) for path in sorted(glob.glob(os.path.join(folder, "*-seed*.json")))
            if not path.endswith((".train.json", ".sweep.json"))]
    groups = {}
    for run in runs:
        groups.setdefault(run["name"], []).append(run)
    lines = ["# Results: layerwise descent (paper 1)", "",
             "Produced by `bash scripts/results-layerwise.sh main` (full presets; sweeps on 2,000 test samples, "
             "3 noise seeds per strength); this file is rewritten by `bash scripts/results-layerwise.sh summary`.",
             "Numbers are mean ± standard deviation over training seeds. Whatever they show is reported as is.",
             "Where the constraints bind and pay off (alpha, depth, dual-step mode, stop-gradient, per-layer heads): "
             "docs/study-layerwise.md.", ""]
    if not runs:
        lines.append("No finished runs yet.")
    for task in ("text", "video"):
        names = [n for n in (f"{task}-erm", f"{task}-constrained") if n in groups]
        if not names:
            continue
        metric = groups[names[0]][0]["metric"]
        lines += [f"## {task}: {'IMDb sentiment' if task == 'text' else 'moving-sprite denoising'}", "",
                  f"| run | seeds | test {metric} | per-layer test loss f_0 .. f_L | monotone (seeds) | descending frequency | lambda |",
                  "|---|---|---|---|---|---|---|"]
        for name in names:
            group = groups[name]
            metric_mean, metric_std = mean_std([r["test_metric"] for r in group])
            layers = len(group[0]["test_layer_loss"])
            layer_means = [statistics.mean(r["test_layer_loss"][l] for r in group) for l in range(layers)]
            freq = [statistics.mean(r["test_descending_frequency"][l] for r in group)
                    for l in range(layers - 1)]
            lam = group[0].get("lambda")
            lam_text = "-" if not lam else " ".join(
                f"{statistics.mean(r['lambda'][l] for r in group):.3f}" for l in range(len(lam)))
            lines.append(f"| {name} | {len(group)} | {fmt(metric_mean, metric_std)} | "
                         + " ".join(f"{v:.4f}" for v in layer_means)
                         + f" | {sum(monotone(r['test_layer_loss']) for r in group)}/{len(group)} | "
                         + " ".join(f"{v:.3f}" for v in freq) + f" | {lam_text} |")
        if len(names) == 2:
            a, _ = mean_std([r["test_metric"] for r in groups[names[0]]])
            b, _ = mean_std([r["test_metric"] for r in groups[names[1]]])
            lines += ["", f"Gap at gamma = 0 (constrained − ERM): {b - a:+.4f} {metric}."]
        # Sweep tables: mean over training seeds of the per-seed sweep means.
        noises = list(groups[names[0]][0]["sweeps"].keys())
        for noise in noises:
            lines += ["", f"### {noise} noise: test {metric} (mean ± std over training seeds)", "",
                      "| gamma | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
            rows = groups[names[0]][0]["sweeps"][noise]["rows"]
            for i, row in enumerate(rows):
                cells = []
                for name in names:
                    values = [r["sweeps"][noise]["rows"][i]["mean"] for r in groups[name] if noise in r["sweeps"]]
                    cells.append(fmt(*mean_std(values)))
                lines.append(f"| {row['gamma']:.2f} | " + " | ".join(cells) + " |")
        lines.append("")
    notes = os.path.join(folder, "notes.md")
    if os.path.exists(notes):  # a person's reading of the tables, kept beside the data and included here
        lines += ["## Reading the numbers", "", open(notes).read().strip(), ""]
    lines += ["## Commands", "", "    bash scripts/lab.sh setup", "    bash scripts/results-layerwise.sh main 0 1 2", ""]
    with open(target, "w") as handle:
        handle.write("\n".join(lines))
    print("wrote", target, "from", len(runs), "runs")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
