#!/usr/bin/env python3
"""Checks that two run files hold the same trained model and the same training curve, bitwise: every tensor of
checkpoints/latest/model and the step and value of every metric (wall times differ, of course).
Usage: compare_runs.py A.h5 B.h5"""
import os
import sys

# A run's checkpoint tensors are in RUN.h5.checkpoints/ beside it (run file format 5, HDF5 external storage): HDF5
# finds them from the run file's folder, whatever folder this runs in. Read when h5py loads HDF5, so set first.
os.environ.setdefault("HDF5_EXTFILE_PREFIX", "${ORIGIN}")

import h5py  # noqa: E402
import numpy as np


def main(path_a, path_b):
    with h5py.File(path_a, "r") as a, h5py.File(path_b, "r") as b:
        for section in ("model", "dual", "masks", "previous_masks"):
            in_a = section in a["checkpoints/latest"]
            assert in_a == (section in b["checkpoints/latest"]), f"checkpoints/latest/{section} in only one run"
            if not in_a:
                continue
            names_a = sorted(a[f"checkpoints/latest/{section}"].keys())
            names_b = sorted(b[f"checkpoints/latest/{section}"].keys())
            assert names_a == names_b, (section, names_a, names_b)
            for name in names_a:
                x = a[f"checkpoints/latest/{section}/{name}"][()]
                y = b[f"checkpoints/latest/{section}/{name}"][()]
                assert x.shape == y.shape and np.array_equal(x, y), f"{section}/{name} differs"
        assert int(a["checkpoints/latest"].attrs["step"]) == int(b["checkpoints/latest"].attrs["step"])
        assert sorted(a["metrics"].keys()) == sorted(b["metrics"].keys())
        for name in a["metrics"].keys():
            for field in ("step", "value"):
                x = a[f"metrics/{name}/{field}"][()]
                y = b[f"metrics/{name}/{field}"][()]
                if name == "throughput" and field == "value":
                    continue  # samples per second depend on the machine's load
                assert x.shape == y.shape, f"metrics/{name}/{field}: {x.shape} vs {y.shape}"
                assert np.array_equal(x, y), f"metrics/{name}/{field} differs"
    print("ok: identical models and curves:", path_a, path_b)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
