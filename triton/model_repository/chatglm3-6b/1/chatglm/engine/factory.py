"""Loads the engine that config.pbtxt's `engine` parameter names. Apart from chatglm.engine.types so that the
engines import their types without importing each other."""
from __future__ import annotations

import importlib
import os
import sys

from chatglm.engine.types import EngineOptions


def load_engine(spec: str, options: EngineOptions):
    """`native` → the native engine; `module:Class` → that class (module importable from sys.path or
    PYTHONPATH). `hf` is refused: it ran Python files from the weights folder (trust_remote_code)."""
    if spec == "native":
        _add_pythonpath()  # packages installed beside the stub's own (the tests' virtual environment)
        from chatglm.engine.native import NativeEngine

        return NativeEngine(options)
    if spec == "hf":
        raise ValueError("engine 'hf' is no longer served: it ran Python files from the weights folder "
                         "(transformers' trust_remote_code). Set the engine to 'native' (the default)")
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise ValueError(f"engine parameter must be 'native' or 'module:Class', got {spec!r}")
    _add_pythonpath()
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(options)


def _add_pythonpath() -> None:
    """Triton's Python stub embeds its interpreter without reading PYTHONPATH; honour it for plug-in engines.

    Entries are appended, so they never shadow the model directory or triton_python_backend_utils."""
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and entry not in sys.path:
            sys.path.append(entry)
