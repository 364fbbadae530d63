#!/usr/bin/env python3
"""Turns the benchmark suite's JSON (bench/run.sh) into the markdown table of
docs/performance.md: per case and thread count, our time, GB/s, the fraction of the machine's
bandwidth measured in the same run, PyTorch's time and the ratio."""
import json
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    bandwidth = {}
    for b in data["benchmarks"]:
        name = b["name"]
        if name.startswith("Bandwidth/"):
            bandwidth[name[len("Bandwidth/"):]] = b.get("GB/s", 0.0)
            continue
        impl, rest = name.split("/", 1)
        case, threads = rest.rsplit("/threads:", 1)
        if b.get("error_occurred"):
            continue
        ms = b["real_time"] if b.get("time_unit") == "ms" else b["real_time"] / 1e6
        entry = rows.setdefault((case, int(threads.split("/")[0])), {})
        entry[impl] = dict(ms=ms, gbs=b.get("bytes_per_second", 0.0) / 1e9,
                           frac=b.get("bw_frac", 0.0), label=b.get("label", ""))
    print("Bandwidth measured in the same run (GB/s): " +
          ", ".join(f"{k} {v:.1f}" for k, v in sorted(bandwidth.items())))
    print()
    print("| case | threads | ours ms | ours GB/s | % of bandwidth | PyTorch ms | speed-up | target |")
    print("|---|---|---|---|---|---|---|---|")
    for (case, threads), e in rows.items():
        o = e.get("ours")
        if o is None:
            continue
        p = e.get("pytorch")
        tiny = o["ms"] < 0.01
        ours_ms = f"{o['ms'] * 1000:.2f} us" if tiny else f"{o['ms']:.2f}"
        pt_ms = "n/a" if p is None else (f"{p['ms'] * 1000:.2f} us" if tiny else f"{p['ms']:.2f}")
        ratio = "n/a" if p is None else f"{p['ms'] / o['ms']:.2f}x"
        frac = "-" if tiny else f"{100 * o['frac']:.0f}%"
        print(f"| {case} | {threads} | {ours_ms} | {o['gbs']:.1f} | {frac} | {pt_ms} | {ratio} | "
              f"{o['label']} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build-bench/bench.json")
