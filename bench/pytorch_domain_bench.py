"""PyTorch's cross-entropy domain beyond (N, C) class indices, forward + backward into the
logits, ours against PyTorch eager side by side in one process (issue 27's speed rows):
float64 (4096, 32000), class-probability targets (4096, 32000) and a K-dimensional
segmentation batch (8, 21, 512, 512), in float32 and bfloat16 where they apply. Rounds
interleave the contenders; each reports the median of its repetitions, the table the median
over rounds and the ratio in the same run, and the effective bandwidth of the traffic an ideal
fused forward + backward needs (read x (and a probability target) twice, write the gradient
once) against the machine's copy bandwidth measured here (torch.Tensor.copy_ of 512 MiB).
Runs with glibc's huge-page malloc (re-executing itself) as bench/python_step_bench.py does.

    python bench/pytorch_domain_bench.py [--rounds 3] [--reps 3] [--only float64|prob|kdim]
"""

import argparse
import os
import statistics
import sys

TUNABLE = "glibc.malloc.hugetlb=1"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    if TUNABLE not in os.environ.get("GLIBC_TUNABLES", ""):
        os.environ["GLIBC_TUNABLES"] = TUNABLE
        os.execv(sys.executable, [sys.executable] + sys.argv)

    import torch
    import torch.nn.functional as F

    import aclnn_cpu.torch as at
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_util import cpu_name, median_time

    torch.set_num_threads(args.threads)
    g = torch.Generator().manual_seed(0)

    def step(fn, x, t):
        def run():
            xx = x.detach().requires_grad_()
            fn(xx, t).backward()
        return run

    cases = []
    if args.only in ("", "float64"):
        x = torch.randn(4096, 32000, generator=g, dtype=torch.float64)
        t = torch.randint(0, 32000, (4096,), generator=g)
        cases.append(("float64 (4096, 32000)", "float64", x, t, 3, {}))
        # Beyond the drop-in: the gradient computed in the forward's pass (two memory passes).
        cases.append(("float64 (4096, 32000), grad_in_forward=True", "float64", x, t, 3,
                      dict(lean=True, grad_in_forward=True)))
    for dt in ("float32", "bfloat16"):
        dtype = getattr(torch, dt)
        if args.only in ("", "prob"):
            x = torch.randn(4096, 32000, generator=g).to(dtype)
            q = torch.softmax(torch.randn(4096, 32000, generator=g), 1).to(dtype)
            cases.append((f"probabilities (4096, 32000) {dt}", dt, x, q, 3, {}))
        if args.only in ("", "kdim"):
            x = torch.randn(8, 21, 512, 512, generator=g).to(dtype)
            t = torch.randint(0, 21, (8, 512, 512), generator=g)
            cases.append((f"K-dimensional (8, 21, 512, 512) {dt}", dt, x, t, 3, {}))

    src = torch.empty(64 << 20, dtype=torch.float64)
    dst = torch.empty_like(src)
    src.fill_(1.0)
    copy_s = median_time(lambda: dst.copy_(src), 2, 5)
    copy_gbs = 2 * src.numel() * 8 / copy_s / 1e9

    print(f"CPU: {cpu_name()}; torch {torch.__version__}; {args.threads} threads; "
          f"copy bandwidth {copy_gbs:.1f} GB/s (torch copy_, 512 MiB)")
    print("| case | ours ms | PyTorch ms | speed-up | ours GB/s | % of copy |")
    print("|---|---|---|---|---|---|")
    for name, _, x, t, passes, kw in cases:
        ours_fn = step(lambda a, b: at.cross_entropy(a, b, **kw), x, t)
        theirs_fn = step(lambda a, b: F.cross_entropy(a, b), x, t)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(median_time(ours_fn, 1, args.reps))
            theirs.append(median_time(theirs_fn, 1, args.reps))
        o, p = statistics.median(ours), statistics.median(theirs)
        # Ideal traffic: x read twice (forward, backward) and the gradient written once, plus a
        # probability target read in each pass.
        nbytes = x.numel() * x.element_size() * passes + \
            (t.numel() * t.element_size() * 2 if t.is_floating_point() else 0)
        gbs = nbytes / o / 1e9
        print(f"| {name} | {o * 1e3:.1f} | {p * 1e3:.1f} | {p / o:.2f}x | {gbs:.1f} | "
              f"{100 * gbs / copy_gbs:.0f}% |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
