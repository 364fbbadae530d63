"""The drop-in for torch.nn.CrossEntropyLoss."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from ._functional import cross_entropy


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
