#!/usr/bin/env python3
"""Writes PyTorch fixtures for the test suite (tests/data/*.bin).

Run with a Python that has torch (Debian: `apt-get install python3-torch`, then
`/usr/bin/python3 tools/make_torch_fixtures.py`). The tests read the files; no PyTorch is
needed at test time.

Every file: one ASCII header line `key=value ...\n`, then little-endian float64 arrays in the
order and lengths the header names (`arrays=name:count,...`). Everything is computed in float64
by torch's own functions and autograd:

  ce_*.bin  torch.nn.functional.cross_entropy(x, target, weight, ignore_index, reduction,
            label_smoothing) plus the z-loss z * logsumexp(x)**2 per non-ignored row, reduced
            like the loss (none: per row, sum: sum, mean: sum / rows not ignored); the gradient
            of sum(g * loss) + sum(gz * zloss) with respect to x by autograd.
  lsm_*.bin torch.log_softmax(x, dim) and the gradient of sum(g * log_softmax(x)) by autograd.
"""
import os
import sys

import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def write(path, header, arrays):
    parts = [f"{k}={v}" for k, v in header.items()]
    parts.append("arrays=" + ",".join(f"{n}:{a.numel()}" for n, a in arrays))
    with open(path, "wb") as f:
        f.write((" ".join(parts) + "\n").encode())
        for _, a in arrays:
            f.write(a.detach().to(torch.float64).contiguous().numpy().astype("<f8").tobytes())


def ce_case(k, n, c, reduction, weight, ignore_index, ls, z, with_gz, seed):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(n, c, generator=g, dtype=torch.float64) * 3.0).requires_grad_(True)
    target = torch.randint(0, c, (n,), generator=g)
    ignored = torch.rand(n, generator=g) < 0.2
    ignored[0] = False  # at least one row counts
    target[ignored] = ignore_index
    if 0 <= ignore_index < c:
        target[0] = (ignore_index + 1) % c
    w = (torch.randn(c, generator=g, dtype=torch.float64) * 0.5 + 1.5) if weight else None
    loss = F.cross_entropy(x, target, weight=w, ignore_index=ignore_index, reduction=reduction,
                           label_smoothing=ls)
    lse = torch.logsumexp(x, dim=1)
    m = (target != ignore_index).to(torch.float64)
    zl = z * lse * lse * m
    if reduction == "none":
        zred = zl
    elif reduction == "sum":
        zred = zl.sum()
    else:
        zred = zl.sum() / m.sum()
    total = loss + zred
    gl = torch.randn(total.shape, generator=g, dtype=torch.float64) + 1.0
    gz = (torch.randn(total.shape, generator=g, dtype=torch.float64) if with_gz
          else torch.zeros(total.shape, dtype=torch.float64))
    (grad_x,) = torch.autograd.grad((gl * total).sum() + (gz * zred).sum(), x)
    header = dict(torch=torch.__version__, n=n, c=c, reduction=reduction, weight=int(weight),
                  ignore_index=ignore_index, label_smoothing=ls, zloss_scale=z,
                  grad_zloss=int(with_gz))
    arrays = [("x", x), ("target", target.to(torch.float64)),
              ("weight", w if w is not None else torch.zeros(0, dtype=torch.float64)),
              ("grad_loss", gl.reshape(-1)), ("grad_zloss", gz.reshape(-1)),
              ("log_prob", torch.log_softmax(x, dim=1)), ("lse", lse),
              ("loss", total.reshape(-1)), ("zloss", zred.reshape(-1)), ("grad_x", grad_x)]
    write(os.path.join(OUT, f"ce_{k:02d}.bin"), header, arrays)


def lsm_case(k, shape, dim, seed):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(*shape, generator=g, dtype=torch.float64) * 4.0).requires_grad_(True)
    y = torch.log_softmax(x, dim=dim)
    gy = torch.randn(*shape, generator=g, dtype=torch.float64)
    (gx,) = torch.autograd.grad((gy * y).sum(), x)
    header = dict(torch=torch.__version__, shape="x".join(map(str, shape)), dim=dim)
    write(os.path.join(OUT, f"lsm_{k:02d}.bin"), header,
          [("x", x), ("y", y), ("grad_y", gy), ("grad_x", gx)])


def main():
    os.makedirs(OUT, exist_ok=True)
    k = 0
    configs = [
        # n, c, reduction, weight, ignore_index, ls, z, gz
        (4, 5, "mean", False, -100, 0.0, 0.0, False),
        (6, 3, "mean", True, -100, 0.0, 0.0, False),
        (5, 7, "sum", True, 2, 0.0, 0.0, False),
        (8, 4, "none", False, -100, 0.0, 0.0, False),
        (7, 9, "mean", True, -100, 0.1, 0.0, False),
        (3, 6, "sum", False, 1, 0.1, 0.0, False),
        (5, 5, "none", True, -1, 1.0, 0.0, False),
        (9, 17, "mean", False, -100, 0.0, 1e-3, True),
        (4, 33, "sum", True, -100, 0.1, 1e-2, True),
        (6, 8, "none", True, 3, 0.1, 1e-2, True),
        (10, 100, "mean", True, 5, 0.1, 1e-3, False),
        (2, 1000, "mean", False, -100, 0.1, 1e-4, True),
    ]
    for cfg in configs:
        ce_case(k, *cfg, seed=100 + k)
        k += 1
    for j, (shape, dim) in enumerate([((3, 5), -1), ((4, 3, 2), 1), ((2, 3, 4, 5), 0),
                                      ((7,), 0), ((2, 257), 1)]):
        lsm_case(j, shape, dim, seed=200 + j)
    print(f"wrote {k} cross-entropy and 5 log-softmax fixtures to {os.path.normpath(OUT)} "
          f"with torch {torch.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
