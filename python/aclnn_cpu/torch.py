"""PyTorch integration: custom operators (``torch.ops.aclnn_cpu.*``) with fake implementations
and autograd, and drop-in ``cross_entropy`` / ``CrossEntropyLoss`` / ``log_softmax``.

The operators are registered with ``torch.library.custom_op``: ``torch.compile`` sees them as
opaque calls (their fake implementations give the output shapes), the backward of each forward
runs the library's gradient operator, and ``torch.library.opcheck`` passes on all of them. They
run on CPU tensors only; anything the library does not support raises ``NotImplementedError``
naming the limit instead of falling back to PyTorch.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

import aclnn_cpu as _ac

__all__ = ["cross_entropy", "CrossEntropyLoss", "log_softmax"]


def _contiguous_like(t: Tensor, dtype: Optional[torch.dtype] = None) -> Tensor:
    return t.new_empty(t.shape, dtype=dtype if dtype is not None else t.dtype)


# ---- log_softmax ----------------------------------------------------------------------------

@torch.library.custom_op("aclnn_cpu::log_softmax", mutates_args=(), device_types="cpu")
def _log_softmax(input: Tensor, dim: int, dtype: Optional[torch.dtype]) -> Tensor:
    return _ac.log_softmax(input, dim, dtype=dtype)


@_log_softmax.register_fake
def _(input, dim, dtype):
    return _contiguous_like(input, dtype)


@torch.library.custom_op("aclnn_cpu::log_softmax_backward", mutates_args=(), device_types="cpu")
def _log_softmax_backward(grad_output: Tensor, output: Tensor, dim: int,
                          dtype: torch.dtype) -> Tensor:
    return _ac.log_softmax_backward(grad_output, output, dim, dtype=dtype)


@_log_softmax_backward.register_fake
def _(grad_output, output, dim, dtype):
    return _contiguous_like(grad_output, dtype)


def _log_softmax_setup(ctx, inputs, output):
    input, dim, _ = inputs
    ctx.dim = dim
    ctx.input_dtype = input.dtype
    ctx.save_for_backward(output)


def _log_softmax_grad(ctx, grad):
    (output,) = ctx.saved_tensors
    if output.dtype == torch.float64:
        raise NotImplementedError(
            "aclnn_cpu.torch.log_softmax: no gradient for float64 (aclnnLogSoftmaxBackward "
            "takes float32, float16 and bfloat16, as CANN's).")
    if grad.dtype != output.dtype:
        grad = grad.to(output.dtype)
    return _log_softmax_backward(grad, output, ctx.dim, ctx.input_dtype), None, None


_log_softmax.register_autograd(_log_softmax_grad, setup_context=_log_softmax_setup)


def log_softmax(input: Tensor, dim: int, dtype: Optional[torch.dtype] = None) -> Tensor:
    """``torch.nn.functional.log_softmax`` through ``aclnnLogSoftmax`` (and
    ``aclnnLogSoftmaxBackward`` for the gradient). ``dtype``: the result's dtype; the input is
    converted to it first, as in PyTorch."""
    _check_cpu("log_softmax", input)
    return _log_softmax(input, dim, dtype)


# ---- cross_entropy --------------------------------------------------------------------------

@torch.library.custom_op("aclnn_cpu::cross_entropy_loss", mutates_args=(), device_types="cpu")
def _cross_entropy_loss(input: Tensor, target: Tensor, weight: Optional[Tensor], reduction: str,
                        ignore_index: int, label_smoothing: float, z_loss_scale: float,
                        fp32_loss: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    # lse is written only with a z-loss (and not under a SoC profile whose NPU ignores it, which
    # leaves z_loss unwritten too): zero it otherwise so the outputs are always defined.
    lse_dtype = torch.float32 if fp32_loss else input.dtype
    lse = input.new_empty((input.shape[0],), dtype=lse_dtype) if z_loss_scale != 0.0 else \
        input.new_zeros((input.shape[0],), dtype=lse_dtype)
    r = _ac.cross_entropy_loss(input, target, weight, reduction=reduction,
                               ignore_index=ignore_index, label_smoothing=label_smoothing,
                               z_loss_scale=z_loss_scale, return_z_loss=True, fp32_loss=fp32_loss,
                               out=(None, None, None, lse))
    z_loss = r.z_loss
    if z_loss is None:
        z_loss = torch.zeros_like(r.loss)
        lse.zero_()
    return r.loss, r.log_prob, z_loss, lse


def _loss_shape(input: Tensor, reduction: str):
    return (input.shape[0],) if reduction == "none" else ()


@_cross_entropy_loss.register_fake
def _(input, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, fp32_loss):
    shape = _loss_shape(input, reduction)
    stats = torch.float32 if fp32_loss else input.dtype
    return (input.new_empty(shape, dtype=stats), _contiguous_like(input),
            input.new_empty(shape, dtype=stats), input.new_empty((input.shape[0],), dtype=stats))


@torch.library.custom_op("aclnn_cpu::cross_entropy_loss_grad", mutates_args=(),
                         device_types="cpu")
def _cross_entropy_loss_grad(grad_loss: Tensor, log_prob: Tensor, target: Tensor,
                             weight: Optional[Tensor], grad_z_loss: Optional[Tensor],
                             lse: Optional[Tensor], reduction: str, ignore_index: int,
                             label_smoothing: float, z_loss_scale: float) -> Tensor:
    return _ac.cross_entropy_loss_grad(grad_loss, log_prob, target, weight,
                                       grad_z_loss=grad_z_loss, lse=lse, reduction=reduction,
                                       ignore_index=ignore_index,
                                       label_smoothing=label_smoothing,
                                       z_loss_scale=z_loss_scale)


@_cross_entropy_loss_grad.register_fake
def _(grad_loss, log_prob, target, weight, grad_z_loss, lse, reduction, ignore_index,
      label_smoothing, z_loss_scale):
    return _contiguous_like(log_prob)


def _cross_entropy_setup(ctx, inputs, output):
    _, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, _ = inputs
    _, log_prob, _, lse = output
    ctx.options = (reduction, ignore_index, label_smoothing, z_loss_scale)
    ctx.save_for_backward(log_prob, target, weight, lse if z_loss_scale != 0.0 else None)
    ctx.mark_non_differentiable(log_prob, lse)
    # Unused outputs' gradients stay None: materialized, log_prob's would be an (N, C) zero tensor.
    ctx.set_materialize_grads(False)


def _loss_grads(ctx, like, grad_loss, grad_z_loss, z):
    """grad_loss (zeros if only the z-loss was used) and grad_z_loss (None without one), in the
    dtype of `like`."""
    if grad_loss is None:
        shape = (like.shape[0],) if ctx.options[0] == "none" else ()
        grad_loss = like.new_zeros(shape)
    gz = grad_z_loss.to(like.dtype) if z and grad_z_loss is not None else None
    return grad_loss.to(like.dtype), gz


def _cross_entropy_grad(ctx, grad_loss, grad_log_prob, grad_z_loss, grad_lse):
    log_prob, target, weight, lse = ctx.saved_tensors
    reduction, ignore_index, label_smoothing, z_loss_scale = ctx.options
    z = z_loss_scale != 0.0
    grad_loss, grad_z_loss = _loss_grads(ctx, log_prob, grad_loss, grad_z_loss, z)
    grad_input = _cross_entropy_loss_grad(
        grad_loss, log_prob, target, weight, grad_z_loss,
        lse.to(log_prob.dtype) if z else None, reduction, ignore_index, label_smoothing,
        z_loss_scale)
    return grad_input, None, None, None, None, None, None, None


_cross_entropy_loss.register_autograd(_cross_entropy_grad, setup_context=_cross_entropy_setup)


# ---- the lean cross-entropy (no (N, C) tensor but the gradient; docs/large_vocab.md) ----------

@torch.library.custom_op("aclnn_cpu::cross_entropy_lean", mutates_args=(), device_types="cpu")
def _cross_entropy_lean(input: Tensor, target: Tensor, weight: Optional[Tensor], reduction: str,
                        ignore_index: int, label_smoothing: float, z_loss_scale: float,
                        fp32_loss: bool, inplace_backward: bool) -> tuple[Tensor, Tensor, Tensor]:
    """(loss, z_loss, lse): aclnnCpuCrossEntropyLossLse; lse is float32. inplace_backward only
    tells the backward where to write."""
    stats = torch.float32 if fp32_loss else input.dtype
    shape = _loss_shape(input, reduction)
    loss, z_loss = input.new_empty(shape, dtype=stats), input.new_empty(shape, dtype=stats)
    r = _ac.cross_entropy_loss_lse(input, target, weight, reduction=reduction,
                                   ignore_index=ignore_index, label_smoothing=label_smoothing,
                                   z_loss_scale=z_loss_scale, return_z_loss=True,
                                   out=(loss, None, z_loss))
    return r.loss, r.z_loss, r.lse


@_cross_entropy_lean.register_fake
def _(input, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, fp32_loss,
      inplace_backward):
    shape = _loss_shape(input, reduction)
    stats = torch.float32 if fp32_loss else input.dtype
    return (input.new_empty(shape, dtype=stats), input.new_empty(shape, dtype=stats),
            input.new_empty((input.shape[0],), dtype=torch.float32))


@torch.library.custom_op("aclnn_cpu::cross_entropy_grad_from_logits", mutates_args=(),
                         device_types="cpu")
def _grad_from_logits(grad_loss: Tensor, logits: Tensor, target: Tensor, weight: Optional[Tensor],
                      grad_z_loss: Optional[Tensor], lse: Tensor, reduction: str,
                      ignore_index: int, label_smoothing: float, z_loss_scale: float) -> Tensor:
    return _ac.cross_entropy_loss_grad_from_logits(
        grad_loss, logits, target, lse, weight, grad_z_loss=grad_z_loss, reduction=reduction,
        ignore_index=ignore_index, label_smoothing=label_smoothing, z_loss_scale=z_loss_scale)


@_grad_from_logits.register_fake
def _(grad_loss, logits, target, weight, grad_z_loss, lse, reduction, ignore_index,
      label_smoothing, z_loss_scale):
    return _contiguous_like(logits)


@torch.library.custom_op("aclnn_cpu::cross_entropy_grad_from_logits_", mutates_args=("logits",),
                         device_types="cpu")
def _grad_from_logits_(grad_loss: Tensor, logits: Tensor, target: Tensor,
                       weight: Optional[Tensor], grad_z_loss: Optional[Tensor], lse: Tensor,
                       reduction: str, ignore_index: int, label_smoothing: float,
                       z_loss_scale: float) -> None:
    """In place: the gradient overwrites ``logits``."""
    _ac.cross_entropy_loss_grad_from_logits(
        grad_loss, logits, target, lse, weight, grad_z_loss=grad_z_loss, reduction=reduction,
        ignore_index=ignore_index, label_smoothing=label_smoothing, z_loss_scale=z_loss_scale,
        inplace=True)


def _lean_setup(ctx, inputs, output):
    (input, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, _,
     inplace_backward) = inputs
    _, _, lse = output
    ctx.options = (reduction, ignore_index, label_smoothing, z_loss_scale)
    ctx.inplace = inplace_backward
    ctx.save_for_backward(input, target, weight, lse)
    ctx.mark_non_differentiable(lse)
    ctx.set_materialize_grads(False)


def _lean_grad(ctx, grad_loss, grad_z_loss, grad_lse):
    logits, target, weight, lse = ctx.saved_tensors
    reduction, ignore_index, label_smoothing, z_loss_scale = ctx.options
    grad_loss, gz = _loss_grads(ctx, logits, grad_loss, grad_z_loss, z_loss_scale != 0.0)
    args = (grad_loss, logits, target, weight, gz, lse, reduction, ignore_index,
            label_smoothing, z_loss_scale)
    if ctx.inplace:
        _grad_from_logits_(*args)
        return logits, None, None, None, None, None, None, None, None
    return _grad_from_logits(*args), None, None, None, None, None, None, None, None


_cross_entropy_lean.register_autograd(_lean_grad, setup_context=_lean_setup)


def _check_cpu(fn: str, *tensors: Optional[Tensor]) -> None:
    for t in tensors:
        if t is not None and t.device.type != "cpu":
            raise NotImplementedError(
                f"aclnn_cpu.torch.{fn}: runs on CPU tensors only; got one on {t.device}.")


def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0, *,
                  z_loss_scale: float = 0.0, return_z_loss: bool = False,
                  fp32_loss: bool = False, lean: bool = False, inplace_backward: bool = False):
    """``torch.nn.functional.cross_entropy`` through ``aclnnCrossEntropyLoss`` and, for the
    gradient, ``aclnnCrossEntropyLossGrad``, for (N, C) or (C,) logits and class-index targets
    (int64 or int32).

    ``z_loss_scale`` adds ``z_loss_scale * logsumexp(input)**2`` per row to the loss (the
    z-loss of PaLM, reduced like the loss); with ``return_z_loss`` the result is
    ``(loss, z_loss)``, the z-loss being the part of the loss it contributed. ``fp32_loss``:
    for a float16 or bfloat16 input, the loss (and z-loss) in float32, rounded once from the
    float32-or-better computation (PyTorch rounds it to the input's 16 bits); the gradient
    keeps the input's dtype.

    ``lean=True`` (aclnn-cpu's extensions, docs/large_vocab.md): the forward computes the loss
    and each row's float32 log-sum-exp only, saves just that (N floats) for the backward, which
    computes the gradient from the logits: no (N, C) tensor but the gradient.
    ``inplace_backward=True`` (with ``lean``) writes the gradient over the logits' own memory:
    for logits that are an intermediate nothing reads after the loss (a language-model head's
    output), never for a leaf or a tensor used elsewhere.

    Not supported (``NotImplementedError``): class-probability targets, inputs with more than
    two dimensions, tensors not on the CPU.
    """
    if size_average is not None or reduce is not None:
        reduction = torch.nn._reduction.legacy_get_string(size_average, reduce)
    _check_cpu("cross_entropy", input, target, weight)
    if target.is_floating_point():
        raise NotImplementedError(
            "aclnn_cpu.torch.cross_entropy: class-probability targets (a floating target) are "
            "not supported; pass class indices.")
    if input.dim() not in (1, 2):
        raise NotImplementedError(
            f"aclnn_cpu.torch.cross_entropy: supports (N, C) and (C,) inputs; got a "
            f"{input.dim()}-d input of shape {tuple(input.shape)}.")
    if weight is not None and weight.dtype in (torch.float16, torch.bfloat16):
        weight = weight.float()  # PyTorch wants the input's dtype, CANN float32: exact either way
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    if inplace_backward and not lean:
        raise NotImplementedError(
            "aclnn_cpu.torch.cross_entropy: inplace_backward needs lean=True (the CANN path "
            "computes the gradient from log_prob, not over the logits).")
    if lean:
        loss, z_loss, _ = _cross_entropy_lean(input, target, weight, reduction, ignore_index,
                                              float(label_smoothing), float(z_loss_scale),
                                              bool(fp32_loss), bool(inplace_backward))
    else:
        loss, _, z_loss, _ = _cross_entropy_loss(input, target, weight, reduction, ignore_index,
                                                 float(label_smoothing), float(z_loss_scale),
                                                 bool(fp32_loss))
    if unbatched and reduction == "none":
        loss, z_loss = loss.squeeze(0), z_loss.squeeze(0)
    return (loss, z_loss) if return_z_loss else loss


class CrossEntropyLoss(torch.nn.Module):
    """``torch.nn.CrossEntropyLoss`` through :func:`cross_entropy` (same arguments, plus
    ``z_loss_scale``, ``return_z_loss`` and ``fp32_loss``)."""

    def __init__(self, weight: Optional[Tensor] = None, size_average=None,
                 ignore_index: int = -100, reduce=None, reduction: str = "mean",
                 label_smoothing: float = 0.0, *, z_loss_scale: float = 0.0,
                 return_z_loss: bool = False, fp32_loss: bool = False):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = torch.nn._reduction.legacy_get_string(size_average, reduce)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing
        self.z_loss_scale = z_loss_scale
        self.return_z_loss = return_z_loss
        self.fp32_loss = fp32_loss

    def forward(self, input: Tensor, target: Tensor):
        return cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                             reduction=self.reduction, label_smoothing=self.label_smoothing,
                             z_loss_scale=self.z_loss_scale, return_z_loss=self.return_z_loss,
                             fp32_loss=self.fp32_loss)
