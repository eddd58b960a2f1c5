"""Starts the real tritonserver on CPU for tests (the Python twin of test/support/triton-process.mjs): copies
triton/model_repository, patches the config (KIND_CPU, tiny engine, optional batching overrides and parameters
such as `scheduler`), runs <home>/bin/tritonserver with --backend-directory=<home>/backends on free
loopback ports, with triton/testing on the stub's PYTHONPATH."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = ROOT / "triton" / "model_repository"
TESTING = ROOT / "triton" / "testing"
MODEL = "chatglm3-6b"
TINY_ENGINE = "tiny_engine:TinyEngine"


def triton_home() -> Path:
    if os.environ.get("TRITONSERVER_HOME"):
        return Path(os.environ["TRITONSERVER_HOME"])
    marker = ROOT / ".venv" / "tritonserver-home"
    if not marker.is_file():
        raise RuntimeError("tritonserver is not installed: run scripts/setup-python.sh")
    return Path(marker.read_text().strip())


def _set_parameter(text: str, key: str, value: str) -> str:
    line = f'parameters {{ key: "{key}" value {{ string_value: "{value}" }} }}'
    pattern = re.compile(rf'^parameters \{{ key: "{re.escape(key)}" value \{{ string_value: "[^"]*" \}} \}}$', re.M)
    if pattern.search(text):
        return pattern.sub(lambda _m: line, text)
    return text.rstrip() + "\n" + line + "\n"


def patch_config(text: str, max_batch_size: Optional[int] = None, decoupled: Optional[bool] = None,
                 queue_delay_us: Optional[int] = None, parameters: Optional[Dict[str, str]] = None,
                 engine: str = TINY_ENGINE, instance_count: Optional[int] = None) -> str:
    out = re.sub(r"kind:\s*KIND_GPU(\s+gpus:\s*\[[^\]]*\])?", "kind: KIND_CPU", text)
    if instance_count is not None:  # one CPU group of that many instances, as several GPUs give one per GPU
        out = re.sub(r"^instance_group \[.*\]$", f"instance_group [ {{ count: {instance_count} kind: KIND_CPU }} ]",
                     out, flags=re.M)
    out = _set_parameter(out, "engine", engine)
    if max_batch_size is not None:  # as the extension renders it: also the scheduler's rows
        out = re.sub(r"^max_batch_size:\s*\d+", f"max_batch_size: {max_batch_size}", out, flags=re.M)
        out = _set_parameter(out, "max_active_rows", str(max_batch_size))
        # Triton refuses a warmup sample whose batch_size exceeds max_batch_size (the load fails).
        out = re.sub(r"^(\s*batch_size:\s*)(\d+)", lambda m: f"{m.group(1)}{min(int(m.group(2)), max(1, max_batch_size))}",
                     out, flags=re.M)
    if decoupled is not None:
        out = re.sub(r"decoupled:\s*(true|false)", f"decoupled: {'true' if decoupled else 'false'}", out)
    for key, value in (parameters or {}).items():
        out = _set_parameter(out, key, value)
    if (parameters or {}).get("scheduler") == "per_execute":
        out = _per_execute_queue_delay(out)
    if queue_delay_us is not None:
        out = re.sub(r"max_queue_delay_microseconds:\s*\d+", f"max_queue_delay_microseconds: {queue_delay_us}", out)
    return out


def _per_execute_queue_delay(text: str) -> str:
    """As renderConfig.ts renders per_execute: the queue delay (the committed idle_gather_ms of the continuous
    scheduler) is Triton's dynamic batcher's again, the only batching that scheduler has."""
    pattern = re.compile(r'^parameters \{ key: "idle_gather_ms" value \{ string_value: "([^"]*)" \} \}\n', re.M)
    match = pattern.search(text)
    if match is None:
        return text
    delay = round(float(match.group(1)) * 1000)
    return re.sub(r"max_queue_delay_microseconds:\s*\d+", f"max_queue_delay_microseconds: {delay}", pattern.sub("", text))


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


class TritonServer:
    """A running tritonserver (explicit model control); use as a context manager so it is always stopped."""

    def __init__(self, workdir: Optional[Path] = None, env: Optional[Dict[str, str]] = None, **patch):
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="triton-test-")
        self.workdir = Path(workdir or self._tmp.name)
        self.repository = self.workdir / "repo"
        shutil.copytree(REPOSITORY, self.repository, ignore=shutil.ignore_patterns("__pycache__"))
        cfg = self.repository / MODEL / "config.pbtxt"
        cfg.write_text(patch_config(cfg.read_text(encoding="utf-8"), **patch), encoding="utf-8")
        self.http_port, self.grpc_port, self.metrics_port = free_ports(3)
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.metrics_url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        self.log_path = self.workdir / "tritonserver.log"
        home = triton_home()
        self.args = [
            str(home / "bin" / "tritonserver"),
            f"--model-repository={self.repository}", "--model-control-mode=explicit",
            f"--backend-directory={home / 'backends'}",
            f"--http-port={self.http_port}", "--http-address=127.0.0.1",
            f"--grpc-port={self.grpc_port}", "--grpc-address=127.0.0.1",
            f"--metrics-port={self.metrics_port}", "--metrics-address=127.0.0.1",
            "--allow-gpu-metrics=false", "--log-verbose=0",
        ]
        self.env = {
            **os.environ,
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTING), os.environ.get("PYTHONPATH")])),
            "PYTHONDONTWRITEBYTECODE": "1",
            **(env or {}),
        }
        self.process: Optional[subprocess.Popen] = None

    def __enter__(self) -> "TritonServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 60.0) -> None:
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(self.args, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"tritonserver exited during start:\n{self.log()}")
            try:
                if self.request("GET", "/v2/health/live")[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"tritonserver did not become live:\n{self.log()}")
            time.sleep(0.1)

    def stop(self, timeout: float = 30.0) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            except ProcessLookupError:
                pass
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    # -- HTTP helpers (urllib: no extra dependency)
    def request(self, method: str, path: str, body=None, timeout: float = 120.0):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                return res.status, res.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def load(self, timeout: float = 180.0) -> None:
        status, body = self.request("POST", f"/v2/repository/models/{MODEL}/load", {}, timeout=timeout)
        if status != 200:
            raise RuntimeError(f"load failed ({status}): {body.decode(errors='replace')}\n{self.log()}")

    def unload(self) -> None:
        status, body = self.request("POST", f"/v2/repository/models/{MODEL}/unload", {})
        if status != 200:
            raise RuntimeError(f"unload failed ({status}): {body!r}")

    def model_state(self) -> Dict:
        status, body = self.request("POST", "/v2/repository/index", {})
        for entry in json.loads(body):
            if entry.get("name") == MODEL:
                return entry
        return {}

    def wait_state(self, state: str, timeout: float = 60.0) -> Dict:
        deadline = time.monotonic() + timeout
        while True:
            entry = self.model_state()
            if entry.get("state") == state:
                return entry
            if time.monotonic() > deadline:
                raise AssertionError(f"model did not reach {state}: {entry}\n{self.log()}")
            time.sleep(0.2)

    def stats(self) -> Dict:
        status, body = self.request("GET", f"/v2/models/{MODEL}/stats")
        assert status == 200, body
        return json.loads(body)["model_stats"][0]

    def metrics(self) -> str:
        with urllib.request.urlopen(self.metrics_url, timeout=30) as res:
            return res.read().decode()


def parse_sse(raw: bytes):
    """Events of a /generate_stream body: list of dicts."""
    events = []
    for block in raw.decode("utf-8").split("\n\n"):
        block = block.strip()
        if block.startswith("data:"):
            events.append(json.loads(block[len("data:"):].strip()))
    return events


def stream_together(server: "TritonServer", path: str, bodies: list) -> list:
    """POSTs every body to a /generate_stream path at once (one thread each, so the server can batch them);
    returns (status, events) per body, in order."""
    results = [None] * len(bodies)

    def send(i):
        status, raw = server.request("POST", path, bodies[i])
        results[i] = (status, parse_sse(raw))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
