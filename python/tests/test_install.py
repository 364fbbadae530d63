"""The installed package as a user meets it: one version everywhere, the C SDK inside it,
``python -m aclnn_cpu``, and the NumPy entry points on small problems against a float64 NumPy
formula. Needs neither PyTorch nor this file's conftest (scripts/wheel-test.sh runs it with
``--noconftest`` under qemu CPU models and on the AArch64 wheel, where PyTorch is not there).

With ``ACLNN_CPU_EXPECT_SITE`` set (the wheel tests), the package must come from that
site-packages directory and the shared libraries it loads (oneDNN, Highway, libgomp) from the
wheel's own ``aclnn_cpu.libs``, not from the system.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
from pathlib import Path

import numpy as np
import pytest

import aclnn_cpu as ac

EPS32 = float(np.finfo(np.float32).eps)


def test_one_version_everywhere():
    cmake_version = Path(ac.cmake_dir(), "aclnn_cpu", "aclnn_cpu-config-version.cmake").read_text()
    assert re.match(r"\d+\.\d+\.\d+$", ac.__version__)
    assert importlib.metadata.version("aclnn-cpu") == ac.__version__
    assert f'set(PACKAGE_VERSION "{ac.__version__}")' in cmake_version


def test_sdk_layout():
    lib = Path(ac.lib_dir())
    assert (Path(ac.include_dir()) / "aclnnop" / "aclnn_cross_entropy_loss_grad.h").is_file()
    assert (Path(ac.include_dir()) / "aclnn_cpu" / "aclnn_cpu_ext.h").is_file()
    assert (lib / "libaclnn_cpu.so").read_bytes()[:4] == b"\x7fELF"
    for name in ("ascendcl", "nnopbase", "opapi", "opapi_nn", "opapi_math"):
        # CANN's names as linker scripts (a wheel holds no symbolic links), not copies.
        assert (lib / f"lib{name}.so").read_text() == "INPUT(libaclnn_cpu.so)\n"
    assert Path(ac.sdk_dir(), "set_env.sh").is_file()
    assert os.access(Path(ac.sdk_dir(), "bin", "aclnn-cpu-driver"), os.X_OK)


def test_python_m_aclnn_cpu(capsys):
    # In process: under qemu-user a child interpreter could not be started (no binfmt_misc);
    # scripts/wheel-test.sh runs `python -m aclnn_cpu` itself on every CPU model.
    from aclnn_cpu.__main__ import main

    def run(*args):
        assert main(list(args)) == 0
        return capsys.readouterr().out

    assert run("--cmake-dir").strip() == ac.cmake_dir()
    assert run("--include-dir").strip() == ac.include_dir()
    assert run("--lib-dir").strip() == ac.lib_dir()
    assert run("--version").strip() == ac.__version__
    report = run()
    for key in ("aclnn_cpu", "SIMD target", "threads", "SoC profile", "SDK", "torch"):
        assert re.search(rf"^{key}\s", report, re.M), report
    assert ac.cpu_target() in report


def test_loaded_from_the_wheel():
    site = os.environ.get("ACLNN_CPU_EXPECT_SITE")
    if not site:
        pytest.skip("not a wheel test (ACLNN_CPU_EXPECT_SITE is unset)")
    site = Path(site).resolve()
    assert Path(ac.__file__).resolve().is_relative_to(site)
    maps = Path("/proc/self/maps").read_text().split("\n")
    paths = {line.split()[-1] for line in maps if line.count("/") and ".so" in line}
    bundled = site / "aclnn_cpu.libs"
    for stem in ("libdnnl", "libhwy", "libgomp"):
        ours = [p for p in paths if Path(p).name.startswith(stem)
                and Path(p).resolve().is_relative_to(bundled)]
        assert ours, f"{stem} is not loaded from {bundled}: {sorted(paths)}"
    for stem in ("libdnnl", "libhwy"):
        system = [p for p in paths if Path(p).name.startswith(stem)
                  and not Path(p).resolve().is_relative_to(bundled)]
        assert not system, f"{stem} also loaded from the system: {system}"


def _log_softmax64(x):
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def _tolerance(ref, classes):
    # float32 inputs: a few roundings per element plus a sum over the classes.
    return 4 * (classes + 2) * EPS32 * np.maximum(1.0, np.abs(ref))


def test_numpy_operators_against_a_float64_formula():
    rng = np.random.default_rng(7)
    n, c = 5, 37
    x = rng.uniform(-4, 4, (n, c)).astype(np.float32)
    t = rng.integers(0, c, n).astype(np.int64)
    ref_lp = _log_softmax64(x)
    lp = ac.log_softmax(x)
    assert np.all(np.abs(lp - ref_lp) <= _tolerance(ref_lp, c))

    ref_loss = -ref_lp[np.arange(n), t].mean()
    r = ac.cross_entropy_loss(x, t)
    assert abs(float(r.loss) - ref_loss) <= _tolerance(ref_loss, c)

    # d(mean loss)/dx = (softmax - onehot) / n
    ref_grad = (np.exp(ref_lp) - np.eye(c)[t]) / n
    grad = ac.cross_entropy_loss_grad(np.float32(1.0), r.log_prob, t)
    assert np.all(np.abs(grad - ref_grad) <= _tolerance(ref_grad, c))

    g = rng.uniform(-1, 1, (n, c)).astype(np.float32)
    ref_back = g - np.exp(ref_lp) * g.astype(np.float64).sum(axis=-1, keepdims=True)
    back = ac.log_softmax_backward(g, lp)
    assert np.all(np.abs(back - ref_back) <= _tolerance(ref_back, c))


def test_refusal_carries_the_library_sentence():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ac.AclnnError, match=r"target"):
        ac.cross_entropy_loss(x, np.array([0, 3], np.int64))
