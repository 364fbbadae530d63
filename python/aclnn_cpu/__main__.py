"""``python -m aclnn_cpu``: what this installation is and where its C SDK lives.

Without options it prints the version, the SIMD target chosen on this CPU, the threads, the SoC
profile, the SDK's directories and which optional integrations import. ``--cmake-dir``,
``--include-dir``, ``--lib-dir`` and ``--sdk-dir`` print one directory each, for build scripts:
``cmake -DCMAKE_PREFIX_PATH="$(python -m aclnn_cpu --cmake-dir)"``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform

from . import __version__, cpu_target, get_num_threads, soc_name
from ._sdk import cmake_dir, driver_path, include_dir, lib_dir, sdk_dir


def _integration(name: str) -> str:
    if importlib.util.find_spec(name) is None:
        return "not installed"
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "importable"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m aclnn_cpu", description=__doc__.split("\n")[0])
    dirs = {"cmake_dir": cmake_dir, "include_dir": include_dir, "lib_dir": lib_dir,
            "sdk_dir": sdk_dir}
    group = parser.add_mutually_exclusive_group()
    for name in dirs:
        group.add_argument("--" + name.replace("_", "-"), action="store_true",
                           help=f"print the SDK's {name.replace('_', ' ')} and exit")
    group.add_argument("--version", action="store_true", help="print the version and exit")
    args = parser.parse_args(argv)
    for name, where in dirs.items():
        if getattr(args, name):
            print(where())
            return 0
    if args.version:
        print(__version__)
        return 0
    rows = [
        ("aclnn_cpu", f"{__version__} ({os.path.dirname(os.path.abspath(__file__))})"),
        ("python", f"{platform.python_version()} ({platform.machine()})"),
        ("SIMD target", cpu_target()),
        ("threads", str(get_num_threads())),
        ("SoC profile", soc_name()),
        ("SDK", sdk_dir()),
        ("CMake dir", cmake_dir()),
        ("driver", driver_path() + ("" if os.access(driver_path(), os.X_OK) else " (missing)")),
        ("torch", _integration("torch")),
        ("transformers", _integration("transformers")),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
