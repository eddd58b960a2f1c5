"""The test engine that runs the mounted checkpoint: the production native engine with everything from
options.weights_path (config.json, tokenizer, weights: the production loaders, no remote code), in float32 on the
CPU, for a tiny real checkpoint such as ../shared/fixtures/glm4-tiny. The e2e GLM-4 journey serves it through the
fake docker (FAKE_DOCKER_ENGINE=checkpoint_engine:CheckpointEngine), so what reaches the model is the real GLM-4
prompt layout built by the real tokenizer of that folder.

Test-only knobs, as the tiny engine's (triton/testing/tiny_engine.py): TINY_ENGINE_PROMPT_LOG=<file> appends one
JSON line per prompt (the decoded prompt with its special tokens, its ids); TINY_ENGINE_SCRIPTS=<json file> holds
[{"match": <text>, "answer": <text>}]: a chat row whose last user message contains a match answers "\\n" (the metadata line)
then that text, forced token by token, then end-of-text; other rows sample freely from the random weights.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Dict, List, Optional, Sequence

import torch

from chatglm.engine.native import NativeEngine
from chatglm.engine.types import EngineOptions, PrefillChunk

FORBIDDEN = -1e9  # finite: the production NaN/inf guard must not see a forced row as broken


class CheckpointEngine(NativeEngine):
    def __init__(self, options: EngineOptions = None):
        torch.set_num_threads(max(1, int(os.environ.get("TINY_ENGINE_THREADS", "1"))))
        if options is None or not options.weights_path:
            raise ValueError("checkpoint_engine needs weights_path: the folder of the checkpoint to run")
        options.device = "cpu"
        options.dtype = "float32"
        super().__init__(options, sampling_seed=1234)
        self._forced: Dict[int, List[int]] = {}  # slot -> tokens still to force (scripted rows)
        self._log_lock = threading.Lock()

    # -- the production steps, with the prompt log and scripted answers
    def prefill(self, chunks: Sequence[PrefillChunk]) -> torch.Tensor:
        self._admit(chunks)
        return self._force([c.slot for c in chunks], super().prefill(chunks), [c.complete for c in chunks])

    def decode_step(self, slots: Sequence[int], tokens: Sequence[int]) -> torch.Tensor:
        self._took(slots)
        return self._force(slots, super().decode_step(slots, tokens))

    def step_with_chunks(self, chunks: Sequence[PrefillChunk], slots: Sequence[int], tokens: Sequence[int]):
        out = super().step_with_chunks(chunks, slots, tokens)
        if out is None:  # the caller runs prefill and decode_step, which admit and take
            return None
        self._admit(chunks)
        self._took(slots)
        first_logits, logits = out
        return self._force([c.slot for c in chunks if c.complete], first_logits), self._force(slots, logits)

    def close_row(self, slot: int) -> None:
        self._forced.pop(slot, None)
        super().close_row(slot)

    def reset(self) -> None:
        self._forced.clear()
        super().reset()

    # -- test-only parts
    def _admit(self, chunks: Sequence[PrefillChunk]) -> None:
        for c in chunks:
            if c.start == 0:
                text = self.tokenizer.decode(c.prompt)
                self._log_prompt(text, c.prompt)
                script = self._scripted_answer(text.rsplit("<|user|>", 1)[-1])  # the last user message on
                if script is not None:
                    self._forced[c.slot] = self.tokenizer.encode("\n") + self.tokenizer.encode(script) + [self.tokenizer.eos_token_id]

    def _took(self, slots: Sequence[int]) -> None:
        """Each slot fed a token has used its forced one (the next logits force the next)."""
        for s in slots:
            forced = self._forced.get(s)
            if forced:
                forced.pop(0)

    def _force(self, slots: Sequence[int], logits: torch.Tensor, wanted: Optional[Sequence[bool]] = None) -> torch.Tensor:
        if not any(self._forced.get(s) for s in slots):
            return logits
        logits = logits.clone()
        for i, s in enumerate(slots):
            forced = self._forced.get(s)
            if forced and (wanted is None or wanted[i]):
                logits[i] = FORBIDDEN
                logits[i, forced[0]] = 0.0
        return logits

    def _scripted_answer(self, prompt_text: str) -> Optional[str]:
        path = os.environ.get("TINY_ENGINE_SCRIPTS")
        if not path or not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as f:
            scripts = json.load(f)
        for script in scripts:
            if script["match"] in prompt_text:
                return script["answer"]
        return None

    def _log_prompt(self, text: str, ids: Sequence[int]) -> None:
        path = os.environ.get("TINY_ENGINE_PROMPT_LOG")
        if path:
            with self._log_lock, open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"prompt": text, "ids": [int(i) for i in ids]}, ensure_ascii=False) + "\n")
