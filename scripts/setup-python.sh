#!/usr/bin/env bash
# Creates .venv for the Python tests and the test Triton server (idempotent).
#  - interpreter: Debian's /usr/bin/python3 (3.11), whose python3-torch (1.13) and python3-numpy come in
#    through --system-site-packages. The Python backend stub we run is the 3.11 one, which embeds the same
#    /usr/lib/x86_64-linux-gnu/libpython3.11.so, so model.py sees exactly these packages.
#  - tritonserver: the real binary (Triton 2.51.0, release 24.10) shipped in the nvidia-pytriton wheel,
#    installed without its Python dependencies (we use the binary, not PyTriton's API).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv --system-site-packages .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r triton/requirements-test.txt
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps nvidia-pytriton==0.7.0
TRITON_HOME=$(.venv/bin/python -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("pytriton").origin).parent / "tritonserver")')
PYVER=$(.venv/bin/python -c 'import sys; print(f"{sys.version_info.major}.{sys.version_info.minor}")')
# The python backend looks for its stub next to libtriton_python.so; the wheel keeps one per Python version.
install -m 0755 "$TRITON_HOME/python_backend_stubs/$PYVER/triton_python_backend_stub" "$TRITON_HOME/backends/python/triton_python_backend_stub"
echo "$TRITON_HOME" > .venv/tritonserver-home
echo "tritonserver: $TRITON_HOME/bin/tritonserver ($("$TRITON_HOME/bin/tritonserver" --version 2>/dev/null | head -1 || true))"
