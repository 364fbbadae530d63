"""torch.autograd.gradcheck in float64 on the aclnn_cpu.torch functions (the library's float64
kernels, aclnn-cpu's extension of CANN's dtypes): each analytical gradient against finite
differences of its own forward (with respect to the input, and the target where PyTorch has a
gradient for it). The fused linear cross-entropy runs float64 unfused (no float64 product in
oneDNN; docs/python.md)."""

import os
import tempfile

import pytest
import torch

import aclnn_cpu.torch as at

F64 = torch.float64


def _x(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g, dtype=F64) * 2).requires_grad_()


def _t(n, c, seed=1, ignore=None):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, c, (n,), generator=g)
    if ignore is not None:
        t[::3] = ignore
    return t


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_log_softmax(dim):
    assert torch.autograd.gradcheck(lambda x: at.log_softmax(x, dim), (_x(5, 7, 3),))


def test_log_softmax_with_dtype():
    x = _x(4, 9).detach().float().requires_grad_()
    # float32 in, float64 out: the backward gives float32, checked against float64 differences
    # of a float64 input cast the same way.
    y = at.log_softmax(x, 1, dtype=F64)
    assert y.dtype == F64
    assert torch.autograd.gradcheck(lambda x: at.log_softmax(x, 1, dtype=F64), (_x(4, 9),))


OPTIONS = [dict(), dict(reduction="sum"), dict(reduction="none"),
           dict(weight=True, label_smoothing=0.2), dict(ignore_index=2, reduction="mean"),
           dict(z_loss_scale=1e-2)]


@pytest.mark.parametrize("lean", [False, True])
@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: "+".join(f"{k}={v}" for k, v in o.items())
                         or "default")
def test_cross_entropy(opts, lean):
    opts = dict(opts)
    w = torch.rand(11, dtype=F64) + 0.5 if opts.pop("weight", False) else None
    t = _t(6, 11, ignore=opts.get("ignore_index"))
    assert torch.autograd.gradcheck(
        lambda x: at.cross_entropy(x, t, w, lean=lean, **opts), (_x(6, 11),))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_gradient_in_forward(reduction):
    t = _t(6, 11)
    assert torch.autograd.gradcheck(
        lambda x: at.cross_entropy(x, t, reduction=reduction, lean=True, grad_in_forward=True,
                                   label_smoothing=0.1), (_x(6, 11),))


def test_cross_entropy_unbatched_and_module():
    t = torch.tensor(3)
    assert torch.autograd.gradcheck(lambda x: at.cross_entropy(x, t), (_x(8),))
    loss = at.CrossEntropyLoss(weight=torch.rand(8, dtype=F64) + 0.5, label_smoothing=0.1)
    assert torch.autograd.gradcheck(lambda x: loss(x, _t(5, 8)), (_x(5, 8),))


def test_vocab_parallel_single_process():
    import torch.distributed as dist
    with tempfile.TemporaryDirectory() as d:
        dist.init_process_group("gloo", init_method=f"file://{os.path.join(d, 'init')}", rank=0,
                                world_size=1)
        try:
            t = _t(5, 9)
            w = torch.rand(9, dtype=F64) + 0.5
            assert torch.autograd.gradcheck(
                lambda x: at.vocab_parallel_cross_entropy(x, t, w, label_smoothing=0.1),
                (_x(5, 9),))
        finally:
            dist.destroy_process_group()


@pytest.mark.parametrize("probabilities", [False, True])
def test_linear_cross_entropy(probabilities):
    """float64 is not fused (F.linear, then the float64 cross-entropy), nor are probabilities."""
    t = torch.softmax(_x(4, 5, seed=3).detach(), 1) if probabilities else _t(4, 5)
    assert torch.autograd.gradcheck(
        lambda x, w, b: at.linear_cross_entropy(x, w, t, linear_bias=b, label_smoothing=0.1),
        (_x(4, 3), _x(5, 3, seed=2), _x(5, seed=4)))


def test_cross_entropy_probabilities():
    q = torch.softmax(_x(6, 11, seed=5).detach(), 1).requires_grad_()
    w = torch.rand(11, dtype=F64) + 0.5
    for reduction in ("mean", "sum", "none"):
        assert torch.autograd.gradcheck(
            lambda x, q: at.cross_entropy(x, q, w, reduction=reduction, label_smoothing=0.2),
            (_x(6, 11), q))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_probabilities_gradient_in_forward(reduction):
    """A target without a gradient: the gradient computed in the forward's pass
    (aclnnCpuCrossEntropyLossProbWithGrad), and PyTorch's composite for double backward."""
    q = torch.softmax(_x(6, 11, seed=5).detach(), 1)
    w = torch.rand(11, dtype=F64) + 0.5

    def f(x):
        return at.cross_entropy(x, q, w, reduction=reduction, label_smoothing=0.2)
    assert "prob_with_grad" in type(f(_x(6, 11)).grad_fn).__name__
    assert torch.autograd.gradcheck(f, (_x(6, 11),))
    assert torch.autograd.gradgradcheck(f, (_x(6, 11),))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("probabilities", [False, True])
def test_cross_entropy_k_dimensional(reduction, probabilities):
    """(N, C, d1, d2): per batch element on the (d1 d2, C) view of the input's memory."""
    w = torch.rand(5, dtype=F64) + 0.5
    if probabilities:
        t = torch.softmax(_x(2, 5, 3, 2, seed=6).detach(), 1)
    else:
        t = torch.randint(0, 5, (2, 3, 2), generator=torch.Generator().manual_seed(7))
        t[0, 1, 1] = -100
    assert torch.autograd.gradcheck(
        lambda x: at.cross_entropy(x, t, w, reduction=reduction, label_smoothing=0.1),
        (_x(2, 5, 3, 2),))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_k_dimensional_gradient_in_forward(reduction):
    """Class indices, mean or sum: the gradient computed in the forward's pass
    (aclnnCpuCrossEntropyLossWithGrad), with the z-loss, and PyTorch's composite for double
    backward."""
    w = torch.rand(5, dtype=F64) + 0.5
    t = torch.randint(0, 5, (2, 3, 2), generator=torch.Generator().manual_seed(7))
    t[0, 1, 1] = -100

    def f(x):
        return at.cross_entropy(x, t, w, reduction=reduction, label_smoothing=0.1,
                                z_loss_scale=1e-2)
    assert "cross_entropy_with_grad" in type(f(_x(2, 5, 3, 2)).grad_fn).__name__
    assert torch.autograd.gradcheck(f, (_x(2, 5, 3, 2),))
    assert torch.autograd.gradgradcheck(f, (_x(2, 5, 3, 2),))


def test_linear_cross_entropy_k_dimensional_weight():
    t = torch.randint(0, 2, (4, 3), generator=torch.Generator().manual_seed(8))
    assert torch.autograd.gradcheck(
        lambda x, w, b: at.linear_cross_entropy(x, w, t, linear_bias=b),
        (_x(4, 3), _x(2, 3, 3, seed=2), _x(2, 3, seed=4)))
