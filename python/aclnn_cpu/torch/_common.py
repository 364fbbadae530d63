"""Helpers every module of aclnn_cpu.torch shares: output allocation like the library's, the
loss shape, the CPU check, the raw-view call of the extensions outside the operator table."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

import aclnn_cpu as _ac


def _contiguous_like(t: Tensor, dtype: Optional[torch.dtype] = None) -> Tensor:
    return t.new_empty(t.shape, dtype=dtype if dtype is not None else t.dtype)


def _positions(input: Tensor):
    """The per-position shape of an (N, C) or (N, C, d1, ..., dK) input: (N,) or
    (N, d1, ..., dK)."""
    return (input.shape[0],) + tuple(input.shape[2:])


def _loss_shape(input: Tensor, reduction: str):
    return _positions(input) if reduction == "none" else ()


def _check_cpu(fn: str, *tensors: Optional[Tensor]) -> None:
    for t in tensors:
        if t is not None and t.device.type != "cpu":
            raise NotImplementedError(
                f"aclnn_cpu.torch.{fn}: runs on CPU tensors only; got one on {t.device}.")


def _float_weight(weight: Optional[Tensor]) -> Optional[Tensor]:
    """Class weights for the library: 16-bit ones (PyTorch's take the input's dtype) as FLOAT,
    which holds them exactly."""
    if weight is not None and weight.dtype in (torch.float16, torch.bfloat16):
        return weight.float()
    return weight


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


def _loss_grads(ctx, like, grad_loss, grad_z_loss, z):
    """grad_loss (zeros if only the z-loss was used) and grad_z_loss (None without one), in the
    dtype of `like`."""
    if grad_loss is None:
        shape = _positions(like) if ctx.options[0] == "none" else ()
        grad_loss = like.new_zeros(shape)
    gz = grad_z_loss.to(like.dtype) if z and grad_z_loss is not None else None
    return grad_loss.to(like.dtype), gz
