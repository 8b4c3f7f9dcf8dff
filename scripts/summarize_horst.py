#!/usr/bin/env python3
"""HORST results (scripts/results-horst.sh).

  summarize_horst.py --one BASE NAME PRESET   BASE.train.json, BASE.prune.json and BASE.h5 -> BASE.json
  summarize_horst.py --tune FOLDER            the tuning runs -> FOLDER/tuning.json (best lr per optimizer and task,
                                              best alpha for HORST)
  summarize_horst.py FOLDER TARGET.md         the tables of docs/results-horst.md

Everything is read from the runs; nothing is typed in by hand."""
import glob
import json
import os
import re
import statistics
import sys

import h5py


def write_json(path, value):
    with open(path + ".tmp", "w") as out:
        json.dump(value, out, indent=1)
    os.replace(path + ".tmp", path)


def summarize_one(base, name, preset):
    train = json.load(open(base + ".train.json"))
    prune = json.load(open(base + ".prune.json"))
    with h5py.File(base + ".h5", "r") as run:
        config = json.loads(run.attrs["config"])
        histogram = None
        if "histograms/global" in run:
            group = run["histograms/global"]
            histogram = {"bin_edges": group["bin_edges"][()].tolist(), "step": int(group["step"][-1]),
                         "counts": group["counts"][-1].tolist()}
    write_json(base + ".json", {
        "name": name, "preset": preset, "config": config, "steps": train["steps"], "seconds": train["seconds"],
        "metric": train["test"]["metric"], "value": train["test"]["value"], "loss": train["test"]["loss"],
        "sparsity": train["sparsity"], "near_zero_share": train["near_zero_share"],
        "prune": prune.get("rows", []), "histogram": histogram,
    })


def load_runs(folder, pattern="*.json"):
    runs = []
    for path in sorted(glob.glob(os.path.join(folder, pattern))):
        if path.endswith((".train.json", ".prune.json", "tuning.json")):
            continue
        runs.append(json.load(open(path)))
    return runs


def better(metric, a, b):
    return a > b if metric == "accuracy" else a < b


def tune(folder):
    runs = {r["name"]: r for r in load_runs(folder, "tune-*.json")}
    choice = {}
    for task in ("vit", "gpt"):
        choice[task] = {}
        for optimizer in ("adamw", "ham", "horst"):
            lrs = [(float(m.group(1)), r) for n, r in runs.items()
                   if (m := re.fullmatch(rf"tune-{task}-{optimizer}-lr([0-9.e-]+)", n))]
            if not lrs:
                continue
            best = lrs[0]
            for item in lrs[1:]:
                if better(item[1]["metric"], item[1]["value"], best[1]["value"]):
                    best = item
            choice[task][optimizer] = {"lr": best[0], "metric": best[1]["metric"],
                                       "by_lr": {f"{lr:g}": r["value"] for lr, r in sorted(lrs, key=lambda x: x[0])}}
        alphas = [(float(m.group(1)), r) for n, r in runs.items()
                  if (m := re.fullmatch(rf"tune-{task}-horst-alpha([0-9.e-]+)", n))]
        if alphas and "horst" in choice[task]:
            choice[task]["horst"]["by_alpha"] = {f"{a:g}": r["value"] for a, r in sorted(alphas, key=lambda x: x[0])}
        # HORST's (lr, alpha) pair: the best over every HORST tuning run, whichever sweep it came from.
        pairs = []
        for n, r in runs.items():
            config = r["config"]
            if re.fullmatch(rf"tune-{task}-horst-.*", n):
                pairs.append(((config["train"]["lr"], config["optimizer"]["alpha"]), r))
        if pairs and "horst" in choice[task]:
            best = pairs[0]
            for item in pairs[1:]:
                if better(item[1]["metric"], item[1]["value"], best[1]["value"]):
                    best = item
            choice[task]["horst"]["lr"], choice[task]["horst"]["alpha"] = best[0]
            choice[task]["horst"]["by_lr_alpha"] = {f"lr {lr:g}, α {a:g}": r["value"] for (lr, a), r in sorted(
                pairs, key=lambda x: x[0])}
    write_json(os.path.join(folder, "tuning.json"), choice)
    print(json.dumps(choice, indent=1))


def kept_share(histogram, threshold):
    """Among the kept weights (|w| >= the first bin's upper edge, 1e-8: the AC/DC mask's zeros excluded), the share
    with |w| < threshold, from the run's final global histogram (thresholds 1e-4, 1e-3, 1e-2 are bin edges)."""
    edges, counts = histogram["bin_edges"], histogram["counts"]
    kept = sum(counts[1:])
    below = sum(c for k, c in enumerate(counts) if k >= 1 and edges[k + 1] <= threshold * (1 + 1e-9))
    return below / kept if kept else float("nan")


def cell(values, digits=4):
    if not values:
        return "-"
    mean = statistics.mean(values)
    if len(values) == 1:
        return f"{mean:.{digits}f} (1 seed)"
    return f"{mean:.{digits}f} ± {statistics.stdev(values):.{digits}f} ({len(values)})"


def write_summary(folder, target):
    runs = load_runs(folder)
    main = [r for r in runs if not r["name"].startswith("tune-")]
    optimizers = ("adamw", "ham", "horst")
    lines = ["# Results: HORST against AdamW and HAM (paper 2)", "",
             "Produced by `bash scripts/results-horst.sh tune`, then `vit` and `gpt`; rewritten by "
             "`bash scripts/results-horst.sh summary`. Cells: mean ± std over training seeds (number of seeds). "
             "Whatever they show is reported as is.", ""]
    tuning_path = os.path.join(folder, "tuning.json")
    if os.path.exists(tuning_path):
        tuning = json.load(open(tuning_path))
        lines += ["## Tuning (one epoch of the full data, one seed, scored on 5,000 held-out training samples)", "",
                  "Each optimizer runs at its own best learning rate from this sweep (ViT: AC/DC at 90%; GPT: dense "
                  "validation perplexity); HORST at its best (learning rate, alpha) pair.", ""]
        for task, table in tuning.items():
            for optimizer, entry in table.items():
                by_lr = ", ".join(f"lr {lr}: {value:.4f}" for lr, value in entry["by_lr"].items())
                if "by_lr_alpha" in entry:
                    pairs = ", ".join(f"{key}: {value:.4f}" for key, value in entry["by_lr_alpha"].items())
                    lines.append(f"- {task} horst: {pairs} -> lr {entry['lr']:g}, α {entry['alpha']:g}")
                else:
                    lines.append(f"- {task} {optimizer}: {by_lr} -> lr {entry['lr']:g}")
        lines.append("")
    for dataset in ("fashion-mnist", "mnist"):
        rows = {}
        for r in main:
            m = re.fullmatch(rf"vit-{dataset}-s([0-9.]+)-(\w+)-seed\d+", r["name"])
            if m:
                rows.setdefault(float(m.group(1)), {}).setdefault(m.group(2), []).append(r)
        if not rows:
            continue
        lines += [f"## ViT on {dataset}: test accuracy after AC/DC", "",
                  "| sparsity | " + " | ".join(optimizers) + " |", "|---|" + "---|" * len(optimizers)]
        for sparsity in sorted(rows):
            lines.append(f"| {sparsity:.0%} | " + " | ".join(
                cell([r["value"] for r in rows[sparsity].get(o, [])]) for o in optimizers) + " |")
        # The mask's zeros dominate the plain near-zero share (it equals the sparsity of the weight matrices), so
        # the kept weights are what tells the optimizers apart.
        lines += ["", "Among the kept (non-zero) weights at the end, the share with |w| < 1e-3 / 1e-2 (final global "
                  "histogram, mean ± std over seeds):", "",
                  "| sparsity | " + " | ".join(optimizers) + " |", "|---|" + "---|" * len(optimizers)]
        for sparsity in sorted(rows):
            cells = []
            for o in optimizers:
                runs_ = [r for r in rows[sparsity].get(o, []) if r.get("histogram")]
                cells.append(" / ".join(cell([kept_share(r["histogram"], t) for r in runs_], 3) for t in (1e-3, 1e-2))
                             if runs_ else "-")
            lines.append(f"| {sparsity:.0%} | " + " | ".join(cells) + " |")
        lines.append("")
    gpt = {}
    for r in main:
        m = re.fullmatch(r"gpt-(\w+)-seed\d+", r["name"])
        if m:
            gpt.setdefault(m.group(1), []).append(r)
    if gpt:
        sparsities = sorted({row["sparsity"] for runs_ in gpt.values() for r in runs_ for row in r["prune"]})
        lines += ["## Char GPT on Moby Dick: validation perplexity after one-shot layerwise pruning", "",
                  "| sparsity | " + " | ".join(o for o in optimizers if o in gpt) + " |",
                  "|---|" + "---|" * len([o for o in optimizers if o in gpt]),
                  "| dense | " + " | ".join(cell([r["value"] for r in gpt[o]], 3) for o in optimizers if o in gpt) + " |"]
        for sparsity in sparsities:
            cells = []
            for o in optimizers:
                if o not in gpt:
                    continue
                values = [row["perplexity"] for r in gpt[o] for row in r["prune"] if row["sparsity"] == sparsity]
                cells.append(cell(values, 3))
            lines.append(f"| {sparsity:.0%} | " + " | ".join(cells) + " |")
        lines += ["", "Share of weights with |w| < 1e-4 / 1e-3 / 1e-2 after dense training (first seed):", ""]
        for o in optimizers:
            if o in gpt:
                lines.append(f"- {o}: " + " / ".join(f"{s:.3f}" for s in gpt[o][0]["near_zero_share"]["share"]))
        lines.append("")
    notes = os.path.join(folder, "notes.md")
    if os.path.exists(notes):
        lines += ["## Reading the numbers", "", open(notes).read().strip(), ""]
    with open(target + ".tmp", "w") as out:
        out.write("\n".join(lines))
    os.replace(target + ".tmp", target)
    print(f"wrote {target} from {len(main)} runs")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        summarize_one(*sys.argv[2:5])
    elif len(sys.argv) == 3 and sys.argv[1] == "--tune":
        tune(sys.argv[2])
    elif len(sys.argv) == 3:
        write_summary(*sys.argv[1:3])
    else:
        sys.exit("usage: summarize_horst.py --one BASE NAME PRESET | --tune FOLDER | FOLDER TARGET.md")
