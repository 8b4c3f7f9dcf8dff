#!/usr/bin/env python3
"""`descentlab-cli compare FOLDER --group-by optimizer.name --pair ... --json` against scripts/summarize_horst.py on
the same generated run files (tests/study_samples.h): the paired wins, the mean and standard deviation of the paired
differences, each group's mean ± std cell, and the HORST − AdamW row of the compression table must agree.

    python3 check_study.py FOLDER DESCENTLAB_CLI"""
import glob
import json
import os
import statistics
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import summarize_horst  # noqa: E402  (the project's own summary script, as it writes docs/results-horst.md)

folder, cli = sys.argv[1], sys.argv[2]
problems = []


def check(condition, message):
    if not condition:
        problems.append(message)


# The runs as summarize_horst.summarize_one reads them: config, final test accuracy, compressions.
runs = {}
for path in sorted(glob.glob(os.path.join(folder, "*", "*.h5"))):
    with h5py.File(path, "r") as run:
        config = json.loads(run.attrs["config"])
        values = run["metrics/test_accuracy/value"][()].tolist()
        before = run["metrics/test_accuracy_before_compression/value"][()].tolist()
        after = run["metrics/test_accuracy_after_compression/value"][()].tolist()
    runs.setdefault(config["optimizer"]["name"], []).append(
        {"config": config, "value": values[-1],
         "compressions": [{"before": b, "after": a} for b, a in zip(before, after)]})

command = [cli, "compare", folder, "--group-by", "optimizer.name", "--pair", "optimizer.name=horst",
           "optimizer.name=adamw", "--json"]
result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
check(result["runs"] == 12, f"runs: {result['runs']}, expected 12")
check(result["skipped_files"] == 2, f"skipped_files: {result['skipped_files']}, expected 2")
check(result["metric"] == "test_accuracy", f"metric: {result['metric']}")

# Each group's final accuracy, as summarize_horst.cell writes it.
for group in result["groups"]:
    kind = group["values"]["optimizer.name"]
    m = group["metric"]
    ours = f"{m['mean']:.4f} ± {m['std']:.4f} ({m['count']})"
    theirs = summarize_horst.cell([r["value"] for r in runs[kind]])
    check(ours == theirs, f"group {kind}: compare gives {ours}, summarize_horst {theirs}")

# The paired columns: wins, and the paired differences' mean and standard deviation.
pair = result["pair"]
theirs = summarize_horst.paired_wins(runs["horst"], runs["adamw"], lambda r: r["value"], "accuracy")
check(pair["wins_text"] == theirs, f"paired wins: compare gives {pair['wins_text']}, summarize_horst {theirs}")
adamw = {summarize_horst.seed_of(r): r for r in runs["adamw"]}
differences = [r["value"] - adamw[summarize_horst.seed_of(r)]["value"] for r in runs["horst"]]
check(abs(pair["mean_difference"] - statistics.mean(differences)) < 1e-12,
      f"mean difference {pair['mean_difference']} vs {statistics.mean(differences)}")
check(abs(pair["std_difference"] - statistics.stdev(differences)) < 1e-12,
      f"std of differences {pair['std_difference']} vs {statistics.stdev(differences)}")

# The compression table's "HORST − AdamW" row: "+0.0100 (4/4) → +0.0200 (4/4)" per compression.
table = summarize_horst.compression_table({0.9: runs}, ("adamw", "horst"))
row = [line for line in table if line.startswith("| 90% | HORST ")]
check(len(row) == 1, f"summarize_horst wrote no HORST − AdamW row: {table}")
if row:
    theirs = [c.strip() for c in row[0].strip("|").split("|")[2:]]
    by = {(e["compression"], e["when"]): e for e in pair["compressions"]}
    ours = []
    for k in range(1, len(theirs) + 1):
        parts = [f"{by[(k, w)]['mean_difference']:+.4f} ({by[(k, w)]['wins']}/{by[(k, w)]['of']})"
                 for w in ("before", "after")]
        ours.append(" → ".join(parts))
    check(ours == theirs, f"compressions: compare gives {ours}, summarize_horst {theirs}")

# Issue 52 item 7: options that match nothing refuse (exit 2), naming the key, metric, folder or group and what exists;
# they answered with numbers (one "(none)" group, a mean of 0.0, exit 0).
def refused(arguments, expected):
    done = subprocess.run([cli, "compare", *arguments], capture_output=True, text=True)
    check(done.returncode == 2, f"compare {' '.join(arguments)}: exit {done.returncode}, expected 2 ({done.stderr})")
    for text in expected:
        check(text in done.stderr, f"compare {' '.join(arguments)}: {text!r} not in {done.stderr!r}")


refused([folder, "--group-by", "nosuch.key"], ["--group-by nosuch.key: no run has this configuration key",
                                                "optimizer.name"])
refused([folder, "--group-by", "train"], ["--group-by train: a section of the configuration", "train.seed"])
refused([folder, "--metric", "nosuch"], ["--metric nosuch: no run has this series", "test_accuracy"])
refused([os.path.join(folder, "nosuch")], [os.path.join(folder, "nosuch") + ": no such run file or folder"])
refused([folder, "--group-by", "optimizer.name", "--pair", "optimizer.name=horst", "optimizer.name=horst"],
        ["both select the group name horst"])
refused([folder, "--group-by", "train.seed", "--pair", "train.seed=0", "train.seed=1"],
        ["have no seed in common", "seeds: 0; and 1"])

# A run never evaluated is said so and left out of its group's statistics (it showed as 0.0000 ± 0.0000).
import shutil  # noqa: E402
import tempfile  # noqa: E402
with tempfile.TemporaryDirectory() as scratch:
    horst = sorted(glob.glob(os.path.join(folder, "horst", "*.h5")))[:2]
    copies = [shutil.copy(path, os.path.join(scratch, os.path.basename(path))) for path in horst]
    with h5py.File(copies[1], "r+") as run:
        del run["metrics/test_accuracy"]
    done = json.loads(subprocess.run([cli, "compare", scratch, "--group-by", "optimizer.name", "--metric",
                                      "test_accuracy", "--json"], check=True, capture_output=True, text=True).stdout)
    group = done["groups"][0]
    with h5py.File(copies[0], "r") as run:
        kept = run["metrics/test_accuracy/value"][()].tolist()[-1]
    check(group["metric"]["count"] == 1 and group["metric"]["mean"] == kept,
          f"a never-evaluated run entered the statistics: {group['metric']}")
    check(group.get("not_evaluated") == [copies[1]], f"not_evaluated: {group.get('not_evaluated')}")
    text = subprocess.run([cli, "compare", scratch, "--group-by", "optimizer.name", "--metric", "test_accuracy"],
                          check=True, capture_output=True, text=True).stdout
    check("1 not evaluated" in text, f"the table does not say a run was not evaluated: {text}")
    with h5py.File(copies[0], "r+") as run:
        del run["metrics/test_accuracy"]
    text = subprocess.run([cli, "compare", scratch, "--group-by", "optimizer.name", "--metric", "test_accuracy"],
                          capture_output=True, text=True)
    check(text.returncode == 2 and "no run has this series" in text.stderr,
          f"a metric no run has any more was not refused: {text.stderr}")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"compare and summarize_horst agree on {len(result['groups'])} groups and {pair['of']} paired seeds")
