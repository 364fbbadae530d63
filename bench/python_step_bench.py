"""One loss step (forward + backward into the logits) through aclnn_cpu.torch.cross_entropy
(the CANN path, and lean=True) against PyTorch's F.cross_entropy, eager and under
torch.compile, measured side by side in one process; and the Python call overhead of the tiny
(8, 8) case.

Rounds interleave the three contenders; each reports the median of its timed repetitions and
the table gives the median over rounds and the ratio to ours within the same run. Every call
allocates its outputs (as a training step does), so the process runs with glibc's
transparent-huge-page malloc (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, re-executing itself if
needed): first touches of fresh 4 KiB pages cost 11-15 us each on these machines
(../shared/PERF_NOTES.md B.3) and would otherwise dominate both sides.

    python bench/python_step_bench.py [--rounds 3] [--reps 5] [--quick]
"""

import argparse
import os
import platform
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import median_time  # noqa: E402

TUNABLE = "glibc.malloc.hugetlb=1"

LARGE = [((4096, 32000), "float32"), ((8192, 50257), "bfloat16"), ((2048, 128256), "float32")]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="only the first large shape")
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()

    if TUNABLE not in os.environ.get("GLIBC_TUNABLES", ""):
        env = dict(os.environ)
        env["GLIBC_TUNABLES"] = ":".join(x for x in (env.get("GLIBC_TUNABLES"), TUNABLE) if x)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)

    import torch
    import torch.nn.functional as F

    import aclnn_cpu
    import aclnn_cpu.torch as at

    threads = torch.get_num_threads()
    print(f"CPU: {cpu_name()}, {os.cpu_count()} logical CPUs; torch {torch.__version__} "
          f"(capability {torch.backends.cpu.get_cpu_capability()}), {threads} threads; "
          f"aclnn_cpu target {aclnn_cpu.cpu_target()}; GLIBC_TUNABLES={os.environ['GLIBC_TUNABLES']}")

    def step_fn(loss_fn, x, t, w, ls):
        def step():
            loss = loss_fn(x, t, w, ls)
            (g,) = torch.autograd.grad(loss, x)
            return g
        return step

    ours = lambda x, t, w, ls: at.cross_entropy(x, t, w, label_smoothing=ls)  # noqa: E731
    # The lean extension (docs/large_vocab.md): no (N, C) log_prob, the gradient from the logits.
    lean = lambda x, t, w, ls: at.cross_entropy(x, t, w, label_smoothing=ls, lean=True)  # noqa
    eager = lambda x, t, w, ls: F.cross_entropy(x, t, w, label_smoothing=ls)  # noqa: E731
    compiled = torch.compile(eager, dynamic=False)

    rows = []
    shapes = LARGE[:1] if args.quick else LARGE
    for shape, dtype_name in shapes:
        dtype = getattr(torch, dtype_name)
        gen = torch.Generator().manual_seed(0)
        x = (torch.randn(shape, generator=gen) * 2).to(dtype).requires_grad_()
        t = torch.randint(0, shape[1], (shape[0],), generator=gen)
        t[::17] = -100
        w_full = torch.rand(shape[1], generator=gen) + 0.5
        for opts in ("plain", "weight+ls0.1"):
            w, ls = (w_full, 0.1) if opts != "plain" else (None, 0.0)
            if dtype == torch.bfloat16 and w is not None:
                w = w.to(torch.bfloat16)  # PyTorch wants the weight in the input's dtype
            contenders = {"ours": step_fn(ours, x, t, w, ls), "lean": step_fn(lean, x, t, w, ls),
                          "eager": step_fn(eager, x, t, w, ls)}
            if not args.no_compile:
                contenders["compile"] = step_fn(compiled, x, t, w, ls)
            per = {k: [] for k in contenders}
            for _ in range(args.rounds):
                for name, fn in contenders.items():
                    per[name].append(median_time(fn, args.warmup, args.reps))
            med = {k: statistics.median(v) * 1e3 for k, v in per.items()}
            rows.append((f"{shape[0]}x{shape[1]} {dtype_name}", opts, med))
            print(f"  {rows[-1][0]} {opts}: " +
                  ", ".join(f"{k} {v:.1f} ms" for k, v in med.items()), flush=True)

    # Python call overhead: the (8, 8) case, forward only and a whole step.
    x8 = torch.randn(8, 8, requires_grad=True)
    t8 = torch.randint(0, 8, (8,))
    xn, tn = x8.detach().numpy(), t8.numpy()
    out_n = aclnn_cpu.log_softmax(xn)
    n = 2000
    tiny = {
        "aclnn_cpu.log_softmax(numpy, out=)": lambda: aclnn_cpu.log_softmax(xn, out=out_n),
        "aclnn_cpu.cross_entropy_loss(numpy)": lambda: aclnn_cpu.cross_entropy_loss(xn, tn),
        "at.cross_entropy forward (torch op)": lambda: at.cross_entropy(x8.detach(), t8),
        "F.cross_entropy forward": lambda: F.cross_entropy(x8.detach(), t8),
        "at.cross_entropy step": step_fn(ours, x8, t8, None, 0.0),
        "F.cross_entropy step": step_fn(eager, x8, t8, None, 0.0),
    }
    tiny_us = {}
    for name, fn in tiny.items():
        tiny_us[name] = statistics.median(
            median_time(lambda: [fn() for _ in range(n)], 1, 5) / n * 1e6 for _ in range(3))

    print()
    print(f"Loss step (forward + backward into the logits), median of {args.rounds} rounds x "
          f"{args.reps} reps, {threads} threads, on {cpu_name()}:")
    print()
    cols = ["ours", "lean"] + [k for k in ("eager", "compile") if k in rows[0][2]]
    print("| case | options | " + " | ".join(f"{c} ms" for c in cols) +
          " | eager / ours | eager / lean | " + ("compile / lean |" if "compile" in cols else ""))
    print("|---|---|" + "---|" * len(cols) + "---|---|" + ("---|" if "compile" in cols else ""))
    for case, opts, med in rows:
        ratios = f" {med['eager'] / med['ours']:.2f}x | {med['eager'] / med['lean']:.2f}x |"
        if "compile" in med:
            ratios += f" {med['compile'] / med['lean']:.2f}x |"
        print(f"| {case} | {opts} | " + " | ".join(f"{med[c]:.1f}" for c in cols) + " |" + ratios)
    print()
    print("| (8, 8) call | µs per call |")
    print("|---|---|")
    for name, us in tiny_us.items():
        print(f"| `{name}` | {us:.1f} |")


if __name__ == "__main__":
    main()
