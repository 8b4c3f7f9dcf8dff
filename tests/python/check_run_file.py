#!/usr/bin/env python3
"""Reads a run file written by descentlab_write_sample_run with h5py alone, as a Python user would, and checks the
layout documented in docs/run-file.md: groups, attributes, shapes and a few values."""
import json
import os
import sys

# A run's checkpoint tensors are in RUN.h5.checkpoints/ beside it (run file format 5, HDF5 external storage): HDF5
# finds them from the run file's folder, whatever folder this runs in. Read when h5py loads HDF5, so set first.
os.environ.setdefault("HDF5_EXTFILE_PREFIX", "${ORIGIN}")

import h5py  # noqa: E402
import numpy as np


def main(path):
    with h5py.File(path, "r") as run:
        assert run.attrs["format"] == "descentlab-run", run.attrs["format"]
        assert int(run.attrs["format_version"]) == 5
        assert int(run.attrs["log_sequence"]) > 0  # the last run-log record folded in
        config = json.loads(run.attrs["config"])
        assert config["preset"] == "test" and config["layers"] == 3, config
        assert set(run.keys()) == {"metrics", "histograms", "sweeps", "checkpoints"}, set(run.keys())

        loss = run["metrics/loss"]
        assert loss.attrs["kind"] == "scalar" and int(loss.attrs["width"]) == 1
        assert loss["step"].shape == (100,) and loss["value"].shape == (100,)
        assert loss["step"][0] == 1 and loss["step"][-1] == 100
        assert np.isclose(loss["value"][3], 0.5), loss["value"][3]
        assert np.isclose(loss["wall_time"][0], 1.8e9 + 1)

        layers = run["metrics/layer_loss"]
        assert layers.attrs["kind"] == "per_layer" and layers["value"].shape == (100, 3), layers["value"].shape
        assert np.isclose(layers["value"][1, 2], 0.75)

        histogram = run["histograms/global"]
        assert histogram["bin_edges"].shape == (4,) and histogram["counts"].shape == (4, 3)
        assert list(histogram["step"][:]) == [25, 50, 75, 100]
        assert list(histogram["counts"][1]) == [50, 100, 3]

        sweep = run["sweeps/gaussian"]
        assert sweep.attrs["noise"] == "gaussian" and sweep.attrs["metric_name"] == "accuracy"
        assert sweep["metric"].shape == (3, 2) and sweep["layer_loss"].shape == (3, 2, 2)
        assert np.isclose(sweep["metric"][2, 1], 0.65)

        latest = run["checkpoints/latest"]
        assert int(latest.attrs["step"]) == 100 and int(latest.attrs["epoch"]) == 10
        assert json.loads(latest.attrs["extra"])["optimizer"] == "horst"
        weight = latest["model/0.weight"]
        assert weight.shape == (3, 4) and weight.dtype == np.float32 and weight.attrs["dtype"] == "float32"
        assert latest["model/2.bias"].shape == (2,)
        assert latest["optimizer/state.0.step"].shape == () and int(latest["optimizer/state.0.step"][()]) == 100
        assert int(run["checkpoints/best"].attrs["step"]) == 80
    print("ok: h5py read", path)


if __name__ == "__main__":
    main(sys.argv[1])
