"""What the Python demos share: the process's memory figures from /proc/self/status and the
closing verdict on two loss curves."""

import sys


def status_bytes(key):
    """A /proc/self/status figure ("VmRSS:", "VmHWM:") in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key)


def reset_peak():
    """Resets VmHWM to the current resident size."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def verdict(worst, tol):
    """Prints the largest relative loss difference against the tolerance; exits 1 beyond it."""
    ok = worst <= tol
    print(f"largest relative loss difference {worst:.2e} (tolerance {tol:g}): "
          f"{'curves agree' if ok else 'CURVES DIFFER'}")
    if not ok:
        sys.exit(1)
