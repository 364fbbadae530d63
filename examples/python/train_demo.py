"""Train one small classifier twice from the same seed: once with PyTorch's cross-entropy and
once with aclnn_cpu.torch.cross_entropy (aclnnCrossEntropyLoss forward,
aclnnCrossEntropyLossGrad backward), and print both loss curves and the time per step.

An MLP on synthetic data with a large class count (the loss and its gradient are a real share
of each step), label smoothing and class weights on. Both runs see the same batches; their
losses agree to float32 rounding (the two losses differ only in the order of additions), and
the script fails if they drift apart by more than the tolerance it prints.

    python examples/python/train_demo.py [--steps 40] [--classes 8192] [--batch 1024]
"""

import argparse
import time

import torch
import torch.nn.functional as F

import aclnn_cpu
import aclnn_cpu.torch as at


def make_model(features, hidden, classes, seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(features, hidden), torch.nn.GELU(),
                               torch.nn.Linear(hidden, classes))


def train(loss_fn, args, data):
    model = make_model(args.features, args.hidden, args.classes, args.seed)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    losses, loss_times, step_times = [], [], []
    for x, t, w in data:
        start = time.perf_counter()
        logits = model(x)
        loss_start = time.perf_counter()
        loss = loss_fn(logits, t, w)
        opt.zero_grad(set_to_none=True)
        # The loss's share of the step: its forward, and its backward into the logits.
        (g,) = torch.autograd.grad(loss, logits, retain_graph=True)
        loss_end = time.perf_counter()
        logits.backward(g)
        opt.step()
        step_times.append(time.perf_counter() - start)
        loss_times.append(loss_end - loss_start)
        losses.append(loss.item())
    return losses, loss_times, step_times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--classes", type=int, default=8192)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    gen = torch.Generator().manual_seed(args.seed + 1)
    centers = torch.randn(args.classes, args.features, generator=gen)
    weight = torch.rand(args.classes, generator=gen) + 0.5
    data = []
    for _ in range(args.steps):
        t = torch.randint(0, args.classes, (args.batch,), generator=gen)
        x = centers[t] + 0.5 * torch.randn(args.batch, args.features, generator=gen)
        t[::13] = -100  # some ignored rows
        data.append((x, t, weight))

    def ours(logits, t, w):
        return at.cross_entropy(logits, t, w, label_smoothing=0.1)

    def theirs(logits, t, w):
        return F.cross_entropy(logits, t, w, label_smoothing=0.1)

    print(f"MLP {args.features}-{args.hidden}-{args.classes}, batch {args.batch}, "
          f"{args.steps} Adam steps, weight + label smoothing 0.1; torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; aclnn_cpu target {aclnn_cpu.cpu_target()}")
    ref, ref_loss_t, ref_step_t = train(theirs, args, data)
    got, got_loss_t, got_step_t = train(ours, args, data)
    tol = 1e-4
    print(f"{'step':>4}  {'PyTorch loss':>12}  {'aclnn_cpu loss':>14}  {'rel. diff':>9}")
    worst = 0.0
    for i, (a, b) in enumerate(zip(ref, got)):
        rel = abs(a - b) / max(abs(a), 1e-30)
        worst = max(worst, rel)
        if i < 5 or i % 5 == 4 or i == len(ref) - 1:
            print(f"{i:>4}  {a:>12.6f}  {b:>14.6f}  {rel:>9.2e}")
    # The first steps warm up allocators and thread pools; the median of the rest is steady.
    med = lambda v: sorted(v[2:])[len(v[2:]) // 2] * 1e3  # noqa: E731
    print(f"loss forward+backward per step: PyTorch {med(ref_loss_t):.2f} ms, "
          f"aclnn_cpu {med(got_loss_t):.2f} ms ({med(ref_loss_t) / med(got_loss_t):.2f}x)")
    print(f"whole step: PyTorch {med(ref_step_t):.2f} ms, aclnn_cpu {med(got_step_t):.2f} ms")
    print(f"largest relative loss difference {worst:.2e} (tolerance {tol:.0e}): "
          f"{'curves agree' if worst <= tol else 'CURVES DIFFER'}")
    if worst > tol:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
