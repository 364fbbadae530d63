"""Autograd of the custom operators of _operators.py (each forward's backward runs the library's
gradient operator, or scales the gradient its forward computed), and the lean loss whose
gradient is computed in the forward."""

from __future__ import annotations

import torch
from torch._C import DispatchKey

import aclnn_cpu as _ac

from ._common import _loss_grads
from ._operators import (_cross_entropy_lean, _cross_entropy_loss, _cross_entropy_loss_grad,
                         _cross_entropy_prob, _cross_entropy_prob_grad, _cross_entropy_with_grad,
                         _cross_entropy_prob_with_grad, _grad_from_logits, _grad_from_logits_,
                         _log_softmax, _log_softmax_backward)


def _log_softmax_setup(ctx, inputs, output):
    input, dim, _ = inputs
    ctx.dim = dim
    ctx.input_dtype = input.dtype
    ctx.save_for_backward(output)


def _log_softmax_grad(ctx, grad):
    (output,) = ctx.saved_tensors
    if grad.dtype != output.dtype:
        grad = grad.to(output.dtype)
    return _log_softmax_backward(grad, output, ctx.dim, ctx.input_dtype), None, None


_log_softmax.register_autograd(_log_softmax_grad, setup_context=_log_softmax_setup)


def _cross_entropy_setup(ctx, inputs, output):
    _, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, _ = inputs
    _, log_prob, _, lse = output
    ctx.options = (reduction, ignore_index, label_smoothing, z_loss_scale)
    ctx.save_for_backward(log_prob, target, weight, lse if z_loss_scale != 0.0 else None)
    ctx.mark_non_differentiable(log_prob, lse)
    # Unused outputs' gradients stay None: materialized, log_prob's would be an (N, C) zero tensor.
    ctx.set_materialize_grads(False)



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


def _lean_setup(ctx, inputs, output):
    (input, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, _,
     inplace_backward) = inputs
    _, _, lse = output
    ctx.options = (reduction, ignore_index, label_smoothing, z_loss_scale)
    ctx.inplace = inplace_backward
    ctx.save_for_backward(input, target, weight, lse)
    ctx.mark_non_differentiable(lse)
    ctx.set_materialize_grads(False)


_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}


def _differentiable_grad(logits, target, weight, grad_loss, grad_z_loss, reduction, ignore_index,
                         label_smoothing, z_loss_scale):
    """The input's gradient as a differentiable function of the logits, for a backward run with
    create_graph=True (double backward, Hessians): PyTorch's own composite of the same loss
    (aten::cross_entropy_loss's CompositeImplicitAutograd kernel, so that install() does not
    route it back here) plus the z-loss, differentiated with create_graph. The library's
    gradient operators have no derivative of their own."""
    with torch.enable_grad():
        loss = torch.ops.aten.cross_entropy_loss.default._op_dk(
            DispatchKey.CompositeImplicitAutograd, logits, target, weight,
            _REDUCTION_ENUM[reduction], ignore_index, label_smoothing)
        outputs, grads = [loss], [grad_loss.to(loss.dtype)]
        if z_loss_scale != 0.0:  # the z-loss, part of the loss and its own output
            kept = (target != ignore_index).to(logits.dtype)
            z = z_loss_scale * torch.logsumexp(logits, dim=1) ** 2 * kept
            z = z if reduction == "none" else (z.sum() if reduction == "sum" else
                                               z.sum() / kept.sum())
            outputs.append(z)
            grads.append(grad_loss.to(z.dtype) +
                         (grad_z_loss.to(z.dtype) if grad_z_loss is not None else 0))
        (grad,) = torch.autograd.grad(outputs, (logits,), grads, create_graph=True)
    return grad


def _lean_grad(ctx, grad_loss, grad_z_loss, grad_lse):
    logits, target, weight, lse = ctx.saved_tensors
    reduction, ignore_index, label_smoothing, z_loss_scale = ctx.options
    grad_loss, gz = _loss_grads(ctx, logits, grad_loss, grad_z_loss, z_loss_scale != 0.0)
    if torch.is_grad_enabled() and not ctx.inplace:  # create_graph=True
        return (_differentiable_grad(logits, target, weight, grad_loss, gz, reduction,
                                     ignore_index, label_smoothing, z_loss_scale),
                None, None, None, None, None, None, None, None)
    args = (grad_loss, logits, target, weight, gz, lse, reduction, ignore_index,
            label_smoothing, z_loss_scale)
    if ctx.inplace:
        _grad_from_logits_(*args)
        return logits, None, None, None, None, None, None, None, None
    return _grad_from_logits(*args), None, None, None, None, None, None, None, None


_cross_entropy_lean.register_autograd(_lean_grad, setup_context=_lean_setup)


def _with_grad_setup(ctx, inputs, output):
    input, target, weight, reduction, ignore_index, label_smoothing, z_loss_scale, _ = inputs
    _, _, lse, grad = output
    ctx.options = (reduction, ignore_index, label_smoothing, z_loss_scale)
    ctx.save_for_backward(input, target, weight, lse, grad)
    ctx.mark_non_differentiable(lse, grad)
    ctx.set_materialize_grads(False)


def _with_grad_backward(ctx, grad_loss, grad_z_loss, grad_lse, grad_grad):
    """The forward's gradient where the loss's gradient is 1 and the z-loss output has none
    (loss.backward()); otherwise the gradient from the logits and the saved lse (the two-pass
    path's bits: scaling the saved gradient would round a 16-bit one twice); for a backward
    with create_graph=True, a differentiable one (see _differentiable_grad)."""
    input, target, weight, lse, grad = ctx.saved_tensors
    reduction, ignore_index, label_smoothing, z_loss_scale = ctx.options
    rest = (None,) * 7
    if grad_loss is None and grad_z_loss is None:
        return (None,) + rest
    enabled = torch.is_grad_enabled()
    if not enabled and grad_z_loss is None and grad_loss is not None and _is_one(grad_loss):
        return (grad,) + rest
    grad_loss, gz = _loss_grads(ctx, input, grad_loss, grad_z_loss, z_loss_scale != 0.0)
    if enabled:
        return (_differentiable_grad(input, target, weight, grad_loss, gz, reduction,
                                     ignore_index, label_smoothing, z_loss_scale),) + rest
    return (_grad_from_logits(grad_loss, input, target, weight, gz, lse, reduction,
                              ignore_index, label_smoothing, z_loss_scale),) + rest


_cross_entropy_with_grad.register_autograd(_with_grad_backward, setup_context=_with_grad_setup)


class _CrossEntropyWithGrad(torch.autograd.Function):
    """The lean loss with its gradient computed in the forward (aclnnCpuCrossEntropyLossWithGrad),
    out of place or over the logits; the backward scales the saved gradient."""

    @staticmethod
    def forward(ctx, input, target, weight, reduction, ignore_index, label_smoothing,
                z_loss_scale, fp32_loss, inplace):
        r = _ac.cross_entropy_loss_with_grad(
            input.detach(), target, weight, reduction=reduction, ignore_index=ignore_index,
            label_smoothing=label_smoothing, z_loss_scale=z_loss_scale, return_z_loss=True,
            inplace=inplace, lse_out=input.new_empty((input.shape[0],), dtype=torch.float64))
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
        return (_scaled(grad, grad_loss),) + (None,) * 8


def _is_one(grad_loss):
    """Whether the loss's gradient is exactly 1, as loss.backward() passes it. Traced
    (torch.compile, AOT autograd: a tensor subclass there, fake or functional) its value is
    unknown: False."""
    if torch.compiler.is_compiling() or type(grad_loss) is not torch.Tensor:
        return False
    return bool(torch.all(grad_loss == 1))


def _scaled(grad, grad_loss):
    """A gradient computed in the forward for a loss gradient of 1, scaled by the loss's actual
    (scalar) gradient: for 1 the gradient as it is (for in place, the logits' memory), no pass
    over it."""
    return grad if _is_one(grad_loss) else grad * grad_loss.to(grad.dtype)


def _prob_setup(ctx, inputs, output):
    input, target, weight, reduction, label_smoothing = inputs
    _, lse = output
    ctx.options = (reduction, label_smoothing)
    ctx.save_for_backward(input, target, weight, lse)
    ctx.mark_non_differentiable(lse)
    ctx.set_materialize_grads(False)


def _prob_grad(ctx, grad_loss, grad_lse):
    input, target, weight, lse = ctx.saved_tensors
    reduction, label_smoothing = ctx.options
    if grad_loss is None:
        return None, None, None, None, None
    grad_input = grad_target = None
    if ctx.needs_input_grad[0] and torch.is_grad_enabled() and not ctx.needs_input_grad[1]:
        # create_graph=True: a differentiable gradient (see _differentiable_grad).
        return (_differentiable_grad(input, target, weight, grad_loss, None, reduction, -100,
                                     label_smoothing, 0.0), None, None, None, None)
    if ctx.needs_input_grad[0]:
        grad_input = _cross_entropy_prob_grad(grad_loss.to(input.dtype).contiguous(), input,
                                              target, weight, lse, reduction, label_smoothing)
    if ctx.needs_input_grad[1]:
        grad_target = _prob_target_grad(input, target, weight, lse, grad_loss, reduction,
                                        label_smoothing)
    return grad_input, grad_target, None, None, None


def _prob_target_grad(input, target, weight, lse, grad_loss, reduction, label_smoothing):
    """d loss_i / d q_ic = -g_i (1 - ls) w_c log_softmax(x)_ic, as PyTorch computes it (in
    float64 from the saved lse, then the target's dtype)."""
    g = grad_loss.double()
    if reduction == "mean":
        g = g / input.shape[0]
    g = g.reshape(-1, 1) if reduction == "none" else g
    w = weight.double() if weight is not None else 1.0
    return (-(1.0 - label_smoothing) * g * w *
            (input.double() - lse.reshape(-1, 1))).to(target.dtype)


_cross_entropy_prob.register_autograd(_prob_grad, setup_context=_prob_setup)


def _prob_with_grad_setup(ctx, inputs, output):
    input, target, weight, reduction, label_smoothing = inputs
    _, lse, grad = output
    ctx.options = (reduction, label_smoothing)
    ctx.save_for_backward(input, target, weight, lse, grad)
    ctx.mark_non_differentiable(lse, grad)
    ctx.set_materialize_grads(False)


def _prob_with_grad_backward(ctx, grad_loss, grad_lse, grad_grad):
    """The forward's gradient where the loss's gradient is 1 (loss.backward()); otherwise the
    gradient operator from the saved lse (the two-pass path's bits: scaling the saved gradient
    would round a 16-bit one twice); for a backward with create_graph=True, a differentiable
    one (see _differentiable_grad)."""
    input, target, weight, lse, grad = ctx.saved_tensors
    reduction, label_smoothing = ctx.options
    if grad_loss is None:
        return None, None, None, None, None
    grad_input = grad_target = None
    if ctx.needs_input_grad[0]:
        if torch.is_grad_enabled():
            grad_input = _differentiable_grad(input, target, weight, grad_loss, None, reduction,
                                              -100, label_smoothing, 0.0)
        elif _is_one(grad_loss):
            grad_input = grad
        else:
            grad_input = _cross_entropy_prob_grad(grad_loss.to(input.dtype).contiguous(), input,
                                                  target, weight, lse, reduction,
                                                  label_smoothing)
    if ctx.needs_input_grad[1]:
        grad_target = _prob_target_grad(input, target, weight, lse, grad_loss, reduction,
                                        label_smoothing)
    return grad_input, grad_target, None, None, None


_cross_entropy_prob_with_grad.register_autograd(_prob_with_grad_backward,
                                                setup_context=_prob_with_grad_setup)

