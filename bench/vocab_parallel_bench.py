"""The vocabulary-parallel cross-entropy (docs/large_vocab.md): one loss step (forward +
backward) of logits whose classes are split across processes on loopback (gloo), against the
lean path in one process on the whole logits; the time per step, the bytes all-reduced per
step (counted by wrapping torch.distributed.all_reduce) and the largest difference of the loss
and of the gradient from the single-process ones.

    python bench/vocab_parallel_bench.py [--shape 8192x128256] [--dtype bfloat16]
                                         [--world 2] [--rounds 3]
"""

import argparse
import os
import statistics
import tempfile
import time

from bench_util import cpu_name

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def make(shape, dtype):
    n, v = shape
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, v, generator=gen, dtype=getattr(torch, dtype))
    t = torch.randint(0, v, (n,), generator=gen)
    return x, t


def worker(rank, world, init_file, args, out, grad_file):
    import aclnn_cpu.torch as at
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // world))
    shape = tuple(int(s) for s in args.shape.split("x"))
    x, t = make(shape, args.dtype)
    lo, hi = rank * shape[1] // world, (rank + 1) * shape[1] // world
    shard = x[:, lo:hi].clone()
    del x
    sent = [0]
    real_all_reduce = dist.all_reduce

    def counting_all_reduce(tensor, *a, **k):
        sent[0] += tensor.numel() * tensor.element_size()
        return real_all_reduce(tensor, *a, **k)

    dist.all_reduce = counting_all_reduce
    times = []
    for _ in range(args.rounds + 1):  # the first is a warm-up
        s = shard.detach().requires_grad_()
        sent[0] = 0
        dist.barrier()
        t0 = time.perf_counter()
        loss = at.vocab_parallel_cross_entropy(s, t, label_smoothing=0.1, class_offset=lo,
                                               num_classes=shape[1], fp32_loss=True)
        loss.backward()
        dist.barrier()
        times.append(time.perf_counter() - t0)
    torch.save(s.grad, grad_file)  # a file: a queue would pickle a gigabyte through a pipe
    out.put((rank, statistics.median(times[1:]), sent[0], float(loss), grad_file, lo, hi))
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="8192x128256")
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    import aclnn_cpu.torch as at
    cpu = cpu_name()
    shape = tuple(int(s) for s in args.shape.split("x"))
    print(f"{args.shape} {args.dtype}, label smoothing 0.1, {args.world} processes (gloo, "
          f"loopback) on {os.cpu_count()} logical CPUs, {cpu}; torch {torch.__version__}")
    # One process, the lean path on the whole logits, all threads.
    torch.set_num_threads(os.cpu_count() or 2)
    x, t = make(shape, args.dtype)
    single = []
    for _ in range(args.rounds + 1):
        xs = x.detach().requires_grad_()
        t0 = time.perf_counter()
        loss1 = at.cross_entropy(xs, t, label_smoothing=0.1, lean=True, fp32_loss=True)
        loss1.backward()
        single.append(time.perf_counter() - t0)
    grad1 = xs.grad
    del x
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    with tempfile.TemporaryDirectory() as d:
        init = os.path.join(d, "init")
        procs = [ctx.Process(target=worker, args=(r, args.world, init, args, out,
                                                  os.path.join(d, f"grad{r}.pt")))
                 for r in range(args.world)]
        for pr in procs:
            pr.start()
        res = [out.get() for _ in procs]
        for pr in procs:
            pr.join()
        worst_loss = max(abs(r[3] - loss1.item()) / abs(loss1.item()) for r in res)
        worst_grad = max(float((torch.load(r[4]).float() - grad1[:, r[5]:r[6]].float()).abs().max())
                         for r in res)
    step = max(r[1] for r in res)
    print(f"one process, lean path: {statistics.median(single[1:]) * 1e3:.0f} ms per step")
    print(f"{args.world} processes: {step * 1e3:.0f} ms per step; all-reduced per process per "
          f"step: {res[0][2]} bytes ({res[0][2] / shape[0]:.0f} per row; the logits are "
          f"{shape[0] * shape[1] * grad1.element_size() / 1e6:.0f} MB)")
    print(f"against one process: loss relative difference {worst_loss:.2e}, largest gradient "
          f"difference {worst_grad:.2e} (gradient magnitude {float(grad1.abs().max()):.2e})")


if __name__ == "__main__":
    main()
