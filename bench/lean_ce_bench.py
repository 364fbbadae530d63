"""The lean cross-entropy against the CANN-API path (docs/large_vocab.md): forward + backward of
one loss step through aclnn_cpu.torch.cross_entropy, time and peak memory.

    cann     - lean=False: the forward writes logProb (N x C), the backward reads it
    lean     - lean=True: the forward keeps only the float32 lse (N), the backward reads logits
    inplace  - lean=True, inplace_backward=True: the gradient overwrites the logits
    inforward - lean=True, grad_in_forward=True: the gradient computed in the forward's pass
                (aclnnCpuCrossEntropyLossWithGrad), the backward returns it
    inforward-inplace - both: one read and one write per element for the whole step

Time: the three interleaved in one process, median per round, median over rounds. Peak memory:
each path in a fresh process (the peak resident size during one step, VmHWM after resetting
it through /proc/self/clear_refs, minus the resident size before the step with the logits
allocated): the memory the step adds beyond the logits.
Glibc's huge-page malloc is on (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, as in
python_step_bench.py).

    python bench/lean_ce_bench.py [--shape 8192x128256] [--dtype bfloat16] [--rounds 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_util import cpu_name, reset_peak, status_bytes

TUNABLE = "glibc.malloc.hugetlb=1"
PATHS = ("cann", "lean", "inplace", "inforward", "inforward-inplace")


def in_place(path):
    return path in ("inplace", "inforward-inplace")


def prepare(x, path):
    """The logits a step starts from; in place they must be an intermediate (a model's output;
    the in-forward path refuses to overwrite a leaf), made here, outside the timed step."""
    return (x.detach() * 1).requires_grad_() * 1 if in_place(path) else x


def step(at, torch, logits, t, path):
    """One forward + backward; returns the gradient of the logits."""
    loss = at.cross_entropy(logits, t, label_smoothing=0.1, lean=path != "cann",
                            inplace_backward=in_place(path),
                            grad_in_forward=path.startswith("inforward"))
    (g,) = torch.autograd.grad(loss, logits)
    return g


def make(torch, shape, dtype):
    n, c = shape
    gen = torch.Generator().manual_seed(0)
    # Drawn in the dtype itself: no float32 temporary twice the logits' size.
    x = torch.randn(n, c, generator=gen, dtype=getattr(torch, dtype)).requires_grad_()
    t = torch.randint(0, c, (n,), generator=gen)
    return x, t






def memory_child(shape, dtype, path):
    import torch
    import aclnn_cpu.torch as at
    torch.set_num_threads(2)
    x, t = make(torch, shape, dtype)
    step(at, torch, prepare(x[:8], path), t[:8], path)  # load and initialise on a small problem
    if in_place(path):
        x = prepare(x, path)  # the logits as a model has them: an intermediate
    reset_peak()
    base = status_bytes("VmRSS:")
    loss = at.cross_entropy(x, t, label_smoothing=0.1, lean=path != "cann",
                            inplace_backward=in_place(path),
                            grad_in_forward=path.startswith("inforward"))
    (g,) = torch.autograd.grad(loss, x)
    print(json.dumps({"extra": status_bytes("VmHWM:") - base, "logits": x.numel() * x.element_size(),
                      "grad_is_logits": g.data_ptr() == x.data_ptr()}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="8192x128256")
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--memory-child", choices=PATHS)
    args = p.parse_args()
    shape = tuple(int(v) for v in args.shape.split("x"))
    if TUNABLE not in os.environ.get("GLIBC_TUNABLES", ""):
        env = dict(os.environ)
        env["GLIBC_TUNABLES"] = ":".join(x for x in (env.get("GLIBC_TUNABLES"), TUNABLE) if x)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    if args.memory_child:
        memory_child(shape, args.dtype, args.memory_child)
        return

    import torch
    import aclnn_cpu.torch as at
    torch.set_num_threads(2)
    cpu = cpu_name()
    print(f"{args.shape} {args.dtype}, label smoothing 0.1, 2 threads, {cpu}, "
          f"{os.cpu_count()} logical CPUs; torch {torch.__version__}")
    x, t = make(torch, shape, args.dtype)
    rounds = {k: [] for k in PATHS}
    for _ in range(args.rounds):
        for path in PATHS:
            step(at, torch, prepare(x, path), t, path)  # warm-up
            times = []
            for _ in range(args.reps):
                logits = prepare(x, path)
                start = time.perf_counter()
                step(at, torch, logits, t, path)
                times.append(time.perf_counter() - start)
                del logits
            rounds[path].append(statistics.median(times))
    del x
    mem = {}
    for path in PATHS:
        out = subprocess.run([sys.executable, __file__, "--shape", args.shape, "--dtype",
                              args.dtype, "--memory-child", path],
                             capture_output=True, text=True, check=True).stdout
        mem[path] = json.loads(out.strip().splitlines()[-1])
    nv = mem["cann"]["logits"]
    cann = statistics.median(rounds["cann"])
    print()
    print("| path | fwd + bwd ms | / CANN path | memory beyond the logits, MB | in N x C tensors |")
    print("|---|---|---|---|---|")
    for path in PATHS:
        ms = statistics.median(rounds[path]) * 1e3
        extra = mem[path]["extra"]
        print(f"| {path} | {ms:.0f} | {ms / 1e3 / cann:.2f}x | {extra / 1e6:.0f} | "
              f"{extra / nv:.3f} |")
    print(f"\none N x C tensor: {nv / 1e6:.0f} MB; in place, the gradient is the logits' memory: "
          f"{mem['inplace']['grad_is_logits']} (inplace), "
          f"{mem['inforward-inplace']['grad_is_logits']} (inforward-inplace)")


if __name__ == "__main__":
    main()
