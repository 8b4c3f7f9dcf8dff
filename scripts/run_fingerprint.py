#!/usr/bin/env python3
"""Fingerprints what a run file holds that must not change when the code is only reorganised: every metric
series' steps and values (bit for bit, as SHA-256 of the raw arrays), every histogram's steps and counts, every
sweep, and every checkpoint's model tensors, λ and step. Left out on purpose: wall times, the throughput series
(both are clocks), the live frontier's seconds and the creation stamps. Used by scripts/same-results.sh.

    python3 scripts/run_fingerprint.py RUN.h5 [SUMMARY.json] > FINGERPRINT.json

SUMMARY.json, when given, is `train --json`'s output; its fields are kept except timings and the run's path."""
import hashlib
import json
import os
import sys

# A run's checkpoint tensors are in RUN.h5.checkpoints/ beside it (run file format 5, HDF5 external storage): HDF5
# finds them from the run file's folder, whatever folder this runs in. Read when h5py loads HDF5, so set first.
os.environ.setdefault("HDF5_EXTFILE_PREFIX", "${ORIGIN}")

import h5py  # noqa: E402
import numpy as np

CLOCKS = {"throughput"}
SUMMARY_CLOCKS = {"seconds", "steps_per_second", "run", "run_file", "memory"}  # run_file, memory: measurements


def digest(*arrays):
    sha = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(array)
        sha.update(str(array.dtype).encode() + str(array.shape).encode())
        sha.update(array.tobytes())
    return sha.hexdigest()[:24]


def group_digests(group, names):
    return {name: digest(*(group[name][key][()] for key in names if key in group[name])) for name in sorted(group)}


def fingerprint(path):
    out = {}
    with h5py.File(path, "r") as run:
        out["config"] = json.loads(run.attrs["config"])
        metrics = run.get("metrics", {})
        out["metrics"] = {
            name: {"rows": int(metrics[name]["step"].shape[0]),
                   "data": digest(metrics[name]["step"][()], metrics[name]["value"][()])}
            for name in sorted(metrics) if name not in CLOCKS
        }
        out["histograms"] = group_digests(run.get("histograms", {}), ("bin_edges", "step", "counts"))
        out["sweeps"] = group_digests(run.get("sweeps", {}), ("gamma", "seeds", "metric", "layer_loss"))
        checkpoints = {}
        for label, checkpoint in sorted(run.get("checkpoints", {}).items()):
            entry = {"step": int(checkpoint.attrs["step"]), "epoch": int(checkpoint.attrs["epoch"])}
            for section in ("model", "dual", "masks", "data"):
                if section in checkpoint:
                    entry[section] = digest(*(checkpoint[section][name][()] for name in sorted(checkpoint[section])))
            extra = json.loads(checkpoint.attrs.get("extra", "{}") or "{}")
            entry["best_metric"] = extra.get("best_metric")
            checkpoints[label] = entry
        out["checkpoints"] = checkpoints
    return out


def main():
    result = {"run": fingerprint(sys.argv[1])}
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as file:
            summary = json.load(file)
        result["summary"] = {key: value for key, value in summary.items() if key not in SUMMARY_CLOCKS}
        frontier = result["summary"].get("frontier")
        if isinstance(frontier, dict):  # the live frontier's own time is a clock too (its count is kept)
            result["summary"]["frontier"] = {k: v for k, v in frontier.items() if k != "seconds"}
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
