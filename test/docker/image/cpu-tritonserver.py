#!/usr/bin/python3
"""`tritonserver` in the CPU test image: what the extension's `docker run ... IMAGE tritonserver ARGS` starts.

The mounted repository (/models, read-only) says KIND_GPU and the real engine; this machine has neither a GPU nor
the checkpoint. Like the fake docker (test/fake-docker/bind-mount.mjs), the server reads a patched copy: every
config.pbtxt gets KIND_CPU and the test engine (tiny model, but it reads the mounted weights first, so file access
in the container is real). The copy follows the mount for the container's life (a re-rendered config is what the
next load reads). Every other argument reaches the real tritonserver unchanged; its exit code is ours.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

TRITON_HOME = "/opt/pytriton/pytriton/tritonserver"
ENGINE = "mounted_weights_engine:MountedWeightsEngine"
POLL_S = 0.25


def patch_config(text: str) -> str:
    """KIND_GPU (and its gpus list) → KIND_CPU; the engine parameter → the test engine (as patchConfigForTests)."""
    out = re.sub(r"kind:\s*KIND_GPU(\s+gpus:\s*\[[^\]]*\])?", "kind: KIND_CPU", text)
    line = f'parameters {{ key: "engine" value {{ string_value: "{ENGINE}" }} }}'
    pattern = re.compile(r'^parameters \{ key: "engine" value \{ string_value: "[^"]*" \} \}$', re.M)
    return pattern.sub(line, out) if pattern.search(out) else f"{out.rstrip()}\n{line}\n"


def scan(root: str) -> dict:
    """Relative path → 'dir' or a signature that changes when the file is rewritten or replaced."""
    found = {}
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(base, root)
        for d in dirs:
            found[os.path.normpath(os.path.join(rel, d))] = "dir"
        for f in files:
            if f.endswith(".pyc"):
                continue
            key = os.path.normpath(os.path.join(rel, f))
            try:
                st = os.stat(os.path.join(root, key))
            except OSError:
                continue  # vanished between walk and stat: the next pass sees the truth
            found[key] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


class Mirror:
    """Keeps `dest` a patched copy of `source` (files written to a temp name, then renamed: never half read)."""

    def __init__(self, source: str, dest: str):
        self.source, self.dest, self.seen = source, dest, {}

    def sync(self) -> None:
        now = scan(self.source)
        for key, sig in sorted(now.items()):
            target = os.path.join(self.dest, key)
            if sig == "dir":
                os.makedirs(target, exist_ok=True)
            elif self.seen.get(key) != sig:
                try:
                    self.copy(key, target)
                except OSError as e:  # unreadable for this user: said once, as the server would say it
                    print(f"cpu-tritonserver: cannot copy {os.path.join(self.source, key)}: {e}", file=sys.stderr, flush=True)
        for key in sorted(set(self.seen) - set(now), key=len, reverse=True):
            path = os.path.join(self.dest, key)
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else _unlink(path)
        self.seen = now

    def copy(self, key: str, target: str) -> None:
        src = os.path.join(self.source, key)
        with open(src, "rb") as f:
            data = f.read()
        if os.path.basename(key) == "config.pbtxt":
            data = patch_config(data.decode("utf-8")).encode("utf-8")
        tmp = os.path.join(self.dest, ".sync-tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        st = os.stat(src)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))  # Triton compares modification times on load
        os.replace(tmp, target)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def main(argv: list) -> int:
    source = next((a.split("=", 1)[1] for a in argv if a.startswith("--model-repository=")), None)
    args = list(argv)
    mirror = None
    if source:
        dest = os.path.join(os.environ.get("TMPDIR", "/tmp"), "cpu-models")
        os.makedirs(dest, exist_ok=True)
        mirror = Mirror(source, dest)
        mirror.sync()
        args = [f"--model-repository={dest}" if a.startswith("--model-repository=") else a for a in args]
    if not any(a.startswith("--backend-directory=") for a in args):
        args.append(f"--backend-directory={TRITON_HOME}/backends")
    args.append("--allow-gpu-metrics=false")
    child = subprocess.Popen([f"{TRITON_HOME}/bin/tritonserver", *args])
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda n, _f: child.send_signal(n))
    if mirror:
        def follow():
            while child.poll() is None:
                try:
                    mirror.sync()
                except OSError:
                    pass  # one failed pass must not end the container; the next one retries
                threading.Event().wait(POLL_S)
        threading.Thread(target=follow, daemon=True).start()
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
