"""aclnn_cpu: Huawei CANN's aclnn loss operators on CPUs, for NumPy arrays and PyTorch tensors.

The four functions here take any CPU array with ``__dlpack__`` or the buffer protocol (NumPy,
PyTorch, ml_dtypes' bfloat16, ...) without copying it: strides and offsets are passed to the
library as they are. Outputs come back in the caller's array type, or are written in place into
``out=``. Every refusal raises an :class:`AclnnError` (a ``ValueError`` or ``TypeError``
subclass) whose message is the library's sentence, and writes nothing. The GIL is released
while an operator runs. ``aclnn_cpu.torch`` has the PyTorch custom operators with autograd.
See docs/python.md.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from . import _C
from ._ops import (
    OPS,
    AclnnError,
    AclnnRuntimeError,
    AclnnTypeError,
    AclnnValueError,
    empty_like_kind,
    get_num_threads,
    raise_for,
    set_num_threads,
)
from ._ops import _ACL_BY_NAME, ACL_DT_UNDEFINED, acl_dtype
from ._sdk import cmake_dir, include_dir, lib_dir, sdk_dir

__all__ = [
    "AclnnError", "AclnnValueError", "AclnnTypeError", "AclnnRuntimeError",
    "log_softmax", "log_softmax_backward", "cross_entropy_loss", "cross_entropy_loss_grad",
    "CrossEntropyLossResult", "set_num_threads", "get_num_threads", "cpu_target", "OPS",
    "set_soc", "soc_name", "cross_entropy_loss_lse", "cross_entropy_loss_grad_from_logits",
    "CrossEntropyLossLseResult", "cross_entropy_loss_with_grad", "CrossEntropyLossWithGradResult",
    "cross_entropy_loss_prob", "cross_entropy_loss_prob_grad",
    "cross_entropy_loss_prob_with_grad", "CrossEntropyLossProbWithGradResult", "sdk_dir",
    "cmake_dir",
    "include_dir", "lib_dir", "__version__", "cache_info", "CacheInfo", "set_cache_limit",
    "empty_cache",
]
# The library's own version query (aclnnCpuGetVersion): CMakeLists.txt's project() version, as
# are the CMake package's and the wheel's metadata.
__version__: str = _C.version()


def cpu_target() -> str:
    """The SIMD target the operators run on (Highway's name: "AVX2", "AVX3", "NEON", ...)."""
    return _C.cpu_target()


def set_soc(name: Optional[str]) -> None:
    """Makes later calls follow an Ascend SoC's rules (docs/soc_profiles.md): refuse what that
    NPU refuses, compute what it computes. ``name`` as ``aclrtGetSocName()`` spells it
    ("Ascend910B2", "Ascend950PR", "Ascend310P3", ...); None or "" restores the default. The
    profile is process-wide, like ``ACLNN_CPU_SOC`` (read when aclnn_cpu is imported). An unknown
    name raises ``AclnnValueError`` listing the known ones."""
    status, message = _C.set_soc(name or "")
    if status != 0:
        raise_for(status, message)


class CacheInfo(NamedTuple):
    """The output cache's state: bytes of freed blocks it keeps, its limit, and how many
    requests it served from a kept block (hits) or a new one (misses)."""

    cached_bytes: int
    limit: int
    hits: int
    misses: int


def cache_info() -> CacheInfo:
    """The output cache (docs/python.md): PyTorch tensors of 1 MiB or more that the package
    allocates for operator outputs (gradients, log-probabilities) come from blocks that, once
    their tensor is freed, serve the next output of the same size with their pages backed."""
    return CacheInfo(*_C.cache_info())


def set_cache_limit(limit_bytes: int) -> None:
    """The most bytes of freed blocks the output cache keeps (default 2 GiB, or
    ``ACLNN_CPU_CACHE_BYTES``); 0 turns it off. Blocks beyond the limit are released now."""
    if limit_bytes < 0:
        raise ValueError("aclnn_cpu.set_cache_limit: the limit is a number of bytes >= 0.")
    _C.set_cache_limit(int(limit_bytes))


def empty_cache() -> None:
    """Releases every freed block the output cache keeps (tensors in use keep theirs), as
    ``torch.cuda.empty_cache()`` does for PyTorch's CUDA allocator."""
    _C.empty_cache()


def soc_name() -> str:
    """``aclrtGetSocName()``: the profile's SoC name, or "aclnn-cpu" for the default."""
    return _C.soc_name()


def _acl_of(dtype: Any) -> int:
    if dtype is None:
        return ACL_DT_UNDEFINED
    name = str(dtype)
    name = name[6:] if name.startswith("torch.") else name
    if name not in _ACL_BY_NAME:
        raise TypeError(f"aclnn_cpu: dtype {dtype} has no CANN data type.")
    return _ACL_BY_NAME[name]


def log_softmax(input: Any, dim: int = -1, *, dtype: Any = None, out: Any = None) -> Any:
    """``aclnnLogSoftmax``: ``input - logsumexp(input, dim)`` along ``dim``.

    ``dtype`` (or ``out``'s dtype) is the result's dtype (default: the input's)."""
    return OPS["log_softmax"]({"self": input, "out": out}, dim=dim, out_dtype=_acl_of(dtype))["out"]


def log_softmax_backward(grad_output: Any, output: Any, dim: int = -1, *, dtype: Any = None,
                         out: Any = None) -> Any:
    """``aclnnLogSoftmaxBackward``: the gradient of log_softmax with respect to its input,
    ``grad_output - exp(output) * sum(grad_output, dim)``, given its ``output``."""
    r = OPS["log_softmax_backward"]({"gradOutput": grad_output, "output": output, "out": out},
                                    dim=dim, out_dtype=_acl_of(dtype))
    return r["out"]


class CrossEntropyLossResult(NamedTuple):
    """The outputs of :func:`cross_entropy_loss`: ``loss`` (the z-loss included), ``log_prob``
    (N, C), ``z_loss`` (when ``return_z_loss``) and ``lse`` (when ``z_loss_scale != 0``)."""

    loss: Any
    log_prob: Any
    z_loss: Optional[Any]
    lse: Optional[Any]


def cross_entropy_loss(input: Any, target: Any, weight: Any = None, *, reduction: str = "mean",
                       ignore_index: int = -100, label_smoothing: float = 0.0,
                       z_loss_scale: float = 0.0, return_z_loss: bool = False,
                       fp32_loss: bool = False,
                       out: Optional[tuple] = None) -> CrossEntropyLossResult:
    """``aclnnCrossEntropyLoss`` on logits ``input`` (N, C) and class indices ``target`` (N,),
    int64 or int32, with PyTorch's arguments plus the z-loss scale (``z_loss_scale * lse**2``
    per row, added to the loss). ``out`` is an optional 4-tuple of arrays (entries may be
    None) written in place.

    ``fp32_loss``: loss, z-loss and lse in float32 for a float16 or bfloat16 input (rounded once
    from the float32-or-better computation instead of to 16 bits), through aclnn-cpu's extension
    ``aclnnCpuCrossEntropyLoss``; log_prob keeps the input's dtype."""
    outs = tuple(out) if out is not None else (None,) * 4
    if len(outs) != 4:
        raise TypeError("aclnn_cpu.cross_entropy_loss: out must have 4 entries "
                        "(loss, log_prob, z_loss, lse).")
    r = OPS["cross_entropy_loss_fp32" if fp32_loss else "cross_entropy_loss"](
        {"input": input, "target": target, "weightOptional": weight, "lossOut": outs[0],
         "logProbOut": outs[1], "zlossOut": outs[2], "lseForZlossOut": outs[3]},
        reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing,
        zloss=z_loss_scale, return_zloss=return_z_loss)
    # A SoC profile whose NPU ignores the z-loss never writes zlossOut and lseForZlossOut.
    z_written = not _C.soc_ignores_zloss()
    return CrossEntropyLossResult(r["lossOut"], r["logProbOut"],
                                  r["zlossOut"] if return_z_loss and z_written else None,
                                  r["lseForZlossOut"] if z_loss_scale != 0.0 and z_written
                                  else None)


def _as_array_like(value: Any, ref: Any, shape: tuple) -> Any:
    """A Python number as a full array of `ref`'s library and dtype; arrays pass through."""
    if hasattr(value, "shape"):
        return value
    a = empty_like_kind(ref, shape, acl_dtype(ref))
    a[...] = value
    return a


def _loss_gradients(grad_loss: Any, grad_z_loss: Any, rows: Any, reduction: str) -> tuple:
    """The loss's and the z-loss's gradients as arrays shaped like the loss (numbers become
    arrays of `rows`' library and dtype; grad_z_loss may be None)."""
    # (N,), or (N, d1, ..., dK) for K-dimensional logits (the lean extensions).
    loss_shape = (rows.shape[0],) + tuple(rows.shape[2:]) if reduction == "none" else ()
    grad_loss = _as_array_like(grad_loss, rows, loss_shape)
    if grad_z_loss is not None:
        grad_z_loss = _as_array_like(grad_z_loss, rows, loss_shape)
    return grad_loss, grad_z_loss


def cross_entropy_loss_grad(grad_loss: Any, log_prob: Any, target: Any, weight: Any = None, *,
                            grad_z_loss: Any = None, lse: Any = None, reduction: str = "mean",
                            ignore_index: int = -100, label_smoothing: float = 0.0,
                            z_loss_scale: float = 0.0, out: Any = None) -> Any:
    """``aclnnCrossEntropyLossGrad``: the gradient with respect to the logits, given the
    forward's ``log_prob`` and the loss gradient ``grad_loss`` (a number or an array shaped like
    the loss); ``grad_z_loss`` and ``lse`` as CANN's ``gradZlossOptional`` and
    ``lseForZlossOptional``."""
    grad_loss, grad_z_loss = _loss_gradients(grad_loss, grad_z_loss, log_prob, reduction)
    r = OPS["cross_entropy_loss_grad"](
        {"gradLoss": grad_loss, "logProb": log_prob, "target": target, "weightOptional": weight,
         "gradZlossOptional": grad_z_loss, "lseForZlossOptional": lse, "out": out},
        reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing,
        zloss=z_loss_scale)
    return r["out"]


class CrossEntropyLossLseResult(NamedTuple):
    loss: Any
    lse: Any
    z_loss: Any  # None unless return_z_loss


def cross_entropy_loss_lse(input: Any, target: Any, weight: Any = None, *,
                           reduction: str = "mean", ignore_index: int = -100,
                           label_smoothing: float = 0.0, z_loss_scale: float = 0.0,
                           return_z_loss: bool = False, fp32_loss: bool = True,
                           out: Optional[tuple] = None) -> CrossEntropyLossLseResult:
    """The lean forward (aclnn-cpu's ``aclnnCpuCrossEntropyLossLse``, docs/large_vocab.md): the
    loss of :func:`cross_entropy_loss` without the (N, C) log-probabilities, and every row's
    log-sum-exp ``lse`` (N,) in float32 (or float64, given as ``out``'s lse: the gradient from
    the logits then takes all of it, which logits of large magnitude need; docs/numerics.md),
    which :func:`cross_entropy_loss_grad_from_logits` takes. The loss (and z-loss) in float32, or
    with ``fp32_loss=False`` in the input's dtype.
    ``out``: an optional 3-tuple (loss, lse, z_loss) whose entries may be None."""
    outs = tuple(out) if out is not None else (None,) * 3
    if len(outs) != 3:
        raise TypeError("aclnn_cpu.cross_entropy_loss_lse: out must have 3 entries "
                        "(loss, lse, z_loss).")
    loss_out, lse_out, z_out = outs
    if not fp32_loss:
        shape = (input.shape[0],) + tuple(input.shape[2:]) if reduction == "none" else ()
        if loss_out is None:
            loss_out = empty_like_kind(input, shape, acl_dtype(input))
        if z_out is None:
            z_out = empty_like_kind(input, shape, acl_dtype(input))
    r = OPS["cross_entropy_loss_lse"](
        {"input": input, "target": target, "weightOptional": weight, "lossOut": loss_out,
         "zlossOut": z_out, "lseOut": lse_out},
        reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing,
        zloss=z_loss_scale, return_zloss=return_z_loss)
    return CrossEntropyLossLseResult(r["lossOut"], r["lseOut"],
                                     r["zlossOut"] if return_z_loss else None)


def cross_entropy_loss_grad_from_logits(grad_loss: Any, logits: Any, target: Any, lse: Any,
                                        weight: Any = None, *, grad_z_loss: Any = None,
                                        reduction: str = "mean", ignore_index: int = -100,
                                        label_smoothing: float = 0.0, z_loss_scale: float = 0.0,
                                        out: Any = None, inplace: bool = False) -> Any:
    """The lean backward (``aclnnCpuCrossEntropyLossGradFromLogits``): the gradient with respect
    to ``logits`` from the logits themselves and the forward's float32 ``lse``, with every
    option of :func:`cross_entropy_loss_grad`. ``inplace=True`` writes it over ``logits`` (one
    read and one write per element, no new (N, C) array) and returns ``logits``."""
    if inplace:
        if out is not None:
            raise TypeError("aclnn_cpu.cross_entropy_loss_grad_from_logits: give out or "
                            "inplace, not both.")
        out = logits
    grad_loss, grad_z_loss = _loss_gradients(grad_loss, grad_z_loss, logits, reduction)
    r = OPS["cross_entropy_loss_grad_from_logits"](
        {"gradLoss": grad_loss, "logits": logits, "target": target, "weightOptional": weight,
         "gradZlossOptional": grad_z_loss, "lse": lse, "out": out},
        reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing,
        zloss=z_loss_scale)
    return r["out"]


class CrossEntropyLossWithGradResult(NamedTuple):
    loss: Any
    lse: Any
    z_loss: Any  # None unless return_z_loss
    grad: Any


def cross_entropy_loss_with_grad(input: Any, target: Any, weight: Any = None, *,
                                 grad_loss: Any = None, reduction: str = "mean",
                                 ignore_index: int = -100, label_smoothing: float = 0.0,
                                 z_loss_scale: float = 0.0, return_z_loss: bool = False,
                                 inplace: bool = False, lse_out: Any = None,
                                 out: Optional[tuple] = None) -> CrossEntropyLossWithGradResult:
    """The lean forward and the gradient in one pass (``aclnnCpuCrossEntropyLossWithGrad``,
    docs/large_vocab.md): what :func:`cross_entropy_loss_lse` and then
    :func:`cross_entropy_loss_grad_from_logits` give (the same bits), each row's gradient written
    right after its loss while the row is in cache; an (N, C, d1, ..., dK) input with an
    (N, d1, ..., dK) target too (column tiles, as the lean pair). ``grad_loss``: the loss's
    gradient (None: ones). ``inplace=True`` writes the gradient over ``input``: the whole step
    reads and writes each element once. The loss and z-loss are float32 unless ``out`` gives
    them (a 2-tuple (loss, z_loss), entries may be None; float32 or the input's dtype).
    ``lse_out``: an array of the positions' shape for the lse, float32 (the default) or
    float64; the gradient is computed from the lse as stored, and only a float64 one keeps all
    of it for logits of large magnitude (docs/numerics.md)."""
    if grad_loss is not None:
        grad_loss, _ = _loss_gradients(grad_loss, None, input, reduction)
    loss_out, z_loss_out = tuple(out) if out is not None else (None, None)
    r = OPS["cross_entropy_loss_with_grad"](
        {"input": input, "target": target, "weightOptional": weight,
         "gradLossOptional": grad_loss, "gradOut": input if inplace else None,
         "lseOut": lse_out, "lossOut": loss_out, "zlossOut": z_loss_out},
        reduction=reduction, ignore_index=ignore_index, label_smoothing=label_smoothing,
        zloss=z_loss_scale, return_zloss=return_z_loss)
    return CrossEntropyLossWithGradResult(r["lossOut"], r["lseOut"],
                                          r["zlossOut"] if return_z_loss else None, r["gradOut"])


def cross_entropy_loss_prob(input: Any, target: Any, weight: Any = None, *,
                            reduction: str = "mean", label_smoothing: float = 0.0,
                            out: Optional[tuple] = None) -> tuple:
    """``aclnnCpuCrossEntropyLossProb``: the cross-entropy of logits ``input`` (N, C) against
    class probabilities ``target`` (N, C, the input's dtype), PyTorch's semantics ("mean"
    divides by N). Returns ``(loss, lse)``; ``lse`` (N,) is float32, or float64 for a float64
    input or when ``out``'s lse is float64 (the gradient is that of the lse as given).
    ``out``: an optional 2-tuple (loss, lse) whose entries may be None."""
    outs = tuple(out) if out is not None else (None, None)
    if len(outs) != 2:
        raise TypeError("aclnn_cpu.cross_entropy_loss_prob: out must have 2 entries (loss, lse).")
    loss_out, lse_out = outs
    if lse_out is None and acl_dtype(input) == _ACL_BY_NAME["float64"]:
        lse_out = empty_like_kind(input, (input.shape[0],), acl_dtype(input))
    r = OPS["cross_entropy_loss_prob"](
        {"input": input, "target": target, "weightOptional": weight, "lossOut": loss_out,
         "lseOut": lse_out}, reduction=reduction, label_smoothing=label_smoothing)
    return r["lossOut"], r["lseOut"]


def cross_entropy_loss_prob_grad(grad_loss: Any, logits: Any, target: Any, lse: Any,
                                 weight: Any = None, *, reduction: str = "mean",
                                 label_smoothing: float = 0.0, out: Any = None) -> Any:
    """``aclnnCpuCrossEntropyLossProbGrad``: the gradient of :func:`cross_entropy_loss_prob`
    with respect to the logits, from the logits, the targets and the forward's ``lse``;
    ``grad_loss`` a number or an array shaped like the loss. ``out`` may be ``logits``."""
    grad_loss, _ = _loss_gradients(grad_loss, None, logits, reduction)
    r = OPS["cross_entropy_loss_prob_grad"](
        {"gradLoss": grad_loss, "logits": logits, "target": target, "weightOptional": weight,
         "lse": lse, "out": out}, reduction=reduction, label_smoothing=label_smoothing)
    return r["out"]


class CrossEntropyLossProbWithGradResult(NamedTuple):
    loss: Any
    lse: Any
    grad: Any


def cross_entropy_loss_prob_with_grad(input: Any, target: Any, weight: Any = None, *,
                                      grad_loss: Any = None, reduction: str = "mean",
                                      label_smoothing: float = 0.0, inplace: bool = False,
                                      lse_out: Any = None) -> CrossEntropyLossProbWithGradResult:
    """``aclnnCpuCrossEntropyLossProbWithGrad``: :func:`cross_entropy_loss_prob` and then
    :func:`cross_entropy_loss_prob_grad` in one pass (the same bits), each row's gradient
    computed right after its loss while the row and its target are in cache. ``grad_loss``: the
    loss's gradient (None: ones). ``inplace=True`` writes the gradient over ``input``.
    ``lse_out``: an (N,) array for the lse, float32 or float64 (the default for a float64
    input); the gradient is computed from the lse as stored."""
    if grad_loss is not None:
        grad_loss, _ = _loss_gradients(grad_loss, None, input, reduction)
    if lse_out is None and acl_dtype(input) == _ACL_BY_NAME["float64"]:
        lse_out = empty_like_kind(input, (input.shape[0],), acl_dtype(input))
    r = OPS["cross_entropy_loss_prob_with_grad"](
        {"input": input, "target": target, "weightOptional": weight,
         "gradLossOptional": grad_loss, "gradOut": input if inplace else None,
         "lseOut": lse_out}, reduction=reduction, label_smoothing=label_smoothing)
    return CrossEntropyLossProbWithGradResult(r["lossOut"], r["lseOut"], r["gradOut"])
