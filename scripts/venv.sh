#!/usr/bin/env bash
# Creates (once) and prints the path of the project's cached Python virtual environment with
# python/requirements-dev.txt (or the requirements file given as $1) installed: PyTorch from PyPI is about 5 GB and takes minutes to
# install, so the environment lives outside the checkout, in ${ACLNN_CPU_VENV_DIR:-~/.cache/aclnn-cpu},
# under a name derived from the requirements and the Python version, and is reused by every
# clone and CI run on this machine. Progress goes to stderr; stdout is only the path.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
req=${1:-python/requirements-dev.txt}
key=$( { "$python" -c 'import sys; print(sys.version)'; cat "$req"; } | sha256sum | cut -c1-12)
root=${ACLNN_CPU_VENV_DIR:-${HOME:-/root}/.cache/aclnn-cpu}
venv=$root/venv-$key
if [ ! -f "$venv/.complete" ]; then
  echo "== creating the Python environment $venv from $req (PyTorch: a few minutes, ~5 GB)" >&2
  rm -rf "$venv"
  mkdir -p "$root"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
  "$venv/bin/python" -m pip install --quiet -r "$req" >&2
  touch "$venv/.complete"
fi
echo "$venv"
