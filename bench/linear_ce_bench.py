"""The fused linear + cross-entropy (docs/large_vocab.md) against its peers: one training step
(forward + backward, gradients of the input and the weight) of a language-model head,
time and peak memory.

    fused    - aclnn_cpu.torch.linear_cross_entropy: rows in chunks, no (N, V) tensor
    unfused  - F.linear, then our lean cross-entropy on the materialized logits, in place
               (aclnn_cpu.torch.cross_entropy(lean=True, inplace_backward=True)): the matrix
               products alone plus our loss, the yardstick of the 1.3x target
    eager    - PyTorch: F.cross_entropy(F.linear(x, w), t)
    compile  - the same under torch.compile (compiled before timing)
    chunked  - PyTorch 2.15's F.linear_cross_entropy(..., options=LinearCrossEntropyOptions()),
               its chunked path (it refuses label smoothing and falls back to the reference,
               with a warning)

--bias adds a linear bias (all three gradients: input, weight, bias); --smoothing sets the
label smoothing of every contender.

Time: the contenders interleaved in one process, one step each per round, median over rounds.
Peak memory: each contender in a fresh process; the peak resident size during one step (VmHWM
after resetting it through /proc/self/clear_refs) minus the resident size before it (inputs and
parameters allocated) minus the gradients' bytes: what the step needs beyond the inputs, the
parameters and their gradients, against the bytes of the (N, V) logits in the input's dtype.

    python bench/linear_ce_bench.py [--shape 4096x1024x128256] [--dtype float32] [--rounds 3]
        [--bias] [--smoothing 0.1] [--contenders fused,chunked,compile] [--chunk 0]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_util import cpu_name, reset_peak, status_bytes

CONTENDERS = ("fused", "unfused", "eager", "compile", "chunked")


def make(torch, shape, dtype, bias):
    n, h, v = shape
    gen = torch.Generator().manual_seed(0)
    dt = getattr(torch, dtype)
    x = torch.randn(n, h, generator=gen, dtype=dt).requires_grad_()
    w = (torch.randn(v, h, generator=gen, dtype=dt) * 0.02).requires_grad_()
    b = (torch.randn(v, generator=gen, dtype=dt) * 0.02).requires_grad_() if bias else None
    t = torch.randint(0, v, (n,), generator=gen)
    return x, w, b, t


def step_fn(torch, at, name, ls, chunk=0):
    F = torch.nn.functional
    if name == "fused":
        return lambda x, w, b, t: at.linear_cross_entropy(x, w, t, linear_bias=b,
                                                          label_smoothing=ls, chunk_size=chunk)
    if name == "unfused":
        return lambda x, w, b, t: at.cross_entropy(F.linear(x, w, b), t, lean=True,
                                                   inplace_backward=True, label_smoothing=ls)
    if name == "chunked":
        opts = torch.nn.LinearCrossEntropyOptions()
        return lambda x, w, b, t: F.linear_cross_entropy(x, w, t, linear_bias=b,
                                                         label_smoothing=ls, options=opts)
    eager = lambda x, w, b, t: F.cross_entropy(F.linear(x, w, b), t,  # noqa: E731
                                               label_smoothing=ls)
    return torch.compile(eager) if name == "compile" else eager


def run_step(fn, x, w, b, t):
    x.grad = w.grad = None
    if b is not None:
        b.grad = None
    loss = fn(x, w, b, t)
    loss.backward()
    return loss.item()






def memory_child(shape, dtype, name, bias, ls, chunk):
    import torch
    import aclnn_cpu.torch as at
    torch.set_num_threads(2)
    fn = step_fn(torch, at, name, ls, chunk)
    run_step(fn, *make(torch, (64, shape[1], 1000), dtype, bias))  # load, initialise, compile
    x, w, b, t = make(torch, shape, dtype, bias)
    reset_peak()
    base = status_bytes("VmRSS:")
    loss = fn(x, w, b, t)
    loss.backward()
    grads = sum(p.grad.numel() * p.grad.element_size() for p in (x, w, b) if p is not None)
    logits = shape[0] * shape[2] * x.element_size()
    print(json.dumps({"extra": status_bytes("VmHWM:") - base - grads, "logits": logits,
                      "loss": float(loss)}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="4096x1024x128256", help="N x H x V")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--contenders", default=",".join(CONTENDERS))
    p.add_argument("--memory-child", choices=CONTENDERS)
    p.add_argument("--bias", action="store_true")
    p.add_argument("--smoothing", type=float, default=0.0)
    p.add_argument("--chunk", type=int, default=0, help="the fused contender's rows per chunk")
    args = p.parse_args()
    shape = tuple(int(v) for v in args.shape.split("x"))
    if args.memory_child:
        memory_child(shape, args.dtype, args.memory_child, args.bias, args.smoothing, args.chunk)
        return
    names = args.contenders.split(",")

    import torch
    import aclnn_cpu.torch as at
    torch.set_num_threads(2)
    cpu = cpu_name()
    n, h, v = shape
    print(f"N {n}, H {h}, V {v}, {args.dtype}, 2 threads, {cpu}, {os.cpu_count()} logical "
          f"CPUs; torch {torch.__version__} (capability "
          f"{torch.backends.cpu.get_cpu_capability()}); bias {args.bias}, label smoothing "
          f"{args.smoothing}; fused chunk {args.chunk or 'auto'}; ACLNN_CPU_BF16_PRODUCTS="
          f"{os.environ.get('ACLNN_CPU_BF16_PRODUCTS', '(auto)')}", flush=True)
    mem = {}
    for name in names:
        out = subprocess.run([sys.executable, __file__, "--shape", args.shape, "--dtype",
                              args.dtype, "--memory-child", name, "--smoothing",
                              str(args.smoothing), "--chunk", str(args.chunk)] +
                             (["--bias"] if args.bias else []),
                             capture_output=True, text=True, check=True)
        mem[name] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  memory {name}: {mem[name]}", flush=True)
    x, w, b, t = make(torch, shape, args.dtype, args.bias)
    fns = {name: step_fn(torch, at, name, args.smoothing, args.chunk) for name in names}
    small = make(torch, (64, h, 1000), args.dtype, args.bias)
    for name in names:
        run_step(fns[name], *small)  # compile / initialise outside the timing
    times = {name: [] for name in names}
    losses = {}
    for r in range(args.rounds):
        for name in names:
            t0 = time.perf_counter()
            losses[name] = run_step(fns[name], x, w, b, t)
            times[name].append(time.perf_counter() - t0)
        print(f"  round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()),
              flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    flop = 3 * 2.0 * n * h * v
    print("\n| contender | step (s) | GFLOP/s | / fused | extra memory (MB) | % of the logits |")
    print("|---|---|---|---|---|---|")
    ref = med.get("fused", next(iter(med.values())))
    for name in names:
        m = mem[name]
        print(f"| {name} | {med[name]:.2f} | {flop / med[name] / 1e9:.0f} | "
              f"{med[name] / ref:.2f}x | {m['extra'] / 1e6:.0f} | "
              f"{100.0 * m['extra'] / m['logits']:.1f}% |")
    print("\nlosses: " + ", ".join(f"{k} {v:.6f}" for k, v in losses.items()))


if __name__ == "__main__":
    main()
