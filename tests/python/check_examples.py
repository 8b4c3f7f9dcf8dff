#!/usr/bin/env python3
# DescentLab: checks the examples of your own model and data. Copyright the DescentLab authors.
# SPDX-License-Identifier: GPL-3.0-or-later (see COPYING at the repository root)
"""Runs each example under examples/ (issue 53, item 6) on small subsets into a temporary folder, twice with the
same seed, and checks what it wrote against docs/your-model.md with h5py and torch.jit.load, as the lab will read it:

- the data file: the root attributes (task, classes or vocabulary, name), the four datasets with their dtypes,
  shapes (the subset's rows) and chunking along the first dimension (min(N, 1024) rows), labels or tokens in range,
  float values finite (images in [0, 1]), next-token y equal to x shifted by one;
- the module: it loads; forward on 4 training rows gives the documented shape, finite; layer_outputs gives L + 1
  tensors of that shape, the last equal to forward's; the task's loss reaches every parameter through the
  readouts; a next-token model is causal (position t does not see t + 1); the parameter names are the ones listed
  here (runs and studies record them; renaming one is a change of the contract, so update this list knowingly);
- the same seed writes byte-identical files.

    /usr/bin/python3 tests/python/check_examples.py [EXAMPLE ...]   # default: all three

Exit 0 when every example passes; 1 naming each failure; 77 (skipped) when a dataset an example needs is not
fetched and nothing failed."""
import concurrent.futures
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import torch

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
TRAIN_ROWS, TEST_ROWS, BATCH = 512, 256, 4


def names(prefix, modules, count=None):
    """Parameter names of `prefix.module.{weight,bias}`, or of `prefix.i.module...` for i < count."""
    heads = [prefix] if count is None else [f"{prefix}.{i}" for i in range(count)]
    return [f"{h}.{m}.{p}" for h in heads for m in modules for p in ("weight", "bias")]


EXAMPLES = {
    "cnn_fashion_mnist": dict(
        model="cnn.pt", data="fashion-mnist.h5", task="classification", attributes={"classes": 10},
        name="fashion-mnist", x=("float32", (1, 28, 28)), y=("int64", ()), output=(10,), layers=3,
        parameters=99592, names=names("stem", ["conv", "readout"]) + names("blocks", ["conv", "readout"], 3)),
    "mlp_regression": dict(
        model="mlp.pt", data="regression.h5", task="regression", attributes={}, name="sine-regression",
        x=("float32", (16,)), y=("float32", (4,)), output=(4,), layers=3,
        parameters=14608, names=names("embed", ["linear", "readout"]) + names("blocks", ["linear", "readout"], 3)),
    "char_model": dict(
        model="char.pt", data="moby-dick.h5", task="next-token", attributes={"vocabulary": 82}, name="moby-dick",
        x=("int64", (64,)), y=("int64", (64,)), output=(64, 82), layers=3, parameters=76104,
        names=["embed.table.weight", "embed.readout.weight", "embed.readout.bias"] +
        names("blocks", ["conv", "mix", "readout"], 3)),
}


class Failed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failed(message)


def check_data(path, spec):
    with h5py.File(path, "r") as f:
        attributes = dict(f.attrs)
        expect(attributes.get("task") == spec["task"], f"/@task is {attributes.get('task')!r}, not {spec['task']!r}")
        expect(attributes.get("name") == spec["name"], f"/@name is {attributes.get('name')!r}, not {spec['name']!r}")
        for key, value in spec["attributes"].items():
            found = attributes.get(key)
            expect(isinstance(found, np.integer) and found == value, f"/@{key} is {found!r}, not the integer {value}")
        arrays = {}
        for split, rows in (("train", TRAIN_ROWS), ("test", TEST_ROWS)):
            for key in ("x", "y"):
                name = f"{split}/{key}"
                expect(name in f and isinstance(f[name], h5py.Dataset), f"/{name} missing")
                dataset, (dtype, tail) = f[name], spec[key]
                expect(dataset.dtype == np.dtype(dtype), f"/{name} is {dataset.dtype}, not {dtype}")
                expect(dataset.shape == (rows,) + tail, f"/{name} has shape {dataset.shape}, not {(rows,) + tail}")
                chunks = (min(rows, 1024),) + tail
                expect(dataset.chunks == chunks, f"/{name} is chunked {dataset.chunks}, not {chunks}")
                arrays[name] = dataset[()]
    for split in ("train", "test"):
        x, y = arrays[f"{split}/x"], arrays[f"{split}/y"]
        if spec["task"] == "classification":
            classes = spec["attributes"]["classes"]
            expect(y.min() >= 0 and y.max() < classes, f"/{split}/y holds labels outside 0..{classes - 1}")
            expect(np.isfinite(x).all() and x.min() >= 0 and x.max() <= 1, f"/{split}/x is not within [0, 1]")
        elif spec["task"] == "regression":
            expect(np.isfinite(x).all() and np.isfinite(y).all(), f"/{split}/x or y holds a value not finite")
            expect(y.std() > 0.1, f"/{split}/y is nearly constant (std {y.std():.3g})")
        else:
            vocabulary = spec["attributes"]["vocabulary"]
            for key, tokens in (("x", x), ("y", y)):
                expect(tokens.min() >= 0 and tokens.max() < vocabulary,
                       f"/{split}/{key} holds tokens outside 0..{vocabulary - 1}")
            expect((y[:, :-1] == x[:, 1:]).all(), f"/{split}/y is not x shifted by one token")
            expect((y[:-1, -1] == x[1:, 0]).all(), f"/{split}: the windows are not consecutive, non-overlapping")
    return arrays["train/x"][:BATCH], arrays["train/y"][:BATCH]


def check_model(path, spec, x, y):
    module = torch.jit.load(str(path), map_location="cpu")
    found = [name for name, _ in module.named_parameters()]
    missing, unexpected = [n for n in spec["names"] if n not in found], [n for n in found if n not in spec["names"]]
    expect(found == spec["names"], f"parameter names changed: missing {missing}, unexpected {unexpected}"
           + ("" if missing or unexpected else f", order {found}"))
    count = sum(p.numel() for p in module.parameters())
    expect(count == spec["parameters"], f"{count} parameters, not {spec['parameters']}")
    expect(hasattr(module, "layer_outputs"), "no method layer_outputs")
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    shape = (BATCH,) + spec["output"]
    module.eval()
    with torch.no_grad():
        output = module(x)
        layers = module.layer_outputs(x)
    expect(isinstance(output, torch.Tensor) and tuple(output.shape) == shape and output.dtype == torch.float32,
           f"forward gives {getattr(output, 'dtype', type(output))} {tuple(getattr(output, 'shape', ()))}, "
           f"not float32 {shape}")
    expect(bool(torch.isfinite(output).all()), "forward gives values not finite")
    expect(len(layers) == spec["layers"] + 1, f"layer_outputs gives {len(layers)} tensors, not {spec['layers'] + 1}")
    for layer, tensor in enumerate(layers):
        expect(tuple(tensor.shape) == shape, f"layer_outputs[{layer}] has shape {tuple(tensor.shape)}, not {shape}")
    expect(torch.allclose(layers[-1], output, rtol=1e-5, atol=1e-6), "layer_outputs' last tensor is not forward's")
    if spec["task"] == "next-token":  # position t must not see the token at t + 1
        changed = x.clone()
        changed[:, 33] = (changed[:, 33] + 1) % spec["attributes"]["vocabulary"]
        with torch.no_grad():
            for layer, (a, b) in enumerate(zip(layers, module.layer_outputs(changed))):
                expect(torch.equal(a[:, :33], b[:, :33]), f"layer {layer}: position 32 sees the token at 33")
                expect(not torch.equal(a[:, 33], b[:, 33]), f"layer {layer}: position 33 ignores its own token")
    module.train()
    loss = torch.zeros(())
    for tensor in module.layer_outputs(x):
        if spec["task"] == "regression":
            loss = loss + torch.nn.functional.mse_loss(tensor, y)
        else:
            loss = loss + torch.nn.functional.cross_entropy(tensor.reshape(-1, tensor.shape[-1]), y.reshape(-1))
    loss.backward()
    for name, parameter in module.named_parameters():
        grad = parameter.grad
        expect(grad is not None and bool(torch.isfinite(grad).all()) and bool(grad.abs().sum() > 0),
               f"the per-layer losses give {name} no finite, non-zero gradient")
    return count


def run(script, out_dir, seed):
    command = [sys.executable, str(REPOSITORY / "examples" / f"{script}.py"), "--out-dir", str(out_dir),
               "--seed", str(seed), "--train-rows", str(TRAIN_ROWS), "--test-rows", str(TEST_ROWS)]
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True)
    return result, time.monotonic() - start


def main(selected):
    unknown = set(selected) - set(EXAMPLES)
    if unknown:
        sys.exit(f"unknown example(s) {sorted(unknown)}; known: {sorted(EXAMPLES)}")
    started = time.monotonic()
    failures, skipped = [], []
    with tempfile.TemporaryDirectory(prefix="descentlab-examples-") as temporary:
        folder = pathlib.Path(temporary)
        jobs = [(script, copy) for script in selected for copy in ("a", "b")]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            results = dict(zip(jobs, pool.map(lambda job: run(job[0], folder / job[0] / job[1], 1), jobs)))
        for script in selected:
            spec, (result, seconds) = EXAMPLES[script], results[(script, "a")]
            if result.returncode == 2 and "not found" in result.stderr:
                skipped.append(script)
                print(f"skipped {script}: {result.stderr.strip()}")
                continue
            try:
                for copy in ("a", "b"):
                    done = results[(script, copy)][0]
                    expect(done.returncode == 0, f"examples/{script}.py exited {done.returncode}:\n{done.stderr}")
                a, b = folder / script / "a", folder / script / "b"
                for name in (spec["model"], spec["data"]):
                    expect((a / name).is_file(), f"wrote no {name}")
                    expect((a / name).read_bytes() == (b / name).read_bytes(), f"{name} differs between two runs "
                           "with the same seed")
                x, y = check_data(a / spec["data"], spec)
                parameters = check_model(a / spec["model"], spec, x, y)
                print(f"ok {script}: {parameters} parameters; {spec['model']} {(a / spec['model']).stat().st_size} B, "
                      f"{spec['data']} {(a / spec['data']).stat().st_size} B ({TRAIN_ROWS}/{TEST_ROWS} rows); "
                      f"written in {seconds:.1f} s")
            except Failed as failure:
                failures.append(f"{script}: {failure}")
            except Exception as error:  # a file h5py or torch cannot read at all
                failures.append(f"{script}: {type(error).__name__}: {error}")
    sys.stdout.flush()
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr, flush=True)
    print(f"checked in {time.monotonic() - started:.1f} s")
    print(f"{len(selected) - len(failures) - len(skipped)} passed, {len(failures)} failed, {len(skipped)} skipped")
    return 1 if failures else 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or list(EXAMPLES)))
