#!/usr/bin/env bash
# The installed wheel's speed against the source build's, side by side on this machine: the
# driver of each (dist/'s x86-64 wheel, installed into a scratch virtual environment, and
# build-sdk/'s, a `cmake` Release build of the clone) runs the benchmark suite's problems
# (driver/problems/benchmarks.txt, `--perf`), alternating source, wheel, source, wheel, ...
# for ROUNDS rounds (default 3); the table gives each problem's median over the rounds of the
# driver's median time, and the wheel's time over the source build's.
# usage: bash bench/wheel_vs_source.sh [PROBLEM_FILE]     (after bash scripts/wheel.sh x86_64)
set -euo pipefail
cd "$(dirname "$0")/.."
problems=${1:-driver/problems/benchmarks.txt}
rounds=${ROUNDS:-3}
cmake -S . -B build-sdk -DCMAKE_BUILD_TYPE=Release -DACLNN_CPU_BUILD_TESTS=OFF \
  -DACLNN_CPU_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-sdk -j"$(nproc)" >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/aclnn-cpu-wheel-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "$(ls dist/aclnn_cpu-*-manylinux_*_x86_64.whl)"
for r in $(seq "$rounds"); do
  for build in source wheel; do
    driver=build-sdk/driver/aclnn-cpu-driver
    [ "$build" = wheel ] && driver=$work/venv/bin/aclnn-cpu-driver
    "$driver" --batch "$problems" --perf --reps 10 >"$work/$build-$r.txt"
  done
done
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) threads, $rounds rounds"
python3 - "$work" "$rounds" <<'PY'
import re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def parse(path):
    rows, name = [], None
    for line in open(path):
        m = re.match(r"\[\d+/\d+\] (.*)", line)
        if m:
            name = m.group(1)
        m = re.search(r"perf median ([0-9.]+) ms", line)
        if m and name:
            rows.append((name, float(m.group(1))))
    return rows
runs = {b: [parse(f"{work}/{b}-{r}.txt") for r in range(1, rounds + 1)] for b in ("source", "wheel")}
print("| problem | source build ms | wheel ms | wheel / source | per round |")
print("|---|---|---|---|---|")
for i, (name, _) in enumerate(runs["source"][0]):
    s = [run[i][1] for run in runs["source"]]
    w = [run[i][1] for run in runs["wheel"]]
    ratios = " ".join(f"{b / a:.2f}" for a, b in zip(s, w))
    short = re.sub(r" --(ignore-index=-100|label-smoothing=0|zloss=0|target-dtype=s64)(?= |$)", "",
                   name)
    sm, wm = statistics.median(s), statistics.median(w)
    print(f"| `{short}` | {sm:.3f} | {wm:.3f} | {wm / sm:.3f} | {ratios} |")
PY
