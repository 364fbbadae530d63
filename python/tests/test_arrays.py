"""The array functions (aclnn_cpu.*) on NumPy arrays and PyTorch tensors: against the float64
reference, zero-copy, out=, refusals with canaries, many Python threads."""

import threading
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aclnn_cpu as ac
from conftest import assert_close, logits, reference_cross_entropy, targets

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
NP_OF = {torch.float32: np.float32, torch.float16: np.float16, torch.bfloat16: ml_dtypes.bfloat16,
         torch.float64: np.float64}


def to_numpy(t):
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def from_numpy(a):
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def test_operator_table_is_the_source():
    assert set(ac.OPS) == {"log_softmax", "log_softmax_backward", "cross_entropy_loss",
                           "cross_entropy_loss_grad", "cross_entropy_loss_fp32",
                           "cross_entropy_loss_lse", "cross_entropy_loss_grad_from_logits",
                           "cross_entropy_loss_with_grad", "cross_entropy_loss_prob",
                           "cross_entropy_loss_prob_grad", "cross_entropy_loss_prob_with_grad"}
    assert ac.OPS["cross_entropy_loss_grad"].inputs[:3] == ["gradLoss", "logProb", "target"]


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.float64])
@pytest.mark.parametrize("shape,dim", [((7, 33), -1), ((4, 5, 6), 1), ((9,), 0), ((3, 1), 1)])
def test_log_softmax_matches_reference(kind, dtype, shape, dim, rng):
    x = (torch.randn(shape, generator=rng, dtype=torch.float64) * 3).to(dtype)
    arg = to_numpy(x) if kind == "numpy" else x
    y = ac.log_softmax(arg, dim)
    assert type(y) is type(arg)
    y = from_numpy(y) if kind == "numpy" else y
    assert y.dtype == dtype
    assert_close(y, F.log_softmax(x.double(), dim), dtype, x.shape[dim])


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", [((7, 33), -1), ((4, 5, 6), 1)])
def test_log_softmax_backward_matches_reference(kind, dtype, shape, dim, rng):
    x = torch.randn(shape, generator=rng, dtype=torch.float64)
    y = F.log_softmax(x, dim).to(dtype)
    g = torch.randn(shape, generator=rng, dtype=torch.float64).to(dtype)
    ref = g.double() - torch.exp(y.double()) * g.double().sum(dim, keepdim=True)
    args = (to_numpy(g), to_numpy(y)) if kind == "numpy" else (g, y)
    out = ac.log_softmax_backward(*args, dim)
    out = from_numpy(out) if kind == "numpy" else out
    assert_close(out, ref, dtype, shape[dim])


OPTION_SETS = [
    dict(reduction="mean"),
    dict(reduction="sum"),
    dict(reduction="none"),
    dict(reduction="mean", weight=True),
    dict(reduction="mean", label_smoothing=0.1),
    dict(reduction="mean", weight=True, label_smoothing=0.2),
    dict(reduction="none", weight=True, label_smoothing=0.1),
    dict(reduction="sum", ignore_index=3),
    dict(reduction="mean", z_loss_scale=1e-3),
    dict(reduction="none", weight=True, label_smoothing=0.1, z_loss_scale=1e-2),
]


def _case(opts, dtype, target_dtype, gen, n=13, c=37):
    x = logits(n, c, dtype, gen)
    ii = opts.get("ignore_index", -100)
    t = targets(n, c, gen, target_dtype, ignore_index=ii)
    w = (torch.rand(c, generator=gen) + 0.5) if opts.get("weight") else None
    return x, t, w, ii


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("target_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("opts", OPTION_SETS, ids=lambda o: "+".join(f"{k}={v}" for k, v in o.items()))
def test_cross_entropy_forward_and_grad_match_reference(kind, target_dtype, dtype, opts, rng):
    x, t, w, ii = _case(opts, dtype, target_dtype, rng)
    red, ls, z = opts["reduction"], opts.get("label_smoothing", 0.0), opts.get("z_loss_scale", 0.0)
    ref_loss, ref_zl, xd = reference_cross_entropy(x, t, w, red, ii, ls, z)
    (ref_grad,) = torch.autograd.grad(ref_loss.sum(), xd)
    conv = (lambda a: to_numpy(a) if a is not None else None) if kind == "numpy" else (lambda a: a)
    back = from_numpy if kind == "numpy" else (lambda a: a)
    r = ac.cross_entropy_loss(conv(x), conv(t), conv(w), reduction=red, ignore_index=ii,
                              label_smoothing=ls, z_loss_scale=z, return_z_loss=True)
    c = x.shape[1]
    assert_close(back(r.loss), ref_loss, dtype, c * x.shape[0])
    assert_close(back(r.z_loss), ref_zl, dtype, c * x.shape[0])
    assert_close(back(r.log_prob), F.log_softmax(x.double(), 1), dtype, c)
    if z:
        assert_close(back(r.lse), torch.logsumexp(x.double(), 1), dtype, c)
    else:
        assert r.lse is None
    # The gradient of loss.sum(): gradLoss = 1 for every loss element.
    grad_loss = np.ones(tuple(r.loss.shape), dtype=NP_OF[dtype]) if kind == "numpy" else \
        torch.ones(r.loss.shape, dtype=dtype)
    g = ac.cross_entropy_loss_grad(grad_loss, r.log_prob, conv(t), conv(w), reduction=red,
                                   ignore_index=ii, label_smoothing=ls, z_loss_scale=z,
                                   lse=r.lse)
    assert_close(back(g), ref_grad, dtype, c, F.log_softmax(x.double(), 1).abs().max().item())


def test_zero_copy_strided_input_and_out_buffer():
    # A strided view (every other column of a larger array, at an offset) and an out= buffer:
    # the result lands in the buffer, and the call allocates nothing near the input's size.
    base = np.random.default_rng(0).standard_normal((512, 4096 + 8)).astype(np.float32)
    x = base[4:260, 8::2]  # 256 x 2048, row stride 4104 elements, column stride 2
    assert not x.flags.c_contiguous
    out = np.empty((256, 2048), dtype=np.float32)
    tracemalloc.start()
    y = ac.log_softmax(x, -1, out=out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert y is out
    assert peak < x.nbytes // 16, f"the call allocated {peak} bytes; the input has {x.nbytes}"
    np.testing.assert_allclose(out, F.log_softmax(torch.from_numpy(x.copy()).double(), -1).numpy(),
                               rtol=0, atol=1e-5)


def test_zero_copy_torch_out_keeps_its_storage():
    base = torch.randn(64, 300)
    x = base[1:60:2, 10:250]  # strides (600, 1), storage offset 310
    t = torch.randint(0, 240, (30,))
    log_prob = torch.empty(30, 240)
    ptr = log_prob.data_ptr()
    r = ac.cross_entropy_loss(x, t, out=(None, log_prob, None, None))
    assert r.log_prob is log_prob and log_prob.data_ptr() == ptr
    assert_close(log_prob, F.log_softmax(x.double(), 1), torch.float32, 240)
    grad = torch.full((30, 240), 7.0)
    g = ac.cross_entropy_loss_grad(1.0, log_prob, t, out=grad)
    assert g is grad
    xd = x.double().requires_grad_()
    (ref,) = torch.autograd.grad(F.cross_entropy(xd, t), xd)
    assert_close(g, ref, torch.float32, 240)
    # CANN's operators do not compute in place: an out= that overlaps an input is refused.
    before = log_prob.clone()
    with pytest.raises(ac.AclnnValueError, match="out overlaps logProb in memory"):
        ac.cross_entropy_loss_grad(1.0, log_prob, t, out=log_prob[:, 1:])
    assert torch.equal(log_prob, before)


CANARY = 12345.0


def _canaried(shape, dtype=np.float32):
    return np.full(shape, CANARY, dtype=dtype)


@pytest.mark.parametrize("case,exc,status,words", [
    ("bad_target", ac.AclnnValueError, 100000, "target[2] = 99 is neither ignoreIndex"),
    ("target_shape", ac.AclnnValueError, 561002, "target has shape"),
    ("dtype", ac.AclnnTypeError, 161002, "has dtype INT8"),
    ("reduction", ac.AclnnValueError, 561002, "reductionOptional \"avg\""),
    ("smoothing", ac.AclnnValueError, 561002, "labelSmoothing 1.5"),
    ("negative_stride", ac.AclnnValueError, 161002, "negative stride"),
])
def test_refusals_raise_the_library_sentence_and_write_nothing(case, exc, status, words):
    x = np.random.default_rng(1).standard_normal((4, 10)).astype(np.float32)
    t = np.array([1, 2, 3, 4])
    kw = dict(reduction="mean")
    if case == "bad_target":
        t[2] = 99
    elif case == "target_shape":
        t = np.array([1, 2, 3])
    elif case == "dtype":
        x = x.astype(np.int8)
    elif case == "reduction":
        kw["reduction"] = "avg"
    elif case == "smoothing":
        kw["label_smoothing"] = 1.5
    elif case == "negative_stride":
        x = x[:, ::-1]
    outs = (_canaried(()), _canaried((4, 10)), _canaried(()), _canaried((4,)))
    with pytest.raises(exc) as info:
        ac.cross_entropy_loss(x, t, out=outs, **kw)
    assert info.value.status == status
    assert words in str(info.value), str(info.value)
    assert str(info.value).startswith("aclnnCrossEntropyLoss: ")
    assert str(info.value).endswith(".")
    for o in outs:
        assert (o == CANARY).all()


def test_grad_refuses_bad_target_and_leaves_out_untouched():
    lp = np.log(np.full((3, 5), 0.2, dtype=np.float32))
    out = _canaried((3, 5))
    with pytest.raises(ValueError, match=r"target\[1\] = -7"):
        ac.cross_entropy_loss_grad(np.float32(1.0), lp, np.array([0, -7, 1]), out=out)
    assert (out == CANARY).all()


def test_not_an_array_and_read_only_out():
    with pytest.raises(ac.AclnnTypeError, match="is not a CPU array"):
        ac.log_softmax_backward(np.zeros((2, 2), np.float32), [[0.0, 0.0]], -1)
    out = np.zeros((2, 2), np.float32)
    out.flags.writeable = False
    with pytest.raises(ac.AclnnTypeError, match="writable"):
        ac.log_softmax(np.zeros((2, 2), np.float32), out=out)


def test_many_python_threads_at_once():
    gen = np.random.default_rng(7)
    cases = []
    for i in range(24):
        n, c = int(gen.integers(1, 300)), int(gen.integers(1, 3000))
        x = gen.standard_normal((n, c)).astype(np.float32)
        t = gen.integers(0, c, n)
        t[:: 7] = -100
        cases.append((x, t))
    serial = [ac.cross_entropy_loss(x, t, label_smoothing=0.1).loss for x, t in cases]
    barrier = threading.Barrier(8)

    def work(k):
        barrier.wait()
        got = []
        for rep in range(5):
            for x, t in cases[k::8]:
                r = ac.cross_entropy_loss(x, t, label_smoothing=0.1)
                g = ac.cross_entropy_loss_grad(1.0, r.log_prob, t, label_smoothing=0.1)
                assert g.shape == x.shape
                got.append(r.loss)
        return got

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    for k, got in enumerate(results):
        want = [serial[i] for i in range(k, 24, 8)] * 5
        assert all(np.array_equal(a, b) for a, b in zip(got, want))  # bit for bit


def test_set_num_threads_changes_nothing_but_speed():
    x = np.random.default_rng(3).standard_normal((257, 1000)).astype(np.float32)
    ac.set_num_threads(1)
    try:
        assert ac.get_num_threads() == 1
        one = ac.log_softmax(x)
    finally:
        ac.set_num_threads(0)
    assert np.array_equal(one, ac.log_softmax(x))
    with pytest.raises(ValueError):
        ac.set_num_threads(-1)
