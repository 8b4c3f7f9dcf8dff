#!/usr/bin/env python3
# DescentLab example: a built-in model as your own. Copyright the DescentLab authors.
# SPDX-License-Identifier: GPL-3.0-or-later (see COPYING at the repository root)
"""The lab's own ViT (presets vit-adamw, vit-ham, vit-horst) as a TorchScript module, with a run's weights.

The same engine, shown (issue 53 item 7): a run's ViT written as a module of your own, trained from the same initial
weights on the same data in the same order, gives the built-in run's loss curve. From the repository root:

    descentlab-cli train --preset vit-adamw --max-steps 0 --out runs/vit-init.h5     # the initial weights, no step
    descentlab-cli data export fashion-mnist runs/vit-data.h5 --preset vit-adamw --size quick   # its data, as fed
    /usr/bin/python3 examples/export_builtin_vit.py runs/vit-init.h5 --data runs/vit-data.h5 --out-dir runs/vit
    descentlab-cli train --preset vit-adamw --max-steps 50 --out runs/vit-builtin.h5
    descentlab-cli train --config runs/vit/vit-same.json --max-steps 50 --out runs/vit-script.h5

Writes, into --out-dir:
  vit.pt         TorchScript: forward(images [B, 1, 28, 28]) -> logits [B, classes], and layer_outputs(images): the
                 head (LayerNorm, linear) read from the class token after the embedding (layer 0) and after each
                 block. Its parameters have the built-in model's names (blocks.0.attn.in_proj_weight, ...) and the
                 run checkpoint's values (--checkpoint, default "latest").
  vit-same.json  with --data: the run's own config, as the torchscript task of vit.pt on that data file (descentlab-cli
                 train --config vit-same.json): the same optimizer, rate, batch, seed (so the same data order) and
                 AC/DC schedule.

The module computes what core/models/sparse_models.cpp computes, op for op: the patches, the class token and the
positions, pre-norm blocks (LayerNorm, attention through the same kernel, GELU feed-forward), LayerNorm and the head
on the class token, each linear layer as LibTorch's C++ Linear computes it (cpp_linear). Attention is torch's fused scaled_dot_product_attention where this torch has it (2.x), else the
formula LibTorch 1.13's C++ model uses: the lab built with the same torch chooses the same. Dropout is left out: the
run must have model.dropout 0 (vit-adamw has), else the two would draw different masks.

One difference stays: the built-in AC/DC leaves the embedding and the head dense
(sparsity.exclude_embeddings_and_readout), a module of your own names none, so every weight is pruned. To compare
AC/DC runs, train the built-in one with --set sparsity.exclude_embeddings_and_readout=false
(tests/same_engine_check.sh does).
"""
import argparse
import json
import math
import os
import pathlib
import sys
from typing import List

# TorchScript writes some constants in Python's string-hash order: a fixed hash seed makes the same run write the same
# bytes (the lab records the module's SHA-256). Set before torch loads.
if __name__ == "__main__" and os.environ.get("PYTHONHASHSEED") != "0":
    os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, PYTHONHASHSEED="0"))

# A run's checkpoint tensors are in RUN.h5.checkpoints/ beside it (HDF5 external storage): HDF5 finds them from the
# run file's folder, whatever folder this runs in. Read when h5py loads HDF5, so set first.
os.environ.setdefault("HDF5_EXTFILE_PREFIX", "${ORIGIN}")

import h5py  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0: LibTorch 2.x's model calls the same kernel

    def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)

else:  # torch 1.13: the formula of attention_math (core/models/unrolled_transformer.cpp), op for op

    def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q * (1.0 / math.sqrt(float(q.size(-1)))), k.transpose(-2, -1))
        return torch.matmul(torch.softmax(scores, -1), v)


def cpp_linear(x, weight, bias):
    """x W^T + b as LibTorch's C++ torch::nn::functional::linear computes it (the built-in models' Linear layers): addmm
    for a matrix, else matmul and then += bias. Python's F.linear flattens a contiguous [B, T, C] input into one addmm
    instead; the values are the same, but the bias's gradient is then summed in another order wherever the incoming
    gradient is not contiguous (the patch embedding's, sliced out of the class token's concatenation): the two runs
    were 1.2e-7 apart after 50 steps with F.linear, and are bitwise equal with this."""
    if x.dim() == 2:
        return torch.addmm(bias, x, weight.t())
    out = x.matmul(weight.t())
    out += bias
    return out


class Linear(torch.nn.Linear):
    """torch.nn.Linear's parameters (weight, bias), computed by cpp_linear."""

    def forward(self, x):
        return cpp_linear(x, self.weight, self.bias)


class Attention(torch.nn.Module):
    """Multi-head self-attention with torch.nn.MultiheadAttention's parameters (in_proj_weight, in_proj_bias,
    out_proj), computed on [batch, tokens, width] as PreNormBlockImpl::self_attention does."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.in_proj_weight = torch.nn.Parameter(torch.empty(3 * width, width))
        self.in_proj_bias = torch.nn.Parameter(torch.empty(3 * width))
        self.out_proj = Linear(width, width)
        self.heads = heads

    def forward(self, x):
        batch, tokens, width = x.size(0), x.size(1), x.size(2)
        qkv = (cpp_linear(x, self.in_proj_weight, self.in_proj_bias)
               .view(batch, tokens, 3, self.heads, width // self.heads)
               .permute(2, 0, 3, 1, 4)
               .unbind(0))
        attended = attend(qkv[0], qkv[1], qkv[2])
        return self.out_proj(attended.transpose(1, 2).reshape(batch, tokens, width))


class Block(torch.nn.Module):
    """A pre-norm transformer block: x + attention(LayerNorm(x)), then + feed-forward(LayerNorm(.)) with GELU."""

    def __init__(self, width: int, heads: int, ff_width: int):
        super().__init__()
        self.attention_norm = torch.nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.feed_forward_norm = torch.nn.LayerNorm(width)
        self.feed_forward_in = Linear(width, ff_width)
        self.feed_forward_out = Linear(ff_width, width)

    def forward(self, x):
        out = x + self.attn(self.attention_norm(x))
        return out + self.feed_forward_out(F.gelu(self.feed_forward_in(self.feed_forward_norm(out))))


class TinyVit(torch.nn.Module):
    """The lab's tiny ViT (TinyVitImpl): patch x patch squares embedded linearly, a class token, learned positions,
    the blocks, LayerNorm and a linear head on the class token."""

    def __init__(self, layers: int, width: int, heads: int, ff_width: int, side: int, patch: int, classes: int):
        super().__init__()
        self.cells = side // patch
        self.patch = patch
        self.width = width
        self.patch_embedding = Linear(patch * patch, width)
        self.class_token = torch.nn.Parameter(torch.zeros(1, 1, width))
        self.positions = torch.nn.Parameter(torch.zeros(1, self.cells * self.cells + 1, width))
        self.blocks = torch.nn.ModuleList([Block(width, heads, ff_width) for _ in range(layers)])
        self.norm = torch.nn.LayerNorm(width)
        self.head = Linear(width, classes)

    def embed(self, images):
        batch = images.size(0)
        patches = (images.reshape(batch, self.cells, self.patch, self.cells, self.patch)
                   .permute(0, 1, 3, 2, 4)
                   .reshape(batch, self.cells * self.cells, self.patch * self.patch))
        embedded = self.patch_embedding(patches)
        return torch.cat([self.class_token.expand(batch, 1, self.width), embedded], 1) + self.positions

    def read(self, state):
        return self.head(self.norm(state.select(1, 0)))

    def forward(self, images):
        x = self.embed(images)
        for block in self.blocks:
            x = block(x)
        return self.read(x)

    @torch.jit.export
    def layer_outputs(self, images) -> List[torch.Tensor]:
        x = self.embed(images)
        outputs = [self.read(x)]
        for block in self.blocks:
            x = block(x)
            outputs.append(self.read(x))
        return outputs


def fail(message):
    print(f"export_builtin_vit.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_run(path, label):
    """The run's config and the checkpoint's model tensors {name: tensor}."""
    try:
        with h5py.File(path, "r") as run:
            config = json.loads(run.attrs["config"])
            if f"checkpoints/{label}/model" not in run:
                known = ", ".join(run["checkpoints"].keys()) if "checkpoints" in run else "none"
                fail(f"{path}: no checkpoint \"{label}\" (it has: {known}); a run's initial weights: descentlab-cli "
                     "train --preset vit-adamw --max-steps 0 --out RUN.h5")
            group = run[f"checkpoints/{label}/model"]
            tensors = {name: torch.from_numpy(group[name][()]) for name in group}
    except OSError as error:
        fail(f"{path}: cannot be read as a run file ({error})")
    return config, tensors


def build_model(config, tensors, path):
    if config.get("task") != "vit":
        fail(f"{path}: the run's task is \"{config.get('task')}\"; this script writes the ViT of a vit run")
    model_config = config["model"]
    if model_config["dropout"] != 0:
        fail(f"{path}: model.dropout is {model_config['dropout']}; train the run with --set model.dropout=0, so that "
             "no dropout mask is drawn and the two runs can agree")
    patch = config["data"]["image_patch"]
    cells = math.isqrt(tensors["positions"].shape[1] - 1)
    model = TinyVit(model_config["layers"], model_config["width"], model_config["heads"], model_config["ff_width"],
                    cells * patch, patch, tensors["head.weight"].shape[0])
    own = dict(model.named_parameters())
    if set(own) != set(tensors):
        fail(f"{path}: the checkpoint's tensors {sorted(set(tensors) - set(own))} have no parameter here, and "
             f"{sorted(set(own) - set(tensors))} no tensor in the checkpoint")
    with torch.no_grad():
        for name, parameter in own.items():
            if parameter.shape != tensors[name].shape:
                fail(f"{path}: {name} is {list(tensors[name].shape)}, the model's {list(parameter.shape)}")
            parameter.copy_(tensors[name])
    return model


def write_config(config, module, data, out):
    """The run's config as the torchscript task of `module` on `data`: what descentlab-cli train --config trains."""
    config = dict(config, name=config["name"] + "-torchscript", task="torchscript")
    config["model"] = dict(config["model"], file=str(module.resolve()))
    config["data"] = dict(config["data"], file=str(pathlib.Path(data).resolve()), target="classification")
    out.write_text(json.dumps(config, indent=2) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", help="a run file of a vit preset (descentlab-cli train --preset vit-adamw ...)")
    parser.add_argument("--checkpoint", default="latest", help="the checkpoint whose weights to take (latest)")
    parser.add_argument("--out-dir", default=".", help="folder for vit.pt (and vit-same.json) (default: .)")
    parser.add_argument("--data", help="a data file of the run's data (descentlab-cli data export): also write "
                                       "vit-same.json, the run's config as the torchscript task on it")
    args = parser.parse_args()
    config, tensors = read_run(args.run, args.checkpoint)
    model = build_model(config, tensors, args.run)
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    module = out / "vit.pt"
    torch.jit.script(model).save(str(module))
    wrote = f"wrote {module} ({sum(p.numel() for p in model.parameters())} parameters, from {args.run}'s " \
            f"checkpoint \"{args.checkpoint}\")"
    if args.data:
        write_config(config, module, args.data, out / "vit-same.json")
        wrote += f" and {out / 'vit-same.json'}"
    print(wrote)
    sparsity = config.get("sparsity", {})
    if sparsity.get("method") == "acdc" and sparsity.get("exclude_embeddings_and_readout"):
        print(f"note: {args.run} keeps the embedding and the head dense under AC/DC, a module of your own is pruned "
              "whole: the two runs part at the first compression unless the built-in one is trained with --set "
              "sparsity.exclude_embeddings_and_readout=false", file=sys.stderr)


if __name__ == "__main__":
    main()
