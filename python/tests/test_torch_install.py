"""aclnn_cpu.torch.install(): PyTorch's own functions, unchanged, run the library's kernels, give
PyTorch's results (within the dtype's tolerance), fall back with a reason where ours do not
apply, and uninstall() restores PyTorch's kernels. PyTorch's OpInfo samples under install() are
in test_opinfo.py."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import aclnn_cpu.torch as at
from conftest import assert_close


@pytest.fixture(autouse=True)
def _uninstalled():
    at.uninstall()
    at.reset_routing_counts()
    yield
    at.uninstall()


needs_chunked = pytest.mark.skipif(not hasattr(torch.nn, "LinearCrossEntropyOptions"),
                                   reason="this PyTorch has no chunked F.linear_cross_entropy")


def _grads(fn, *leaves):
    out = fn()
    grads = torch.autograd.grad(out, leaves)
    return out.detach(), grads


def _ours(op):
    return at.routing_counts().get((op, "aclnn_cpu"), 0)


def _theirs(op):
    return at.routing_counts().get((op, "pytorch"), 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("case", ["plain", "weighted_smoothed", "k_dim", "probabilities"])
def test_cross_entropy_routes_and_matches(case, dtype, rng):
    n, c = 12, 37
    x = (torch.randn(n, c, generator=rng, dtype=torch.float64) * 3).to(dtype)
    t = torch.randint(0, c, (n,), generator=rng)
    t[3] = -100
    kw = {}
    if case == "weighted_smoothed":
        kw = {"weight": torch.rand(c, generator=rng, dtype=torch.float64).to(dtype),
              "label_smoothing": 0.1, "reduction": "sum"}
    elif case == "k_dim":
        x = (torch.randn(2, c, 3, 5, generator=rng, dtype=torch.float64) * 3).to(dtype)
        t = torch.randint(0, c, (2, 3, 5), generator=rng)
        kw = {"reduction": "none"}
    elif case == "probabilities":
        t = torch.softmax(torch.randn(n, c, generator=rng, dtype=torch.float64), 1).to(dtype)
    x.requires_grad_()
    ref, (gref,) = _grads(lambda: F.cross_entropy(x, t, **kw).sum(), x)
    with at.install():
        got, (g,) = _grads(lambda: F.cross_entropy(x, t, **kw).sum(), x)
    assert _ours("aten::cross_entropy_loss") == 1 and _theirs("aten::cross_entropy_loss") == 0
    # Both against the float64 result: ours within the dtype's tolerance, as PyTorch's is.
    x64 = x.detach().double().requires_grad_()
    kw64 = {k: (v.double() if torch.is_tensor(v) else v) for k, v in kw.items()}
    t64 = t.double() if t.is_floating_point() else t
    r64, (g64,) = _grads(lambda: F.cross_entropy(x64, t64, **kw64).sum(), x64)
    assert_close(got, r64, dtype, c)
    assert_close(g, g64, dtype, c, log_prob_max=40.0)
    if dtype == torch.float64:
        assert torch.allclose(got.double(), ref.double(), rtol=1e-12, atol=1e-12)
        assert torch.allclose(g, gref, rtol=1e-10, atol=1e-12)


def test_log_softmax_forward_backward_and_double_backward(rng):
    x = torch.randn(5, 9, generator=rng, dtype=torch.float64, requires_grad=True)
    with at.install():
        assert torch.autograd.gradcheck(lambda v: F.log_softmax(v, 1), (x,))
        assert torch.autograd.gradgradcheck(lambda v: F.log_softmax(v, 1), (x,))
        assert torch.autograd.gradcheck(lambda v: torch.log_softmax(v, 0), (x,))
        h = torch.randn(4, 6, generator=rng).half()
        assert F.log_softmax(h, 1, dtype=torch.float32).dtype == torch.float32
    assert _ours("aten::_log_softmax") > 0 and _ours("aten::_log_softmax_backward_data") > 0
    assert _theirs("aten::_log_softmax") == 0


def test_cross_entropy_gradcheck_float64(rng):
    x = torch.randn(6, 7, generator=rng, dtype=torch.float64, requires_grad=True)
    t = torch.randint(0, 7, (6,), generator=rng)
    w = torch.rand(7, generator=rng, dtype=torch.float64)
    with at.install():
        for kw in ({}, {"weight": w, "label_smoothing": 0.2}, {"reduction": "none"}):
            assert torch.autograd.gradcheck(lambda v: F.cross_entropy(v, t, **kw), (x,))
    assert _ours("aten::cross_entropy_loss") > 0


@pytest.mark.parametrize("case", ["plain", "weighted_smoothed_sum", "none", "k_dim",
                                  "probabilities"])
def test_cross_entropy_double_backward_float64(case, rng):
    """Hessians through F.cross_entropy under install(): the backward computes a differentiable
    gradient (PyTorch's composite) when create_graph asks for one."""
    x = torch.randn(6, 7, generator=rng, dtype=torch.float64, requires_grad=True)
    t = torch.randint(0, 7, (6,), generator=rng)
    t[2] = -100
    kw = {}
    if case == "weighted_smoothed_sum":
        kw = {"weight": torch.rand(7, generator=rng, dtype=torch.float64) + 0.5,
              "label_smoothing": 0.2, "reduction": "sum"}
    elif case == "none":
        kw = {"reduction": "none"}
    elif case == "k_dim":
        x = torch.randn(2, 5, 3, generator=rng, dtype=torch.float64, requires_grad=True)
        t = torch.randint(0, 5, (2, 3), generator=rng)
    elif case == "probabilities":
        t = torch.softmax(torch.randn(6, 7, generator=rng, dtype=torch.float64), 1)
    with at.install():
        assert torch.autograd.gradgradcheck(lambda v: F.cross_entropy(v, t, **kw), (x,))
        # The first-order gradient still comes from the library.
        (g,) = torch.autograd.grad(F.cross_entropy(x, t, **kw).sum(), x)
    (ref,) = torch.autograd.grad(F.cross_entropy(x, t, **kw).sum(), x)
    assert torch.allclose(g, ref, rtol=1e-12, atol=1e-14)


def test_drop_in_double_backward_with_z_loss(rng):
    x = torch.randn(5, 9, generator=rng, dtype=torch.float64, requires_grad=True)
    t = torch.randint(0, 9, (5,), generator=rng)
    t[0] = -100

    def ours(v):
        loss, z = at.cross_entropy(v, t, lean=True, z_loss_scale=1e-2, return_z_loss=True)
        return loss + 3 * z

    assert torch.autograd.gradcheck(ours, (x,))
    assert torch.autograd.gradgradcheck(ours, (x,))


def test_uninstall_and_context_manager_restore_pytorch(rng):
    x = torch.randn(4, 5, generator=rng, requires_grad=True)
    t = torch.randint(0, 5, (4,), generator=rng)
    with at.install() as handle:
        assert at.is_installed()
        with at.install():  # nested: the outer one still owns the registration
            pass
        assert at.is_installed()
        assert "aclnn_cpu" in type(F.cross_entropy(x, t).grad_fn).__name__
    assert handle is not None and not at.is_installed()
    assert type(F.cross_entropy(x, t).grad_fn).__name__ == "NllLossBackward0"
    at.install()
    at.uninstall()
    at.reset_routing_counts()
    F.cross_entropy(x, t)
    F.log_softmax(x, 1)
    assert at.routing_counts() == {}


@needs_chunked
def test_what_ours_do_not_take_goes_to_pytorch(rng):
    x = torch.randn(4, 5, generator=rng)
    with at.install():
        # int32 class indices: PyTorch's kernel (and its own error).
        with pytest.raises(RuntimeError, match="Long"):
            F.cross_entropy(x, torch.zeros(4, dtype=torch.int32))
        # 0-d log_softmax.
        assert F.log_softmax(torch.tensor(2.0), 0).item() == 0.0
        # The chunked linear cross-entropy in float64: PyTorch's own op.
        xi = torch.randn(8, 4, generator=rng, dtype=torch.float64)
        w = torch.randn(6, 4, generator=rng, dtype=torch.float64)
        t = torch.randint(0, 6, (8,), generator=rng)
        opts = torch.nn.LinearCrossEntropyOptions()
        got = F.linear_cross_entropy(xi, w, t, options=opts, reduction="none")
    assert torch.allclose(got, F.cross_entropy(xi @ w.T, t, reduction="none"))
    assert _theirs("aten::cross_entropy_loss") == 1
    assert _theirs("aten::_log_softmax") == 1
    assert _theirs("torch_nn::_linear_cross_entropy_batch_chunked_no_reduction") == 1


@needs_chunked
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_linear_cross_entropy_chunked_path_is_fused(reduction, rng):
    x = torch.randn(64, 16, generator=rng, requires_grad=True)
    w = torch.randn(50, 16, generator=rng, requires_grad=True)
    b = torch.randn(50, generator=rng, requires_grad=True)
    t = torch.randint(0, 50, (64,), generator=rng)
    t[::7] = -100
    opts = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=16)

    def step():
        loss = F.linear_cross_entropy(x, w, t, linear_bias=b, reduction=reduction, options=opts)
        return loss.sum()

    ref, gref = _grads(step, x, w, b)
    with at.install():
        got, g = _grads(step, x, w, b)
    op = "torch_nn::_linear_cross_entropy_batch_chunked" + (
        "_no_reduction" if reduction == "none" else "")
    assert _ours(op) == 1 and _theirs(op) == 0
    assert _ours("aten::cross_entropy_loss") == 0  # no logits: the fused operator
    assert_close(got, ref, torch.float32, 50 * 16)
    for a, r in zip(g, gref):
        assert_close(a, r, torch.float32, 50 * 16)


def test_a_model_step_is_the_same_with_and_without_install(rng):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.GELU(),
                                torch.nn.Linear(32, 10), torch.nn.LogSoftmax(1))
    x = torch.randn(16, 12, generator=rng)
    t = torch.randint(0, 10, (16,), generator=rng)

    def step():
        model.zero_grad()
        logp = model(x)
        loss = F.nll_loss(logp, t) + F.cross_entropy(logp.exp(), t, label_smoothing=0.05)
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()]

    ref, gref = step()
    with at.install():
        got, g = step()
    assert _ours("aten::_log_softmax") > 0 and _ours("aten::cross_entropy_loss") > 0
    assert_close(got, ref, torch.float32, 32)
    for a, r in zip(g, gref):
        assert_close(a, r, torch.float32, 32)


def test_torch_compile_and_profiler(rng):
    x = torch.randn(8, 30, generator=rng, requires_grad=True)
    t = torch.randint(0, 30, (8,), generator=rng)
    ref, (gref,) = _grads(lambda: F.cross_entropy(x, t), x)
    with at.install():
        compiled = torch.compile(lambda v, k: F.cross_entropy(v, k), backend="aot_eager",
                                 fullgraph=True)
        got, (g,) = _grads(lambda: compiled(x, t), x)
        with torch.profiler.profile() as prof:
            F.cross_entropy(x, t).backward()
    assert torch.allclose(got, ref, atol=1e-6) and torch.allclose(g, gref, atol=1e-6)
    names = {e.name for e in prof.events()}
    assert any(n.startswith("aclnn_cpu::") for n in names), sorted(names)[:20]


def test_verbose_lines_from_python_and_the_library():
    code = ("import torch, torch.nn.functional as F, aclnn_cpu.torch as at\n"
            "at.install()\n"
            "x = torch.randn(4, 6, requires_grad=True)\n"
            "F.cross_entropy(x, torch.tensor([0, 1, 2, 3])).backward()\n"
            "F.log_softmax(torch.tensor(1.0), 0)\n")
    env = dict(os.environ, ACLNN_CPU_VERBOSE="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=True)
    lines = r.stderr.splitlines()
    assert any(s.startswith("aclnn_cpu_verbose,torch,aten::cross_entropy_loss,aclnn_cpu,"
                            "4x6:float32 4:int64,") for s in lines), r.stderr
    assert any(s.startswith("aclnn_cpu_verbose,exec,aclnnCpuCrossEntropyLossLse,")
               for s in lines), r.stderr
    assert any(s.startswith("aclnn_cpu_verbose,exec,aclnnCpuCrossEntropyLossGradFromLogits,")
               for s in lines), r.stderr
    assert "aclnn_cpu_verbose,torch,aten::_log_softmax,pytorch,:float32,a 0-d input" in lines, \
        r.stderr
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={k: v for k, v in os.environ.items()
                                            if k != "ACLNN_CPU_VERBOSE"})
    assert "aclnn_cpu_verbose" not in quiet.stderr
