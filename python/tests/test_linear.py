"""The fused linear + cross-entropy (aclnn_cpu.torch.linear_cross_entropy, docs/large_vocab.md)
against F.linear + F.cross_entropy in float64: every reduction and option, chunk boundaries,
float32, bfloat16 and float16, autograd (gradients computed in the forward, or again in the backward),
opcheck, and the library's sentences as exceptions."""

import pytest
import torch
import torch.nn.functional as F

import aclnn_cpu as ac
import aclnn_cpu.torch as at
from conftest import assert_close, targets

OPTIONS = [
    dict(reduction="mean"), dict(reduction="none", weight=True, bias=True),
    dict(reduction="mean", weight=True, bias=True, label_smoothing=0.1),
    dict(reduction="sum", label_smoothing=0.3, ignore_index=2),
    dict(reduction="mean", z_loss_scale=1e-3, bias=True),
    # Gemma's final-logit soft-capping: a cap that binds (logits of a few units) and one that
    # barely does.
    dict(reduction="mean", bias=True, softcap=1.5),
    dict(reduction="none", weight=True, label_smoothing=0.1, softcap=30.0),
]


def _ids(o):
    return "+".join(f"{k}={v}" for k, v in o.items())


def _problem(n, h, v, dtype, opts, rng):
    ii = opts.get("ignore_index", -100)
    x = torch.randn(n, h, generator=rng, dtype=torch.float64).to(dtype).requires_grad_()
    lw = (torch.randn(v, h, generator=rng, dtype=torch.float64) * 0.3).to(dtype).requires_grad_()
    b = (torch.randn(v, generator=rng, dtype=torch.float64).to(dtype).requires_grad_()
         if opts.get("bias") else None)
    t = targets(n, v, rng, ignore_index=ii)
    w = (torch.rand(v, generator=rng) + 0.5) if opts.get("weight") else None
    return x, lw, b, t, w, ii


def _loss_of_logits(z, t, w, ii, opts):
    """F.cross_entropy in float64 plus the z-loss, reduced like the loss."""
    red, zs = opts["reduction"], opts.get("z_loss_scale", 0.0)
    wd = w.double() if w is not None else None
    loss = F.cross_entropy(z, t, wd, ignore_index=ii, reduction=red,
                           label_smoothing=opts.get("label_smoothing", 0.0))
    kept = (t != ii).double()
    zl = zs * torch.logsumexp(z, dim=1) ** 2 * kept
    zl = zl if red == "none" else (zl.sum() if red == "sum" else zl.sum() / kept.sum())
    return loss + zl


def _reference(x, lw, b, t, w, ii, opts):
    xd, lwd = x.detach().double().requires_grad_(), lw.detach().double().requires_grad_()
    bd = b.detach().double().requires_grad_() if b is not None else None
    z = F.linear(xd, lwd, bd)
    z.retain_grad()  # dloss/dlogits, for the bfloat16 bounds
    cap = opts.get("softcap", 0.0)
    capped = cap * torch.tanh(z / cap) if cap else z
    return _loss_of_logits(capped, t, w, ii, opts), xd, lwd, bd, z


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("opts", OPTIONS, ids=_ids)
@pytest.mark.parametrize("chunk_size", [0, 1, 7])
def test_matches_linear_then_cross_entropy(dtype, opts, chunk_size, rng):
    n, h, v = 29, 24, 131  # 7 does not divide 29; 131 is no multiple of a vector width
    x, lw, b, t, w, ii = _problem(n, h, v, dtype, opts, rng)
    red = opts["reduction"]
    loss = at.linear_cross_entropy(x, lw, t, linear_bias=b, weight=w, reduction=red,
                                   ignore_index=ii,
                                   label_smoothing=opts.get("label_smoothing", 0.0),
                                   z_loss_scale=opts.get("z_loss_scale", 0.0),
                                   chunk_size=chunk_size, fp32_loss=True,
                                   softcap=opts.get("softcap", 0.0))
    ref, xd, lwd, bd, z = _reference(x, lw, b, t, w, ii, opts)
    assert loss.dtype == torch.float32
    # The logits are dot products of length h in f32: that error, then the loss's own.
    assert_close(loss, ref, torch.float32, h + v)
    g = torch.rand(ref.shape, generator=rng, dtype=torch.float64) + 0.5
    loss.backward(g.to(loss.dtype))
    ref.backward(g)
    if dtype == torch.float32:
        assert_close(x.grad, xd.grad, dtype, v)
        assert_close(lw.grad, lwd.grad, dtype, n)
        if b is not None:
            assert_close(b.grad, bd.grad, dtype, n)
        return
    # bfloat16: dlogits are rounded to bfloat16 before the products (as F.linear's backward
    # has them), each off by up to 2^-8 of itself (bfloat16's unit roundoff); the products add
    # those errors up; the result is rounded to bfloat16 once, or twice when a gradient computed
    # in the forward is scaled by an upstream gradient other than 1.
    # float16: f32 products on converted blocks, dlogits kept in f32 (products off by up to
    # (length + 8) f32 roundings of their magnitude), the result rounded to float16 once or twice.
    dz = z.grad
    half = dtype == torch.float16
    for got, want, bound in ((x.grad, xd.grad, dz.abs() @ lwd.detach().abs()),
                             (lw.grad, lwd.grad, dz.abs().T @ xd.detach().abs())):
        if half:
            tol = 2.0 ** -24 * (max(n, v) + 8) * bound + 2.0 ** -10 * want.abs() + 1e-7
        else:
            tol = 2.0 ** -8 * bound + 2.0 ** -7 * want.abs() + 1e-5 * want.abs().max()
        assert ((got.double() - want).abs() <= tol).all(), (got.double() - want).abs().max()
    if b is not None:  # column sums of f32 dlogits, rounded once or twice
        tol = 4 * 2.0 ** -24 * (n + 8) * dz.abs().sum(0) + \
            (2.0 ** -10 if half else 2.0 ** -7) * bd.grad.abs()
        assert ((b.grad.double() - bd.grad).abs() <= tol + 1e-6).all()



def test_gradients_from_the_forward_pass_and_from_the_backward_agree(rng):
    """mean/sum compute the gradients in the forward; "none" computes them again in the
    backward: summing "none" must give "sum"'s gradients."""
    opts = dict(weight=True, bias=True, label_smoothing=0.1)
    x, lw, b, t, w, ii = _problem(40, 16, 300, torch.float32, opts, rng)
    at.linear_cross_entropy(x, lw, t, linear_bias=b, weight=w, reduction="sum",
                            label_smoothing=0.1, chunk_size=16).backward()
    grads = [p.grad.clone() for p in (x, lw, b)]
    for p in (x, lw, b):
        p.grad = None
    at.linear_cross_entropy(x, lw, t, linear_bias=b, weight=w, reduction="none",
                            label_smoothing=0.1, chunk_size=16).sum().backward()
    for got, want in zip((x.grad, lw.grad, b.grad), grads):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_scaled_upstream_gradient(rng):
    x, lw, b, t, w, ii = _problem(16, 8, 50, torch.float32, {}, rng)
    (at.linear_cross_entropy(x, lw, t) * 3.0).backward()
    ref, xd, lwd, _, _ = _reference(x, lw, b, t, w, ii, dict(reduction="mean"))
    (ref * 3.0).backward()
    assert_close(x.grad, xd.grad, torch.float32, 50)
    assert_close(lw.grad, lwd.grad, torch.float32, 16)


def test_edges(rng):
    # One class; every row ignored (sum: 0 and zero gradients); leading dimensions.
    x, lw, b, t, w, ii = _problem(9, 5, 1, torch.float32, dict(bias=True), rng)
    loss = at.linear_cross_entropy(x, lw, t.clamp(max=0), linear_bias=b)
    assert loss.item() == pytest.approx(0.0, abs=1e-6)
    x, lw, b, t, w, ii = _problem(9, 5, 20, torch.float32, {}, rng)
    t[:] = -100
    loss = at.linear_cross_entropy(x, lw, t, reduction="sum")
    loss.backward()
    assert loss.item() == 0.0 and x.grad.abs().max().item() == 0.0
    x3 = torch.randn(2, 3, 5, generator=rng)
    t3 = torch.randint(0, 20, (2, 3), generator=rng)
    got = at.linear_cross_entropy(x3, lw.detach(), t3, reduction="none")
    want = F.cross_entropy(F.linear(x3, lw.detach()).reshape(6, 20), t3.reshape(6),
                           reduction="none").reshape(2, 3)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_errors_carry_the_library_sentence(rng):
    x, lw, b, t, w, ii = _problem(8, 4, 10, torch.float32, {}, rng)
    with pytest.raises(ac.AclnnTypeError, match="aclnnCpuLinearCrossEntropy: input has dtype INT32"):
        at.linear_cross_entropy(x.detach().int(), lw.detach().int(), t)
    t[3] = 10
    with pytest.raises(ac.AclnnValueError, match="aclnnCpuLinearCrossEntropy"):
        at.linear_cross_entropy(x, lw, t)
    with pytest.raises(ac.AclnnValueError, match="last dimensions"):
        at.linear_cross_entropy(x, lw[:, :3], t.clamp(max=9))


@pytest.mark.parametrize("with_grads", [False, True])
def test_opcheck(with_grads, rng):
    x, lw, b, t, w, ii = _problem(12, 8, 40, torch.float32, dict(bias=True, weight=True), rng)
    args = (x.detach(), lw.detach(), t, b.detach(), w, "mean", -100, 0.1, 1e-3, 5, False,
            with_grads, 4.0)
    torch.library.opcheck(torch.ops.aclnn_cpu.linear_cross_entropy.default, args,
                          test_utils=("test_schema", "test_faketensor",
                                      "test_autograd_registration"))
    g = torch.rand(12, generator=rng)
    torch.library.opcheck(torch.ops.aclnn_cpu.linear_cross_entropy_backward.default,
                          (g, x.detach(), lw.detach(), t, b.detach(), w, "none", -100, 0.1, 1e-3,
                           5, 4.0))


def test_compile(rng):
    x, lw, b, t, w, ii = _problem(16, 8, 50, torch.float32, dict(bias=True), rng)
    fn = torch.compile(lambda x, lw, t, b: at.linear_cross_entropy(x, lw, t, linear_bias=b),
                       fullgraph=True)
    torch.testing.assert_close(fn(x, lw, t, b), at.linear_cross_entropy(x, lw, t, linear_bias=b))


@pytest.mark.parametrize("path", ["fused", "lean", "lean_grad_in_forward"])
@pytest.mark.parametrize("reduction", ["sum", "none", "mean"])
def test_large_logits_as_accurate_as_pytorch_float32(path, reduction):
    """Regression (issue 27): logits up to ~600 (x, W uniform in [-9, 9]). The gradient used an
    f32 lse, which is off by up to |lse| * 2^-25 and so put every p off by as much: 4-10x
    PyTorch's own float32 error. It must now be within 2x of it."""
    g = torch.Generator().manual_seed(0)
    n, h, v = 16, 8, 64
    x64 = torch.rand(n, h, generator=g, dtype=torch.float64) * 18 - 9
    w64 = torch.rand(v, h, generator=g, dtype=torch.float64) * 18 - 9
    t = torch.randint(0, v, (n,), generator=g)
    if path == "lean_grad_in_forward" and reduction == "none":
        pytest.skip("grad_in_forward takes mean and sum")

    def errors(dtype, ours):
        x = x64.to(dtype).requires_grad_()
        w = w64.to(dtype).requires_grad_()
        if ours and path == "fused":
            loss = at.linear_cross_entropy(x, w, t, reduction=reduction)
        elif ours:
            loss = at.cross_entropy(F.linear(x, w), t, reduction=reduction, lean=True,
                                    grad_in_forward=path == "lean_grad_in_forward")
        else:
            loss = F.cross_entropy(F.linear(x, w), t, reduction=reduction)
        up = torch.linspace(0.5, 1.5, loss.numel(), dtype=torch.float64).reshape(loss.shape)
        return [gr.double() for gr in torch.autograd.grad(loss, (x, w), up.to(dtype))]

    ref = errors(torch.float64, False)
    theirs = [(a - r).abs().max().item() for a, r in zip(errors(torch.float32, False), ref)]
    ours = [(a - r).abs().max().item() for a, r in zip(errors(torch.float32, True), ref)]
    for name, o, p in zip(("d_input", "d_weight"), ours, theirs):
        assert o <= 2 * p, f"{name}: error {o:.3g}, PyTorch float32 {p:.3g}"
