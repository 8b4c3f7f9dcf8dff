#!/usr/bin/env python3
# DescentLab example: your own MLP and data. Copyright the DescentLab authors.
# SPDX-License-Identifier: GPL-3.0-or-later (see COPYING at the repository root)
"""A residual MLP for a synthetic regression with a readout per layer, as your own model for DescentLab
(docs/your-model.md).

Writes, into --out-dir:
  mlp.pt           TorchScript: forward(x) -> [B, 4] and layer_outputs(x) -> 4 tensors [B, 4], the readouts after
                   the input embedding (layer 0) and after each of the 3 residual blocks (layer 3 = forward's)
  regression.h5    task "regression": train/x float32 [16384, 16], train/y float32 [16384, 4]; test/x, test/y
                   likewise with 4096 rows

The data is the same whatever --seed (numpy's generator seeded with 53): x ~ N(0, I) in R^16, W ~ N(0, 1/16) of
shape 16 x 4, y = sin(2 x W) + 0.1 noise (so a perfect model's RMSE is 0.1; predicting 0 gives about 0.71). From
nothing to a run of your own model:

    /usr/bin/python3 examples/mlp_regression.py --out-dir runs/ex
    descentlab-cli train --model runs/ex/mlp.pt --data runs/ex/regression.h5 --optimizer horst

The same --seed writes the same files; --train-rows/--test-rows write only the first rows (CI uses 512/256).
"""
import argparse
import os
import pathlib
import sys
from typing import List

# TorchScript writes some constants in Python's string-hash order: a fixed hash seed makes the same --seed write the
# same bytes (the lab records the module's SHA-256). Set before torch loads.
if __name__ == "__main__" and os.environ.get("PYTHONHASHSEED") != "0":
    os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, PYTHONHASHSEED="0"))

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

INPUTS, OUTPUTS, TRAIN_ROWS, TEST_ROWS = 16, 4, 16384, 4096


class Block(torch.nn.Module):
    """h + tanh(W h + b), carrying its own linear readout to the targets. Each block owning its readout keeps
    layer_outputs scriptable on torch 1.13, which cannot index a ModuleList by a loop variable."""

    def __init__(self, width: int, outputs: int):
        super().__init__()
        self.linear = torch.nn.Linear(width, width)
        self.readout = torch.nn.Linear(width, outputs)

    def forward(self, h):
        return h + torch.tanh(self.linear(h))

    def read(self, h):
        return self.readout(h)


class Embedding(torch.nn.Module):
    """The input's embedding (layer 0): a linear map from R^16 to the width, with its readout."""

    def __init__(self, inputs: int, width: int, outputs: int):
        super().__init__()
        self.linear = torch.nn.Linear(inputs, width)
        self.readout = torch.nn.Linear(width, outputs)

    def forward(self, x):
        return self.linear(x)

    def read(self, h):
        return self.readout(h)


class RegressionMLP(torch.nn.Module):
    def __init__(self, inputs=INPUTS, width=64, outputs=OUTPUTS, depth=3):
        super().__init__()
        self.embed = Embedding(inputs, width, outputs)
        self.blocks = torch.nn.ModuleList([Block(width, outputs) for _ in range(depth)])

    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.blocks[-1].read(h)

    @torch.jit.export
    def layer_outputs(self, x) -> List[torch.Tensor]:
        h = self.embed(x)
        outputs = [self.embed.read(h)]
        for block in self.blocks:
            h = block(h)
            outputs.append(block.read(h))
        return outputs


def make_data(train_rows, test_rows):
    """The first rows of the fixed synthetic train and test sets (the whole sets drawn, then cut)."""
    rng = np.random.default_rng(53)
    w = rng.normal(0.0, 1.0 / np.sqrt(INPUTS), size=(INPUTS, OUTPUTS))
    x = rng.normal(size=(TRAIN_ROWS + TEST_ROWS, INPUTS))
    y = np.sin(2.0 * x @ w) + 0.1 * rng.normal(size=(len(x), OUTPUTS))
    x, y = x.astype(np.float32), y.astype(np.float32)
    train = slice(0, TRAIN_ROWS if train_rows is None else min(train_rows, TRAIN_ROWS))
    test = slice(TRAIN_ROWS, TRAIN_ROWS + (TEST_ROWS if test_rows is None else min(test_rows, TEST_ROWS)))
    return {"train": (x[train], y[train]), "test": (x[test], y[test])}


def write_data(path, splits, **attributes):
    with h5py.File(path, "w") as f:
        for key, value in attributes.items():
            f.attrs[key] = value
        for split, arrays in splits.items():
            for key, array in zip(("x", "y"), arrays):
                f.create_dataset(f"{split}/{key}", data=array, chunks=(min(len(array), 1024),) + array.shape[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", default=".", help="folder for mlp.pt and regression.h5 (default: .)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the initial weights (default: 1)")
    parser.add_argument("--train-rows", type=int, help=f"write only the first rows of the {TRAIN_ROWS} training rows")
    parser.add_argument("--test-rows", type=int, help=f"write only the first rows of the {TEST_ROWS} test rows")
    args = parser.parse_args()
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    splits = make_data(args.train_rows, args.test_rows)
    torch.manual_seed(args.seed)
    model = torch.jit.script(RegressionMLP())
    model.save(str(out / "mlp.pt"))
    write_data(out / "regression.h5", splits, task="regression", name="sine-regression")
    parameters = sum(p.numel() for p in model.parameters())
    print(f"wrote {out / 'mlp.pt'} ({parameters} parameters) and {out / 'regression.h5'} "
          f"({len(splits['train'][0])} training and {len(splits['test'][0])} test rows)")


if __name__ == "__main__":
    main()
