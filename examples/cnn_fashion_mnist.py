#!/usr/bin/env python3
# DescentLab example: your own CNN and data. Copyright the DescentLab authors.
# SPDX-License-Identifier: GPL-3.0-or-later (see COPYING at the repository root)
"""A small CNN for Fashion-MNIST with a readout per block, as your own model for DescentLab (docs/your-model.md).

Writes, into --out-dir:
  cnn.pt             TorchScript: forward(x) -> logits [B, 10] and layer_outputs(x) -> 4 tensors [B, 10], the
                     readouts after the stem (layer 0) and after each of the 3 conv blocks (layer 3 = forward's)
  fashion-mnist.h5   task "classification", classes 10: train/x float32 [60000, 1, 28, 28] in [0, 1], train/y
                     int64 [60000]; test/x, test/y likewise with 10000 rows

from the gzipped IDX files in the lab's dataset cache ($DESCENTLAB_DATA, else datasets/cache in this source tree,
else ~/.local/share/descentlab/datasets). From nothing to a run of your own model:

    /usr/bin/python3 examples/cnn_fashion_mnist.py --out-dir runs/ex
    descentlab-cli train --model runs/ex/cnn.pt --data runs/ex/fashion-mnist.h5 --optimizer horst

The same --seed writes the same files; --train-rows/--test-rows write only the first rows (CI uses 512/256).
"""
import argparse
import gzip
import os
import pathlib
import struct
import sys
from typing import List

# TorchScript writes some constants in Python's string-hash order: a fixed hash seed makes the same --seed write the
# same bytes (the lab records the module's SHA-256). Set before torch loads.
if __name__ == "__main__" and os.environ.get("PYTHONHASHSEED") != "0":
    os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, PYTHONHASHSEED="0"))

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Block(torch.nn.Module):
    """A 3x3 convolution and ReLU (then a 2x2 max-pool when `pool`), carrying its own readout: global average
    pooling and a linear head to the classes. Each block owning its readout keeps layer_outputs scriptable on torch
    1.13, which cannot index a ModuleList by a loop variable nor slice one inside zip."""

    def __init__(self, channels_in: int, channels_out: int, classes: int, pool: bool):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels_in, channels_out, 3, padding=1)
        self.readout = torch.nn.Linear(channels_out, classes)
        self.pool = pool

    def forward(self, h):
        h = torch.relu(self.conv(h))
        return F.max_pool2d(h, 2) if self.pool else h

    def read(self, h):
        return self.readout(h.mean(dim=(2, 3)))


class FashionCNN(torch.nn.Module):
    def __init__(self, widths=(16, 32, 64, 128), classes=10):
        super().__init__()
        self.stem = Block(1, widths[0], classes, pool=False)  # the input's embedding: layer 0
        self.blocks = torch.nn.ModuleList(
            [Block(a, b, classes, pool=True) for a, b in zip(widths[:-1], widths[1:])])  # 28 -> 14 -> 7 -> 3

    def forward(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = block(h)
        return self.blocks[-1].read(h)

    @torch.jit.export
    def layer_outputs(self, x) -> List[torch.Tensor]:
        h = self.stem(x)
        outputs = [self.stem.read(h)]
        for block in self.blocks:
            h = block(h)
            outputs.append(block.read(h))
        return outputs


def data_folders():
    """Where the lab keeps its datasets, in the order it looks."""
    if os.environ.get("DESCENTLAB_DATA"):
        return [pathlib.Path(os.environ["DESCENTLAB_DATA"])]
    share = pathlib.Path(os.environ.get("XDG_DATA_HOME") or pathlib.Path.home() / ".local/share")
    return [pathlib.Path(__file__).resolve().parent.parent / "datasets/cache", share / "descentlab/datasets"]


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def read_idx(path, rows):
    """The first `rows` (all when None) of a gzipped IDX file of unsigned bytes, as a numpy array."""
    with gzip.open(path, "rb") as f:
        magic, count = struct.unpack(">II", f.read(8))
        if magic >> 8 != 0x08:
            fail(f"{path}: not an IDX file of unsigned bytes (magic {magic:#x}); re-fetch the dataset")
        shape = struct.unpack(f">{(magic & 0xFF) - 1}I", f.read(4 * ((magic & 0xFF) - 1)))
        count = count if rows is None else min(rows, count)
        size = count * int(np.prod(shape, dtype=np.int64))
        data = np.frombuffer(f.read(size), np.uint8)
    if data.size != size:
        fail(f"{path}: cut short ({data.size} of {size} bytes); re-fetch the dataset")
    return data.reshape((count,) + shape)


def load_fashion_mnist(train_rows, test_rows):
    names = [f"{split}-{kind}-ubyte.gz" for split in ("train", "t10k") for kind in ("images-idx3", "labels-idx1")]
    for folder in data_folders():
        if all((folder / "fashion-mnist" / name).is_file() for name in names):
            break
    else:
        fail("Fashion-MNIST not found in " + " or ".join(str(f / "fashion-mnist") for f in data_folders()) +
             ": fetch it with `descentlab-cli data fetch fashion-mnist` (installed lab) or `bash scripts/lab.sh "
             "setup` (source tree), or set DESCENTLAB_DATA to the folder holding it")
    splits = {}
    for split, prefix, rows in (("train", "train", train_rows), ("test", "t10k", test_rows)):
        images = read_idx(folder / "fashion-mnist" / f"{prefix}-images-idx3-ubyte.gz", rows)
        labels = read_idx(folder / "fashion-mnist" / f"{prefix}-labels-idx1-ubyte.gz", rows)
        x = (images.astype(np.float32) / np.float32(255.0))[:, None, :, :]  # [N, 1, 28, 28]
        splits[split] = (x, labels.astype(np.int64))
    return splits


def write_data(path, splits, **attributes):
    with h5py.File(path, "w") as f:
        for key, value in attributes.items():
            f.attrs[key] = value
        for split, arrays in splits.items():
            for key, array in zip(("x", "y"), arrays):
                f.create_dataset(f"{split}/{key}", data=array, chunks=(min(len(array), 1024),) + array.shape[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", default=".", help="folder for cnn.pt and fashion-mnist.h5 (default: .)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the initial weights (default: 1)")
    parser.add_argument("--train-rows", type=int, help="write only the first rows of the training set")
    parser.add_argument("--test-rows", type=int, help="write only the first rows of the test set")
    args = parser.parse_args()
    splits = load_fashion_mnist(args.train_rows, args.test_rows)
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    model = torch.jit.script(FashionCNN())
    model.save(str(out / "cnn.pt"))
    write_data(out / "fashion-mnist.h5", splits, task="classification", classes=np.int64(10), name="fashion-mnist")
    parameters = sum(p.numel() for p in model.parameters())
    print(f"wrote {out / 'cnn.pt'} ({parameters} parameters) and {out / 'fashion-mnist.h5'} "
          f"({len(splits['train'][1])} training and {len(splits['test'][1])} test images)")


if __name__ == "__main__":
    main()
