#!/usr/bin/env python3
"""Checks that .venv holds what the Python tests and the test Triton server need. Run it with .venv/bin/python.

Exit 0 when everything is there (with --serve: prints one line saying what answered); otherwise prints ONE line
naming what is missing and exits 1. Checked: the pins of triton/requirements-test.txt and
scripts/requirements-tritonserver.txt, Debian's torch and numpy (seen through --system-site-packages), and the
tritonserver home ($TRITONSERVER_HOME or the one .venv/tritonserver-home names): binary, Python backend and its
stub, whose shared libraries must all resolve (libpython3.x comes from Debian).
--serve also starts that tritonserver on an empty model repository (loopback, free ports, throwaway HOME) and reads
its version from /v2: the binary is proven to run here, not only to exist.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = [ROOT / "triton" / "requirements-test.txt", ROOT / "scripts" / "requirements-tritonserver.txt"]
DEBIAN_MODULES = {"torch": "python3-torch", "numpy": "python3-numpy"}
TRITON_VERSION = "2.51.0"  # what nvidia-pytriton 0.7.0 ships; the tests and the reference are written against it
SETUP = "bash scripts/setup-python.sh"


class Missing(Exception):
    pass


def pins() -> list[tuple[str, str]]:
    out = []
    for path in REQUIREMENTS:
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?==(\S+)", line)
            if not m:
                raise Missing(f"{path.relative_to(ROOT)}: cannot read the pin '{line}' (name==version expected)")
            out.append((m.group(1), m.group(3)))
    return out


def check_packages() -> list[str]:
    if sys.prefix == sys.base_prefix:
        raise Missing(f"{sys.executable} is not the .venv interpreter ({SETUP})")
    found = []
    for name, want in pins():
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            raise Missing(f"Python package {name}=={want} is not installed in .venv ({SETUP})") from None
        if have != want:
            raise Missing(f".venv has {name} {have}, not {want} ({SETUP})")
        found.append(f"{name} {have}")
    for module, package in DEBIAN_MODULES.items():
        if importlib.util.find_spec(module) is None:
            raise Missing(f"Python module {module} is missing (Debian package {package}: apt-get install {package})")
        found.append(f"{module} {importlib.metadata.version(module)}")
    return found


def triton_home() -> Path:
    if os.environ.get("TRITONSERVER_HOME"):
        home = Path(os.environ["TRITONSERVER_HOME"])
        origin = "TRITONSERVER_HOME"
    else:
        marker = Path(sys.prefix) / "tritonserver-home"
        if not marker.is_file():
            raise Missing(f"tritonserver is not installed: {marker} is missing ({SETUP})")
        home = Path(marker.read_text().strip())
        origin = str(marker)
    need = [home / "bin" / "tritonserver", home / "backends" / "python" / "libtriton_python.so",
            home / "backends" / "python" / "triton_python_backend_stub"]
    for path in need:
        if not os.access(path, os.R_OK):
            raise Missing(f"{path} is missing (tritonserver home from {origin}; {SETUP})")
    for binary in (need[0], need[2]):
        unresolved = unresolved_libraries(binary)
        if unresolved:
            raise Missing(f"{binary.name} cannot load {', '.join(unresolved)} (libpython: apt-get install libpython3.11; or {SETUP})")
    return home


def unresolved_libraries(binary: Path) -> list[str]:
    r = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, timeout=30)
    return [line.split()[0] for line in r.stdout.splitlines() if "not found" in line]


def free_ports(count: int) -> list:
    """`count` different free loopback ports, held open together while they are chosen (one port asked for
    several times in a row can come back twice, and tritonserver then refuses to start)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def serve(home: Path) -> str:
    """Starts tritonserver on an empty repository and returns the version it reports on /v2."""
    with tempfile.TemporaryDirectory(prefix="tritonserver-check-") as tmp:
        repo = Path(tmp) / "models"
        repo.mkdir()
        http, grpc, metrics = free_ports(3)
        args = [str(home / "bin" / "tritonserver"), f"--model-repository={repo}", "--model-control-mode=explicit",
                f"--backend-directory={home / 'backends'}", "--allow-gpu-metrics=false",
                f"--http-port={http}", "--http-address=127.0.0.1", f"--grpc-port={grpc}", "--grpc-address=127.0.0.1",
                f"--metrics-port={metrics}", "--metrics-address=127.0.0.1"]
        env = {**os.environ, "HOME": tmp, "XDG_CONFIG_HOME": f"{tmp}/config", "XDG_CACHE_HOME": f"{tmp}/cache"}
        log = open(Path(tmp) / "log", "w+b")
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    log.seek(0)
                    tail = log.read().decode(errors="replace").strip().splitlines()[-1:]
                    raise Missing(f"tritonserver exited with {proc.returncode} at start: {' '.join(tail)[:300]}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{http}/v2", timeout=2) as r:
                        return json.load(r).get("version", "")
                except OSError:
                    time.sleep(0.1)
            raise Missing("tritonserver did not answer /v2 within 60 s")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()


def main() -> int:
    try:
        packages = check_packages()
        home = triton_home()
        if "--serve" in sys.argv[1:]:
            version = serve(home)
            if version != TRITON_VERSION:
                raise Missing(f"tritonserver reports version {version!r}, not {TRITON_VERSION} ({SETUP})")
            print(f"tritonserver {version} answers on /v2 ({home}/bin/tritonserver); {', '.join(packages)}")
    except Missing as e:
        print(e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
