"""The CPU test image's engine: the tiny test engine (triton/testing/tiny_engine.py), after reading the mounted
weights folder the way the real engine would, as the container's user. A file the server's user cannot read, a
missing folder or a link that does not resolve inside the container fails the load with the real OS error."""
import os

from tiny_engine import TinyEngine


def read_weights(folder: str) -> None:
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"weights folder {folder} does not exist in the container")
    for base, _dirs, files in os.walk(folder, followlinks=True):
        for name in files:
            with open(os.path.join(base, name), "rb") as f:  # raises PermissionError naming the file
                f.read(1)


class MountedWeightsEngine(TinyEngine):
    def __init__(self, options=None):
        if options is not None and options.weights_path:
            read_weights(options.weights_path)
        super().__init__(options)
