#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the TorchScript fixtures of tests/test_script_model.cpp into OUT (issue 53): modules a user could bring,
good and bad. Run with Debian's python3-torch: /usr/bin/python3 make_script_models.py OUT"""
import json
import os

import h5py
import sys
import zipfile

import torch


class Blocks(torch.nn.Module):
    """Two linear blocks with a readout after the input and after each block; dropout shows train/eval."""

    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 8), torch.nn.Linear(8, 8)])
        self.stem_readout = torch.nn.Linear(4, 3)
        self.readouts = torch.nn.ModuleList([torch.nn.Linear(8, 3), torch.nn.Linear(8, 3)])
        self.norm = torch.nn.BatchNorm1d(8)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.layer_outputs(x)[-1]

    @torch.jit.export
    def layer_outputs(self, x):
        outputs = [self.stem_readout(x)]
        h = x
        for block, readout in zip(self.blocks, self.readouts):
            h = self.drop(torch.relu(self.norm(block(h))))
            outputs.append(readout(h))
        return outputs


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.layer(x)


class NotFinite(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.layer(x) * float("nan")


def write_data(path, classes, rows=64, test_rows=32, chunk_rows=16):
    """Four features; the label is which of `classes` bins the first feature falls in (learnable)."""
    generator = torch.Generator().manual_seed(11)
    with h5py.File(path, "w") as f:
        f.attrs["task"] = "classification"
        f.attrs["classes"] = classes
        for split, n in (("train", rows), ("test", test_rows)):
            x = torch.randn(n, 4, generator=generator)
            y = torch.bucketize(x[:, 0].contiguous(), torch.linspace(-1, 1, classes - 1)).clamp(max=classes - 1)
            f.create_dataset(split + "/x", data=x.numpy(), chunks=(min(n, chunk_rows), 4))
            f.create_dataset(split + "/y", data=y.numpy(), chunks=(min(n, chunk_rows),))


class Raising(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 3)

    def forward(self, x):
        if x.size(1) != 5:
            raise ValueError("this module wants 5 features, got " + str(x.size(1)))
        return self.layer(x)


class WantsCuda(torch.nn.Module):
    """Written for a GPU: it moves its input to CUDA whatever device it runs on."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.layer(x.to(torch.device("cuda"))).cpu()


def saved_on_cuda(source_path, target_path):
    """The module at source_path as a GPU machine saves it: every tensor's storage located on cuda:0 (TorchScript's
    pickler writes the location as a BINUNICODE string)."""
    cpu = b"X\x03\x00\x00\x00cpu"
    cuda = b"X\x06\x00\x00\x00cuda:0"
    moved = 0
    with zipfile.ZipFile(source_path) as source, zipfile.ZipFile(target_path, "w", zipfile.ZIP_STORED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename.endswith(".pkl"):
                moved += data.count(cpu)
                data = data.replace(cpu, cuda)
            target.writestr(item, data)
    assert moved > 0, "no tensor location found to move"


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(7)
    blocks = Blocks()
    blocks.eval()
    scripted = torch.jit.script(blocks)
    scripted.save(os.path.join(out, "blocks.pt"))
    x = torch.arange(8, dtype=torch.float32).reshape(2, 4) / 8
    with torch.no_grad():
        expected = {"input": x.flatten().tolist(), "output": scripted(x).flatten().tolist(),
                    "parameters": [name for name, _ in blocks.named_parameters()],
                    "buffers": [name for name, _ in blocks.named_buffers()]}
    with open(os.path.join(out, "blocks.json"), "w") as f:
        json.dump(expected, f)
    torch.jit.script(Plain()).save(os.path.join(out, "plain.pt"))
    torch.jit.script(Raising()).save(os.path.join(out, "raising.pt"))
    torch.jit.script(NotFinite()).save(os.path.join(out, "not_finite.pt"))
    torch.jit.script(Plain().double()).save(os.path.join(out, "double.pt"))  # float64 weights
    torch.jit.script(WantsCuda()).save(os.path.join(out, "wants_cuda.pt"))
    saved_on_cuda(os.path.join(out, "blocks.pt"), os.path.join(out, "blocks_cuda.pt"))
    write_data(os.path.join(out, "three.h5"), 3)
    write_data(os.path.join(out, "five.h5"), 5)
    # 60,000 training rows (1.4 MiB as the lab holds them): more than data.memory_mb = 1 lets it hold at once.
    write_data(os.path.join(out, "big.h5"), 3, rows=60000, test_rows=2000, chunk_rows=1000)
    torch.save(Plain().state_dict(), os.path.join(out, "state_dict.pt"))
    with open(os.path.join(out, "text.pt"), "w") as f:
        f.write("not a model\n")
    # The plain module as a newer PyTorch would write it: its archive's file format version raised.
    with zipfile.ZipFile(os.path.join(out, "plain.pt")) as source, \
            zipfile.ZipFile(os.path.join(out, "newer.pt"), "w", zipfile.ZIP_STORED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename.endswith("/version") or item.filename.endswith("/.data/version"):
                data = b"99\n"
            target.writestr(item, data)


if __name__ == "__main__":
    main(sys.argv[1])
