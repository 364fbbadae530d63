"""Helpers shared by the Python benchmarks: the CPU's name, the process's peak memory and the
median time of a call."""

import statistics
import time


def cpu_name():
    """The CPU's model name (/proc/cpuinfo), for the tables."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def reset_peak():
    """Resets the process's peak resident size (VmHWM) to its current size (Linux)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def status_bytes(key):
    """A size from /proc/self/status ("VmHWM:" the peak resident size, "VmRSS:" the current)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {key} in /proc/self/status")


def median_time(fn, warmup, reps):
    """The median of `reps` timed calls of fn (seconds), after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)

