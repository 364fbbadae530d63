#!/usr/bin/env python3
"""Turns the benchmark suite's JSON (bench/run.sh) into the markdown table of
docs/performance.md: per case and thread count, our time, GB/s, the fraction of the machine's
bandwidth measured in the same run, PyTorch's time and the speed-up.

usage: perf_table.py ROUND [ROUND ...] [--avx512 AVX512 [AVX512 ...]]

Each ROUND is one run of the suite (ours and PyTorch's default path): a JSON file, or a
directory of them (bench/run.sh runs one process per problem) read in name order; the optional
AVX512.json files are PyTorch's runs with ATEN_CPU_CAPABILITY=avx512, the k-th made right
after the k-th round. Times are the median over the rounds; the fraction of bandwidth and the
speed-up (against the faster of PyTorch's paths in that round) are computed within each round,
then the median over the rounds is reported, since only ratios measured side by side mean
anything on a noisy machine."""
import glob
import json
import os
import statistics
import sys


def benchmarks(path):
    paths = sorted(glob.glob(os.path.join(path, "*.json"))) if os.path.isdir(path) else [path]
    for p in paths:
        with open(p) as f:
            yield from json.load(f)["benchmarks"]


def load(path):
    rows, bandwidth = {}, {}
    for b in benchmarks(path):
        name = b["name"]
        if name.startswith("Bandwidth/"):
            bandwidth[name[len("Bandwidth/"):].replace("/iterations:1", "")] = b.get("GB/s", 0.0)
            continue
        impl, rest = name.split("/", 1)
        case, threads = rest.rsplit("/threads:", 1)
        if b.get("error_occurred"):
            print(f"ERROR in {name}: {b.get('error_message', '')}", file=sys.stderr)
            continue
        ms = b["real_time"] if b.get("time_unit") == "ms" else b["real_time"] / 1e6
        entry = rows.setdefault((case, int(threads.split("/")[0])), {})
        entry[impl] = dict(ms=ms, gbs=b.get("bytes_per_second", 0.0) / 1e9,
                           frac=b.get("bw_frac", 0.0), label=b.get("label", ""))
    return rows, bandwidth


def fmt(ms, tiny):
    return f"{ms * 1000:.2f} us" if tiny else f"{ms:.2f}"


def median(xs):
    return statistics.median(xs) if xs else None


def bandwidth_line(title, runs):
    kinds = sorted({k for _, bw in runs for k in bw})
    cells = []
    for k in kinds:
        vals = [bw[k] for _, bw in runs if k in bw]
        spread = f" ({min(vals):.1f}-{max(vals):.1f})" if len(vals) > 1 else ""
        cells.append(f"{k} {median(vals):.1f}{spread}")
    return f"{title} (GB/s, median over {len(runs)} run(s)): " + ", ".join(cells)


def main(argv):
    args = argv[1:] or ["build-bench/bench-1.json"]
    if "--avx512" in args:
        cut = args.index("--avx512")
        rounds, extra = args[:cut], args[cut + 1:]
    else:
        rounds, extra = args, []
    runs = [load(p) for p in rounds]
    runs512 = [load(p) for p in extra]
    print(bandwidth_line("Bandwidth measured with ours", runs))
    if any(bw for _, bw in runs512):
        print()
        print(bandwidth_line("Bandwidth in the PyTorch AVX-512 runs", runs512))
    print()
    head = "| case | threads | ours ms | ours GB/s | % of bandwidth | PyTorch ms"
    sep = "|---|---|---|---|---|---"
    if runs512:
        head += " (AVX2) | PyTorch ms (AVX-512)"
        sep += "|---"
    print(head + " | speed-up | target |")
    print(sep + "|---|---|")
    for key in runs[0][0]:
        ours, p2, p5, fracs, ratios, labels = [], [], [], [], [], []
        for k, (rows, _) in enumerate(runs):
            e = rows.get(key, {})
            o = e.get("ours")
            if o is None:
                continue
            ours.append(o)
            labels.append(o["label"])
            fracs.append(o["frac"])
            p = e.get("pytorch")
            q = runs512[k][0].get(key, {}).get("pytorch") if k < len(runs512) else None
            if p is not None:
                p2.append(p["ms"])
            if q is not None:
                p5.append(q["ms"])
            best = min((x["ms"] for x in (p, q) if x is not None), default=None)
            if best is not None:
                ratios.append(best / o["ms"])
        if not ours:
            continue
        ms = median([o["ms"] for o in ours])
        tiny = ms < 0.01
        cells = ["n/a" if not p2 else fmt(median(p2), tiny)]
        if runs512:
            cells.append("n/a" if not p5 else fmt(median(p5), tiny))
        ratio = "n/a" if not ratios else f"{median(ratios):.2f}x"
        frac = "-" if tiny else f"{100 * median(fracs):.0f}%"
        gbs = median([o["gbs"] for o in ours])
        case, threads = key
        print(f"| {case} | {threads} | {fmt(ms, tiny)} | {gbs:.1f} | {frac} | "
              + " | ".join(cells) + f" | {ratio} | {labels[0]} |")


if __name__ == "__main__":
    main(sys.argv)
