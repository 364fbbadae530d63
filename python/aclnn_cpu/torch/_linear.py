"""The fused linear + cross-entropy (no (N, V) tensor at all; docs/large_vocab.md): its custom
operators, their fakes and autograd, and the function."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

import aclnn_cpu as _ac

from ._common import _check_cpu, _ext_call, _float_weight, _loss_shape


def _lce_run(input: Tensor, linear_weight: Tensor, target: Tensor, linear_bias: Optional[Tensor],
             weight: Optional[Tensor], grad_loss: Optional[Tensor], reduction: str,
             ignore_index: int, label_smoothing: float, z_loss_scale: float, chunk_size: int,
             fp32_loss: bool, with_grads: bool, softcap: float = 0.0):
    """One aclnnCpuLinearCrossEntropy call: (loss, lse, grad_input, grad_weight, grad_bias); the
    gradients are empty tensors when not asked for."""
    stats = torch.float32 if fp32_loss else input.dtype
    loss = input.new_empty(_loss_shape(input, reduction), dtype=stats)
    lse = input.new_empty((input.shape[0],), dtype=torch.float32)
    gi = torch.empty_like(input, memory_format=torch.contiguous_format) if with_grads else None
    gw = (torch.empty_like(linear_weight, memory_format=torch.contiguous_format)
          if with_grads else None)
    gb = torch.empty_like(linear_bias) if with_grads and linear_bias is not None else None
    _ext_call(_ac._C.linear_cross_entropy,
              [input, linear_weight, linear_bias, target, weight, grad_loss, loss, lse, gi, gw, gb],
              reduction, ignore_index, label_smoothing, z_loss_scale, softcap, chunk_size)
    def empty():  # a fresh one each: outputs must not alias each other
        return input.new_empty((0,))

    return (loss, lse, gi if gi is not None else empty(), gw if gw is not None else empty(),
            gb if gb is not None else empty())


@torch.library.custom_op("aclnn_cpu::linear_cross_entropy", mutates_args=(), device_types="cpu")
def _linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor,
                          linear_bias: Optional[Tensor], weight: Optional[Tensor], reduction: str,
                          ignore_index: int, label_smoothing: float, z_loss_scale: float,
                          chunk_size: int, fp32_loss: bool, with_grads: bool,
                          softcap: float = 0.0
                          ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(loss, lse, grad_input, grad_weight, grad_bias). with_grads: the gradients of the loss
    itself (gradLoss = 1) come out of the same pass; otherwise they are empty. softcap > 0:
    the logits soft-capped (softcap * tanh(logits / softcap)) before the loss."""
    return _lce_run(input, linear_weight, target, linear_bias, weight, None, reduction,
                    ignore_index, label_smoothing, z_loss_scale, chunk_size, fp32_loss,
                    with_grads, softcap)


def _lce_fake_outputs(input, linear_weight, linear_bias, reduction, fp32_loss, with_grads):
    stats = torch.float32 if fp32_loss else input.dtype
    return (input.new_empty(_loss_shape(input, reduction), dtype=stats),
            input.new_empty((input.shape[0],), dtype=torch.float32),
            torch.empty_like(input) if with_grads else input.new_empty((0,)),
            torch.empty_like(linear_weight) if with_grads else input.new_empty((0,)),
            torch.empty_like(linear_bias) if with_grads and linear_bias is not None
            else input.new_empty((0,)))


@_linear_cross_entropy.register_fake
def _(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing,
      z_loss_scale, chunk_size, fp32_loss, with_grads, softcap=0.0):
    return _lce_fake_outputs(input, linear_weight, linear_bias, reduction, fp32_loss, with_grads)


@torch.library.custom_op("aclnn_cpu::linear_cross_entropy_backward", mutates_args=(),
                         device_types="cpu")
def _linear_cross_entropy_backward(grad_loss: Tensor, input: Tensor, linear_weight: Tensor,
                                   target: Tensor, linear_bias: Optional[Tensor],
                                   weight: Optional[Tensor], reduction: str, ignore_index: int,
                                   label_smoothing: float, z_loss_scale: float, chunk_size: int,
                                   softcap: float = 0.0) -> tuple[Tensor, Tensor, Tensor]:
    """(grad_input, grad_weight, grad_bias) for any gradLoss: the logits are computed again, a
    chunk at a time (reduction "none", or a forward that did not compute them)."""
    _, _, gi, gw, gb = _lce_run(input, linear_weight, target, linear_bias, weight,
                                grad_loss.contiguous(), reduction, ignore_index, label_smoothing,
                                z_loss_scale, chunk_size, False, True, softcap)
    return gi, gw, gb


@_linear_cross_entropy_backward.register_fake
def _(grad_loss, input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
      label_smoothing, z_loss_scale, chunk_size, softcap=0.0):
    _, _, gi, gw, gb = _lce_fake_outputs(input, linear_weight, linear_bias, reduction, False, True)
    return gi, gw, gb


def _lce_setup(ctx, inputs, output):
    (input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing,
     z_loss_scale, chunk_size, _, with_grads, softcap) = inputs
    _, lse, gi, gw, gb = output
    ctx.options = (reduction, ignore_index, label_smoothing, z_loss_scale, chunk_size, softcap)
    ctx.with_grads = with_grads
    ctx.has_bias = linear_bias is not None
    if with_grads:  # the gradients are ready; the backward scales them by the loss's gradient
        ctx.save_for_backward(gi, gw, gb)
    else:
        ctx.save_for_backward(input, linear_weight, target, linear_bias, weight)
    ctx.mark_non_differentiable(lse, gi, gw, gb)
    ctx.set_materialize_grads(False)


def _lce_grad(ctx, grad_loss, grad_lse, grad_gi, grad_gw, grad_gb):
    none = (None,) * 10
    if grad_loss is None:
        return (None, None) + none + (None,)
    if ctx.with_grads:
        gi, gw, gb = ctx.saved_tensors
        # loss.backward() passes 1: eager mode then returns the gradients as they are (a
        # scaled copy of the weight's would cost one more gradient-sized tensor); a compiled
        # graph cannot branch on the value and always scales.
        if torch.compiler.is_compiling() or not bool(torch.all(grad_loss == 1)):
            gi, gw, gb = gi * grad_loss, gw * grad_loss, gb * grad_loss
    else:
        input, linear_weight, target, linear_bias, weight = ctx.saved_tensors
        gi, gw, gb = _linear_cross_entropy_backward(
            grad_loss.to(torch.float32), input, linear_weight, target, linear_bias, weight,
            *ctx.options)
    return (gi, gw, None, gb if ctx.has_bias else None) + (None,) * 9


_linear_cross_entropy.register_autograd(_lce_grad, setup_context=_lce_setup)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Optional[Tensor] = None, weight: Optional[Tensor] = None,
                         reduction: str = "mean", ignore_index: Optional[int] = None,
                         label_smoothing: float = 0.0, options=None, z_loss_scale: float = 0.0,
                         chunk_size: int = 0, fp32_loss: bool = False,
                         softcap: float = 0.0) -> Tensor:
    """``torch.nn.functional.linear_cross_entropy`` (PyTorch 2.15's signature and semantics):
    ``F.cross_entropy(F.linear(input, linear_weight, linear_bias), target, weight, ...)`` without
    the (N, V) logits. Rows are processed ``chunk_size`` at a time (0: automatic, the chunk's
    buffers at most 1/16 of the bytes of float32 logits; ``options.batch_chunk_size`` of a
    ``torch.nn.LinearCrossEntropyOptions`` sets it too), the matrix products by oneDNN.
    ``ignore_index=None`` means -100, as in PyTorch. input (..., H) and linear_weight (V, H):
    float32 or bfloat16. Beyond PyTorch's: label smoothing on the chunked path, the z-loss term
    (``z_loss_scale``, part of the loss), ``fp32_loss``, ``softcap`` (> 0: Gemma 2/3's
    final-logit soft-capping ``softcap * tanh(logits / softcap)`` before the loss, fused:
    aclnnCpuLinearCrossEntropyV2). With ``reduction`` "mean" or "sum" and
    a gradient needed, the forward computes the gradients in the same pass (three matrix
    products in all, as F.linear's forward and backward); with "none" the backward computes the
    logits again (four).

    Not fused (the (N, V) logits exist): class-probability targets (a floating ``target`` of
    shape (..., V)), float64 (no float64 product in oneDNN) and K-dimensional linear weights
    (V, d1, ..., dK, H): F.linear, then :func:`cross_entropy` (docs/python.md)."""
    _check_cpu("linear_cross_entropy", input, linear_weight, target, linear_bias, weight)
    if ignore_index is None:
        ignore_index = -100
    if options is not None and chunk_size == 0 and getattr(options, "batch_chunk_size", None):
        chunk_size = int(options.batch_chunk_size)
    weight = _float_weight(weight)
    if target.is_floating_point() or input.dtype == torch.float64 or linear_weight.dim() != 2:
        if softcap:
            raise NotImplementedError(
                "aclnn_cpu.torch.linear_cross_entropy: softcap is fused only: class indices, "
                "float32, bfloat16 or float16, and a (V, H) weight.")
        return _unfused(input, linear_weight, target, linear_bias, weight, reduction,
                        int(ignore_index), float(label_smoothing), float(z_loss_scale),
                        bool(fp32_loss))
    h = input.shape[-1]
    x = input.reshape(-1, h)
    t = target.reshape(-1)
    needs = torch.is_grad_enabled() and any(
        p is not None and p.requires_grad for p in (input, linear_weight, linear_bias))
    with_grads = needs and reduction in ("mean", "sum")
    loss, _, _, _, _ = _linear_cross_entropy(x, linear_weight, t, linear_bias, weight, reduction,
                                             int(ignore_index), float(label_smoothing),
                                             float(z_loss_scale), int(chunk_size),
                                             bool(fp32_loss), with_grads, float(softcap))
    if reduction == "none":
        loss = loss.reshape(target.shape)
    return loss


def _unfused(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
             label_smoothing, z_loss_scale, fp32_loss):
    """Class probabilities, float64 (no float64 product in oneDNN) and K-dimensional weights
    (C, d1, ..., dK, H): F.linear, then cross_entropy, as PyTorch's reference has it (the
    logits exist). 16-bit operands give float32 logits, as the fused path's."""
    from ._functional import cross_entropy
    c, out_features, h = linear_weight.shape[0], tuple(linear_weight.shape[1:-1]), \
        linear_weight.shape[-1]
    f32 = input.dtype in (torch.float16, torch.bfloat16)
    ops = [t.float() if f32 and t is not None else t
           for t in (input, linear_weight.reshape(-1, h),
                     None if linear_bias is None else linear_bias.reshape(-1))]
    logits = torch.nn.functional.linear(*ops)
    if out_features:
        logits = logits.reshape(*input.shape[:-1], c, *out_features)
        t = target.to(logits.dtype) if target.is_floating_point() else target
    else:  # (..., H) rows, as the fused path takes them
        logits = logits.reshape(-1, c)
        t = target.reshape(-1, c).to(logits.dtype) if target.is_floating_point() else \
            target.reshape(-1)
    kw = {} if target.is_floating_point() or out_features else {"z_loss_scale": z_loss_scale}
    loss = cross_entropy(logits, t, weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing, **kw)
    if f32 and not fp32_loss:
        loss = loss.to(input.dtype)
    if reduction == "none" and not out_features:
        loss = loss.reshape(input.shape[:-1])
    return loss

