#!/usr/bin/env python3
# DescentLab example: your own character model and data. Copyright the DescentLab authors.
# SPDX-License-Identifier: GPL-3.0-or-later (see COPYING at the repository root)
"""A small causal-convolution character model for next-token prediction on Moby Dick, with a readout per block, as
your own model for DescentLab (docs/your-model.md).

Writes, into --out-dir:
  char.pt        TorchScript: forward(x) -> logits [B, 64, V] and layer_outputs(x) -> 4 tensors [B, 64, V], the
                 readouts after the character embedding (layer 0) and after each of the 3 causal convolution
                 blocks (layer 3 = forward's); position t sees characters t-14..t only
  moby-dick.h5   task "next-token", vocabulary V = 82: train/x, train/y int64 [16750, 64]; test/x, test/y int64
                 [1861, 64]; attribute `characters`, the character of each token 1..V-1

from the chapter files in the lab's dataset cache ($DESCENTLAB_DATA, else datasets/cache in this source tree, else
~/.local/share/descentlab/datasets), read as the lab reads them: chapter_1.txt, chapter_2.txt, ..., epilogue.txt,
joined by one blank line; the first 90 % of the characters train, the rest test; token 0 is a character not seen in
training, tokens 1..V-1 the training text's characters in code-point order (the built-in Moby Dick preset's
vocabulary). Rows are non-overlapping windows of T = 64: x = text[i:i+64], y = text[i+1:i+65]. From nothing to a run
of your own model:

    /usr/bin/python3 examples/char_model.py --out-dir runs/ex
    descentlab-cli train --model runs/ex/char.pt --data runs/ex/moby-dick.h5 --optimizer horst

The same --seed writes the same files; --train-rows/--test-rows write only the first rows (CI uses 512/256).
"""
import argparse
import os
import pathlib
import re
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

WINDOW = 64


class CausalBlock(torch.nn.Module):
    """h + mix(relu(conv(h))) on [B, width, T], the dilated kernel-3 convolution padded on the left only (position t
    sees nothing after t), carrying its own readout to the vocabulary. Each block owning its readout keeps
    layer_outputs scriptable on torch 1.13, which cannot index a ModuleList by a loop variable."""

    def __init__(self, width: int, vocabulary: int, dilation: int):
        super().__init__()
        self.pad = 2 * dilation
        self.conv = torch.nn.Conv1d(width, width, 3, dilation=dilation)
        self.mix = torch.nn.Conv1d(width, width, 1)
        self.readout = torch.nn.Linear(width, vocabulary)

    def forward(self, h):
        return h + self.mix(torch.relu(self.conv(F.pad(h, [self.pad, 0]))))

    def read(self, h):
        return self.readout(h.transpose(1, 2))  # [B, T, V]


class CharEmbedding(torch.nn.Module):
    """The tokens' embedding (layer 0): [B, T] integers to [B, width, T], with its readout."""

    def __init__(self, vocabulary: int, width: int):
        super().__init__()
        self.table = torch.nn.Embedding(vocabulary, width)
        self.readout = torch.nn.Linear(width, vocabulary)

    def forward(self, x):
        return self.table(x).transpose(1, 2)

    def read(self, h):
        return self.readout(h.transpose(1, 2))


class CharModel(torch.nn.Module):
    def __init__(self, vocabulary: int, width=64, dilations=(1, 2, 4)):
        super().__init__()
        self.embed = CharEmbedding(vocabulary, width)
        self.blocks = torch.nn.ModuleList([CausalBlock(width, vocabulary, d) for d in dilations])

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


def data_folders():
    """Where the lab keeps its datasets, in the order it looks."""
    if os.environ.get("DESCENTLAB_DATA"):
        return [pathlib.Path(os.environ["DESCENTLAB_DATA"])]
    share = pathlib.Path(os.environ.get("XDG_DATA_HOME") or pathlib.Path.home() / ".local/share")
    return [pathlib.Path(__file__).resolve().parent.parent / "datasets/cache", share / "descentlab/datasets"]


def read_book():
    """The chapters joined as the lab joins them (core/data/corpus.h)."""
    folder = next((f / "moby-dick" for f in data_folders() if (f / "moby-dick/chapter_1.txt").is_file()), None)
    if folder is None:
        print("Moby Dick not found in " + " or ".join(str(f / "moby-dick") for f in data_folders()) +
              ": fetch it with `descentlab-cli data fetch moby-dick` (installed lab) or `bash scripts/lab.sh setup` "
              "(source tree), or set DESCENTLAB_DATA to the folder holding it", file=sys.stderr)
        sys.exit(2)
    last = max(int(m.group(1)) for p in folder.iterdir() if (m := re.fullmatch(r"chapter_(\d+)\.txt", p.name)))
    paths = [folder / f"chapter_{k}.txt" for k in range(1, last + 1)] + list(folder.glob("epilogue.txt"))
    text = ""
    for path in paths:
        text = (text.rstrip("\n") + "\n\n" if text else "") + path.read_text(encoding="utf-8-sig")
    return text


def windows(ids, rows):
    """Non-overlapping windows: x = ids[i:i+T], y = ids[i+1:i+T+1] for i = 0, T, 2T, ..."""
    n = (len(ids) - 1) // WINDOW if rows is None else min(rows, (len(ids) - 1) // WINDOW)
    return ids[:n * WINDOW].reshape(n, WINDOW), ids[1:n * WINDOW + 1].reshape(n, WINDOW)


def write_data(path, splits, **attributes):
    with h5py.File(path, "w") as f:
        for key, value in attributes.items():
            f.attrs[key] = value
        for split, arrays in splits.items():
            for key, array in zip(("x", "y"), arrays):
                f.create_dataset(f"{split}/{key}", data=array, chunks=(min(len(array), 1024),) + array.shape[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", default=".", help="folder for char.pt and moby-dick.h5 (default: .)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the initial weights (default: 1)")
    parser.add_argument("--train-rows", type=int, help="write only the first windows of the training text")
    parser.add_argument("--test-rows", type=int, help="write only the first windows of the test text")
    args = parser.parse_args()

    text = read_book()
    cut = int(len(text) * 0.9)
    characters = "".join(sorted(set(text[:cut])))
    token = {c: i + 1 for i, c in enumerate(characters)}  # 0: a character not seen in training
    ids = np.array([token.get(c, 0) for c in text], dtype=np.int64)
    splits = {"train": windows(ids[:cut], args.train_rows), "test": windows(ids[cut:], args.test_rows)}
    vocabulary = len(characters) + 1
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(args.seed)
    model = torch.jit.script(CharModel(vocabulary))
    model.save(str(out / "char.pt"))
    write_data(out / "moby-dick.h5", splits, task="next-token", vocabulary=np.int64(vocabulary), name="moby-dick",
               characters=characters)
    parameters = sum(p.numel() for p in model.parameters())
    print(f"wrote {out / 'char.pt'} ({parameters} parameters, vocabulary {vocabulary}) and {out / 'moby-dick.h5'} "
          f"({len(splits['train'][0])} training and {len(splits['test'][0])} test windows of {WINDOW})")


if __name__ == "__main__":
    main()
