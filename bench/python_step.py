#!/usr/bin/env python3
"""The 'plain' step of bench/layerwise_step_bench.cpp in Python PyTorch (Debian python3-torch, the same 1.13):
the same pre-norm transformer, batch, padding and AdamW. Prints python_plain_ms."""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width, heads, ff, dropout):
        super().__init__()
        self.attention_norm = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, dropout=dropout)  # [tokens, batch, width], as in C++
        self.feed_forward_norm = nn.LayerNorm(width)
        self.feed_forward_in = nn.Linear(width, ff)
        self.feed_forward_out = nn.Linear(ff, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, padding):
        normed = self.attention_norm(x).transpose(0, 1)
        attended = self.attn(normed, normed, normed, key_padding_mask=padding, need_weights=False)[0].transpose(0, 1)
        x = x + self.dropout(attended)
        return x + self.dropout(self.feed_forward_out(self.dropout(F.gelu(self.feed_forward_in(self.feed_forward_norm(x))))))


class Model(nn.Module):
    def __init__(self, vocabulary, length, width, layers, heads, dropout):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, width)
        self.positions = nn.Embedding(length, width)
        self.embedding_dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(width, heads, 2 * width, dropout) for _ in range(layers)])
        self.readout_norm = nn.LayerNorm(width)
        self.readout = nn.Linear(width, 2)

    def forward(self, tokens):
        padding = tokens.eq(0)
        x = self.embedding_dropout(self.tokens(tokens) + self.positions(torch.arange(tokens.shape[1])).unsqueeze(0))
        for block in self.blocks:
            x = block(x, padding)
        normed = self.readout_norm(x)
        valid = (~padding).unsqueeze(-1).float()
        return self.readout((normed * valid).sum(1) / valid.sum(1).clamp_min(1.0))


def main():
    parser = argparse.ArgumentParser()
    for name, default in (("steps", 30), ("width", 64), ("layers", 4), ("batch", 32), ("length", 128)):
        parser.add_argument("--" + name, type=int, default=default)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    vocabulary = 10000
    model = Model(vocabulary, args.length, args.width, args.layers, 4, 0.1).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    tokens = torch.randint(2, vocabulary, (args.batch, args.length))
    for b in range(args.batch):
        tokens[b, args.length // 2 + (b * args.length // 2) // args.batch:] = 0
    labels = torch.randint(0, 2, (args.batch,))

    def step():
        loss = F.cross_entropy(model(tokens), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    for _ in range(3):
        step()
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    print(f"python_torch {torch.__version__}")
    print(f"python_plain_ms {1e3 * statistics.median(times):.2f}")


if __name__ == "__main__":
    main()
