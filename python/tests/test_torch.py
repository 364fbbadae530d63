"""aclnn_cpu.torch: the custom operators (opcheck, torch.compile, autograd) and the drop-in
cross_entropy / CrossEntropyLoss / log_softmax against torch.nn.functional in float64."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import aclnn_cpu
import aclnn_cpu.torch as at
from conftest import assert_close, logits, reference_cross_entropy, targets

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
OPTIONS = [
    dict(reduction="mean"), dict(reduction="sum"), dict(reduction="none"),
    dict(reduction="mean", weight=True, label_smoothing=0.1),
    dict(reduction="none", weight=True), dict(reduction="sum", label_smoothing=0.3),
    dict(reduction="mean", ignore_index=2), dict(reduction="mean", z_loss_scale=1e-3),
]


def _ids(o):
    return "+".join(f"{k}={v}" for k, v in o.items())


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("opts", OPTIONS, ids=_ids)
def test_cross_entropy_matches_functional(dtype, opts, rng):
    n, c = 29, 131
    ii = opts.get("ignore_index", -100)
    x = logits(n, c, dtype, rng).requires_grad_()
    t = targets(n, c, rng, ignore_index=ii)
    w = (torch.rand(c, generator=rng) + 0.5) if opts.get("weight") else None
    red, ls, z = opts["reduction"], opts.get("label_smoothing", 0.0), opts.get("z_loss_scale", 0.0)
    loss = at.cross_entropy(x, t, w, ignore_index=ii, reduction=red, label_smoothing=ls,
                            z_loss_scale=z)
    ref, _, xd = reference_cross_entropy(x, t, w, red, ii, ls, z)
    assert loss.dtype == dtype
    assert_close(loss, ref, dtype, n * c)
    upstream = torch.randn(loss.shape, generator=rng, dtype=torch.float64)
    upstream = upstream.to(dtype)
    (g,) = torch.autograd.grad(loss, x, upstream)
    (g_ref,) = torch.autograd.grad(ref, xd, upstream.double())
    assert g.dtype == dtype
    lp_max = F.log_softmax(xd.detach(), 1).abs().max().item()
    assert_close(g, g_ref, dtype, c, lp_max)


def test_cross_entropy_returns_z_loss_and_int32_targets(rng):
    x = logits(16, 50, torch.float32, rng).requires_grad_()
    t = targets(16, 50, rng, dtype=torch.int32)
    loss, zl = at.cross_entropy(x, t, z_loss_scale=1e-2, return_z_loss=True)
    ref, ref_zl, xd = reference_cross_entropy(x, t, None, "mean", -100, 0.0, 1e-2)
    assert_close(loss, ref, torch.float32, 800)
    assert_close(zl, ref_zl, torch.float32, 800)
    # The z-loss output's own gradient: d(loss + zl)/dx = d(CE)/dx + 2 d(zl)/dx.
    (g,) = torch.autograd.grad(loss + zl, x)
    (g_ref,) = torch.autograd.grad(ref + ref_zl, xd)
    assert_close(g, g_ref, torch.float32, 50, F.log_softmax(xd.detach(), 1).abs().max().item())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_fp32_loss_for_16_bit_inputs(dtype, rng):
    n, c = 64, 1000
    x = logits(n, c, dtype, rng).requires_grad_()
    t = targets(n, c, rng)
    ref, ref_zl, xd = reference_cross_entropy(x, t, None, "mean", -100, 0.1, 1e-3)
    loss, zl = at.cross_entropy(x, t, label_smoothing=0.1, z_loss_scale=1e-3,
                                return_z_loss=True, fp32_loss=True)
    assert loss.dtype == zl.dtype == torch.float32
    assert_close(loss, ref, torch.float32, n * c)
    assert_close(zl, ref_zl, torch.float32, n * c)
    rounded = at.cross_entropy(x, t, label_smoothing=0.1, z_loss_scale=1e-3)
    assert rounded.dtype == dtype
    assert_close(rounded, ref, dtype, n * c)  # the default: rounded to the input's 16 bits
    (g,) = torch.autograd.grad(loss, x)
    (g_ref,) = torch.autograd.grad(ref, xd)
    assert g.dtype == dtype
    assert_close(g, g_ref, dtype, c, F.log_softmax(xd.detach(), 1).abs().max().item())


def test_unbatched_input_and_module(rng):
    x = logits(1, 40, torch.float32, rng)[0].requires_grad_()
    t = torch.tensor(7)
    for red in ("mean", "sum", "none"):
        loss = at.CrossEntropyLoss(reduction=red, label_smoothing=0.05)(x, t)
        ref = torch.nn.CrossEntropyLoss(reduction=red, label_smoothing=0.05)(x.double(), t)
        assert loss.shape == ref.shape == ()
        assert_close(loss, ref, torch.float32, 40)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        legacy = at.cross_entropy(x[None], t[None], size_average=False)
    assert_close(legacy, F.cross_entropy(x[None].double(), t[None], reduction="sum"),
                 torch.float32, 40)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_log_softmax_with_autograd(dtype, rng):
    x = (torch.randn(6, 7, 8, generator=rng) * 2).to(dtype).requires_grad_()
    y = at.log_softmax(x, 1)
    xd = x.detach().double().requires_grad_()
    y_ref = F.log_softmax(xd, 1)
    assert_close(y, y_ref, dtype, 7)
    up = torch.randn(y.shape, generator=rng, dtype=torch.float64)
    (g,) = torch.autograd.grad(y, x, up.to(dtype))
    (g_ref,) = torch.autograd.grad(y_ref, xd, up.to(dtype).double())
    assert_close(g, g_ref, dtype, 7, y_ref.detach().abs().max().item())


def test_log_softmax_dtype_argument(rng):
    x = torch.randn(5, 9, generator=rng).to(torch.bfloat16)
    y = at.log_softmax(x, -1, dtype=torch.float32)
    assert y.dtype == torch.float32
    assert_close(y, F.log_softmax(x.double(), -1), torch.float32, 9)


def test_unsupported_inputs_raise_not_implemented(rng):
    x = torch.randn(4, 5, 6)
    with pytest.raises(NotImplementedError, match="grad_in_forward with a K-dimensional input"):
        at.cross_entropy(x, torch.zeros(4, 6, dtype=torch.long), lean=True, grad_in_forward=True)
    with pytest.raises(NotImplementedError, match="take class-index targets, not class prob"):
        at.cross_entropy(x[:, :, 0], torch.softmax(x[:, :, 0], 1), z_loss_scale=1e-3)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_probabilities_gradient_in_forward(dtype, reduction, rng):
    """Class probabilities that need no gradient: by default the gradient is computed in the
    forward's pass (aclnnCpuCrossEntropyLossProbWithGrad), the bits of the two-pass path for
    loss.backward() and for any other loss gradient (the gradient operator again there);
    grad_in_forward=False keeps the two passes, a target that requires a gradient too."""
    n, c = 29, 131
    x = logits(n, c, dtype, rng)
    q = torch.softmax(torch.randn(n, c, generator=rng), 1).to(dtype)
    w = torch.rand(c, generator=rng) + 0.5
    for g in (1.0, 0.75):
        fused, two_pass = x.clone().requires_grad_(), x.clone().requires_grad_()
        loss = at.cross_entropy(fused, q, w, reduction=reduction, label_smoothing=0.1)
        assert "prob_with_grad" in type(loss.grad_fn).__name__
        loss2 = at.cross_entropy(two_pass, q, w, reduction=reduction, label_smoothing=0.1,
                                 grad_in_forward=False)
        assert "prob_with_grad" not in type(loss2.grad_fn).__name__
        (loss * g).backward()
        (loss2 * g).backward()
        assert torch.equal(loss, loss2) and torch.equal(fused.grad, two_pass.grad)
    qg = q.clone().requires_grad_()
    assert "prob_with_grad" not in type(at.cross_entropy(x.clone().requires_grad_(), qg,
                                                         reduction=reduction).grad_fn).__name__
    with pytest.raises(NotImplementedError, match="grad_in_forward with class probabilities"):
        at.cross_entropy(x.clone().requires_grad_(), q, reduction="none", grad_in_forward=True)


K_DIM_OPTIONS = [
    dict(reduction="mean", weight=True, label_smoothing=0.1, z_loss_scale=1e-3),
    dict(reduction="none", z_loss_scale=1e-3), dict(reduction="sum", ignore_index=255),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "strided"])
@pytest.mark.parametrize("opts", K_DIM_OPTIONS, ids=_ids)
def test_k_dimensional_cross_entropy_matches_functional(dtype, layout, opts, rng):
    """(N, C, H, W) logits through the library's column tiles (contiguous), one position at a
    time (channels-last: class stride 1; strided: every other column), against F.cross_entropy
    in float64 with the z-loss, value and input gradient."""
    n, c, h, w = 3, 7, 5, 40
    x = (torch.randn(n, c, h, 2 * w, generator=rng, dtype=torch.float64) * 2).to(dtype)
    x = x[..., ::2] if layout == "strided" else x[..., :w].contiguous()
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    x.requires_grad_()
    ii = opts.get("ignore_index", -100)
    t = torch.randint(0, c, (n, h, w), generator=rng)
    t[:, ::2, ::3] = ii
    wt = (torch.rand(c, generator=rng) + 0.5).to(dtype) if opts.get("weight") else None
    red, ls, z = opts["reduction"], opts.get("label_smoothing", 0.0), opts.get("z_loss_scale", 0.0)
    loss = at.cross_entropy(x, t, wt, ignore_index=ii, reduction=red, label_smoothing=ls,
                            z_loss_scale=z)
    ref, _, xd = reference_cross_entropy(x, t, wt, red, ii, ls, z)
    assert loss.shape == ref.shape and loss.dtype == dtype
    assert_close(loss, ref, dtype, c * n * h * w)
    g = (torch.rand(ref.shape, generator=rng, dtype=torch.float64) + 0.5).to(dtype)
    loss.backward(g)
    ref.backward(g.double())
    assert_close(x.grad, xd.grad, dtype, c)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_k_dimensional_gradient_in_forward(dtype, reduction, rng):
    """K-dimensional class indices: by default the gradient is computed in the forward's pass
    (aclnnCpuCrossEntropyLossWithGrad), the bits of the two-pass path for loss.backward(), for
    any other loss gradient and with the z-loss's own gradient (the gradient operator from the
    saved lse there); grad_in_forward=False, reduction "none" and inplace_backward keep the two
    passes."""
    x = (torch.randn(3, 7, 5, 40, generator=rng) * 2).to(dtype)
    t = torch.randint(0, 7, (3, 5, 40), generator=rng)
    t[:, ::2, ::3] = -100
    w = torch.rand(7, generator=rng) + 0.5
    kw = dict(reduction=reduction, label_smoothing=0.1, z_loss_scale=1e-3)
    for g, with_z in ((1.0, False), (0.75, False), (1.0, True)):
        fused, two_pass = x.clone().requires_grad_(), x.clone().requires_grad_()
        loss, z = at.cross_entropy(fused, t, w, return_z_loss=True, **kw)
        assert "cross_entropy_with_grad" in type(loss.grad_fn).__name__
        loss2, z2 = at.cross_entropy(two_pass, t, w, return_z_loss=True, grad_in_forward=False,
                                     **kw)
        assert "cross_entropy_with_grad" not in type(loss2.grad_fn).__name__
        ((loss + z if with_z else loss) * g).backward()
        ((loss2 + z2 if with_z else loss2) * g).backward()
        assert torch.equal(loss, loss2) and torch.equal(z, z2)
        assert torch.equal(fused.grad, two_pass.grad)
    for other in (dict(reduction="none"), dict(inplace_backward=True)):
        y = x.clone().requires_grad_() * 1.0
        name = type(at.cross_entropy(y, t, **other).grad_fn).__name__
        assert "cross_entropy_with_grad" not in name
    with pytest.raises(NotImplementedError, match="grad_in_forward with a K-dimensional input"):
        at.cross_entropy(x.clone().requires_grad_(), t, reduction="none", grad_in_forward=True)


def test_k_dimensional_gradient_in_place(rng):
    """inplace_backward writes the gradient over the (intermediate) logits: the same values as
    out of place, and the memory of the logits holds them."""
    x = torch.randn(2, 6, 4, 33, generator=rng, requires_grad=True)
    t = torch.randint(0, 6, (2, 4, 33), generator=rng)
    y = x * 1.0
    at.cross_entropy(y, t, inplace_backward=True).backward()
    x2 = x.detach().clone().requires_grad_()
    at.cross_entropy(x2 * 1.0, t).backward()
    assert torch.equal(x.grad, x2.grad)


def test_library_errors_surface_as_exceptions(rng):
    x = torch.randn(4, 5)
    with pytest.raises(aclnn_cpu.AclnnValueError, match=r"target\[1\] = 9 is neither ignoreIndex"):
        at.cross_entropy(x, torch.tensor([0, 9, 1, 2]))
    with pytest.raises(aclnn_cpu.AclnnValueError, match="labelSmoothing -0.5 is outside"):
        at.cross_entropy(x, torch.tensor([0, 1, 1, 2]), label_smoothing=-0.5)


def _opcheck_cases(rng):
    x = logits(11, 23, torch.float32, rng)
    t = targets(11, 23, rng)
    t2 = t.clone()
    t2[t2 == -100] = 4
    w = torch.rand(23, generator=rng) + 0.5
    x4 = torch.randn(2, 7, 3, 5, generator=rng)
    t4 = torch.randint(0, 7, (2, 3, 5), generator=rng)
    t4[0, 0, 0] = -100
    return [
        (torch.ops.aclnn_cpu.cross_entropy_loss.default,
         (x.clone().requires_grad_(), t, None, "mean", -100, 0.0, 0.0, False)),
        (torch.ops.aclnn_cpu.cross_entropy_loss.default,
         (x.clone().requires_grad_(), t, w, "none", -100, 0.1, 1e-3, False)),
        (torch.ops.aclnn_cpu.cross_entropy_loss.default,
         (x.to(torch.bfloat16).requires_grad_(), t2.int(), w, "sum", 4, 0.2, 0.0, False)),
        (torch.ops.aclnn_cpu.cross_entropy_loss.default,
         (x.to(torch.float16).requires_grad_(), t, w, "mean", -100, 0.1, 1e-2, True)),
        (torch.ops.aclnn_cpu.cross_entropy_loss_grad.default,
         (torch.tensor(0.5), F.log_softmax(x, 1), t, w, None, None, "mean", -100, 0.1, 0.0)),
        (torch.ops.aclnn_cpu.cross_entropy_loss_grad.default,
         (torch.rand(11), F.log_softmax(x, 1), t, None, torch.rand(11),
          torch.logsumexp(x, 1), "none", -100, 0.0, 1e-2)),
        (torch.ops.aclnn_cpu.log_softmax.default, (x.clone().requires_grad_(), 1, None)),
        (torch.ops.aclnn_cpu.log_softmax.default,
         (torch.randn(3, 4, 5, generator=rng).requires_grad_(), 0, torch.float64)),
        (torch.ops.aclnn_cpu.cross_entropy_loss.default,
         (x.double().requires_grad_(), t, w.double(), "mean", -100, 0.1, 1e-2, False)),
        (torch.ops.aclnn_cpu.cross_entropy_prob.default,
         (x.clone().requires_grad_(), torch.softmax(x * 0.5, 1).requires_grad_(), w, "mean",
          0.1)),
        (torch.ops.aclnn_cpu.cross_entropy_prob.default,
         (x.to(torch.bfloat16).requires_grad_(), torch.softmax(x, 1).to(torch.bfloat16), None,
          "none", 0.0)),
        (torch.ops.aclnn_cpu.cross_entropy_prob_grad.default,
         (torch.rand(11), x, torch.softmax(x, 1), w, torch.logsumexp(x.double(), 1), "none",
          0.2)),
        (torch.ops.aclnn_cpu.cross_entropy_prob_with_grad.default,
         (x.clone().requires_grad_(), torch.softmax(x * 0.5, 1), w, "mean", 0.1)),
        (torch.ops.aclnn_cpu.cross_entropy_prob_with_grad.default,
         (x.to(torch.bfloat16).requires_grad_(), torch.softmax(x, 1).to(torch.bfloat16), None,
          "sum", 0.0)),
        (torch.ops.aclnn_cpu.log_softmax_backward.default,
         (torch.randn(11, 23, generator=rng), F.log_softmax(x, 1), 1, torch.float32)),
        (torch.ops.aclnn_cpu.cross_entropy_with_grad.default,
         (x4.clone().requires_grad_(), t4, w[:7], "mean", -100, 0.1, 1e-3, False)),
        (torch.ops.aclnn_cpu.cross_entropy_with_grad.default,
         (x4.to(torch.bfloat16).requires_grad_(), t4, None, "sum", -100, 0.0, 0.0, True)),
    ]


@pytest.mark.parametrize("case", range(17))
def test_opcheck(case, rng):
    op, args = _opcheck_cases(rng)[case]
    torch.library.opcheck(op, args)


def test_torch_compile_fullgraph_matches_eager(rng):
    x = logits(32, 97, torch.float32, rng)
    t = targets(32, 97, rng)
    w = torch.rand(97, generator=rng) + 0.5

    def step(x, t, w):
        # Only exact arithmetic around the opaque calls, so that compiled and eager agree bit
        # for bit.
        y = at.log_softmax(x * 2.0, 1)
        return at.cross_entropy(y, t, w, label_smoothing=0.1) * 0.5

    compiled = torch.compile(step, fullgraph=True, backend="inductor")
    xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
    le, lc = step(xe, t, w), compiled(xc, t, w)
    le.backward()
    lc.backward()
    assert torch.equal(le, lc)
    assert torch.equal(xe.grad, xc.grad)


def test_threads_follow_torch_get_num_threads():
    # The library logs each plan with its thread count (ASCEND_GLOBAL_LOG_LEVEL=0).
    code = ("import torch, aclnn_cpu.torch as at\n"
            "torch.set_num_threads(1)\n"
            "at.cross_entropy(torch.randn(4096, 512), torch.zeros(4096, dtype=torch.long))\n")
    env = dict(os.environ, ASCEND_GLOBAL_LOG_LEVEL="0", ACLNN_CPU_NUM_THREADS="2")
    log = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stderr
    assert "up to 1 threads" in log, log[-2000:]


def _peak_during(fn):
    """Bytes the process's peak resident size grows by while fn runs (Linux: VmHWM, reset
    through /proc/self/clear_refs)."""
    def status(key):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = status("VmRSS:")
    result = fn()
    return status("VmHWM:") - base, result


@pytest.mark.parametrize("lean", [False, True])
def test_backward_allocates_only_the_gradient(lean, rng):
    # Regression: autograd materialized a zero (N, C) gradient for the unused log_prob output.
    x = logits(2048, 8192, torch.float32, rng).requires_grad_()
    t = targets(2048, 8192, rng)
    nc = x.numel() * x.element_size()
    loss = at.cross_entropy(x, t, label_smoothing=0.1, lean=lean)
    grown, _ = _peak_during(lambda: torch.autograd.grad(loss, x))
    assert grown < 1.25 * nc, f"the backward grew the peak by {grown / nc:.2f} (N, C) tensors"
