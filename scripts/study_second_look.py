"""Issue 18's second look at the layerwise paper (scripts/second-look.sh video-alpha and layerwise): the first look's
three most promising cells and ERM on the full IMDb training set, and the video task where λ binds, 3 seeds each.
Used by summarize_study.py, which places these sections after the study's first look in docs/study-layerwise.md."""
import glob
import json
import os
import re
import statistics

import h5py
import numpy as np

from summary_page import write_json

VIDEO_ALPHAS_TRIED = (0.05, 0.1, 0.2, 0.4)
BINDS_SHARE = 0.5  # λ binds when positive in at least this share of the second half's metric rows at some layer


def choose_video_alpha(folder):
    """Reads the video-alpha probes and writes video-alpha.json: per α, over the second half of the probe's metric
    rows, the largest share over layers of rows with λ_l > 0 and the largest per-layer mean λ; the chosen α is the
    smallest that binds (else the largest tried)."""
    probes = {}
    for path in sorted(glob.glob(os.path.join(folder, "video-alpha*-probe.h5"))):
        alpha = float(re.fullmatch(r"video-alpha([0-9.]+)-probe\.h5", os.path.basename(path)).group(1))
        with h5py.File(path, "r") as run:
            lam = run["metrics"]["lambda/value"][()]
            lam = lam[len(lam) // 2:]  # early in training every constraint is violated: read the second half
            config = json.loads(run.attrs["config"])
            test_layer_loss = run["metrics"]["test_layer_loss/value"][-1].tolist()
        probes[alpha] = {"lambda_active_share": float((lam > 0).mean(axis=0).max()),
                         "lambda_mean": float(lam.mean(axis=0).max()), "test_layer_loss": test_layer_loss,
                         "train_clips": config["data"]["train_clips"], "epochs": config["train"]["epochs"]}
    if not probes:
        raise SystemExit(f"no video-alpha*-probe.h5 in {folder}: run `bash scripts/second-look.sh video-alpha`")
    binding = [a for a in sorted(probes) if probes[a]["lambda_active_share"] >= BINDS_SHARE]
    chosen = binding[0] if binding else max(probes)
    write_json(os.path.join(folder, "video-alpha.json"),
               {"alpha": chosen, "binds_share": BINDS_SHARE, "binds": bool(binding),
                "probes": {f"{a:g}": v for a, v in sorted(probes.items())}})
    print(f"video cell: α {chosen:g} ({'binds' if binding else 'no α tried binds; the largest is used'})")


def mean_std(values, digits):
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.{digits}f} (1)"
    return f"{statistics.mean(values):.{digits}f} ± {statistics.stdev(values):.{digits}f} ({len(values)})"


def paired(runs, baseline, value, higher_is_better, digits=4):
    """Run minus baseline in paired seeds: mean ± std of the differences, and in how many seeds the run is better."""
    base = {r["seed"]: value(r) for r in baseline}
    diffs = [value(r) - base[r["seed"]] for r in runs if r["seed"] in base]
    if not diffs:
        return "-"
    wins = sum((d > 0) if higher_is_better else (d < 0) for d in diffs)
    mean = statistics.mean(diffs)
    spread = f" ± {statistics.stdev(diffs):.{digits}f}" if len(diffs) > 1 else ""
    return f"{mean:+.{digits}f}{spread}, better in {wins} of {len(diffs)}"


def monotone(losses):
    return all(b <= a for a, b in zip(losses, losses[1:]))


def describe(name):
    if name.endswith("-erm"):
        return "ERM"
    m = re.fullmatch(r"(?:d\d+|video)-a([0-9.]+)-(batch|batch-sg)", name)
    return f"α = {m.group(1)}, " + {"batch": "per-batch", "batch-sg": "per-batch, stop-gradient"}[m.group(2)]


def binding_cells(group):
    if "lambda_mean" not in group[0]:
        return ["-", "-"]
    return [mean_std([float(np.max(r["lambda_active_share"])) for r in group], 2),
            mean_std([float(np.max(r["lambda_mean"])) for r in group], 4)]


def layer_lines(names, groups, what, key, digits, first_layer=0):
    lines = ["", f"{what}, layer {first_layer} .. L, mean over seeds:", ""]
    for name in names:
        values = np.mean([r[key] for r in groups[name]], axis=0)
        lines.append(f"- {describe(name)}: " + " ".join(f"{v:.{digits}f}" for v in values))
    return lines


def sweep_value(noise, gamma):
    return lambda r: r["sweeps"][noise][gamma]


def text_section(depth, names, groups):
    erm = groups.get(f"d{depth}-erm", [])
    noises = ("gaussian", "uniform", "discrete")
    lines = [f"### IMDb, depth {depth}", "",
             "| variant | accuracy | Δ accuracy (paired) | " + " | ".join(f"Δ {n} γ=2 (paired)" for n in noises)
             + " | test f_0 | test f_L | monotone | desc. freq. last layer | λ active | mean λ (max layer) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        group = groups[name]
        row = [describe(name), mean_std([r["accuracy"] for r in group], 4)]
        if group is erm:
            row += ["-"] + ["-" for _ in noises]
        else:
            row += [paired(group, erm, lambda r: r["accuracy"], True)]
            row += [paired(group, erm, sweep_value(n, "2"), True) for n in noises]
        row += [mean_std([r["test_layer_loss"][0] for r in group], 3),
                mean_std([r["test_layer_loss"][-1] for r in group], 3),
                f"{sum(monotone(r['test_layer_loss']) for r in group)}/{len(group)}",
                mean_std([r["test_descending_frequency"][-1] for r in group], 3)] + binding_cells(group)
        lines.append("| " + " | ".join(row) + " |")
    gammas = sorted({g for r in erm or groups[names[0]] for g in r["sweeps"]["gaussian"]}, key=float)
    lines += ["", "Accuracy under noise (2,000 test reviews, 3 noise seeds; mean ± std over training seeds). The "
              "sweep scores a 2,000-review subset, so its γ 0 row differs from the table's accuracy above, which is "
              "scored on all 25,000 test reviews; the Δ columns above take γ 2 from this sweep:", "",
              "| noise | γ | " + " | ".join(describe(n) for n in names) + " |",
              "|---|---|" + "---|" * len(names)]
    for noise in noises:
        for gamma in gammas:
            if noise != noises[0] and gamma == "0":
                continue  # γ 0 is the same clean accuracy for every noise
            cells = [mean_std([r["sweeps"][noise][gamma] for r in groups[n] if gamma in r["sweeps"][noise]], 4)
                     for n in names]
            lines.append(f"| {'none' if gamma == '0' else noise} | {gamma} | " + " | ".join(cells) + " |")
    lines += layer_lines(names, groups, "Test loss f_l", "test_layer_loss", 3)
    lines += layer_lines(names, groups, "Descending frequency (share of test samples with loss_l <= loss_{l-1})",
                         "test_descending_frequency", 3, first_layer=1)
    return lines + [""]


def video_section(names, groups, folder):
    erm = groups.get("video-erm", [])
    gammas = sorted({g for r in erm or groups[names[0]] for g in r["sweeps"]["video"]}, key=float)
    shown = [g for g in gammas if float(g) in (1.0, 2.0, 3.0)]
    lines = ["### Video denoising, full size, direct readout", ""]
    probe_path = os.path.join(folder, "video-alpha.json")
    if os.path.exists(probe_path):
        probe = json.load(open(probe_path))
        tried = ", ".join(f"α {a}: λ > 0 in {p['lambda_active_share']:.0%} of rows, mean λ {p['lambda_mean']:.4f}"
                          for a, p in probe["probes"].items())
        first = next(iter(probe["probes"].values()))
        lines += [f"The cell: the smallest α whose λ is positive in at least {probe['binds_share']:.0%} of the metric "
                  f"rows of the second half of training at some layer, in short probes (full-size model, {first['train_clips']:,} clips, "
                  f"{first['epochs']} epoch{'s' * (first['epochs'] != 1)}): {tried}. Chosen: α {probe['alpha']:g}"
                  + ("" if probe["binds"] else " (none of them binds that often; the largest was taken)") + ".", ""]
    lines += ["| variant | test RMSE | Δ RMSE (paired) | "
              + " | ".join(f"RMSE γ={g} | Δ γ={g} (paired)" for g in shown)
              + " | monotone | desc. freq. last layer | λ active | mean λ (max layer) |",
              "|---|---|---|" + "---|---|" * len(shown) + "---|---|---|---|"]
    for name in names:
        group = groups[name]
        row = [describe(name), mean_std([r["accuracy"] for r in group], 4),
               "-" if group is erm else paired(group, erm, lambda r: r["accuracy"], False, 5)]
        for g in shown:
            row += [mean_std([r["sweeps"]["video"][g] for r in group], 4),
                    "-" if group is erm else paired(group, erm, sweep_value("video", g), False, 5)]
        row += [f"{sum(monotone(r['test_layer_loss']) for r in group)}/{len(group)}",
                mean_std([r["test_descending_frequency"][-1] for r in group], 3)] + binding_cells(group)
        lines.append("| " + " | ".join(row) + " |")
    lines += layer_lines(names, groups, "Test loss f_l", "test_layer_loss", 4)
    lines += layer_lines(names, groups, "Descending frequency", "test_descending_frequency", 3, first_layer=1)
    return lines + [""]


def order(name):
    if name.startswith("video"):
        return (1, 0, name != "video-erm", name)
    depth = int(name.split("-")[0][1:])
    return (0, -depth, not name.endswith("-erm"), name)


def sections(folder, runs):
    groups = {}
    for r in runs:
        groups.setdefault(r["name"], []).append(r)
    for group in groups.values():
        group.sort(key=lambda r: r["seed"])
    seeds = sorted({r["seed"] for r in runs})
    text = [r for r in runs if not r["name"].startswith("video")]
    size = ""
    if text:
        config = text[0]["config"]
        limits = [config["data"][key] for key in ("train_limit", "test_limit")]
        train_reviews, test_reviews = ("every" if n == 0 else f"{n:,}" for n in limits)
        epochs = config["train"]["epochs"]
        size = (f"IMDb with {train_reviews} training review{'s' * (limits[0] != 0)} (the whole split is 25,000) and "
                f"{test_reviews} test review{'s' * (limits[1] != 0)}, {epochs} epoch{'s' * (epochs != 1)}, "
                f"width {config['model']['width']}, constant learning rate as in the first look. ")
    lines = ["# Second look (issue 18): the promising cells on the full data, 3 seeds", "",
             "Produced by `bash scripts/second-look.sh video-alpha` and `bash scripts/second-look.sh layerwise` "
             f"(training seeds present: {', '.join(map(str, seeds))}); runs in results/second-look-layerwise. "
             + size + "The first look's three most promising cells (single seeds at 4,000 reviews: depth 8 α = 0.2 "
             "per-batch +0.031, depth 4 α = 0.2 stop-gradient +0.023, depth 4 α = 0.1 per-batch +0.021) against ERM "
             "of the same depth and seed. Every Δ is paired: the run minus ERM of the same seed (same initialization "
             "and data order), as mean ± std over seeds, with the number of seeds in which the cell is better. "
             "Cells: mean ± std (number of seeds). λ active: the largest share, over layers, of metric rows with "
             "λ_l > 0; mean λ: the largest per-layer mean over training.", ""]
    names = sorted(groups, key=order)
    for depth in sorted({-order(n)[1] for n in names if not n.startswith("video")}, reverse=True):
        lines += text_section(depth, [n for n in names if not n.startswith("video") and -order(n)[1] == depth],
                              groups)
    video = [n for n in names if n.startswith("video")]
    if video:
        lines += video_section(video, groups, folder)
    expected = 7 * 3
    if len(runs) < expected:
        lines += [f"In progress: {len(runs)} of {expected} runs finished "
                  "(`bash scripts/second-look.sh layerwise` finishes the rest).", ""]
    notes = os.path.join(folder, "notes.md")
    if os.path.exists(notes):
        lines += ["## Reading the second look", "", open(notes).read().strip(), ""]
    return lines
