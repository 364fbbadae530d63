"""aclnn_cpu.torch.install(): aclnn-cpu as the CPU implementation of PyTorch's own operators, so
that unchanged code (F.cross_entropy, F.log_softmax, nn.CrossEntropyLoss, F.linear_cross_entropy,
a Hugging Face model's loss) runs the library's kernels. docs/integrations.md has the whole
story; in short, through ``torch.library`` registrations that ``uninstall()`` removes again:

- ``aten::_log_softmax`` and ``aten::_log_softmax_backward_data`` (CPU): what
  ``F.log_softmax``, ``torch.log_softmax`` and ``Tensor.log_softmax`` end in, forward and
  backward; PyTorch's autograd formulas stay (double backward too).
- ``aten::cross_entropy_loss`` (AutogradCPU and CPU): ``F.cross_entropy`` and
  ``nn.CrossEntropyLoss`` through :func:`aclnn_cpu.torch.cross_entropy` with ``lean=True`` (the
  loss and row log-sum-exp forward, the gradient from the logits; float64, K-dimensional inputs
  and probabilities included; double backward through PyTorch's composite). PyTorch's reference path
  of ``F.linear_cross_entropy`` (``options=None``) ends here too.
- ``torch_nn::_linear_cross_entropy_batch_chunked`` (CPU) and ``..._no_reduction``
  (AutogradCPU): ``F.linear_cross_entropy``'s chunked path through the fused
  ``aclnnCpuLinearCrossEntropy``.

What a kernel does not take goes to PyTorch's own kernel (never a different result in its
place): the kernel's ``.out`` variant, or the operator's composite or default implementation.
``ACLNN_CPU_VERBOSE=1`` prints a line to stderr for every call: where it went, shapes and dtypes,
the time, or the reason it was given back to PyTorch (the library prints its own line for each
operator it runs).
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time
from typing import Callable, Optional

import torch
from torch import Tensor
from torch._C import DispatchKey

from ._common import _float_weight
from ._functional import cross_entropy
from ._linear import _linear_cross_entropy, linear_cross_entropy
from ._operators import _log_softmax, _log_softmax_backward

_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_REDUCTIONS = ("none", "mean", "sum")

_verbose = os.environ.get("ACLNN_CPU_VERBOSE", "") not in ("", "0")
_counts: collections.Counter = collections.Counter()
_lock = threading.Lock()
_libs: list = []  # the torch.library.Library objects while installed


def set_verbose(on: bool) -> None:
    """Turns the Python side's ``ACLNN_CPU_VERBOSE`` lines on or off (the environment variable
    sets it at import; the library's own lines follow the variable)."""
    global _verbose
    _verbose = bool(on)


def routing_counts() -> dict:
    """{(operator, "aclnn_cpu" or "pytorch"): calls} since the last :func:`reset_routing_counts`
    (counted while installed)."""
    with _lock:
        return dict(_counts)


def reset_routing_counts() -> None:
    with _lock:
        _counts.clear()


def _describe(tensors) -> str:
    return " ".join("x".join(map(str, t.shape)) + ":" + str(t.dtype)[6:]
                    for t in tensors if isinstance(t, Tensor))


def _say(*fields: str) -> None:
    print("aclnn_cpu_verbose,torch," + ",".join(fields), file=sys.stderr, flush=True)


def _ours(op: str, tensors, fn: Callable):
    with _lock:
        _counts[(op, "aclnn_cpu")] += 1
    if not _verbose:
        return fn()
    start = time.perf_counter()
    result = fn()
    _say(op, "aclnn_cpu", _describe(tensors), f"{(time.perf_counter() - start) * 1e3:.3f}")
    return result


def _theirs(op: str, tensors, reason: str, fn: Callable):
    with _lock:
        _counts[(op, "pytorch")] += 1
    if _verbose:
        _say(op, "pytorch", _describe(tensors), reason)
    return fn()


def _common_refusal(*tensors: Optional[Tensor]) -> Optional[str]:
    for t in tensors:
        if t is not None and t.device.type != "cpu":
            return f"a tensor on {t.device}"
    return None


# ---- aten::_log_softmax and aten::_log_softmax_backward_data (CPU) -------------------------

def _log_softmax_refusal(x: Tensor, half_to_float: bool) -> Optional[str]:
    if x.dtype not in _FLOATS:
        return f"dtype {x.dtype}"
    if x.dim() == 0:
        return "a 0-d input"
    if half_to_float and x.dtype not in (torch.float16, torch.bfloat16):
        return f"half_to_float with a {x.dtype} input"
    return _common_refusal(x)


def _log_softmax_cpu(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
    op = "aten::_log_softmax"
    reason = _log_softmax_refusal(self, half_to_float)
    out_dtype = torch.float32 if half_to_float else None
    if reason is not None:
        out = self.new_empty(self.shape, dtype=out_dtype or self.dtype)
        return _theirs(op, [self], reason,
                       lambda: torch.ops.aten._log_softmax.out(self, dim, half_to_float, out=out))
    return _ours(op, [self], lambda: _log_softmax(self, dim, out_dtype))


def _log_softmax_backward_cpu(grad_output: Tensor, output: Tensor, dim: int,
                              input_dtype: torch.dtype) -> Tensor:
    op = "aten::_log_softmax_backward_data"
    reason = _log_softmax_refusal(output, False)
    if reason is None and grad_output.dtype != output.dtype:
        reason = f"grad_output {grad_output.dtype} and output {output.dtype}"
    if reason is None and input_dtype not in _FLOATS:
        reason = f"input dtype {input_dtype}"
    if reason is None and grad_output.shape != output.shape:
        reason = "grad_output and output of different shapes"
    if reason is not None:
        out = grad_output.new_empty(grad_output.shape, dtype=input_dtype)
        return _theirs(op, [grad_output, output], reason,
                       lambda: torch.ops.aten._log_softmax_backward_data.out(
                           grad_output, output, dim, input_dtype, out=out))
    return _ours(op, [grad_output, output],
                 lambda: _log_softmax_backward(grad_output, output, dim, input_dtype))


# ---- aten::cross_entropy_loss (AutogradCPU and CPU) ----------------------------------------

def _cross_entropy_refusal(x: Tensor, target: Tensor, weight: Optional[Tensor],
                           reduction: int) -> Optional[str]:
    if x.dtype not in _FLOATS:
        return f"dtype {x.dtype}"
    if x.dim() == 0:
        return "a 0-d input"
    if reduction not in (0, 1, 2):
        return f"reduction {reduction}"
    if target.is_floating_point():
        if target.shape != x.shape:
            return f"probabilities of shape {tuple(target.shape)} for input {tuple(x.shape)}"
        if target.dtype != x.dtype:
            return f"probabilities of dtype {target.dtype} for a {x.dtype} input"
    else:
        if target.dtype != torch.int64:
            return f"class indices of dtype {target.dtype} (PyTorch's kernel wants int64)"
        positions = (x.shape[0],) + tuple(x.shape[2:]) if x.dim() > 1 else ()
        if tuple(target.shape) != positions:
            return f"target of shape {tuple(target.shape)} for input {tuple(x.shape)}"
    if weight is not None:
        c = x.shape[1] if x.dim() > 1 else x.shape[0]
        if weight.dtype != x.dtype or tuple(weight.shape) != (c,):
            return f"class weights {tuple(weight.shape)}:{weight.dtype}"
        if weight.requires_grad and torch.is_grad_enabled():
            return "class weights that require a gradient"
    return _common_refusal(x, target, weight)


def _cross_entropy_loss(self: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                        reduction: int = 1, ignore_index: int = -100,
                        label_smoothing: float = 0.0) -> Tensor:
    op = "aten::cross_entropy_loss"
    tensors = [self, target] + ([weight] if weight is not None else [])
    reason = _cross_entropy_refusal(self, target, weight, reduction)
    if reason is None:
        try:
            # The lean pair: it saves the logits (PyTorch saves its log-probabilities, the same
            # size), moves a third less memory than CANN's pair and, from the saved logits,
            # gives double backward.
            return _ours(op, tensors, lambda: cross_entropy(
                self, target, weight, ignore_index=int(ignore_index),
                reduction=_REDUCTIONS[reduction], label_smoothing=float(label_smoothing),
                lean=True))
        except NotImplementedError as e:  # a limit of the drop-in (none is known today)
            reason = str(e)
    return _theirs(op, tensors, reason, lambda: torch.ops.aten.cross_entropy_loss.default._op_dk(
        DispatchKey.CompositeImplicitAutograd, self, target, weight, reduction, ignore_index,
        label_smoothing))


# ---- F.linear_cross_entropy's chunked path (torch_nn::_linear_cross_entropy_batch_chunked*) --

def _chunked_refusal(input, linear_weight, target, linear_bias, weight) -> Optional[str]:
    if input.dtype not in (torch.float32, torch.bfloat16, torch.float16):
        return f"dtype {input.dtype} (the fused product takes float32, bfloat16, float16)"
    if linear_weight.dtype != input.dtype:
        return f"input {input.dtype} with linear_weight {linear_weight.dtype}"
    if linear_bias is not None and linear_bias.dtype != input.dtype:
        return f"linear_bias {linear_bias.dtype} for a {input.dtype} input"
    if target.is_floating_point():
        return "class probabilities (the fused operator takes class indices)"
    if input.dim() != 2 or linear_weight.dim() != 2:
        return "not (N, H) rows with a (C, H) weight"
    return _common_refusal(input, linear_weight, target, linear_bias, weight)


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
             label_smoothing, batch_chunk_size, acc_policy, acc_dtype, allow_retain_graph,
             compute_input_grad, compute_linear_weight_grad, compute_linear_bias_grad):
    """(loss, grad_input, grad_linear_weight, grad_linear_bias), the gradients of the loss itself
    computed in the forward, as PyTorch's op returns them (its autograd scales them)."""
    op = "torch_nn::_linear_cross_entropy_batch_chunked"
    tensors = [input, linear_weight, target]
    reason = _chunked_refusal(input, linear_weight, target, linear_bias, weight)
    if reason is not None:
        return _theirs(op, tensors, reason,
                       lambda: torch.ops.torch_nn._linear_cross_entropy_batch_chunked.default.
                       _op_dk(DispatchKey.CompositeExplicitAutograd, input, linear_weight, target,
                              linear_bias, weight, reduction, ignore_index, label_smoothing,
                              batch_chunk_size, acc_policy, acc_dtype, allow_retain_graph,
                              compute_input_grad, compute_linear_weight_grad,
                              compute_linear_bias_grad))
    grads = compute_input_grad or compute_linear_weight_grad or compute_linear_bias_grad

    def run():
        loss, _, gi, gw, gb = _linear_cross_entropy(
            input, linear_weight, target, linear_bias, _float_weight(weight), reduction,
            int(ignore_index), float(label_smoothing), 0.0, int(batch_chunk_size), False, grads)
        # A gradient not asked for is an empty tensor of its rank, as PyTorch's op returns it.
        return (loss, gi if compute_input_grad else input.new_empty((0, 0)),
                gw if compute_linear_weight_grad else input.new_empty((0, 0)),
                gb if compute_linear_bias_grad else input.new_empty((0,)))

    return _ours(op, tensors, run)


def _chunked_none(input, linear_weight, target, linear_bias, weight, ignore_index,
                  batch_chunk_size, acc_policy, acc_dtype):
    """The per-row loss with our autograd (the backward computes the logits again, a chunk at a
    time, as PyTorch's does)."""
    op = "torch_nn::_linear_cross_entropy_batch_chunked_no_reduction"
    tensors = [input, linear_weight, target]
    reason = _chunked_refusal(input, linear_weight, target, linear_bias, weight)
    if reason is not None:
        return _theirs(op, tensors, reason,
                       lambda: torch.ops.torch_nn._linear_cross_entropy_batch_chunked_no_reduction.
                       default._op_dk(DispatchKey.Autograd, input, linear_weight, target,
                                      linear_bias, weight, ignore_index, batch_chunk_size,
                                      acc_policy, acc_dtype))
    return _ours(op, tensors, lambda: linear_cross_entropy(
        input, linear_weight, target, linear_bias=linear_bias, weight=weight, reduction="none",
        ignore_index=int(ignore_index), chunk_size=int(batch_chunk_size)))


# ---- install / uninstall ---------------------------------------------------------------------

def _chunked_ops_exist() -> bool:
    try:
        import torch.nn.modules.linear_cross_entropy  # noqa: F401  (registers the ops)
        torch.ops.torch_nn._linear_cross_entropy_batch_chunked.default
        torch.ops.torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default
        return True
    except (ImportError, AttributeError, RuntimeError):
        return False


class _Installed:
    """What install() returns: also a context manager that uninstalls on exit if this call
    installed."""

    def __init__(self, installed_here: bool):
        self._installed_here = installed_here

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._installed_here:
            uninstall()
        return False


def is_installed() -> bool:
    return bool(_libs)


def install() -> _Installed:
    """Makes aclnn-cpu the CPU kernel behind F.log_softmax (forward and backward),
    F.cross_entropy / nn.CrossEntropyLoss and F.linear_cross_entropy (reference and chunked
    paths). Idempotent; ``uninstall()`` (or leaving ``with install():``) restores PyTorch's
    kernels. See the module's text and docs/integrations.md."""
    if _libs:
        return _Installed(False)
    aten = torch.library.Library("aten", "IMPL")
    aten.impl("_log_softmax", _log_softmax_cpu, "CPU")
    aten.impl("_log_softmax_backward_data", _log_softmax_backward_cpu, "CPU")
    # AutogradCPU: in place of the composite (log_softmax + nll_loss) and its autograd; CPU:
    # the same under inference_mode, where autograd keys are skipped.
    aten.impl("cross_entropy_loss", _cross_entropy_loss, "AutogradCPU")
    aten.impl("cross_entropy_loss", _cross_entropy_loss, "CPU")
    _libs.append(aten)
    if _chunked_ops_exist():
        nn_lib = torch.library.Library("torch_nn", "IMPL")
        nn_lib.impl("_linear_cross_entropy_batch_chunked", _chunked, "CPU")
        nn_lib.impl("_linear_cross_entropy_batch_chunked_no_reduction", _chunked_none,
                    "AutogradCPU")
        _libs.append(nn_lib)
    return _Installed(True)


def uninstall() -> None:
    """Removes what install() registered: PyTorch's own kernels again."""
    while _libs:
        _libs.pop()._destroy()
