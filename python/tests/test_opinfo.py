"""PyTorch's own test samples (``torch.testing._internal``'s ``op_db``, the OpInfos of
``nn.functional.cross_entropy``, ``log_softmax`` and its ``with_dtype`` variant, and
``nn.functional.linear_cross_entropy`` with its ``chunked`` and ``chunked_none`` variants), run
through aclnn_cpu.torch's drop-ins in float32, float64, bfloat16 and float16.

Each sample is one of:
- match: the value and the input's gradient (for a random output gradient) are within the
  dtype's tolerance (torch.testing's defaults) of PyTorch's own result in float64, or, where the
  sample is ill-conditioned, no worse than 4x PyTorch's own error in that dtype;
- refused: our function raises NotImplementedError or the library's AclnnError (a documented
  limit, listed in docs/python.md);
- wrong: a value or gradient outside both bounds;
- crash: any other exception.
A test fails on any wrong value or crash; the tally of every OpInfo and dtype is printed at the
end of the run (conftest.py). Nothing is pinned to today's sample count.
"""

import pytest
import torch

import aclnn_cpu
import aclnn_cpu.torch as at
from conftest import OPINFO_TALLY

common_methods_invocations = pytest.importorskip(
    "torch.testing._internal.common_methods_invocations")

# (OpInfo name, variant) -> our drop-in, called as PyTorch's function is.
OURS = {
    ("nn.functional.cross_entropy", ""): at.cross_entropy,
    ("log_softmax", ""): at.log_softmax,
    ("log_softmax", "with_dtype"): at.log_softmax,
    ("nn.functional.linear_cross_entropy", ""): at.linear_cross_entropy,
    ("nn.functional.linear_cross_entropy", "chunked"): at.linear_cross_entropy,
    ("nn.functional.linear_cross_entropy", "chunked_none"): at.linear_cross_entropy,
}
DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
# torch.testing.assert_close's defaults (rtol, atol).
TOLERANCE = {torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7),
             torch.bfloat16: (1.6e-2, 1e-5), torch.float16: (1e-3, 1e-5)}


def _opinfo(name, variant):
    for op in common_methods_invocations.op_db:
        if op.name == name and op.variant_test_name == variant:
            return op
    pytest.skip(f"this PyTorch has no OpInfo {name}.{variant}")


def _map(x, fn):
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_map(v, fn) for v in x)
    if isinstance(x, dict):
        return {k: _map(v, fn) for k, v in x.items()}
    return x


def _as(dtype):
    """Floating tensors to dtype (fresh leaves, the input requiring grad); others as they are."""
    def fn(t):
        t = t.detach()
        return t.to(dtype) if t.is_floating_point() else t
    return fn


def _run(fn, sample, dtype, kwargs_dtype, upstream_seed, reference=False):
    """(value, input gradient or None) of fn on the sample's tensors in `dtype`. The float64
    reference leaves out linear_cross_entropy's chunking options (the same math, unchunked; its
    chunked path takes no float64 with their float32 accumulator)."""
    x = _as(dtype)(sample.input).requires_grad_(sample.input.requires_grad)
    args = _map(sample.args, _as(dtype))
    kwargs = _map(sample.kwargs, _as(dtype))
    if reference:
        kwargs.pop("options", None)
    if kwargs_dtype is not None:
        kwargs["dtype"] = kwargs_dtype
    out = fn(x, *args, **kwargs)
    grad = None
    if x.requires_grad and out.requires_grad:
        g = torch.Generator().manual_seed(upstream_seed)
        up = torch.rand(out.shape, generator=g, dtype=torch.float64) + 0.5
        (grad,) = torch.autograd.grad(out, x, up.to(out.dtype))
    return out.detach(), grad


def _error(got, ref):
    return (got.double() - ref.double()).abs().nan_to_num(nan=float("inf")).max().item() \
        if ref.numel() else 0.0


def _close(got, ref, theirs, dtype):
    """Within the dtype's tolerance of the float64 result, or within 4x PyTorch's own error."""
    if got is None or ref is None:
        return got is None and ref is None
    if got.shape != ref.shape:
        return False
    rtol, atol = TOLERANCE[dtype]
    g, r = got.double(), ref.double()
    same_nonfinite = torch.equal(g.isfinite(), r.isfinite()) and torch.equal(
        g[~g.isfinite()].nan_to_num(), r[~r.isfinite()].nan_to_num())
    if same_nonfinite and bool(((g - r).abs() <= atol + rtol * r.abs())[r.isfinite()].all()):
        return True
    return theirs is not None and same_nonfinite and \
        _error(got, ref) <= 4 * _error(theirs, ref)


def _classify(op, fn, sample, dtype, seed, installed=False):
    """fn: our drop-in; with installed, PyTorch's own function under aclnn_cpu.torch.install()
    (the references are computed before, without it)."""
    kwargs_dtype = None
    if op.variant_test_name == "with_dtype":
        kwargs_dtype = sample.kwargs.get("dtype")
    ref = _run(op.op, sample, torch.float64, kwargs_dtype, seed, reference=True)
    theirs = _run(op.op, sample, dtype, kwargs_dtype, seed)
    try:
        if installed:
            with at.install():
                ours = _run(op.op, sample, dtype, kwargs_dtype, seed)
        else:
            ours = _run(fn, sample, dtype, kwargs_dtype, seed)
    except (NotImplementedError, aclnn_cpu.AclnnError) as e:
        return "refused", str(e)
    except Exception as e:  # noqa: BLE001 - anything else is a crash to report
        return "crash", f"{type(e).__name__}: {e}"
    if ours[0].dtype != theirs[0].dtype:
        return "wrong", f"result dtype {ours[0].dtype}, PyTorch's {theirs[0].dtype}"
    for what, i in (("value", 0), ("input gradient", 1)):
        if not _close(ours[i], ref[i], theirs[i], dtype):
            err = _error(ours[i], ref[i]) if ours[i] is not None and ref[i] is not None else None
            return "wrong", f"{what}: error {err}, PyTorch's {_error(theirs[i], ref[i])}"
    return "match", ""


def _tally(key, dtype, installed):
    op = _opinfo(*key)
    if dtype not in op.supported_dtypes("cpu"):
        pytest.skip(f"PyTorch's {key[0]} does not take {dtype} on the CPU")
    tally = {"match": 0, "refused": 0, "wrong": 0, "crash": 0}
    failures = []
    torch.manual_seed(0)  # the samples' own random tensors
    at.reset_routing_counts()
    for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=True)):
        kind, why = _classify(op, OURS[key], sample, dtype, seed=i, installed=installed)
        tally[kind] += 1
        if kind in ("wrong", "crash"):
            failures.append(f"sample {i} {sample}: {kind}: {why}")
    name = ".".join(p for p in key if p)
    if installed:
        counts = at.routing_counts()
        tally["calls ours"] = sum(n for (_, where), n in counts.items() if where == "aclnn_cpu")
        tally["calls theirs"] = sum(n for (_, where), n in counts.items() if where == "pytorch")
        name += " (install)"
    OPINFO_TALLY[(name, str(dtype)[6:])] = tally
    assert not failures, "\n".join(failures[:10])
    return tally


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("key", list(OURS), ids=lambda k: ".".join(p for p in k if p))
def test_opinfo_samples(key, dtype):
    _tally(key, dtype, installed=False)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("key", list(OURS), ids=lambda k: ".".join(p for p in k if p))
def test_opinfo_samples_under_install(key, dtype):
    """PyTorch's own functions, unchanged, with aclnn_cpu.torch.install() active: every sample
    matches (whatever went to PyTorch's kernel is counted, not refused), and most calls ran
    ours."""
    tally = _tally(key, dtype, installed=True)
    assert tally["refused"] == 0
    assert tally["calls ours"] > 0
