#!/usr/bin/env python3
"""Checks that two run files hold nearly the same trained model and training curve: the data-parallel equivalence
(N processes with per-process batch B against one process with batch N*B) holds up to floating-point reduction
order, not bitwise. Every metric row (steps equal; values within --rtol/--atol), every model tensor within
--weights-atol, and the dual variables and masks when present.
Usage: compare_runs_close.py A.h5 B.h5 [--rtol R] [--atol A] [--weights-atol W]"""
import argparse
import os

# A run's checkpoint tensors are in RUN.h5.checkpoints/ beside it (run file format 5, HDF5 external storage): HDF5
# finds them from the run file's folder, whatever folder this runs in. Read when h5py loads HDF5, so set first.
os.environ.setdefault("HDF5_EXTFILE_PREFIX", "${ORIGIN}")

import h5py  # noqa: E402
import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--atol", type=float, default=1e-6)
    parser.add_argument("--weights-atol", type=float, default=5e-3)
    args = parser.parse_args()
    worst = {}
    with h5py.File(args.a, "r") as a, h5py.File(args.b, "r") as b:
        assert int(a["checkpoints/latest"].attrs["step"]) == int(b["checkpoints/latest"].attrs["step"]), "steps differ"
        for section in ("model", "dual", "masks"):
            in_a = section in a["checkpoints/latest"]
            assert in_a == (section in b["checkpoints/latest"]), f"checkpoints/latest/{section} in only one run"
            if not in_a:
                continue
            for name in a[f"checkpoints/latest/{section}"].keys():
                x = a[f"checkpoints/latest/{section}/{name}"][()]
                y = b[f"checkpoints/latest/{section}/{name}"][()]
                assert x.shape == y.shape, f"{section}/{name}: {x.shape} vs {y.shape}"
                if section == "masks":
                    agree = float(np.mean(x == y))
                    assert agree >= 0.99, f"masks/{name}: only {agree:.3f} of the entries agree"
                    continue
                d = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))) if x.size else 0.0
                worst[f"{section}/{name}"] = d
                assert d <= args.weights_atol, f"{section}/{name} differs by {d:g} (> {args.weights_atol:g})"
        assert sorted(a["metrics"].keys()) == sorted(b["metrics"].keys()), "different metric series"
        for name in a["metrics"].keys():
            if name == "throughput":
                continue  # samples per second: a clock
            sa, sb = a[f"metrics/{name}/step"][()], b[f"metrics/{name}/step"][()]
            assert np.array_equal(sa, sb), f"metrics/{name}: rows at different steps"
            x, y = a[f"metrics/{name}/value"][()], b[f"metrics/{name}/value"][()]
            close = np.isclose(x, y, rtol=args.rtol, atol=args.atol, equal_nan=True)
            d = float(np.max(np.abs(x - y))) if x.size else 0.0
            worst[f"metrics/{name}"] = d
            assert close.all(), f"metrics/{name} differs by up to {d:g} (rtol {args.rtol:g}, atol {args.atol:g})"
    top = sorted(worst.items(), key=lambda item: -item[1])[:3]
    print("ok: equal within tolerance:", args.a, args.b, "largest differences:",
          ", ".join(f"{k} {v:.2g}" for k, v in top))


if __name__ == "__main__":
    main()
