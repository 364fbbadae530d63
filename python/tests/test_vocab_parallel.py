"""The vocabulary-parallel cross-entropy (aclnn_cpu.torch.vocab_parallel_cross_entropy,
docs/large_vocab.md): 2 and 4 processes on loopback (gloo), each holding an uneven shard of the
classes; every process's loss equals the single-process loss and its gradient the single-process
gradient's columns, within the tolerances of the other tests; plus opcheck of the two shard
operators."""

import os
import tempfile

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

import aclnn_cpu.torch as at
from conftest import assert_close

N, V = 37, 1001
CASES = [
    dict(reduction="mean"),
    dict(reduction="none", weight=True, label_smoothing=0.1),
    dict(reduction="sum", z_loss_scale=1e-3, ignore_index=3),
    dict(reduction="mean", weight=True, label_smoothing=0.2, z_loss_scale=1e-3),
]


def _problem(dtype):
    gen = torch.Generator().manual_seed(5)
    x = (torch.randn(N, V, generator=gen, dtype=torch.float64) * 2).to(dtype)
    t = torch.randint(0, V, (N,), generator=gen)
    t[::6] = -100
    w = torch.rand(V, generator=gen) + 0.5
    return x, t, w


def _reference(x, t, w, o):
    """Single process: F.cross_entropy in float64 plus the z-loss, and its gradient."""
    ii = o.get("ignore_index", -100)
    tt = t.clone()
    if ii != -100:
        tt[tt == -100] = ii
    xd = x.double().requires_grad_()
    loss = F.cross_entropy(xd, tt, w.double() if o.get("weight") else None, ignore_index=ii,
                           reduction=o["reduction"], label_smoothing=o.get("label_smoothing", 0.0))
    kept = (tt != ii).double()
    zl = o.get("z_loss_scale", 0.0) * torch.logsumexp(xd, 1) ** 2 * kept
    zl = zl if o["reduction"] == "none" else (zl.sum() if o["reduction"] == "sum"
                                              else zl.sum() / kept.sum())
    loss = loss + zl
    g = torch.linspace(0.5, 1.5, N, dtype=torch.float64) if o["reduction"] == "none" \
        else torch.tensor(1.0, dtype=torch.float64)
    loss.backward(g)
    return loss.detach(), xd.grad, tt, g


def _worker(rank, world, init_file, dtype_name, results):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    torch.set_num_threads(1)
    dtype = getattr(torch, dtype_name)
    try:
        x, t, w = _problem(dtype)
        # Uneven shards in rank order (tensor_split of 1001 classes).
        bounds = [0] + [int(b) for b in torch.linspace(0, V, world + 1)[1:-1].round()] + [V]
        bounds[1] = max(1, bounds[1] - 100)  # make the first shard the small one
        lo, hi = bounds[rank], bounds[rank + 1]
        for o in CASES:
            ref, ref_grad, tt, g = _reference(x, t, w, o)
            shard = x[:, lo:hi].clone().requires_grad_()
            loss = at.vocab_parallel_cross_entropy(
                shard, tt, w if o.get("weight") else None, reduction=o["reduction"],
                ignore_index=o.get("ignore_index", -100),
                label_smoothing=o.get("label_smoothing", 0.0),
                z_loss_scale=o.get("z_loss_scale", 0.0), group=None, fp32_loss=True)
            assert_close(loss, ref, torch.float32, V)
            loss.backward(g.to(loss.dtype))
            assert_close(shard.grad, ref_grad[:, lo:hi], dtype, V)
        results.put((rank, "ok"))
    except Exception as e:  # reported to the parent, which fails the test
        results.put((rank, repr(e)))
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16"])
def test_processes_match_single_process(world, dtype_name):
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    with tempfile.TemporaryDirectory() as d:
        init_file = os.path.join(d, "init")
        procs = [ctx.Process(target=_worker, args=(r, world, init_file, dtype_name, results))
                 for r in range(world)]
        for p in procs:
            p.start()
        got = dict(results.get(timeout=300) for _ in procs)
        for p in procs:
            p.join(timeout=60)
    assert got == {r: "ok" for r in range(world)}, got


def test_single_process_group():
    """One process holding every class: the ordinary loss."""
    with tempfile.TemporaryDirectory() as d:
        dist.init_process_group("gloo", init_method=f"file://{os.path.join(d, 'init')}", rank=0,
                                world_size=1)
        try:
            x, t, w = _problem(torch.float32)
            o = CASES[3]
            ref, ref_grad, tt, g = _reference(x, t, w, o)
            xs = x.clone().requires_grad_()
            loss = at.vocab_parallel_cross_entropy(xs, tt, w, label_smoothing=0.2,
                                                   z_loss_scale=1e-3)
            loss.backward()
            assert_close(loss, ref, torch.float32, V)
            assert_close(xs.grad, ref_grad, torch.float32, V)
        finally:
            dist.destroy_process_group()


def test_masked_logit_without_smoothing():
    """A -inf logit (a masked class) that is not the target, in a kept and in an ignored row: the
    loss without smoothing is finite, as F.cross_entropy's (it was NaN: 0 * inf), and the
    gradient matches; with smoothing the loss is +inf."""
    with tempfile.TemporaryDirectory() as d:
        dist.init_process_group("gloo", init_method=f"file://{os.path.join(d, 'init')}", rank=0,
                                world_size=1)
        try:
            x, t, w = _problem(torch.float32)
            x[1, (int(t[1]) + 1) % V] = float("-inf")
            x[0, 2] = float("-inf")  # row 0 is ignored (t[::6] = -100)
            for o in [dict(reduction="mean"), dict(reduction="none", weight=True)]:
                ref, ref_grad, tt, g = _reference(x, t, w, o)
                xs = x.clone().requires_grad_()
                loss = at.vocab_parallel_cross_entropy(xs, tt, w if o.get("weight") else None,
                                                       reduction=o["reduction"])
                loss.backward(g.to(loss.dtype))
                assert torch.isfinite(loss).all(), loss
                assert_close(loss, ref, torch.float32, V)
                assert_close(xs.grad, ref_grad, torch.float32, V)
            loss = at.vocab_parallel_cross_entropy(x, t, w, label_smoothing=0.1)
            assert loss.item() == float("inf")
        finally:
            dist.destroy_process_group()


def test_opcheck():
    x, t, w = _problem(torch.float32)
    torch.library.opcheck(torch.ops.aclnn_cpu.cross_entropy_shard_stats.default,
                          (x[:, 100:300].contiguous(), t, w, -100, 100, V))
    lse = torch.logsumexp(x, 1).float()
    torch.library.opcheck(torch.ops.aclnn_cpu.cross_entropy_grad_shard.default,
                          (torch.tensor(1.0), x[:, 100:300].contiguous(), t, w, lse, "mean",
                           -100, 0.1, 1e-3, 100, V))
