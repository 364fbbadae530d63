#!/usr/bin/env python3
"""PyTorch's side of the benchmark from Python, for machines where bench/torch_bench.cc cannot
link libtorch (another machine's PyTorch, no compiler for it): the same problems, timed the same
way (LogSoftmaxBackward: aten._log_softmax_backward_data into a preallocated tensor;
LogSoftmax: aten._log_softmax into a preallocated tensor;
CrossEntropyLossGrad: autograd backward of F.cross_entropy, graph built once, retain_graph;
CrossEntropyLoss: the forward; five untimed warm-up calls), written as Google Benchmark JSON
("pytorch/<case>/threads:<n>/real_time") that tools/perf_table.py merges with our runs.

usage: torch_peer.py OUT.json THREADS[,THREADS] CASE [CASE ...]
  CASE is an operator-table problem name, e.g. CrossEntropyLossGrad/f32/4096x32000/mean+weight+ls
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
IGNORE_EVERY, IGNORE_INDEX, LS = 17, -100, 0.1  # as optable's bench problems


def parse(case):
    op, dt, shape, opts = case.split("/")
    return op, DTYPES[dt], [int(s) for s in shape.split("x")], opts


def time_call(fn, min_time=1.0):
    for _ in range(5):
        fn()
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / n * 1e3  # ms


def runner(case):
    op, dtype, shape, opts = parse(case)
    torch.manual_seed(0)
    if op == "LogSoftmaxBackward":
        dim = int(opts[len("dim"):])
        g = torch.rand(shape, dtype=dtype) * 2 - 1
        y = torch.rand(shape, dtype=dtype) * 4 - 12
        out = torch.zeros(shape, dtype=dtype)
        return lambda: torch.ops.aten._log_softmax_backward_data.out(g, y, dim, dtype, out=out)
    if op == "LogSoftmax":
        dim = int(opts[len("dim"):])
        x = torch.rand(shape, dtype=dtype) * 8 - 4
        out = torch.zeros(shape, dtype=dtype)
        return lambda: torch.ops.aten._log_softmax.out(x, dim, False, out=out)
    if "zloss" in opts:
        return None  # PyTorch has no z-loss
    n, c = shape
    x = torch.rand(n, c, dtype=dtype) * 8 - 4
    target = torch.randint(0, c, (n,))
    if n >= IGNORE_EVERY:
        target[IGNORE_EVERY - 1::IGNORE_EVERY] = IGNORE_INDEX
    w = (torch.rand(c) + 0.5).to(dtype) if "weight" in opts else None
    ls = LS if "+ls" in opts else 0.0
    reduction = opts.split("+")[0]

    def loss():
        return F.cross_entropy(x, target, weight=w, reduction=reduction,
                               ignore_index=IGNORE_INDEX, label_smoothing=ls)
    if op == "CrossEntropyLoss":
        return loss
    if op == "CrossEntropyLossGrad":
        x.requires_grad_(True)
        graph = loss()

        def backward():
            x.grad = None
            graph.backward(retain_graph=True)
        return backward
    return None


def main(argv):
    out, threads, cases = argv[1], [int(t) for t in argv[2].split(",")], argv[3:]
    rows = []
    for case in cases:
        for t in threads:
            torch.set_num_threads(t)
            fn = runner(case)
            if fn is None:
                continue
            ms = time_call(fn)
            label = f"PyTorch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()}, python)"
            print(f"pytorch/{case}/threads:{t} {ms:.3f} ms {label}", flush=True)
            rows.append({"name": f"pytorch/{case}/threads:{t}/real_time", "real_time": ms,
                         "time_unit": "ms", "label": label})
    with open(out, "w") as f:
        json.dump({"benchmarks": rows}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv)
