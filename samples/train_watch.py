#!/usr/bin/python3
"""A training run to watch with `calscope --follow` (docs/follow.md).

Trains a small network (64-128-10, ReLU, Adam) on scikit-learn's digits for 30 epochs and, after
each epoch, writes the held-out set's predicted probabilities to OUT/epoch_N.csv (label, p_0..p_9)
or, with --npy, OUT/epoch_N.npy beside OUT/labels.npy. Each file is written under a dot-name in
the same folder and renamed into place (os.replace), so a follower never sees half a file.

    /usr/bin/python3 samples/train_watch.py runs/digits &
    calscope report --follow runs/digits --format ndjson --idle-exit 10

Deterministic for a --seed (torch on one thread). Needs torch and scikit-learn (Debian:
python3-torch, python3-sklearn).
"""
import argparse
import os
import time

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def write_csv(folder, epoch, probs, labels):
    tmp = os.path.join(folder, f".epoch_{epoch}.csv.tmp")
    with open(tmp, "w") as f:
        f.write("label," + ",".join(f"p_{k}" for k in range(probs.shape[1])) + "\n")
        for y, p in zip(labels, probs):
            f.write(f"{y}," + ",".join(f"{v:.8f}" for v in p) + "\n")
    os.replace(tmp, os.path.join(folder, f"epoch_{epoch}.csv"))


def write_npy(folder, epoch, probs):
    tmp = os.path.join(folder, f".epoch_{epoch}.npy")
    np.save(tmp, probs)
    os.replace(tmp, os.path.join(folder, f"epoch_{epoch}.npy"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="the folder to write the epochs to (made if missing)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds to wait after each epoch")
    ap.add_argument("--npy", action="store_true", help="write epoch_N.npy and labels.npy, not CSV")
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    x, y = load_digits(return_X_y=True)
    x = x / 16.0
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.4, random_state=a.seed, stratify=y)
    xt, yt = torch.tensor(x_tr, dtype=torch.float32), torch.tensor(y_tr)
    xe = torch.tensor(x_te, dtype=torch.float32)

    net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    loss_fn = torch.nn.CrossEntropyLoss()

    os.makedirs(a.out, exist_ok=True)
    if a.npy:
        tmp = os.path.join(a.out, ".labels.npy")
        np.save(tmp, y_te.astype(np.int64))
        os.replace(tmp, os.path.join(a.out, "labels.npy"))
    gen = torch.Generator().manual_seed(a.seed)
    for epoch in range(1, a.epochs + 1):
        net.train()
        order = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(order), 32):
            idx = order[i:i + 32]
            opt.zero_grad()
            loss_fn(net(xt[idx]), yt[idx]).backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            probs = torch.softmax(net(xe).double(), dim=1).numpy()
        probs = probs / probs.sum(axis=1, keepdims=True)
        if a.npy:
            write_npy(a.out, epoch, probs)
        else:
            write_csv(a.out, epoch, probs, y_te)
        print(f"epoch {epoch}: held-out accuracy {np.mean(probs.argmax(1) == y_te):.4f}", flush=True)
        if a.delay:
            time.sleep(a.delay)


if __name__ == "__main__":
    main()
