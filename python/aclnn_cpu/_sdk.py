"""Where the C SDK inside the installed package lives (docs/python.md, "The C SDK in the wheel").

The wheel (and ``pip install .``) carries CANN's headers, the shared library under CANN's names,
the CMake package and the ``aclnn-cpu-driver`` command in ``aclnn_cpu/sdk``, laid out as
``cmake --install`` lays out ``./_install``. These functions give its directories, as
``torch.utils.cmake_prefix_path`` and ``nanobind.cmake_dir()`` do for theirs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["sdk_dir", "cmake_dir", "include_dir", "lib_dir", "driver_path", "driver_main"]


def sdk_dir() -> str:
    """The SDK's root: ``set_env.sh``, ``include/``, ``lib64/``, ``bin/``, ``share/cmake/``."""
    return str(Path(__file__).resolve().parent / "sdk")


def cmake_dir() -> str:
    """The directory to put on ``CMAKE_PREFIX_PATH`` for ``find_package(aclnn_cpu)``."""
    return os.path.join(sdk_dir(), "share", "cmake")


def include_dir() -> str:
    """CANN's headers (``acl/``, ``aclnn/``, ``aclnnop/``) and the extensions' header."""
    return os.path.join(sdk_dir(), "include")


def lib_dir() -> str:
    """``libaclnn_cpu.so`` and CANN's library names (``libascendcl.so``, ``libopapi.so``, ...)."""
    return os.path.join(sdk_dir(), "lib64")


def driver_path() -> str:
    """The ``aclnn-cpu-driver`` executable (docs/usage.md)."""
    return os.path.join(sdk_dir(), "bin", "aclnn-cpu-driver")


def driver_main() -> None:
    """The ``aclnn-cpu-driver`` console command: runs the SDK's driver with the same arguments."""
    path = driver_path()
    if not os.access(path, os.X_OK):
        sys.exit(f"aclnn-cpu-driver: {path} is missing; this installation has no C SDK.")
    os.execv(path, [path, *sys.argv[1:]])
