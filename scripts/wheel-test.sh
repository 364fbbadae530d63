#!/usr/bin/env bash
# Tests the wheels of dist/ (scripts/wheel.sh) as installed, in fresh environments that see
# neither the source tree nor a build tree (PYTHONPATH empty; the tests, the example programs
# and the toolchain file are copied into a scratch directory and run from there):
#   x86_64   auditwheel show (nothing linked beyond the policy); a fresh virtual environment with
#            the wheel (NumPy from PyPI; PyTorch seen through a .pth from the project's cached
#            environment, after the wheel's own site-packages); the whole pytest suite, with the
#            package and its bundled libraries checked to be the wheel's (test_install.py);
#            `import aclnn_cpu` against `import torch`; CANN's example programs built against
#            the wheel's SDK both ways (find_package through `python -m aclnn_cpu --cmake-dir`,
#            and CANN's set_env.sh recipes); the find_package consumer; the driver command
#   x86-qemu the same wheel under qemu-x86_64 CPU models without AVX-512 (Haswell: AVX2) and
#            without AVX2 (Westmere: SSE4; Nehalem: SSSE3), the target each must get checked:
#            `python -m aclnn_cpu`, an example program, and the pytest suite but torch.compile
#            (Haswell, Nehalem; 2-3 minutes each) or test_install.py (Westmere: every NumPy
#            entry point against a float64 formula); and at x86-64's SSE2 baseline (qemu64)
#            the wheel's driver on the smoke problems, on Highway's portable target
#   aarch64  auditwheel show; the AArch64 wheel in a fresh environment of Debian's arm64 Python
#            (scripts/wheel-aarch64-root.sh) under qemu-aarch64 with NEON (cortex-a72) and SVE
#            at 256 and 512 bits: `python -m aclnn_cpu`, test_install.py, and CANN's example
#            programs cross-built against the wheel's SDK with set_env.sh
# usage: bash scripts/wheel-test.sh [x86_64] [x86-qemu] [aarch64]     (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(x86_64 x86-qemu aarch64)
bash scripts/install-deps.sh qemu-user
tools=$(bash scripts/venv.sh python/requirements-wheel.txt)
src=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/aclnn-cpu-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r python/tests "$work/tests"
cp -r examples "$work/examples"
cp -r tests/sdk "$work/sdk"
cp cmake/aarch64-linux-gnu.cmake driver/problems/smoke.txt "$work/"
cd "$work"
export PYTHONPATH=

show() {  # auditwheel show, and nothing outside the policy may be required
  local out
  out=$("$tools/bin/auditwheel" show "$1")
  echo "$out"
  if grep -q "external shared libraries are required" <<<"$out"; then
    echo "FAIL: $1 needs libraries outside its manylinux policy" >&2
    exit 1
  fi
}

qx() {  # qemu-x86_64 -cpu $cpu, without its notes on features TCG leaves out (TSX, PCID, ...)
  qemu-x86_64 -cpu "$cpu" "$@" 2> >(grep -v "TCG doesn't support requested feature" >&2)
}

wheel_of() { ls "$src"/dist/aclnn_cpu-*-manylinux_*_"$1".whl; }
purelib() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }

x86_venv() {  # the fresh environment with the x86-64 wheel, made once
  [ -x "$work/venv/bin/python" ] && return
  python3 -m venv "$work/venv"
  "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$(wheel_of x86_64)"
  site=$(purelib "$work/venv/bin/python")
  purelib "$(cd "$src" && bash scripts/venv.sh)/bin/python" >"$site/zz-aclnn-cpu-dev-env.pth"
}

x86_examples() {  # CANN's example programs built against the wheel's CMake package, once
  [ -x build-examples/bin/test_cross_entropy_loss_grad ] && return
  env -i PATH="$PATH" HOME="${HOME:-/root}" bash -c "
    cmake -S examples -B build-examples -DCMAKE_PREFIX_PATH='$1' >examples.log 2>&1 &&
      cmake --build build-examples -j\$(nproc) >>examples.log 2>&1" || { cat examples.log; exit 1; }
}

arm_cpu() {  # QEMU_CPU for a name of scripts/aarch64.sh
  case $1 in
    neon) echo cortex-a72 ;;
    sve256) echo max,sve-default-vector-length=32 ;;
    sve512) echo max,sve-default-vector-length=64 ;;
  esac
}

for part in "${parts[@]}"; do
  t0=$(date +%s)
  case $part in
    x86_64)
      echo "== [wheel-test x86_64] auditwheel show"
      show "$(wheel_of x86_64)"
      x86_venv
      py=$work/venv/bin/python
      echo "== [wheel-test x86_64] python -m aclnn_cpu"
      "$py" -m aclnn_cpu
      echo "== [wheel-test x86_64] import time, best of 5 (s)"
      "$py" - <<'EOF'
import subprocess, sys, time
def best(code):
    times = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - t)
    return min(times)
base = best("pass")
for code in ("import aclnn_cpu", "import torch", "import aclnn_cpu.torch"):
    t = best(code)
    print(f"   {code:<24} {t:.3f} s ({t - base:.3f} s over the bare interpreter)")
EOF
      echo "== [wheel-test x86_64] pytest (the whole suite, against the installed wheel)"
      ACLNN_CPU_EXPECT_SITE=$site "$py" -m pytest -q -p no:cacheprovider tests
      cmake_dir=$("$py" -m aclnn_cpu --cmake-dir)
      sdk=$("$py" -m aclnn_cpu --sdk-dir)
      echo "== [wheel-test x86_64] CANN's examples: cmake -DCMAKE_PREFIX_PATH=\"\$(python -m aclnn_cpu --cmake-dir)\""
      x86_examples "$cmake_dir"
      for exe in build-examples/bin/*; do
        echo "== $(basename "$exe")"
        env -i PATH="$PATH" HOME="${HOME:-/root}" "$exe"
      done
      echo "== [wheel-test x86_64] CANN's set_env.sh recipes on the wheel's SDK"
      for recipe in custom home; do
        env -i PATH="$PATH" HOME="${HOME:-/root}" bash sdk/cann_recipe.sh "$sdk" examples \
          "build-cann-$recipe" "$recipe"
      done
      echo "== [wheel-test x86_64] find_package consumer"
      cmake -S sdk/consumer -B build-consumer -DCMAKE_PREFIX_PATH="$cmake_dir" >/dev/null
      cmake --build build-consumer >/dev/null
      build-consumer/consumer
      echo "== [wheel-test x86_64] the aclnn-cpu-driver command"
      "$work/venv/bin/aclnn-cpu-driver" --batch smoke.txt --check | tail -3
      ;;
    x86-qemu)
      x86_venv
      py=$work/venv/bin/python
      x86_examples "$("$py" -m aclnn_cpu --cmake-dir)"
      # Highway's targets: AVX2 needs Haswell's set; SSE4 also needs AES and CLMUL (Westmere);
      # Nehalem has SSE4.2 without them, so it runs SSSE3.
      for model in Haswell:AVX2 Westmere:SSE4 Nehalem:SSSE3; do
        cpu=${model%%:*} want=${model#*:}
        echo "== [wheel-test qemu-x86_64 -cpu $cpu] python -m aclnn_cpu"
        report=$(qx "$py" -m aclnn_cpu)
        echo "$report"
        grep -Eq "^SIMD target +$want$" <<<"$report" ||
          { echo "FAIL: expected the $want target under -cpu $cpu" >&2; exit 1; }
        if [ "$cpu" = Westmere ]; then
          echo "== [wheel-test qemu-x86_64 -cpu $cpu] test_install.py"
          ACLNN_CPU_EXPECT_SITE=$site qx "$py" -m pytest -q -p no:cacheprovider --noconftest \
            tests/test_install.py
        else
          # torch.compile is left out: Inductor's generated C++ does not build for a CPU it
          # sees without AVX (PyTorch's code generator, not ours).
          echo "== [wheel-test qemu-x86_64 -cpu $cpu] pytest, the whole suite but torch.compile"
          ACLNN_CPU_EXPECT_SITE=$site qx "$py" -m pytest -q -p no:cacheprovider \
            -k "not torch_compile" tests | grep -Ev "UserWarning|out = fn|^tests/test_opinfo"
        fi
        echo "== [wheel-test qemu-x86_64 -cpu $cpu] test_cross_entropy_loss_grad"
        qx build-examples/bin/test_cross_entropy_loss_grad | tail -3
      done
      # x86-64's baseline (qemu64: SSE2 and SSE3, no SSSE3): nothing that ships may need more.
      # NumPy's own baseline is above it, so the C side only: the wheel's driver on the smoke
      # problems, checked against the double reference, on Highway's portable target.
      # (The SDK's executable itself: the console command is a Python script, which qemu-user
      # cannot start.)
      cpu=qemu64
      driver=$("$py" -m aclnn_cpu --sdk-dir)/bin/aclnn-cpu-driver
      echo "== [wheel-test qemu-x86_64 -cpu qemu64] the wheel's aclnn-cpu-driver on smoke.txt"
      qx "$driver" --batch smoke.txt --check | tail -1
      report=$(qx "$driver" --op=ce_grad --shape=64x100 --check --perf --reps 1)
      echo "$report" | tail -2
      grep -q "target SCALAR" <<<"$report" ||
        { echo "FAIL: expected the SCALAR target under -cpu qemu64" >&2; exit 1; }
      ;;
    aarch64)
      whl=$(wheel_of aarch64)
      echo "== [wheel-test aarch64] auditwheel show"
      show "$whl"
      root=$(cd "$src" && bash scripts/wheel-aarch64-root.sh)
      # A fresh environment of the arm64 interpreter; the host's pip fills it with arm64 wheels.
      qemu-aarch64 -L "$root" "$root/usr/bin/python3.11" -m venv --without-pip venv-arm
      arm_site=$work/venv-arm/lib/python3.11/site-packages
      "$tools/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
        --platform manylinux_2_35_aarch64 --platform manylinux_2_28_aarch64 \
        --platform manylinux2014_aarch64 --python-version 3.11 --implementation cp --abi cp311 \
        --target "$arm_site" "$whl" pytest
      for cpu in neon sve256 sve512; do
        qcpu=$(arm_cpu $cpu)
        echo "== [wheel-test aarch64 $cpu] QEMU_CPU=$qcpu python -m aclnn_cpu"
        QEMU_CPU=$qcpu qemu-aarch64 -L "$root" venv-arm/bin/python -m aclnn_cpu
        echo "== [wheel-test aarch64 $cpu] test_install.py"
        QEMU_CPU=$qcpu ACLNN_CPU_EXPECT_SITE=$arm_site qemu-aarch64 -L "$root" \
          venv-arm/bin/python -m pytest -q -p no:cacheprovider --noconftest tests/test_install.py
      done
      for cpu in neon sve256; do
        qcpu=$(arm_cpu $cpu)
        echo "== [wheel-test aarch64 $cpu] CANN's examples cross-built against the wheel's SDK" \
          "(set_env.sh)"
        env -i PATH="$PATH" HOME="${HOME:-/root}" QEMU_CPU=$qcpu bash sdk/cann_recipe.sh \
          "$arm_site/aclnn_cpu/sdk" examples "build-cann-arm-$cpu" custom \
          "$work/aarch64-linux-gnu.cmake" qemu-aarch64 -L "$root"
      done
      ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
  echo "== [wheel-test $part] done in $(( $(date +%s) - t0 )) s"
done
