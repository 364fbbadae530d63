"""aclnn_cpu.transformers.apply(): Hugging Face causal LMs (tiny random configurations built
from their configs; nothing is downloaded) give the unpatched model's loss and every parameter's
gradient, with HF's semantics (label shift, ignore_index, num_items_in_batch, shift_labels,
logits_to_keep, return_dict), Gemma's soft-capping fused; Trainer with gradient accumulation
follows the same loss curve; aclnn_cpu.torch.install() alone does too."""

import pytest
import torch

import aclnn_cpu.torch as at

tf = pytest.importorskip("transformers")
act = pytest.importorskip("aclnn_cpu.transformers")

V = 257
COMMON = dict(vocab_size=V, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2)


def _config(family):
    if family == "llama":
        return tf.LlamaConfig(**COMMON)
    if family == "mistral":
        return tf.MistralConfig(**COMMON)
    if family == "qwen2":
        return tf.Qwen2Config(**COMMON)
    if family == "qwen3":
        return tf.Qwen3Config(**COMMON, head_dim=8)
    if family == "gemma2":  # final_logit_softcapping 30 by default
        return tf.Gemma2Config(**COMMON, head_dim=8, final_logit_softcapping=3.0)
    if family == "gemma3":
        return tf.Gemma3TextConfig(**COMMON, head_dim=8, final_logit_softcapping=5.0)
    raise ValueError(family)


FAMILIES = ["llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3"]


def _model(family, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    cfg = _config(family)
    cfg._attn_implementation = "eager"
    m = tf.AutoModelForCausalLM.from_config(cfg).to(dtype)
    # Larger output weights than the tiny default initialization, so the soft-cap binds.
    with torch.no_grad():
        m.lm_head.weight.normal_(0.0, 0.5 if family.startswith("gemma") else 0.1)
    return m


def _batch(seed=1, b=2, t=11):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, V, (b, t), generator=g)
    labels = ids.clone()
    labels[0, :4] = -100
    return ids, labels


def _step(model, **kw):
    model.zero_grad()
    out = model(**kw)
    out.loss.backward()
    return out, out.loss.detach().float(), {n: p.grad.detach().float().clone()
                                           for n, p in model.named_parameters()
                                           if p.grad is not None}


def _assert_same(loss, grads, ref_loss, ref_grads, dtype):
    # float32: products of 32 terms, float32 sums over V; bfloat16: both sides round the
    # hidden states to bfloat16 (HF's logits are bfloat16, ours float32 from bf16 operands).
    rtol, atol = (2e-5, 2e-6) if dtype == torch.float32 else (5e-2, 2e-3)
    torch.testing.assert_close(loss, ref_loss, rtol=rtol, atol=atol)
    assert grads.keys() == ref_grads.keys()
    for name, g in grads.items():
        r = ref_grads[name]
        scale = r.abs().max().item() or 1.0
        err = (g - r).abs().max().item()
        assert err <= rtol * 20 * scale + atol, f"{name}: error {err:.3g}, scale {scale:.3g}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("family", FAMILIES)
def test_family_loss_and_every_gradient(family, dtype):
    model = _model(family, dtype)
    ids, labels = _batch()
    ref_out, ref_loss, ref_grads = _step(model, input_ids=ids, labels=labels)
    act.apply(model)
    assert act.is_applied(model)
    out, loss, grads = _step(model, input_ids=ids, labels=labels)
    assert out.logits is None and ref_out.logits is not None
    assert out.loss.dtype == torch.float32  # HF's logits.float()
    _assert_same(loss, grads, ref_loss, ref_grads, dtype)
    # Without labels: the model's own forward (generation is untouched).
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    assert logits.shape == (2, 11, V)
    act.unapply(model)
    assert not act.is_applied(model)
    assert model(input_ids=ids, labels=labels).logits is not None


@pytest.mark.parametrize("case", ["num_items_in_batch", "shift_labels", "logits_to_keep",
                                  "return_dict_false", "ignore_index"])
def test_hugging_face_semantics(case):
    model = _model("llama")
    ids, labels = _batch()
    kw = {"input_ids": ids, "labels": labels}
    if case == "num_items_in_batch":
        kw["num_items_in_batch"] = torch.tensor(37)
    elif case == "shift_labels":
        # HF takes shift_labels (unshifted again) in place of the shifted labels.
        kw["shift_labels"] = torch.roll(labels, 3, 1)
    elif case == "logits_to_keep":
        # The loss over all positions (0 keeps all), as HF requires with labels.
        kw["logits_to_keep"] = 0
    elif case == "ignore_index":
        labels = labels.masked_fill(labels == -100, 7)
        kw = {"input_ids": ids, "labels": labels, "ignore_index": 7}
    if case == "return_dict_false":
        kw["return_dict"] = False
        model.zero_grad()
        ref = model(**kw)[0]
        act.apply(model)
        got = model(**kw)
        assert isinstance(got, tuple)
        torch.testing.assert_close(got[0], ref, rtol=2e-5, atol=2e-6)
        return
    _, ref_loss, ref_grads = _step(model, **kw)
    act.apply(model)
    _, loss, grads = _step(model, **kw)
    _assert_same(loss, grads, ref_loss, ref_grads, torch.float32)


def test_refuses_other_models():
    cfg = tf.BertConfig(vocab_size=V, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32)
    with pytest.raises(TypeError, match="not a causal language model"):
        act.apply(tf.BertForMaskedLM(cfg))
    with pytest.raises(TypeError, match="not a causal language model"):
        act.apply(torch.nn.Linear(3, 3))


class _Tokens(torch.utils.data.Dataset):
    def __init__(self, n=32, t=13):
        g = torch.Generator().manual_seed(5)
        self.ids = torch.randint(0, V, (n, t), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        labels = self.ids[i].clone()
        labels[: i % 5] = -100  # uneven counts: num_items_in_batch matters
        return {"input_ids": self.ids[i], "labels": labels}


def _trainer_curve(tmp_path, patch, monkeypatch):
    calls = []
    fused = act.causal_lm_loss
    monkeypatch.setattr(act, "causal_lm_loss", lambda *a, **k: calls.append(1) or fused(*a, **k))
    at.reset_routing_counts()
    model = _model("llama", seed=3)
    if patch == "apply":
        act.apply(model)
    args = tf.TrainingArguments(output_dir=str(tmp_path / patch), per_device_train_batch_size=2,
                                gradient_accumulation_steps=4, max_steps=20, learning_rate=1e-2,
                                logging_steps=1, report_to=[], save_strategy="no",
                                use_cpu=True, seed=0, data_seed=0, dataloader_num_workers=0,
                                disable_tqdm=True)
    trainer = tf.Trainer(model=model, args=args, train_dataset=_Tokens())
    if patch == "install":
        with at.install():
            trainer.train()
    else:
        trainer.train()
    # Where the loss went: 80 micro-batches, fused (apply) or through install()'s kernel.
    routed = at.routing_counts().get(("aten::cross_entropy_loss", "aclnn_cpu"), 0)
    assert (len(calls), routed) == {"none": (0, 0), "apply": (80, 0), "install": (0, 80)}[patch]
    return [h["loss"] for h in trainer.state.log_history if "loss" in h]


def test_trainer_with_gradient_accumulation_same_curve(tmp_path, monkeypatch):
    ref = _trainer_curve(tmp_path, "none", monkeypatch)
    fused = _trainer_curve(tmp_path, "apply", monkeypatch)
    installed = _trainer_curve(tmp_path, "install", monkeypatch)
    print("\nTrainer loss curves (20 steps, gradient accumulation 4):")
    for name, curve in (("unpatched", ref), ("apply", fused), ("install", installed)):
        print(f"  {name:9s} " + " ".join(f"{x:.4f}" for x in curve))
    assert len(ref) == 20 and len(fused) == 20 and len(installed) == 20
    assert ref[-1] < ref[0]  # it learns
    for curve in (fused, installed):
        for a, b in zip(curve, ref):
            assert abs(a - b) <= 1e-3 * max(1.0, abs(b)), (curve, ref)
