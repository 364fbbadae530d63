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

__all__ = ["cross_entropy", "CrossEntropyLoss", "linear_cross_entropy", "log_softmax",
           "vocab_parallel_cross_entropy"]


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


# ---- the fused linear + cross-entropy (no (N, V) tensor at all; docs/large_vocab.md) ----------

def _raw_view(t: Optional[Tensor]):
    return None if t is None else (t.data_ptr(), tuple(t.shape), tuple(t.stride()))


def _ext_call(fn, tensors, *attrs):
    """An extension outside the operator table (_C.linear_cross_entropy, ...) over raw views of
    `tensors` (None for absent ones); raises with the library's sentence."""
    status, message = fn([_raw_view(t) for t in tensors],
                         [_ac.acl_dtype(t) if t is not None else 0 for t in tensors], *attrs,
                         torch.get_num_threads())
    if status != 0:
        _ac.raise_for(status, message)


def _lce_run(input: Tensor, linear_weight: Tensor, target: Tensor, linear_bias: Optional[Tensor],
             weight: Optional[Tensor], grad_loss: Optional[Tensor], reduction: str,
             ignore_index: int, label_smoothing: float, z_loss_scale: float, chunk_size: int,
             fp32_loss: bool, with_grads: bool):
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
              reduction, ignore_index, label_smoothing, z_loss_scale, chunk_size)
    def empty():  # a fresh one each: outputs must not alias each other
        return input.new_empty((0,))

    return (loss, lse, gi if gi is not None else empty(), gw if gw is not None else empty(),
            gb if gb is not None else empty())


@torch.library.custom_op("aclnn_cpu::linear_cross_entropy", mutates_args=(), device_types="cpu")
def _linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor,
                          linear_bias: Optional[Tensor], weight: Optional[Tensor], reduction: str,
                          ignore_index: int, label_smoothing: float, z_loss_scale: float,
                          chunk_size: int, fp32_loss: bool, with_grads: bool
                          ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(loss, lse, grad_input, grad_weight, grad_bias). with_grads: the gradients of the loss
    itself (gradLoss = 1) come out of the same pass; otherwise they are empty."""
    return _lce_run(input, linear_weight, target, linear_bias, weight, None, reduction,
                    ignore_index, label_smoothing, z_loss_scale, chunk_size, fp32_loss,
                    with_grads)


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
      z_loss_scale, chunk_size, fp32_loss, with_grads):
    return _lce_fake_outputs(input, linear_weight, linear_bias, reduction, fp32_loss, with_grads)


@torch.library.custom_op("aclnn_cpu::linear_cross_entropy_backward", mutates_args=(),
                         device_types="cpu")
def _linear_cross_entropy_backward(grad_loss: Tensor, input: Tensor, linear_weight: Tensor,
                                   target: Tensor, linear_bias: Optional[Tensor],
                                   weight: Optional[Tensor], reduction: str, ignore_index: int,
                                   label_smoothing: float, z_loss_scale: float, chunk_size: int
                                   ) -> tuple[Tensor, Tensor, Tensor]:
    """(grad_input, grad_weight, grad_bias) for any gradLoss: the logits are computed again, a
    chunk at a time (reduction "none", or a forward that did not compute them)."""
    _, _, gi, gw, gb = _lce_run(input, linear_weight, target, linear_bias, weight,
                                grad_loss.contiguous(), reduction, ignore_index, label_smoothing,
                                z_loss_scale, chunk_size, False, True)
    return gi, gw, gb


@_linear_cross_entropy_backward.register_fake
def _(grad_loss, input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
      label_smoothing, z_loss_scale, chunk_size):
    _, _, gi, gw, gb = _lce_fake_outputs(input, linear_weight, linear_bias, reduction, False, True)
    return gi, gw, gb


def _lce_setup(ctx, inputs, output):
    (input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing,
     z_loss_scale, chunk_size, _, with_grads) = inputs
    _, lse, gi, gw, gb = output
    ctx.options = (reduction, ignore_index, label_smoothing, z_loss_scale, chunk_size)
    ctx.with_grads = with_grads
    ctx.has_bias = linear_bias is not None
    if with_grads:  # the gradients are ready; the backward scales them by the loss's gradient
        ctx.save_for_backward(gi, gw, gb)
    else:
        ctx.save_for_backward(input, linear_weight, target, linear_bias, weight)
    ctx.mark_non_differentiable(lse, gi, gw, gb)
    ctx.set_materialize_grads(False)


def _lce_grad(ctx, grad_loss, grad_lse, grad_gi, grad_gw, grad_gb):
    none = (None,) * 9
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
    return (gi, gw, None, gb if ctx.has_bias else None) + (None,) * 8


_linear_cross_entropy.register_autograd(_lce_grad, setup_context=_lce_setup)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor,
                         linear_bias: Optional[Tensor] = None, weight: Optional[Tensor] = None,
                         reduction: str = "mean", ignore_index: int = -100,
                         label_smoothing: float = 0.0, *, z_loss_scale: float = 0.0,
                         chunk_size: int = 0, fp32_loss: bool = False) -> Tensor:
    """``F.cross_entropy(F.linear(input, linear_weight, linear_bias), target, weight, ...)``
    without the (N, V) logits: rows are processed ``chunk_size`` at a time (0: automatic, the
    chunk's buffers at most 1/16 of the bytes of float32 logits), the matrix products by
    oneDNN. input (..., H) and linear_weight (V, H): float32 or bfloat16; the z-loss term
    (``z_loss_scale``) is part of the loss. With ``reduction`` "mean" or "sum" and a gradient
    needed, the forward computes the gradients in the same pass (three matrix products in all,
    as F.linear's forward and backward); with "none" the backward computes the logits again
    (four)."""
    _check_cpu("linear_cross_entropy", input, linear_weight, target, linear_bias, weight)
    h = input.shape[-1]
    x = input.reshape(-1, h)
    t = target.reshape(-1)
    needs = torch.is_grad_enabled() and any(
        p is not None and p.requires_grad for p in (input, linear_weight, linear_bias))
    with_grads = needs and reduction in ("mean", "sum")
    loss, _, _, _, _ = _linear_cross_entropy(x, linear_weight, t, linear_bias, weight, reduction,
                                             ignore_index, float(label_smoothing),
                                             float(z_loss_scale), int(chunk_size),
                                             bool(fp32_loss), with_grads)
    if reduction == "none":
        loss = loss.reshape(target.shape)
    return loss


# ---- vocabulary-parallel cross-entropy (docs/large_vocab.md) ----------------------------------

@torch.library.custom_op("aclnn_cpu::cross_entropy_shard_stats", mutates_args=(),
                         device_types="cpu")
def _shard_stats(logits: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int,
                 class_offset: int, num_classes: int) -> tuple[Tensor, Tensor, Tensor]:
    """(lse, target_logit, weighted_sum) of a shard of the classes, each (N,) float32:
    aclnnCpuCrossEntropyShardStats."""
    outs = [logits.new_empty((logits.shape[0],), dtype=torch.float32) for _ in range(3)]
    _ext_call(_ac._C.shard_stats, [logits, target, weight] + outs, ignore_index, class_offset,
              num_classes)
    return outs[0], outs[1], outs[2]


@_shard_stats.register_fake
def _(logits, target, weight, ignore_index, class_offset, num_classes):
    return tuple(logits.new_empty((logits.shape[0],), dtype=torch.float32) for _ in range(3))


@torch.library.custom_op("aclnn_cpu::cross_entropy_grad_shard", mutates_args=(),
                         device_types="cpu")
def _grad_shard(grad_loss: Tensor, logits: Tensor, target: Tensor, weight: Optional[Tensor],
                lse: Tensor, reduction: str, ignore_index: int, label_smoothing: float,
                z_loss_scale: float, class_offset: int, num_classes: int) -> Tensor:
    """The gradient of a shard's logits given the global lse: aclnnCpuCrossEntropyLossGradShard."""
    out = _contiguous_like(logits)
    _ext_call(_ac._C.grad_shard, [grad_loss, logits, target, weight, None, lse, out], reduction,
              ignore_index, label_smoothing, z_loss_scale, class_offset, num_classes)
    return out


@_grad_shard.register_fake
def _(grad_loss, logits, target, weight, lse, reduction, ignore_index, label_smoothing,
      z_loss_scale, class_offset, num_classes):
    return _contiguous_like(logits)


class _VocabParallelCrossEntropy(torch.autograd.Function):
    """Forward: the shard's statistics, two all-reduces of O(N) (the maximum of the shards'
    row lse, then the sums of exp(lse_s - max), the target logits and the weighted logit sums,
    in float64), the loss from them; the backward needs no communication."""

    @staticmethod
    def forward(ctx, logits, target, weight, reduction, ignore_index, label_smoothing,
                z_loss_scale, class_offset, num_classes, group, fp32_loss):
        import torch.distributed as dist
        lse_s, xt, ws = _shard_stats(logits, target, weight, ignore_index, class_offset,
                                     num_classes)
        m = lse_s.clone()
        dist.all_reduce(m, op=dist.ReduceOp.MAX, group=group)
        m = m.double()
        packed = torch.stack([torch.exp(lse_s.double() - m), xt.double(), ws.double()])
        dist.all_reduce(packed, op=dist.ReduceOp.SUM, group=group)
        lse = m + torch.log(packed[0])
        kept = target != ignore_index
        safe_t = torch.where(kept, target, torch.zeros_like(target)).long()
        wt = (weight.double()[safe_t] if weight is not None
              else torch.ones_like(lse)) * kept.double()
        w_all = float(weight.double().sum()) if weight is not None else float(num_classes)
        nll = wt * (lse - packed[1])
        # Only with smoothing, and 0 for ignored rows: a -inf logit (a masked class) makes the
        # term +inf, and 0 * inf is NaN.
        zero = torch.zeros_like(lse)
        smooth = (torch.where(kept, w_all * lse - packed[2], zero) if label_smoothing != 0.0
                  else zero)
        zl = z_loss_scale * lse * lse * kept.double()
        eps = label_smoothing
        if reduction == "none":
            loss = (1.0 - eps) * nll + eps / num_classes * smooth + zl
        elif reduction == "sum":
            loss = ((1.0 - eps) * nll + eps / num_classes * smooth + zl).sum()
        else:
            loss = (((1.0 - eps) * nll.sum() + eps / num_classes * smooth.sum()) / wt.sum()
                    + zl.sum() / kept.double().sum())
        lse32 = lse.float()
        ctx.save_for_backward(logits, target, weight, lse32)
        ctx.options = (reduction, ignore_index, label_smoothing, z_loss_scale, class_offset,
                       num_classes)
        return loss.to(torch.float32 if fp32_loss else logits.dtype)

    @staticmethod
    def backward(ctx, grad):
        logits, target, weight, lse = ctx.saved_tensors
        g = _grad_shard(grad.to(logits.dtype).contiguous(), logits, target, weight, lse,
                        *ctx.options)
        return (g,) + (None,) * 10


def vocab_parallel_cross_entropy(logits: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                 reduction: str = "mean", ignore_index: int = -100,
                                 label_smoothing: float = 0.0, *, z_loss_scale: float = 0.0,
                                 group=None, class_offset: Optional[int] = None,
                                 num_classes: Optional[int] = None,
                                 fp32_loss: bool = False) -> Tensor:
    """``F.cross_entropy`` over logits whose classes are split across the processes of a
    ``torch.distributed`` group (any backend; gloo on CPUs): this process holds ``logits``
    (N, Vs), the columns [class_offset, class_offset + Vs) of the whole vocabulary of
    ``num_classes``; ``target`` (N,) and ``weight`` (num_classes,) are the whole vocabulary's,
    the same on every process. Without ``class_offset`` and ``num_classes`` the shards are taken
    in rank order (one all-gather of the shard widths). Every process gets the same loss; the
    backward gives each the gradient of its own shard. Two all-reduces of O(N) per forward
    (4N bytes, then 24N), none in the backward (docs/large_vocab.md)."""
    import torch.distributed as dist
    _check_cpu("vocab_parallel_cross_entropy", logits, target, weight)
    if logits.dim() != 2:
        raise ValueError("aclnn_cpu.torch.vocab_parallel_cross_entropy: logits must be (N, Vs), "
                         f"got shape {tuple(logits.shape)}.")
    if class_offset is None or num_classes is None:
        widths = [torch.zeros(1, dtype=torch.int64)
                  for _ in range(dist.get_world_size(group))]
        dist.all_gather(widths, torch.tensor([logits.shape[1]], dtype=torch.int64), group=group)
        widths = [int(w) for w in widths]
        rank = dist.get_rank(group)
        class_offset = sum(widths[:rank]) if class_offset is None else class_offset
        num_classes = sum(widths) if num_classes is None else num_classes
    return _VocabParallelCrossEntropy.apply(logits, target, weight, reduction, ignore_index,
                                            float(label_smoothing), float(z_loss_scale),
                                            int(class_offset), int(num_classes), group,
                                            bool(fp32_loss))


class _CrossEntropyWithGrad(torch.autograd.Function):
    """The lean loss with its gradient computed in the forward (aclnnCpuCrossEntropyLossWithGrad),
    out of place or over the logits; the backward scales the saved gradient."""

    @staticmethod
    def forward(ctx, input, target, weight, reduction, ignore_index, label_smoothing,
                z_loss_scale, fp32_loss, inplace):
        r = _ac.cross_entropy_loss_with_grad(
            input.detach(), target, weight, reduction=reduction, ignore_index=ignore_index,
            label_smoothing=label_smoothing, z_loss_scale=z_loss_scale, return_z_loss=True,
            inplace=inplace)
        if inplace:
            # The logits now hold the gradient: an op that saved them for its backward fails
            # there ("modified by an inplace operation") instead of using the wrong values.
            torch.autograd.graph.increment_version(input)
        ctx.save_for_backward(r.grad)
        loss, z_loss = r.loss, r.z_loss
        if not fp32_loss:
            loss, z_loss = loss.to(input.dtype), z_loss.to(input.dtype)
        ctx.mark_non_differentiable(z_loss)
        return loss, z_loss

    @staticmethod
    def backward(ctx, grad_loss, grad_z_loss):
        (grad,) = ctx.saved_tensors
        if grad_loss is None:
            return (None,) * 9
        # loss.backward() passes 1: the gradient as it is (for in place, the logits' memory).
        if torch.compiler.is_compiling() or not bool(torch.all(grad_loss == 1)):
            grad = grad * grad_loss.to(grad.dtype)
        return (grad,) + (None,) * 8


def _check_cpu(fn: str, *tensors: Optional[Tensor]) -> None:
    for t in tensors:
        if t is not None and t.device.type != "cpu":
            raise NotImplementedError(
                f"aclnn_cpu.torch.{fn}: runs on CPU tensors only; got one on {t.device}.")


def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0, *,
                  z_loss_scale: float = 0.0, return_z_loss: bool = False,
                  fp32_loss: bool = False, lean: bool = False, inplace_backward: bool = False,
                  grad_in_forward: bool = False):
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
    ``grad_in_forward=True`` (with ``lean``; "mean" or "sum") computes the gradient in the
    forward's pass, each row right after its loss while it is in cache
    (``aclnnCpuCrossEntropyLossWithGrad``), and the backward only scales it by the loss's
    gradient (nothing at all for ``loss.backward()``): two memory passes per step instead of
    three. With ``inplace_backward`` too the gradient overwrites the logits already in the
    forward, so nothing may read them after the loss is computed, not even a metric.

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
    if grad_in_forward and not (lean and reduction in ("mean", "sum")):
        raise NotImplementedError(
            "aclnn_cpu.torch.cross_entropy: grad_in_forward needs lean=True and reduction "
            "\"mean\" or \"sum\" (a per-row loss gradient is not known in the forward).")
    if grad_in_forward and torch.is_grad_enabled() and input.requires_grad:
        if inplace_backward and input.is_leaf:
            raise ValueError("aclnn_cpu.torch.cross_entropy: inplace_backward with "
                             "grad_in_forward would overwrite a leaf tensor; pass logits that "
                             "are an intermediate.")
        loss, z_loss = _CrossEntropyWithGrad.apply(
            input, target, weight, reduction, ignore_index, float(label_smoothing),
            float(z_loss_scale), bool(fp32_loss), bool(inplace_backward))
    elif lean:
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
