#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes a classification data file of ROWS rows of FEATURES float32 features (10 classes: a class prototype plus
noise, so it is learnable) and a small MLP for it, for bench/chunked_data.sh (issue 53 item 3: a data file larger
than memory). The rows are written 65,536 at a time, so the writer's memory stays small whatever ROWS.

    /usr/bin/python3 bench/write_big_data.py OUT_DIR ROWS [FEATURES]   # writes OUT_DIR/big.h5 and OUT_DIR/mlp.pt
"""
import os
import sys

import h5py
import numpy as np
import torch

CLASSES, TEST_ROWS, CHUNK_ROWS, PIECE = 10, 4096, 1024, 65536


def write(out, rows, features):
    generator = np.random.default_rng(53)
    prototypes = generator.standard_normal((CLASSES, features)).astype(np.float32)
    with h5py.File(os.path.join(out, "big.h5"), "w") as f:
        f.attrs["task"] = "classification"
        f.attrs["classes"] = CLASSES
        f.attrs["name"] = f"prototypes ({rows} x {features})"
        for split, n in (("train", rows), ("test", TEST_ROWS)):
            x = f.create_dataset(f"{split}/x", (n, features), dtype="float32", chunks=(min(n, CHUNK_ROWS), features))
            y = f.create_dataset(f"{split}/y", (n,), dtype="int64", chunks=(min(n, CHUNK_ROWS),))
            for first in range(0, n, PIECE):
                count = min(PIECE, n - first)
                labels = generator.integers(0, CLASSES, count)
                noise = generator.standard_normal((count, features), dtype=np.float32) * 2.0
                x[first:first + count] = prototypes[labels] + noise
                y[first:first + count] = labels
    torch.manual_seed(53)
    mlp = torch.nn.Sequential(torch.nn.Linear(features, 256), torch.nn.ReLU(), torch.nn.Linear(256, CLASSES))
    torch.jit.script(mlp).save(os.path.join(out, "mlp.pt"))


if __name__ == "__main__":
    write(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 784)
