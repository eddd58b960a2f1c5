"""Test-only: the production native engine marked fill-in-the-middle, so that ../shared/fixtures/glm4-tiny (GLM-4's
architecture and tokenizer, the family of CodeGeeX4-ALL-9B) stands in for CodeGeeX4 in the `infill` tests
(`engine: fim_engine:FimNativeEngine`). The real CodeGeeX4 is marked by its catalog entry (fillInMiddle).
FIM_ENGINE_PROMPT_LOG=<file> appends the ids of every prompt the engine starts to read, one JSON list a line."""
from __future__ import annotations

import json
import os
import threading

from chatglm.engine.native import NativeEngine


class FimNativeEngine(NativeEngine):
    def __init__(self, options):
        super().__init__(options)
        self.fill_in_middle = True
        self._log_lock = threading.Lock()

    def _log(self, chunks) -> None:
        path = os.environ.get("FIM_ENGINE_PROMPT_LOG")
        if path:
            with self._log_lock, open(path, "a", encoding="utf-8") as f:
                for chunk in chunks:
                    if chunk.start == 0:
                        f.write(json.dumps([int(i) for i in chunk.prompt]) + "\n")

    def prefill(self, chunks):
        self._log(chunks)
        return super().prefill(chunks)

    def step_with_chunks(self, chunks, slots, tokens):
        out = super().step_with_chunks(chunks, slots, tokens)
        if out is not None:
            self._log(chunks)
        return out
