"""The torch.library custom operators over the operator table (``torch.ops.aclnn_cpu.*``) and
their fake implementations: log-softmax and its backward, the CANN cross-entropy and its
gradient, the lean cross-entropy and the gradient from the logits. Their autograd is in
_autograd.py."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

import aclnn_cpu as _ac

from ._common import _contiguous_like, _loss_shape, _positions


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


@torch.library.custom_op("aclnn_cpu::cross_entropy_lean", mutates_args=(), device_types="cpu")
def _cross_entropy_lean(input: Tensor, target: Tensor, weight: Optional[Tensor], reduction: str,
                        ignore_index: int, label_smoothing: float, z_loss_scale: float,
                        fp32_loss: bool, inplace_backward: bool) -> tuple[Tensor, Tensor, Tensor]:
    """(loss, z_loss, lse): aclnnCpuCrossEntropyLossLse; lse is float64, all of which the
    gradient from the logits uses (an f32 lse of magnitude L puts p off by L * 2^-25).
    inplace_backward only tells the backward where to write."""
    stats = torch.float32 if fp32_loss else input.dtype
    shape = _loss_shape(input, reduction)
    loss, z_loss = input.new_empty(shape, dtype=stats), input.new_empty(shape, dtype=stats)
    lse = input.new_empty(_positions(input), dtype=torch.float64)
    r = _ac.cross_entropy_loss_lse(input, target, weight, reduction=reduction,
                                   ignore_index=ignore_index, label_smoothing=label_smoothing,
                                   z_loss_scale=z_loss_scale, return_z_loss=True,
                                   out=(loss, lse, z_loss))
    return r.loss, r.z_loss, r.lse


@_cross_entropy_lean.register_fake
def _(input, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, fp32_loss,
      inplace_backward):
    shape = _loss_shape(input, reduction)
    stats = torch.float32 if fp32_loss else input.dtype
    return (input.new_empty(shape, dtype=stats), input.new_empty(shape, dtype=stats),
            input.new_empty(_positions(input), dtype=torch.float64))


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


@torch.library.custom_op("aclnn_cpu::cross_entropy_with_grad", mutates_args=(),
                         device_types="cpu")
def _cross_entropy_with_grad(input: Tensor, target: Tensor, weight: Optional[Tensor],
                             reduction: str, ignore_index: int, label_smoothing: float,
                             z_loss_scale: float,
                             fp32_loss: bool) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(loss, z_loss, lse, grad): aclnnCpuCrossEntropyLossWithGrad, the lean forward and the
    gradient of the loss ("mean" or "sum") with respect to the input in one pass; lse float64."""
    stats = torch.float32 if fp32_loss else input.dtype
    shape = _loss_shape(input, reduction)
    loss, z_loss = input.new_empty(shape, dtype=stats), input.new_empty(shape, dtype=stats)
    lse = input.new_empty(_positions(input), dtype=torch.float64)
    r = _ac.cross_entropy_loss_with_grad(input, target, weight, reduction=reduction,
                                         ignore_index=ignore_index,
                                         label_smoothing=label_smoothing,
                                         z_loss_scale=z_loss_scale, return_z_loss=True,
                                         lse_out=lse, out=(loss, z_loss))
    return r.loss, r.z_loss, r.lse, r.grad


@_cross_entropy_with_grad.register_fake
def _(input, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, fp32_loss):
    shape = _loss_shape(input, reduction)
    stats = torch.float32 if fp32_loss else input.dtype
    return (input.new_empty(shape, dtype=stats), input.new_empty(shape, dtype=stats),
            input.new_empty(_positions(input), dtype=torch.float64), _contiguous_like(input))


# ---- class-probability targets (aclnnCpuCrossEntropyLossProb, its gradient, both in one pass) --

@torch.library.custom_op("aclnn_cpu::cross_entropy_prob", mutates_args=(), device_types="cpu")
def _cross_entropy_prob(input: Tensor, target: Tensor, weight: Optional[Tensor], reduction: str,
                        label_smoothing: float) -> tuple[Tensor, Tensor]:
    """(loss, lse); lse float64 (all of it, for the gradient)."""
    lse = input.new_empty((input.shape[0],), dtype=torch.float64)
    loss, lse = _ac.cross_entropy_loss_prob(input, target, weight, reduction=reduction,
                                            label_smoothing=label_smoothing, out=(None, lse))
    return loss, lse


@_cross_entropy_prob.register_fake
def _(input, target, weight, reduction, label_smoothing):
    return (input.new_empty(_loss_shape(input, reduction)),
            input.new_empty((input.shape[0],), dtype=torch.float64))


@torch.library.custom_op("aclnn_cpu::cross_entropy_prob_with_grad", mutates_args=(),
                         device_types="cpu")
def _cross_entropy_prob_with_grad(input: Tensor, target: Tensor, weight: Optional[Tensor],
                                  reduction: str,
                                  label_smoothing: float) -> tuple[Tensor, Tensor, Tensor]:
    """(loss, lse, grad): aclnnCpuCrossEntropyLossProbWithGrad, the gradient of the loss ("mean"
    or "sum") with respect to the input computed in the forward's pass; lse float64."""
    lse = input.new_empty((input.shape[0],), dtype=torch.float64)
    r = _ac.cross_entropy_loss_prob_with_grad(input, target, weight, reduction=reduction,
                                              label_smoothing=label_smoothing, lse_out=lse)
    return r.loss, r.lse, r.grad


@_cross_entropy_prob_with_grad.register_fake
def _(input, target, weight, reduction, label_smoothing):
    return (input.new_empty(_loss_shape(input, reduction)),
            input.new_empty((input.shape[0],), dtype=torch.float64), _contiguous_like(input))


@torch.library.custom_op("aclnn_cpu::cross_entropy_prob_grad", mutates_args=(),
                         device_types="cpu")
def _cross_entropy_prob_grad(grad_loss: Tensor, logits: Tensor, target: Tensor,
                             weight: Optional[Tensor], lse: Tensor, reduction: str,
                             label_smoothing: float) -> Tensor:
    return _ac.cross_entropy_loss_prob_grad(grad_loss, logits, target, lse, weight,
                                            reduction=reduction,
                                            label_smoothing=label_smoothing)


@_cross_entropy_prob_grad.register_fake
def _(grad_loss, logits, target, weight, lse, reduction, label_smoothing):
    return _contiguous_like(logits)

