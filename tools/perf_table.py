#!/usr/bin/env python3
"""Turns the benchmark suite's JSON (bench/run.sh) into the markdown table of
docs/performance.md: per case and thread count, our time, GB/s, the fraction of the machine's
bandwidth measured in the same run, PyTorch's time and the ratio.

usage: perf_table.py BENCH.json [PYTORCH_AVX512.json]
The second file, from a run with ATEN_CPU_CAPABILITY=avx512, adds PyTorch's AVX-512 kernels;
the speed-up is then taken against the faster of PyTorch's two paths."""
import json
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    rows, bandwidth = {}, {}
    for b in data["benchmarks"]:
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


def main(argv):
    rows, bandwidth = load(argv[1] if len(argv) > 1 else "build-bench/bench.json")
    avx512, bw512 = load(argv[2]) if len(argv) > 2 else ({}, {})
    print("Bandwidth measured in the same run (GB/s): " +
          ", ".join(f"{k} {v:.1f}" for k, v in sorted(bandwidth.items())))
    if bw512:
        print()
        print("Bandwidth in the PyTorch AVX-512 run (GB/s): " +
              ", ".join(f"{k} {v:.1f}" for k, v in sorted(bw512.items())))
    print()
    head = "| case | threads | ours ms | ours GB/s | % of bandwidth | PyTorch ms"
    sep = "|---|---|---|---|---|---"
    if avx512:
        head += " (AVX2) | PyTorch ms (AVX-512)"
        sep += "|---"
    print(head + " | speed-up | target |")
    print(sep + "|---|---|")
    for (case, threads), e in rows.items():
        o = e.get("ours")
        if o is None:
            continue
        tiny = o["ms"] < 0.01
        p = e.get("pytorch")
        q = avx512.get((case, threads), {}).get("pytorch")
        best = min((x["ms"] for x in (p, q) if x is not None), default=None)
        cells = ["n/a" if p is None else fmt(p["ms"], tiny)]
        if avx512:
            cells.append("n/a" if q is None else fmt(q["ms"], tiny))
        ratio = "n/a" if best is None else f"{best / o['ms']:.2f}x"
        frac = "-" if tiny else f"{100 * o['frac']:.0f}%"
        print(f"| {case} | {threads} | {fmt(o['ms'], tiny)} | {o['gbs']:.1f} | {frac} | "
              + " | ".join(cells) + f" | {ratio} | {o['label']} |")


if __name__ == "__main__":
    main(sys.argv)
