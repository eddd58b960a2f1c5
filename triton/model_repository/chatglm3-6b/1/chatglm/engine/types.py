"""The engine seam: what model.py and the schedulers need from a language model (chatglm.engine.factory loads
the configured one).

Every engine builds prompt ids with ChatGLM3's chat layout, decodes text and can run one batched generation
(`Engine`, used by the per-execute scheduler). An engine that also decodes step by step over slots of its own KV
cache (`StepEngine`) can be driven by the continuous scheduler. `native` (chatglm.engine.native.NativeEngine) is both;
testing/hf_engine.py's HFEngine (test-only since #29) is an `Engine` only; the config parameter `engine` may instead name `module:Class`
(tests use `tiny_engine:TinyEngine`, the native engine on a tiny random model).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Protocol, Sequence, runtime_checkable

from chatglm.engine.generation import GenerationObserver, RowResult, RowSettings


@dataclass
class EngineOptions:
    weights_path: str
    dtype: str  # "float16" | "bfloat16" | "float32"
    device: str  # "cpu" or "cuda:N"
    parameters: Dict[str, str] = field(default_factory=dict)  # every config.pbtxt parameter, as strings
    max_rows: int = 8  # rows decoded together (KV cache slots of a step engine)
    max_context: Optional[int] = None  # tokens per row; None = the model's own limit
    context_needed: int = 8192  # what the request limits allow per row (prompt budget + answer limit)


@dataclass(frozen=True)
class PrefillChunk:
    """Prompt tokens prompt[start:stop] for the row in `slot`; the slot already holds prompt[:start]."""

    slot: int
    prompt: Sequence[int]
    start: int
    stop: int

    @property
    def complete(self) -> bool:
        return self.stop == len(self.prompt)


class Engine(Protocol):
    """What every engine offers (model.py and the per-execute scheduler)."""

    #: token ids that end an answer (ChatGLM3: eos 2, <|user|> 64795, <|observation|> 64797)
    stop_ids: Sequence[int]

    def prefix_ids(self) -> List[int]:
        """Ids that start every prompt ([gMASK] sop)."""

    def message_ids(self, role: str, metadata: str, content: str) -> List[int]:
        """Ids of one message: <|role|> + encode(metadata + "\\n") + encode(content)."""

    def assistant_ids(self) -> List[int]:
        """Ids that end the prompt and open the answer (a bare <|assistant|>)."""

    def decode(self, ids: Sequence[int]) -> str:
        """Text of token ids."""

    def generate(
        self, prompts: Sequence[Sequence[int]], settings: Sequence[RowSettings], observer: GenerationObserver
    ) -> List[RowResult]:
        """Generates all rows together; reports tokens and per-row completion to `observer` as they happen."""

    def close(self) -> None:
        """Releases the model (called from finalize)."""


@runtime_checkable
class StepEngine(Engine, Protocol):
    """An engine the continuous scheduler drives one step at a time. Rows live in slots of a preallocated KV
    cache; a slot is free again as soon as its row is closed. Logits are float32 [rows, vocabulary]."""

    device: object  # torch.device of the logits
    generator: object  # torch.Generator for sampling on that device
    max_rows: int
    max_context: int

    def open_row(self) -> int:
        """A free slot (raises if all max_rows are taken)."""

    def close_row(self, slot: int) -> None:
        """Frees the slot for the next row."""

    def prefill(self, chunks: Sequence[PrefillChunk]):
        """Runs each chunk into its slot; returns the logits after each chunk's last token (a chunk that does not
        complete its prompt may get zeros: its logits are never sampled)."""

    def decode_step(self, slots: Sequence[int], tokens: Sequence[int]):
        """Appends one token to each slot's row; returns the logits for the token after it."""

    def reset(self) -> None:
        """Frees every slot (after a failed step: the cache's content is not trusted any more)."""


class TokenizerPrompts:
    """Prompt ids and text through a ChatGLM3 tokenizer's own builders (`self.tokenizer`): shared by the engines."""

    tokenizer = None

    def chat_stop_ids(self) -> tuple:
        tokenizer = self.tokenizer
        eos = getattr(tokenizer, "eos_token_id", None)
        return (int(eos if eos is not None else 2), int(tokenizer.get_command("<|user|>")),
                int(tokenizer.get_command("<|observation|>")))

    def infill_stop_ids(self) -> tuple:
        """Fill-in-the-middle (CodeGeeX4) also ends at <|assistant|>, as Continue's CodeGeeX4 template stops."""
        return self.chat_stop_ids() + (int(self.tokenizer.get_command("<|assistant|>")),)

    def prefix_ids(self) -> List[int]:
        return list(self.tokenizer.get_prefix_tokens())

    def text_ids(self, text: str) -> List[int]:
        """Plain text (special-token text inside it stays text)."""
        return list(self.tokenizer.encode(text))

    def special_id(self, name: str) -> int:
        return int(self.tokenizer.get_command(name))

    def added_token_id(self, name: str) -> Optional[int]:
        """The id the weights' tokenizer files give `name` as an added token, else None (it is then plain text)."""
        lookup = getattr(self.tokenizer, "added_token_id", None)
        found = lookup(name) if callable(lookup) else None
        return None if found is None else int(found)

    def message_ids(self, role: str, metadata: str, content: str) -> List[int]:
        return list(self.tokenizer.build_single_message(role, metadata, content))

    def assistant_ids(self) -> List[int]:
        return [int(self.tokenizer.get_command("<|assistant|>"))]

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids))


def is_step_engine(engine) -> bool:
    return isinstance(engine, StepEngine)
