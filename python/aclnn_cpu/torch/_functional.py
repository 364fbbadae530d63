"""The drop-ins for torch.nn.functional: log_softmax and cross_entropy."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from ._autograd import _CrossEntropyWithGrad
from ._common import _check_cpu, _float_weight
from ._operators import (_cross_entropy_lean, _cross_entropy_loss, _cross_entropy_prob,
                         _cross_entropy_prob_with_grad, _cross_entropy_with_grad, _log_softmax)


def log_softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
                dtype: Optional[torch.dtype] = None) -> Tensor:
    """``torch.nn.functional.log_softmax`` through ``aclnnLogSoftmax`` (and
    ``aclnnLogSoftmaxBackward`` for the gradient), float32, float16, bfloat16 and float64.
    ``dtype``: the result's dtype, any of those; the input is converted to it first, as in
    PyTorch, and the gradient comes back in the input's dtype. ``dim=None`` picks PyTorch's
    implicit dimension (with its deprecation warning)."""
    _check_cpu("log_softmax", input)
    if dim is None:
        dim = torch.nn.functional._get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _log_softmax(input, dim, dtype)


def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0, *,
                  z_loss_scale: float = 0.0, return_z_loss: bool = False,
                  fp32_loss: bool = False, lean: Optional[bool] = None,
                  inplace_backward: bool = False,
                  grad_in_forward: Optional[bool] = None):
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
    and each row's log-sum-exp only, saves just that (N values) for the backward, which
    computes the gradient from the logits: no (N, C) tensor but the gradient. ``lean=None``
    (the default): lean for float64 (which CANN's operators do not take anyway; a third less
    memory traffic, measured 1.5x faster) and K-dimensional inputs, the CANN operators
    otherwise.
    ``inplace_backward=True`` (with ``lean``) writes the gradient over the logits' own memory:
    for logits that are an intermediate nothing reads after the loss (a language-model head's
    output), never for a leaf or a tensor used elsewhere.
    ``grad_in_forward=True`` (with ``lean``; "mean" or "sum") computes the gradient in the
    forward's pass, each row right after its loss while it is in cache
    (``aclnnCpuCrossEntropyLossWithGrad``), and the backward only scales it by the loss's
    gradient (nothing at all for ``loss.backward()``): two memory passes per step instead of
    three. With ``inplace_backward`` too the gradient overwrites the logits already in the
    forward, so nothing may read them after the loss is computed, not even a metric.

    A floating ``target`` of the input's shape holds class probabilities (PyTorch's semantics:
    ``weight`` and ``label_smoothing`` apply, "mean" divides by the number of rows), through
    aclnn-cpu's ``aclnnCpuCrossEntropyLossProb`` and its gradient (with respect to the target
    too, where it requires one). There ``grad_in_forward=None`` (the default) computes the
    gradient in the forward's pass (``aclnnCpuCrossEntropyLossProbWithGrad``: one pass over
    input and target instead of two, and the (N, C) gradient kept for the backward where
    PyTorch keeps its (N, C) log-softmax) when the loss is "mean" or "sum", the input requires
    a gradient and the target does not, outside torch.compile; ``False`` never does. The z-loss and
    ``inplace_backward`` are for class indices.

    K-dimensional inputs (N, C, d1, ..., dK) with class-index targets (N, d1, ..., dK) run
    through the lean pair, which reads the input in place (class stride d1 * ... * dK; column
    tiles, no transposed copy), whatever ``lean`` says: the forward saves each position's
    log-sum-exp only; the z-loss and ``inplace_backward`` apply. As for probabilities,
    ``grad_in_forward=None`` computes the gradient in the forward's pass there ("mean"/"sum",
    input requiring a gradient, no ``inplace_backward``, outside torch.compile;
    ``aclnnCpuCrossEntropyLossWithGrad``), the bits of the two passes. Probability targets of
    the input's shape run per batch element on the (d1...dK, C) view of the input's memory
    (correct, not yet fast; docs/python.md).

    Not supported (``NotImplementedError``): tensors not on the CPU; ``grad_in_forward=True``
    for K-dimensional inputs where it does not apply (above) and for K-dimensional
    probabilities; the z-loss and the in-place gradient with probability targets.
    """
    if size_average is not None or reduce is not None:
        reduction = torch.nn._reduction.legacy_get_string(size_average, reduce)
    _check_cpu("cross_entropy", input, target, weight)
    weight = _float_weight(weight)
    if lean is None:
        lean = input.dtype == torch.float64
    if input.dim() > 2:
        return _k_dimensional(input, target, weight, reduction, ignore_index,
                              float(label_smoothing), z_loss_scale, return_z_loss, fp32_loss,
                              lean, inplace_backward, grad_in_forward)
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    if target.is_floating_point():
        return _probability_targets(input, target, weight, reduction, float(label_smoothing),
                                    unbatched, z_loss_scale, return_z_loss, grad_in_forward,
                                    inplace_backward)
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


def _gradient_in_forward(grad_in_forward, applies, refusal):
    """Whether to compute the input's gradient in the forward's pass: where asked (True;
    NotImplementedError with `refusal` where it does not apply), and by default (None) where it
    applies outside torch.compile: traced, the backward cannot tell a loss gradient of 1 (the
    saved gradient as it is) from another (the gradient operator again)."""
    if grad_in_forward and not applies:
        raise NotImplementedError(f"aclnn_cpu.torch.cross_entropy: {refusal}")
    if grad_in_forward is None:
        return applies and not torch.compiler.is_compiling()
    return bool(grad_in_forward)


def _probability_targets(input, target, weight, reduction, label_smoothing, unbatched,
                         z_loss_scale, return_z_loss, grad_in_forward, inplace_backward):
    """cross_entropy with class probabilities (N, C): the gradient in the forward's pass where
    grad_in_forward allows it and a backward will want it (see cross_entropy)."""
    if z_loss_scale != 0.0 or return_z_loss or inplace_backward:
        raise NotImplementedError(
            "aclnn_cpu.torch.cross_entropy: z_loss_scale, return_z_loss and inplace_backward "
            "take class-index targets, not class probabilities.")
    if target.shape != input.shape:
        raise ValueError(
            f"aclnn_cpu.torch.cross_entropy: class-probability target of shape "
            f"{tuple(target.shape)} for an input of shape {tuple(input.shape)}; they must be "
            f"equal.")
    applies = (reduction in ("mean", "sum") and torch.is_grad_enabled() and input.requires_grad
               and not target.requires_grad)
    if _gradient_in_forward(grad_in_forward, applies,
                            "grad_in_forward with class probabilities needs reduction \"mean\" "
                            "or \"sum\", an input that requires a gradient and a target that "
                            "does not."):
        loss, _, _ = _cross_entropy_prob_with_grad(input, target.to(input.dtype), weight,
                                                   reduction, label_smoothing)
        return loss
    loss, _ = _cross_entropy_prob(input, target.to(input.dtype), weight, reduction,
                                  label_smoothing)
    return loss.squeeze(0) if unbatched and reduction == "none" else loss


def _k_dimensional(input, target, weight, reduction, ignore_index, label_smoothing,
                   z_loss_scale, return_z_loss, fp32_loss, lean, inplace_backward,
                   grad_in_forward):
    """cross_entropy of an (N, C, d1, ..., dK) input. Class indices: the lean pair on the whole
    input, read in place by the library's column tiles. Probabilities: per batch element, the
    (d1...dK, C) view of the input's own memory (class stride d1...dK; no transposed copy)
    through the 2-d operators ("none"), then PyTorch's reduction: the library reads such a view
    row by row (its strided path), correct, not yet fast (docs/python.md)."""
    if not target.is_floating_point():
        applies = (reduction in ("mean", "sum") and torch.is_grad_enabled()
                   and input.requires_grad and not inplace_backward)
        if _gradient_in_forward(grad_in_forward, applies,
                                "grad_in_forward with a K-dimensional input needs reduction "
                                "\"mean\" or \"sum\", an input that requires a gradient and no "
                                "inplace_backward."):
            loss, z_loss, _, _ = _cross_entropy_with_grad(
                input, target, weight, reduction, ignore_index, label_smoothing,
                float(z_loss_scale), bool(fp32_loss))
        else:
            loss, z_loss, _ = _cross_entropy_lean(input, target, weight, reduction, ignore_index,
                                                  label_smoothing, float(z_loss_scale),
                                                  bool(fp32_loss), bool(inplace_backward))
        return (loss, z_loss) if return_z_loss else loss
    if grad_in_forward:
        raise NotImplementedError(
            "aclnn_cpu.torch.cross_entropy: grad_in_forward with K-dimensional class "
            "probabilities is not supported (they run per batch element).")
    if z_loss_scale != 0.0 or return_z_loss or inplace_backward:
        raise NotImplementedError(
            "aclnn_cpu.torch.cross_entropy: z_loss_scale, return_z_loss and inplace_backward "
            "take class-index targets, not class probabilities.")
    n, c = input.shape[0], input.shape[1]
    spatial = input.shape[2:]
    x = input.reshape(n, c, -1).transpose(1, 2)  # (N, S, C) views, class stride S
    if target.shape != input.shape:
        raise ValueError(
            f"aclnn_cpu.torch.cross_entropy: class-probability target of shape "
            f"{tuple(target.shape)} for an input of shape {tuple(input.shape)}; they must "
            f"be equal.")
    t = target.to(input.dtype).reshape(n, c, -1).transpose(1, 2)
    rows = [cross_entropy(x[i], t[i], weight, reduction="none",
                          label_smoothing=label_smoothing, fp32_loss=fp32_loss, lean=lean)
            for i in range(n)]
    loss = torch.stack(rows) if n > 0 else input.new_zeros((0,) + (x.shape[1],))
    if reduction == "none":
        return loss.reshape((n,) + tuple(spatial))
    if reduction == "sum":
        return loss.sum()
    return loss.mean()
