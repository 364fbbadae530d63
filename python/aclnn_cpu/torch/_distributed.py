"""The vocabulary-parallel cross-entropy over torch.distributed (docs/large_vocab.md): the
shard operators and the autograd function that combines the shards."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

import aclnn_cpu as _ac

from ._common import _check_cpu, _contiguous_like, _ext_call


def _stats_dtype(logits: Tensor) -> torch.dtype:
    return torch.float64 if logits.dtype == torch.float64 else torch.float32


@torch.library.custom_op("aclnn_cpu::cross_entropy_shard_stats", mutates_args=(),
                         device_types="cpu")
def _shard_stats(logits: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int,
                 class_offset: int, num_classes: int) -> tuple[Tensor, Tensor, Tensor]:
    """(lse, target_logit, weighted_sum) of a shard of the classes, each (N,) float32 (float64
    for float64 logits): aclnnCpuCrossEntropyShardStats."""
    outs = [logits.new_empty((logits.shape[0],), dtype=_stats_dtype(logits)) for _ in range(3)]
    _ext_call(_ac._C.shard_stats, [logits, target, weight] + outs, ignore_index, class_offset,
              num_classes)
    return outs[0], outs[1], outs[2]


@_shard_stats.register_fake
def _(logits, target, weight, ignore_index, class_offset, num_classes):
    return tuple(logits.new_empty((logits.shape[0],), dtype=_stats_dtype(logits))
                 for _ in range(3))


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
        ctx.save_for_backward(logits, target, weight, lse)  # float64: all of it (ce::SplitLse)
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
