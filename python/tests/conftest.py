"""Shared helpers: the double-precision reference (PyTorch's functional ops in float64, plus the
z-loss written from its formula) and tolerances derived from the dtype and reduction length."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

EPS = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8,
       torch.float64: 2.0**-53}
EPS32 = 2.0**-24


def tolerance(dtype, reduction_length, scale, log_prob_max=0.0):
    """Bound on |ours - reference| for one output element: half an ulp of the output dtype for
    the final rounding, plus f32 arithmetic over a reduction of `reduction_length` terms (each
    step off by at most one f32 ulp of the running value), times the magnitude `scale`. The
    16-bit inputs are exactly representable, so they add nothing. A gradient computed from
    log-probabilities that were rounded to `dtype` (the forward's output) also carries that
    rounding through exp: exp(lp (1 + d)) = p (1 + lp d), |d| <= the unit roundoff, so the term
    `log_prob_max` (the largest |log-probability|) times the unit roundoff."""
    return scale * (EPS[dtype] * (1 + log_prob_max) + 4 * EPS32 * (reduction_length + 8))


def assert_close(ours, ref, dtype, reduction_length, log_prob_max=0.0):
    ours = torch.as_tensor(ours).double()
    ref = torch.as_tensor(ref).double()
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    scale = ref.abs().max().item() if ref.numel() else 0.0
    scale = scale if scale > 0 else 1.0
    err = (ours - ref).abs().max().item() if ref.numel() else 0.0
    bound = tolerance(dtype, reduction_length, scale, log_prob_max)
    assert err <= bound, f"error {err:.3g} above the bound {bound:.3g} ({dtype}, n={reduction_length})"


def reference_cross_entropy(x, target, weight, reduction, ignore_index, label_smoothing, z):
    """F.cross_entropy in float64 plus z * lse^2 per non-ignored row, reduced like the loss (mean:
    divided by the number of non-ignored rows)."""
    xd = x.detach().double().requires_grad_()
    wd = weight.double() if weight is not None else None
    loss = F.cross_entropy(xd, target.long(), wd, ignore_index=ignore_index, reduction=reduction,
                           label_smoothing=label_smoothing)
    kept = (target != ignore_index).double()
    zl = z * torch.logsumexp(xd, dim=1) ** 2 * kept
    if reduction == "sum":
        zl = zl.sum()
    elif reduction == "mean":
        zl = zl.sum() / kept.sum()
    return loss + zl, zl, xd


# test_opinfo.py's tally: (OpInfo, dtype) -> {"match": n, "refused": n, "wrong": n, "crash": n}.
OPINFO_TALLY = {}


def pytest_terminal_summary(terminalreporter):
    """The OpInfo tally, per OpInfo and dtype, at the end of the run."""
    if not OPINFO_TALLY:
        return
    tr = terminalreporter
    tr.section("PyTorch OpInfo samples through aclnn_cpu.torch")
    tr.write_line(f"{'OpInfo':52s} {'dtype':9s} {'match':>6s} {'refused':>8s} {'wrong':>6s} "
                  f"{'crash':>6s} {'calls: ours':>11s} {'PyTorch':>8s}")
    for installed in (False, True):
        total = {"match": 0, "refused": 0, "wrong": 0, "crash": 0}
        rows = sorted((k, t) for k, t in OPINFO_TALLY.items()
                      if k[0].endswith(" (install)") == installed)
        for (name, dtype), t in rows:
            calls = (f" {t['calls ours']:11d} {t['calls theirs']:8d}" if installed else "")
            tr.write_line(f"{name:52s} {dtype:9s} {t['match']:6d} {t['refused']:8d} "
                          f"{t['wrong']:6d} {t['crash']:6d}{calls}")
            for k in total:
                total[k] += t[k]
        n = sum(total.values())
        if n:
            label = "all under install()" if installed else "all (drop-ins)"
            tr.write_line(f"{label:52s} {'':9s} {total['match']:6d} {total['refused']:8d} "
                          f"{total['wrong']:6d} {total['crash']:6d}   "
                          f"({100.0 * total['match'] / n:.1f}% of {n} match)")


@pytest.fixture
def rng():
    return torch.Generator().manual_seed(1234)


def logits(n, c, dtype, gen):
    return (torch.randn(n, c, generator=gen, dtype=torch.float64) * 2).to(dtype)


def targets(n, c, gen, dtype=torch.int64, ignore_index=-100, every=5):
    t = torch.randint(0, c, (n,), generator=gen, dtype=torch.int64)
    t[::every] = ignore_index
    return t.to(dtype)


__all__ = ["OPINFO_TALLY", "assert_close", "reference_cross_entropy", "logits", "targets", "tolerance",
           "EPS", "math", "np"]
