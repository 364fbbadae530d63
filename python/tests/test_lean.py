"""The lean cross-entropy (docs/large_vocab.md): the loss without (N, C) outputs and the
gradient from the logits, in place or not; as array functions and as torch operators with
autograd, against torch.nn.functional in float64."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aclnn_cpu as ac
import aclnn_cpu.torch as at
from conftest import assert_close, logits, reference_cross_entropy, targets

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
OPTIONS = [
    dict(reduction="mean"), dict(reduction="none", weight=True),
    dict(reduction="mean", weight=True, label_smoothing=0.1),
    dict(reduction="sum", label_smoothing=0.3, ignore_index=2),
    dict(reduction="mean", z_loss_scale=1e-3),
]


def _ids(o):
    return "+".join(f"{k}={v}" for k, v in o.items())


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("opts", OPTIONS, ids=_ids)
@pytest.mark.parametrize("inplace", [False, True])
def test_lean_matches_functional(dtype, opts, inplace, rng):
    n, c = 29, 131
    ii = opts.get("ignore_index", -100)
    x0 = logits(n, c, dtype, rng).requires_grad_()
    x = x0 * 1  # an intermediate, as a model's logits are (in place needs one)
    t = targets(n, c, rng, ignore_index=ii)
    w = (torch.rand(c, generator=rng) + 0.5) if opts.get("weight") else None
    red, ls, z = opts["reduction"], opts.get("label_smoothing", 0.0), opts.get("z_loss_scale", 0.0)
    loss = at.cross_entropy(x, t, w, ignore_index=ii, reduction=red, label_smoothing=ls,
                            z_loss_scale=z, lean=True, inplace_backward=inplace, fp32_loss=True)
    ref, _, xd = reference_cross_entropy(x0, t, w, red, ii, ls, z)
    assert loss.dtype == torch.float32
    # The loss is rounded once to float32 whatever the input's dtype.
    assert_close(loss, ref, torch.float32, n * c)
    upstream = torch.randn(loss.shape, generator=rng, dtype=torch.float64).float()
    (g,) = torch.autograd.grad(loss, x0, upstream)
    (g_ref,) = torch.autograd.grad(ref, xd, upstream.double())
    assert g.dtype == dtype
    lp_max = F.log_softmax(xd.detach(), 1).abs().max().item()
    assert_close(g, g_ref, dtype, c, lp_max)


def test_lean_loss_in_the_input_dtype_equals_the_cann_path(rng):
    x = logits(40, 300, torch.bfloat16, rng)
    t = targets(40, 300, rng)
    a = at.cross_entropy(x, t, label_smoothing=0.1)
    b = at.cross_entropy(x, t, label_smoothing=0.1, lean=True)
    assert b.dtype == torch.bfloat16
    assert torch.equal(a, b)


def test_inplace_backward_writes_over_the_logits(rng):
    x0 = logits(16, 64, torch.float32, rng).requires_grad_()
    x = x0 * 1
    ptr = x.data_ptr()
    loss = at.cross_entropy(x, targets(16, 64, rng), lean=True, inplace_backward=True)
    (g,) = torch.autograd.grad(loss, x)
    assert g.data_ptr() == ptr  # the gradient lives where the logits were


def test_inplace_backward_needs_lean(rng):
    with pytest.raises(NotImplementedError, match="inplace_backward needs lean=True"):
        at.cross_entropy(torch.randn(3, 4), torch.tensor([0, 1, 2]), inplace_backward=True)


def test_array_functions_numpy(rng):
    x = np.random.default_rng(1).standard_normal((7, 50)).astype(np.float32)
    t = np.array([0, 3, -100, 49, 7, 7, 1])
    r = ac.cross_entropy_loss_lse(x, t, reduction="none")
    assert r.lse.dtype == np.float32 and r.lse.shape == (7,)
    full = ac.cross_entropy_loss(x, t, reduction="none", fp32_loss=True)
    assert np.array_equal(r.loss, full.loss)
    g = ac.cross_entropy_loss_grad_from_logits(np.ones(7, np.float32), x, t, r.lse,
                                               reduction="none")
    g_ref = ac.cross_entropy_loss_grad(np.ones(7, np.float32), full.log_prob, t,
                                       reduction="none")
    np.testing.assert_allclose(g, g_ref, rtol=0, atol=2e-6)
    x2 = x.copy()
    out = ac.cross_entropy_loss_grad_from_logits(np.ones(7, np.float32), x2, t, r.lse,
                                                 reduction="none", inplace=True)
    assert out is x2 and np.array_equal(x2, g)
    # Another view of the logits' bytes is refused, not computed half in place.
    buf = np.zeros((7, 51), np.float32)
    buf[:, :50] = x
    with pytest.raises(ac.AclnnValueError, match="out overlaps logits"):
        ac.cross_entropy_loss_grad_from_logits(1.0, buf[:, :50], t, r.lse, out=buf[:, 1:])


def _opcheck_cases(rng):
    x = logits(11, 23, torch.float32, rng)
    t = targets(11, 23, rng)
    w = torch.rand(23, generator=rng) + 0.5
    lse = torch.logsumexp(x, 1)
    return [
        (torch.ops.aclnn_cpu.cross_entropy_lean.default,
         (x.clone().requires_grad_(), t, None, "mean", -100, 0.0, 0.0, True, False)),
        (torch.ops.aclnn_cpu.cross_entropy_lean.default,
         (x.to(torch.bfloat16).requires_grad_(), t, w, "none", -100, 0.1, 1e-3, False, False)),
        (torch.ops.aclnn_cpu.cross_entropy_grad_from_logits.default,
         (torch.tensor(0.5), x, t, w, None, lse, "mean", -100, 0.1, 0.0)),
        (torch.ops.aclnn_cpu.cross_entropy_grad_from_logits_.default,
         (torch.rand(11), x.clone(), t, None, torch.rand(11), lse, "none", -100, 0.0, 1e-2)),
    ]


@pytest.mark.parametrize("case", range(4))
def test_opcheck(case, rng):
    op, args = _opcheck_cases(rng)[case]
    torch.library.opcheck(op, args)


def test_torch_compile_fullgraph(rng):
    x = logits(32, 97, torch.float32, rng)
    t = targets(32, 97, rng)

    def step(x):
        return at.cross_entropy(x, t, label_smoothing=0.1, lean=True, fp32_loss=True)

    eager = step(x)
    compiled = torch.compile(step, fullgraph=True)(x)
    assert torch.equal(eager, compiled)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_grad_in_forward_matches_the_lean_backward(dtype, inplace, reduction, rng):
    """grad_in_forward computes in the forward what the lean backward computes: the same loss
    and the same gradient bits (aclnnCpuCrossEntropyLossWithGrad)."""
    n, c = 29, 131
    x0 = logits(n, c, dtype, rng).requires_grad_()
    t = targets(n, c, rng)
    w = torch.rand(c, generator=rng) + 0.5
    grads = []
    for gif in (False, True):
        x = x0 * 1  # an intermediate
        x.retain_grad()
        loss = at.cross_entropy(x, t, w, reduction=reduction, label_smoothing=0.1,
                                z_loss_scale=1e-3, lean=True, fp32_loss=True,
                                inplace_backward=inplace, grad_in_forward=gif)
        (loss * 1).backward()  # 1: the saved gradient as it is
        grads.append((loss.detach(), x0.grad.clone()))
        x0.grad = None
    torch.testing.assert_close(grads[0][0], grads[1][0], rtol=0, atol=0)
    torch.testing.assert_close(grads[0][1], grads[1][1], rtol=0, atol=0)


def test_grad_in_forward_scaled_and_guarded(rng):
    n, c = 16, 50
    x0 = logits(n, c, torch.float32, rng).requires_grad_()
    t = targets(n, c, rng)
    (at.cross_entropy(x0 * 1, t, lean=True, grad_in_forward=True) * 2.5).backward()
    ref, _, xd = reference_cross_entropy(x0, t, None, "mean", -100, 0.0, 0.0)
    (ref * 2.5).backward()
    assert_close(x0.grad, xd.grad, torch.float32, c)
    with pytest.raises(NotImplementedError, match="grad_in_forward needs lean=True"):
        at.cross_entropy(x0, t, reduction="none", lean=True, grad_in_forward=True)
    with pytest.raises(ValueError, match="would overwrite a leaf"):
        at.cross_entropy(x0, t, lean=True, inplace_backward=True, grad_in_forward=True)
    # Logits that an earlier op saved for its backward: overwriting them is caught.
    y = torch.tanh(x0)  # tanh saves its output
    loss = at.cross_entropy(y, t, lean=True, inplace_backward=True, grad_in_forward=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_with_grad_array_function(rng):
    import numpy as np
    n, c = 12, 40
    x = np.random.default_rng(0).standard_normal((n, c)).astype(np.float32)
    t = np.arange(n) % c
    r = ac.cross_entropy_loss_with_grad(x, t, label_smoothing=0.1)
    lean = ac.cross_entropy_loss_lse(x, t, label_smoothing=0.1)
    g = ac.cross_entropy_loss_grad_from_logits(1.0, x, t, lean.lse, label_smoothing=0.1)
    assert np.array_equal(r.grad, g) and np.array_equal(r.loss, lean.loss)
    r2 = ac.cross_entropy_loss_with_grad(x, t, label_smoothing=0.1, inplace=True)
    assert r2.grad is x and np.array_equal(x, g)


def test_prob_with_grad_array_function():
    """aclnnCpuCrossEntropyLossProbWithGrad on NumPy arrays: the forward's and the gradient's
    bits (gradLoss given or ones), out of place and over the input."""
    gen = np.random.default_rng(1)
    n, c = 9, 70
    x = gen.standard_normal((n, c)).astype(np.float32)
    q = gen.random((n, c)).astype(np.float32)
    q /= q.sum(1, keepdims=True)
    w = (gen.random(c) + 0.5).astype(np.float32)
    fwd = ac.cross_entropy_loss_prob(x, q, w, reduction="sum", label_smoothing=0.1)
    grads = {}
    for g in (None, 0.5):
        r = ac.cross_entropy_loss_prob_with_grad(x, q, w, grad_loss=g, reduction="sum",
                                                 label_smoothing=0.1)
        grads[g] = ac.cross_entropy_loss_prob_grad(1.0 if g is None else g, x, q, fwd[1], w,
                                                   reduction="sum", label_smoothing=0.1)
        assert np.array_equal(r.loss, fwd[0]) and np.array_equal(r.lse, fwd[1])
        assert np.array_equal(r.grad, grads[g])
    r2 = ac.cross_entropy_loss_prob_with_grad(x, q, w, reduction="sum", label_smoothing=0.1,
                                              inplace=True)
    assert r2.grad is x and np.array_equal(x, grads[None])
