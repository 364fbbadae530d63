"""Train a language-model head (hidden states -> vocabulary logits -> cross-entropy) for a few
steps twice from the same seed: once with PyTorch's F.linear + F.cross_entropy and once with
aclnn_cpu.torch.linear_cross_entropy, which never makes the (N, V) logits. Prints both loss
curves, the time per step and the peak memory of each, and fails if the losses drift apart by
more than the tolerance it prints.

Each run is a separate process, so that its peak resident size (VmHWM) is its own; the peak
is reported beyond what the process held before the first step (the data, the head and the
optimizer's state).

    python examples/python/lm_head_demo.py [--steps 5] [--tokens 2048] [--hidden 256]
                                           [--vocab 32000]
"""

import argparse
import json
import subprocess
import sys
import time

from demo_util import reset_peak, status_bytes, verdict


def run(args):
    import torch
    import torch.nn.functional as F
    import aclnn_cpu.torch as at

    torch.set_num_threads(2)
    gen = torch.Generator().manual_seed(args.seed)
    batches = [(torch.randn(args.tokens, args.hidden, generator=gen),
                torch.randint(0, args.vocab, (args.tokens,), generator=gen))
               for _ in range(args.steps)]
    torch.manual_seed(args.seed)
    head = torch.nn.Linear(args.hidden, args.vocab, bias=True)
    opt = torch.optim.Adam(head.parameters(), lr=1e-2)
    if args.run == "pytorch":
        def loss_fn(h, t):
            return F.cross_entropy(F.linear(h, head.weight, head.bias), t, label_smoothing=0.1)
    else:
        def loss_fn(h, t):
            return at.linear_cross_entropy(h, head.weight, t, linear_bias=head.bias,
                                           label_smoothing=0.1)
    # The optimizer's state and the gradients exist before the peak is measured.
    loss_fn(*batches[0]).backward()
    opt.zero_grad(set_to_none=False)
    reset_peak()
    base = status_bytes("VmRSS:")
    losses, times = [], []
    for h, t in batches:
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(h, t)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    print(json.dumps({"losses": losses, "times": times, "peak": status_bytes("VmHWM:") - base}))



def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--tokens", type=int, default=2048)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--run", choices=("pytorch", "aclnn_cpu"))
    args = p.parse_args()
    if args.run:
        run(args)
        return
    res = {}
    for name in ("pytorch", "aclnn_cpu"):
        out = subprocess.run([sys.executable, __file__, "--run", name, "--steps", str(args.steps),
                              "--tokens", str(args.tokens), "--hidden", str(args.hidden),
                              "--vocab", str(args.vocab), "--seed", str(args.seed)],
                             capture_output=True, text=True, check=True)
        res[name] = json.loads(out.stdout.strip().splitlines()[-1])
    logits_mb = args.tokens * args.vocab * 4 / 1e6
    print(f"LM head {args.hidden} -> {args.vocab}, {args.tokens} tokens per step, label smoothing "
          f"0.1, Adam; the float32 logits are {logits_mb:.0f} MB")
    print(" step  F.linear+F.cross_entropy  linear_cross_entropy  rel. diff")
    worst = 0.0
    for i, (a, b) in enumerate(zip(res["pytorch"]["losses"], res["aclnn_cpu"]["losses"])):
        rel = abs(a - b) / abs(a)
        worst = max(worst, rel)
        print(f"{i:5d}  {a:24.6f}  {b:20.6f}  {rel:9.2e}")
    for name in ("pytorch", "aclnn_cpu"):
        r = res[name]
        print(f"{name:9s}: {sum(r['times']) / len(r['times']) * 1e3:7.1f} ms per step, peak memory "
              f"during training {r['peak'] / 1e6:7.1f} MB beyond the data, head and optimizer")
    tol = 1e-4
    verdict(worst, tol)


if __name__ == "__main__":
    main()
