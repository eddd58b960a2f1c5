#!/usr/bin/env bash
# Creates .venv for the Python tests and the test Triton server; does nothing when it is already complete.
#  - interpreter: Debian's /usr/bin/python3 (3.11), whose python3-torch (1.13) and python3-numpy come in
#    through --system-site-packages. The Python backend stub we run is the 3.11 one, which embeds the same
#    /usr/lib/x86_64-linux-gnu/libpython3.11.so, so model.py sees exactly these packages.
#  - tritonserver: the real binary (Triton 2.51.0, release 24.10) shipped in the nvidia-pytriton wheel
#    (scripts/requirements-tritonserver.txt), installed without its Python dependencies.
# Complete means scripts/check-python-env.py --serve passes: every pin installed and tritonserver started on an
# empty repository answering /v2 with its version (run with a throwaway HOME, so no first-run state counts).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
check() { env -u TRITONSERVER_HOME .venv/bin/python scripts/check-python-env.py --serve; }  # what we install, not an override

if [ -x .venv/bin/python ] && status=$(check); then
  echo "python test environment already set up: $status"
  exit 0
fi
if [ -L .venv ]; then  # never install into someone else's environment (a worktree sharing the main checkout's)
  echo "setup-python: .venv is a link to $(readlink -f .venv) and incomplete: ${status:-no .venv/bin/python}; set it up there" >&2
  exit 1
fi
[ -x "$PY" ] || { echo "setup-python: $PY not found (apt-get install python3-venv, or run: npm run test:setup)" >&2; exit 1; }
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv --system-site-packages .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r triton/requirements-test.txt
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -r scripts/requirements-tritonserver.txt
TRITON_HOME=$(.venv/bin/python -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("pytriton").origin).parent / "tritonserver")')
PYVER=$(.venv/bin/python -c 'import sys; print(f"{sys.version_info.major}.{sys.version_info.minor}")')
# The python backend looks for its stub next to libtriton_python.so; the wheel keeps one per Python version.
install -m 0755 "$TRITON_HOME/python_backend_stubs/$PYVER/triton_python_backend_stub" "$TRITON_HOME/backends/python/triton_python_backend_stub"
echo "$TRITON_HOME" > .venv/tritonserver-home
status=$(check) || { echo "setup-python: installed, but $status" >&2; exit 1; }
echo "installed the python test environment: $status"
