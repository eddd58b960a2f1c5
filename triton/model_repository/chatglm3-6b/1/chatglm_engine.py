"""The engine seam: what model.py needs from a language model, and how the configured engine is loaded.

model.py only talks to an `Engine`: it builds prompt ids with the ChatGLM3 chat layout, runs one batched
generation per execute() and decodes text. The production engine is `hf` (chatglm_hf.HFEngine); the config
parameter `engine` may instead name `module:Class` (tests use `tiny_engine:TinyEngine`).
"""
from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Sequence

from chatglm_generation import GenerationObserver, RowResult, RowSettings


@dataclass
class EngineOptions:
    weights_path: str
    dtype: str  # "float16" | "bfloat16" | "float32"
    device: str  # "cpu" or "cuda:N"
    parameters: Dict[str, str] = field(default_factory=dict)  # every config.pbtxt parameter, as strings


class Engine:
    """Interface every engine implements (duck-typed; subclassing is optional)."""

    #: token ids that end an answer (ChatGLM3: eos 2, <|user|> 64795, <|observation|> 64797)
    stop_ids: Sequence[int] = ()

    def prefix_ids(self) -> List[int]:
        """Ids that start every prompt ([gMASK] sop)."""
        raise NotImplementedError

    def message_ids(self, role: str, metadata: str, content: str) -> List[int]:
        """Ids of one message: <|role|> + encode(metadata + "\\n") + encode(content)."""
        raise NotImplementedError

    def assistant_ids(self) -> List[int]:
        """Ids that end the prompt and open the answer (a bare <|assistant|>)."""
        raise NotImplementedError

    def decode(self, ids: Sequence[int]) -> str:
        raise NotImplementedError

    def generate(
        self, prompts: Sequence[Sequence[int]], settings: Sequence[RowSettings], observer: GenerationObserver
    ) -> List[RowResult]:
        """Generates all rows together; reports tokens and per-row completion to `observer` as they happen."""
        raise NotImplementedError

    def close(self) -> None:
        """Releases the model (called from finalize)."""


def load_engine(spec: str, options: EngineOptions):
    """`hf` → the Hugging Face engine; `module:Class` → that class (module importable from sys.path)."""
    if spec == "hf":
        from chatglm_hf import HFEngine

        return HFEngine(options)
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise ValueError(f"engine parameter must be 'hf' or 'module:Class', got {spec!r}")
    _add_pythonpath()
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(options)


def _add_pythonpath() -> None:
    """Triton's Python stub embeds its interpreter without reading PYTHONPATH; honour it for plug-in engines.

    Entries are appended, so they never shadow the model directory or triton_python_backend_utils."""
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and entry not in sys.path:
            sys.path.append(entry)
