#!/usr/bin/env bash
# The Python package in the project's cached environment (scripts/venv.sh): `pip install .`
# (an incremental CMake build under build-python/), then the given step:
#   demo   - the training demos: PyTorch's loss and ours (examples/python/train_demo.py), then a
#            language-model head with PyTorch's F.linear + F.cross_entropy and with our fused
#            linear_cross_entropy, losses and peak memory (examples/python/lm_head_demo.py), then
#            a small Llama-shaped Hugging Face model trained unpatched, under
#            aclnn_cpu.torch.install() and with aclnn_cpu.transformers.apply()
#            (examples/python/hf_llama_demo.py)
#   test   - the pytest suite (python/tests)
#   bench  - the loss-step benchmark against PyTorch eager and torch.compile
#            (bench/python_step_bench.py; extra arguments go to it)
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:?usage: scripts/python.sh demo|test|bench [args]}
shift
venv=$(bash scripts/venv.sh)
echo "== [python] pip install . into $venv"
"$venv/bin/python" -m pip install --quiet .
# Run from outside the checkout, so that `import aclnn_cpu` is the installed package.
root=$PWD
cd "${TMPDIR:-/tmp}"
case $step in
  demo)
    "$venv/bin/python" "$root/examples/python/train_demo.py" "$@"
    echo "== [python] examples/python/lm_head_demo.py"
    "$venv/bin/python" "$root/examples/python/lm_head_demo.py"
    echo "== [python] examples/python/hf_llama_demo.py"
    "$venv/bin/python" "$root/examples/python/hf_llama_demo.py" ;;
  test) "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests" "$@" ;;
  bench) "$venv/bin/python" "$root/bench/python_step_bench.py" "$@" ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
