"""Hugging Face causal language models trained without their logits: ``apply(model)`` makes a
``*ForCausalLM`` compute its loss, when ``labels`` are given (as HF does), with the fused
linear cross-entropy (``aclnn_cpu.torch.linear_cross_entropy``) on the last hidden states, so the
(batch, sequence, vocabulary) logits never exist. docs/integrations.md.

Hugging Face's semantics, exactly: the label shift (pad with ``ignore_index``, drop the first),
``ignore_index`` (-100), ``num_items_in_batch`` (reduction "sum" divided by it: the gradient
accumulation normalization), ``shift_labels``, ``logits_to_keep`` (the loss of the kept
positions); the loss in float32 as HF's ``logits.float()`` gives it; Gemma 2/3's final-logit
soft-capping inside the fused operator. With the fused loss the output's ``logits`` is ``None``;
without labels the model's own forward runs untouched (generation, evaluation of logits).

``transformers`` is an optional dependency (``pip install 'aclnn-cpu[transformers]'``); this
module imports nothing of it.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

import torch
import torch.nn.functional as F

from .torch import linear_cross_entropy

_ORIGINAL = "_aclnn_cpu_original_forward"


def _check(model) -> None:
    name = type(model).__name__
    lm_head = getattr(model, "lm_head", None)
    if not name.endswith("ForCausalLM") or not isinstance(lm_head, torch.nn.Linear) or \
            not isinstance(getattr(model, "model", None), torch.nn.Module):
        raise TypeError(
            f"aclnn_cpu.transformers.apply: {name} is not a causal language model with the "
            f"standard structure (a *ForCausalLM with a `model` decoder and an nn.Linear "
            f"`lm_head`); its loss cannot be fused.")
    if "labels" not in inspect.signature(model.forward).parameters:
        raise TypeError(f"aclnn_cpu.transformers.apply: {name}.forward takes no `labels`.")
    loss_type = getattr(model, "loss_type", None)
    if loss_type not in (None, "ForCausalLM"):
        raise TypeError(f"aclnn_cpu.transformers.apply: {name} computes its loss as "
                        f"{loss_type!r}, not the causal-LM cross-entropy.")


@contextlib.contextmanager
def _capture_lm_head_input(lm_head: torch.nn.Linear, box: dict):
    """The model's forward calls lm_head(hidden): keep `hidden`, return an empty (..., 0) tensor
    (what follows, such as Gemma's soft-capping, costs nothing on it)."""
    def stub(hidden):
        box["hidden"] = hidden
        return hidden.new_empty(hidden.shape[:-1] + (0,))

    lm_head.forward = stub
    try:
        yield
    finally:
        del lm_head.forward


def causal_lm_loss(hidden: torch.Tensor, lm_head: torch.nn.Linear, labels=None, *,
                   shift_labels=None, num_items_in_batch=None, ignore_index: int = -100,
                   softcap=None) -> torch.Tensor:
    """Hugging Face's ``ForCausalLMLoss`` of ``lm_head(hidden)`` (soft-capped by ``softcap``)
    without the logits: the fused linear cross-entropy, loss in float32."""
    if shift_labels is None:
        shift_labels = F.pad(labels, (0, 1), value=ignore_index)[..., 1:]
    x = hidden.reshape(-1, hidden.shape[-1])
    t = shift_labels.reshape(-1).to(x.device)
    if t.numel() != x.shape[0]:
        raise ValueError(
            f"aclnn_cpu.transformers: {t.numel()} labels for {x.shape[0]} positions (with "
            f"logits_to_keep, the labels must be those of the kept positions).")
    reduction = "sum" if num_items_in_batch is not None else "mean"
    loss = linear_cross_entropy(x, lm_head.weight, t, linear_bias=lm_head.bias,
                                reduction=reduction, ignore_index=ignore_index, fp32_loss=True,
                                softcap=0.0 if softcap is None else float(softcap))
    if reduction == "sum":
        if torch.is_tensor(num_items_in_batch):
            num_items_in_batch = num_items_in_batch.to(loss.device)
        loss = loss / num_items_in_batch
    return loss


def apply(model):
    """Fuses the loss of a Hugging Face ``*ForCausalLM`` (Llama, Mistral, Qwen2, Qwen3,
    Gemma 2/3, ...; others raise ``TypeError``): with labels, ``forward`` runs the decoder,
    then the fused linear cross-entropy on the last hidden states, and returns the model's
    output with that loss and ``logits=None``. Idempotent; returns the model."""
    if hasattr(model, _ORIGINAL):
        return model
    _check(model)
    original = model.forward
    signature = inspect.signature(original)
    # HF passes num_items_in_batch, shift_labels, ignore_index through the **kwargs of forward,
    # whatever that parameter is called.
    var_kw = next((p.name for p in signature.parameters.values()
                   if p.kind is inspect.Parameter.VAR_KEYWORD), None)

    @functools.wraps(original)
    def forward(*args, **kwargs):
        bound = signature.bind_partial(*args, **kwargs)
        params = bound.arguments
        extra = params.get(var_kw, {}) if var_kw else {}
        labels = params.get("labels")
        shift_labels = extra.get("shift_labels")
        if labels is None:  # HF computes no loss then, whatever shift_labels says
            return original(*args, **kwargs)
        params["labels"] = None
        as_tuple = params.get("return_dict", extra.get("return_dict")) is False
        if "return_dict" in extra:
            extra["return_dict"] = True
        elif "return_dict" in signature.parameters:
            params["return_dict"] = True
        box: dict = {}
        with _capture_lm_head_input(model.lm_head, box):
            out = original(*bound.args, **bound.kwargs)
        loss = causal_lm_loss(
            box["hidden"], model.lm_head, labels, shift_labels=shift_labels,
            num_items_in_batch=extra.get("num_items_in_batch"),
            ignore_index=extra.get("ignore_index", -100),
            softcap=getattr(model.config, "final_logit_softcapping", None))
        fields = {k: v for k, v in out.items() if k not in ("loss", "logits")}
        out = type(out)(loss=loss, logits=None, **fields)
        return out.to_tuple() if as_tuple else out

    setattr(model, _ORIGINAL, original)
    model.forward = forward
    return model


def unapply(model):
    """Restores the model's own forward. Returns the model."""
    original = getattr(model, _ORIGINAL, None)
    if original is not None:
        del model.forward
        delattr(model, _ORIGINAL)
    return model


def is_applied(model) -> bool:
    return hasattr(model, _ORIGINAL)
