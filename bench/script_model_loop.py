#!/usr/bin/env python3
"""Issue 53 item 8: a user's TorchScript module trained by the equivalent Python loop (Debian's python3-torch), the
like-for-like baseline of `descentlab-cli train --model M.pt --data D.h5 --optimizer adamw`: the same module file,
the same data file read into memory, the same batch size, a fresh shuffle per epoch, AdamW (lr 1e-3, weight decay
0.01 on tensors of 2 or more dimensions, as the lab's optimizer factory), gradient clipping at norm 1, the data
file's loss. Prints the median samples/s over intervals of --interval steps, as the lab's `throughput` series."""
import argparse
import statistics
import time

import h5py
import torch
import torch.nn.functional as F


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--interval", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    arguments = parser.parse_args()
    torch.set_num_threads(arguments.threads)
    torch.manual_seed(0)
    with h5py.File(arguments.data, "r") as f:
        task = f.attrs["task"]
        task = task.decode() if isinstance(task, bytes) else str(task)
        x = torch.from_numpy(f["train/x"][()])
        y = torch.from_numpy(f["train/y"][()])
    x = x.float() if x.is_floating_point() else x.long()
    y = y.float() if task == "regression" else y.long()
    module = torch.jit.load(arguments.model, map_location="cpu")
    module.train()
    decayed = [p for p in module.parameters() if p.dim() >= 2]
    plain = [p for p in module.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.01}, {"params": plain, "weight_decay": 0.0}],
                                  lr=1e-3)

    def loss_of(prediction, target):
        if task == "classification":
            return F.cross_entropy(prediction, target)
        if task == "regression":
            return F.mse_loss(prediction, target)
        return F.cross_entropy(prediction.reshape(-1, prediction.size(-1)), target.reshape(-1))

    rows = x.size(0)
    order = torch.randperm(rows)
    position = 0
    rates = []
    started = time.perf_counter()
    for step in range(1, arguments.steps + 1):
        if position + arguments.batch_size > rows:
            order, position = torch.randperm(rows), 0
        batch = order[position:position + arguments.batch_size]
        position += arguments.batch_size
        optimizer.zero_grad()
        loss = loss_of(module(x.index_select(0, batch)), y.index_select(0, batch))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        optimizer.step()
        if step % arguments.interval == 0:
            loss.item()  # the lab reads its loss at each interval too
            now = time.perf_counter()
            rates.append(arguments.interval * arguments.batch_size / (now - started))
            started = now
    print(f"python_samples_per_second {statistics.median(rates[1:] or rates):.1f}")


if __name__ == "__main__":
    main()
