"""The test engine: the production native engine (ChatGLM forward pass, KV cache, both schedulers) on a tiny
random ChatGLM3-architecture model, for the test server, the benchmarks and the fake docker on CPU.

- Model: chatglm.engine.native.NativeEngine with a 2-layer, 64-wide config (4 heads, 2 KV groups, kv_channels 16,
  SwiGLU 128, RMSNorm, qkv bias) and seeded random weights under ChatGLM3's parameter names, in float64 (so
  batched and unbatched greedy answers agree exactly).
- Tokenizer: byte level (ids 3..258 = bytes 0..255) plus ChatGLM3-like specials ([gMASK], sop, <|system|>,
  <|user|>, <|assistant|>, <|observation|>, ...) and ChatGLM3's prompt layout:
  [gMASK] sop + per message <|role|> + encode(metadata + "\\n") + encode(content), ending with <|assistant|>.
- Test-only output shaping (what a trained chat model does and random weights do not): every answer starts with
  the empty metadata line ("\\n"), then only valid UTF-8 (ASCII and 3-byte CJK characters, so characters span
  several tokens) until max_new_tokens; it never stops by itself unless TINY_ENGINE_STOP_AFTER is set. The shaping
  masks logits per slot; sampling, stopping and cancellation are the production code's.

Environment knobs (all optional, test-only): TINY_ENGINE_PROMPT_LOG=<file> appends one JSON line per row with the
decoded prompt and the messages it contained; TINY_ENGINE_STEP_DELAY_MS=<ms> makes every forward pass (prefill
or decode step) last at least that long: a paced stand-in for a GPU step; TINY_ENGINE_SEED=<int> changes the weights; TINY_ENGINE_STOP_AFTER=<n>
makes every row emit <|user|> after n answer tokens (finish_reason "stop"; a raw continuation, `raw_prompt`, whose
prompt has no <|assistant|> and whose answer no metadata line, emits the end-of-text token instead); TINY_ENGINE_FAIL_MARKER=<text> makes a
decode step fail once a row whose prompt contains <text> has 3 tokens (the engine-failure path);
TINY_ENGINE_SCRIPTS=<json file> holds [{"match": <text>, "answer": <markdown>}]: a row whose last user message
contains a match answers with that text, forced token by token (byte tokens, so a CJK character spans three) and
then stops, for pictures that show a readable answer; the file is read at each admission, so a run may change it;
TINY_ENGINE_THREADS=<n> torch threads (default 1); TINY_ENGINE_FILL_IN_MIDDLE=1 takes `infill` requests (code
completion), as CodeGeeX4 does (the catalog's fillInMiddle), so that completions can be tested with this engine
(a completion's answer has no metadata line; scripts match its user text too); TINY_ENGINE_STEP_LOG=<file> appends
one JSON line per forward pass with the kind of each row in it (decoding rows, prompt chunks: "completion" or
"chat"), to count the batch composition per step.
Injected faults of one request (chatglm/serving/faults.py's kinds), each keyed by a text in the row's prompt:
TINY_ENGINE_OOM_MARKER=<text> makes a prefill that holds that row's chunk raise CUDA's out-of-memory error;
TINY_ENGINE_OVERFLOW_MARKER=<text> makes that row's logits 3e38 (finite, but any temperature below 1 overflows them:
the sampler's invalid-row path); TINY_ENGINE_DEVICE_FAULT_MARKER=<text> makes a decode step raise a CUDA illegal
memory access once that row has 3 tokens (the model-failed path); TINY_ENGINE_DECODE_OOM_MARKER=<text> makes the
decode step raise CUDA's out-of-memory error once, when that row has 3 tokens (the step is retried).
"""
from __future__ import annotations

import json
import os
import threading
import time
from typing import Dict, List, Optional, Sequence

import torch

from chatglm.model.checkpoint import ChatGLMConfig, parameter_shapes
from chatglm.engine.types import EngineOptions, PrefillChunk
from chatglm.engine.native import NativeEngine

BYTE_OFFSET = 3
SPECIALS = ["[MASK]", "[gMASK]", "[sMASK]", "sop", "eop", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"]
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2
VOCAB_SIZE = BYTE_OFFSET + 256 + len(SPECIALS)
NEWLINE_ID = BYTE_OFFSET + ord("\n")
MASKED = -1e9  # finite: the production NaN/inf guard must not see a shaped row as broken
TINY_CONFIG = ChatGLMConfig(num_layers=2, hidden_size=64, num_attention_heads=4, kv_channels=16, multi_query_group_num=2,
                            ffn_hidden_size=128, padded_vocab_size=VOCAB_SIZE, layernorm_epsilon=1e-5,
                            add_qkv_bias=True, post_layer_norm=True, seq_length=8192)


class TinyTokenizer:
    """Byte-level tokenizer with ChatGLM3's special tokens and chat-message builder."""

    eos_token_id = EOS_ID

    def __init__(self):
        self.special_ids = {name: BYTE_OFFSET + 256 + i for i, name in enumerate(SPECIALS)}
        self.special_ids.update({"<pad>": PAD_ID, "<bos>": BOS_ID, "<eos>": EOS_ID})
        self.names = {v: k for k, v in self.special_ids.items()}

    def get_command(self, name: str) -> int:
        return self.special_ids[name]

    def encode(self, text: str) -> List[int]:
        return [BYTE_OFFSET + b for b in text.encode("utf-8")]

    def get_prefix_tokens(self) -> List[int]:
        return [self.get_command("[gMASK]"), self.get_command("sop")]

    def build_single_message(self, role: str, metadata: str, message: str) -> List[int]:
        assert role in ("system", "user", "assistant", "observation"), role
        return [self.get_command(f"<|{role}|>")] + self.encode(f"{metadata}\n") + self.encode(message)

    def decode(self, ids: Sequence[int]) -> str:
        out = bytearray()
        for i in ids:
            i = int(i)
            if BYTE_OFFSET <= i < BYTE_OFFSET + 256:
                out.append(i - BYTE_OFFSET)
            elif i in self.names and i not in (PAD_ID,):
                out.extend(self.names[i].encode())
        return out.decode("utf-8", errors="replace")


def random_weights(config: ChatGLMConfig, seed: int) -> Dict[str, torch.Tensor]:
    """Seeded random tensors under ChatGLM3's parameter names (norm weights near 1, small biases)."""
    generator = torch.Generator().manual_seed(seed)
    tensors = {}
    for name, shape in parameter_shapes(config).items():
        noise = torch.randn(shape, generator=generator, dtype=torch.float64)
        if name.endswith("layernorm.weight"):
            tensors[name] = 1.0 + 0.1 * noise
        elif name.endswith(".bias"):
            tensors[name] = 0.05 * noise
        elif name == "transformer.output_layer.weight":
            tensors[name] = 0.3 * noise  # peaked enough that greedy answers are not dominated by near-ties
        else:
            tensors[name] = 0.08 * noise
    return tensors


def _allowed(first: int, last: int) -> torch.Tensor:
    mask = torch.zeros(VOCAB_SIZE, dtype=torch.bool)
    mask[BYTE_OFFSET + first:BYTE_OFFSET + last] = True
    return mask


# Printable ASCII, newlines and 3-byte CJK lead bytes (E4..E9) may start a character; 80..BF continue one.
START_ALLOWED = _allowed(0x20, 0x7F) | _allowed(0xE4, 0xEA)
START_ALLOWED[NEWLINE_ID] = True
CONTINUATION_ALLOWED = _allowed(0x80, 0xC0)


def _forced(token: int) -> torch.Tensor:
    mask = torch.zeros(VOCAB_SIZE, dtype=torch.bool)
    mask[token] = True
    return mask


# Additive masks by row state: 0 where a token is allowed, MASKED elsewhere. A small bonus on the CJK lead bytes
# makes multi-byte characters common (about half of a greedy answer), as in a Chinese assistant's answers, so
# that every answer, greedy ones too, exercises characters split over tokens.
START_CHARACTER, CONTINUE_CHARACTER, METADATA_LINE, STOP = range(4)
CJK_BONUS = 3.0
SHAPES = torch.stack([torch.zeros(VOCAB_SIZE, dtype=torch.float64).masked_fill_(~allowed, MASKED) for allowed in (
    START_ALLOWED, CONTINUATION_ALLOWED, _forced(NEWLINE_ID), _forced(BYTE_OFFSET + 256 + SPECIALS.index("<|user|>")))])
SHAPES[START_CHARACTER, BYTE_OFFSET + 0xE4:BYTE_OFFSET + 0xEA] += CJK_BONUS


def _forced_shape(token: int) -> torch.Tensor:
    return torch.full((VOCAB_SIZE,), MASKED, dtype=torch.float64).index_fill_(0, torch.tensor([token]), 0.0)


RAW_STOP = _forced_shape(EOS_ID)


class _SlotShape:
    """Per-slot state of the output shaping: tokens produced so far and UTF-8 continuation bytes still owed."""

    def __init__(self, fails: bool, script: Optional[List[int]] = None, faults: frozenset = frozenset()):
        self.produced = 0
        self.pending = 0
        self.fails = fails
        self.script = script
        self.faults = faults  # injected: "oom", "overflow", "device", "decode-oom"
        self.oom_raised = False
        self.completion = False  # an infill prompt (set at admission)
        self.raw = False  # a raw continuation's prompt (no <|assistant|> at its end; set at admission)

    def took(self, token: int) -> None:
        self.produced += 1
        lead = BYTE_OFFSET + 0xE0 <= token < BYTE_OFFSET + 0xF0
        self.pending = 2 if lead else max(0, self.pending - 1)


class TinyEngine(NativeEngine):
    def __init__(self, options: EngineOptions = None):
        torch.set_num_threads(max(1, int(os.environ.get("TINY_ENGINE_THREADS", "1"))))
        options = options or EngineOptions(weights_path="", dtype="float32", device="cpu")
        options.device = "cpu"
        seed = int(os.environ.get("TINY_ENGINE_SEED", "0"))
        super().__init__(options, tokenizer=TinyTokenizer(), config=TINY_CONFIG,
                         tensors=random_weights(TINY_CONFIG, seed), dtype=torch.float64, sampling_seed=1234)
        self._shapes: Dict[int, _SlotShape] = {}
        self._log_lock = threading.Lock()
        self.fill_in_middle = os.environ.get("TINY_ENGINE_FILL_IN_MIDDLE") == "1"

    # -- the production steps, plus shaping and pacing
    def prefill(self, chunks: Sequence[PrefillChunk]) -> torch.Tensor:
        started = time.monotonic()
        self._admit(chunks)
        logits = super().prefill(chunks)
        self._log_step((), chunks)
        self._pace(started)
        return self._shape([c.slot for c in chunks], logits)

    def decode_step(self, slots: Sequence[int], tokens: Sequence[int]) -> torch.Tensor:
        started = time.monotonic()
        for s in slots:  # before any row takes its token: the retried step is the same step
            shape = self._shapes[s]
            if "decode-oom" in shape.faults and shape.produced == 3 and not shape.oom_raised:
                shape.oom_raised = True
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 MiB (injected: TINY_ENGINE_DECODE_OOM_MARKER)")
        self._took(slots, tokens)
        logits = super().decode_step(slots, tokens)
        self._log_step(slots, ())
        self._pace(started)
        return self._shape(slots, logits)

    def step_with_chunks(self, chunks: Sequence[PrefillChunk], slots: Sequence[int], tokens: Sequence[int]):
        started = time.monotonic()
        self._admit(chunks, log=False)  # an injected out-of-memory error comes before anything ran
        out = super().step_with_chunks(chunks, slots, tokens)
        if out is None:  # the caller runs prefill and decode_step, which admit and log the chunks
            return None
        self._log_admitted(chunks)
        self._took(slots, tokens)  # an injected failure of the step: after its forward pass, which it then fails
        self._log_step(slots, chunks)
        self._pace(started)  # one forward pass: paced once
        first_logits, logits = out
        return self._shape([c.slot for c in chunks if c.complete], first_logits), self._shape(slots, logits)

    def _admit(self, chunks: Sequence[PrefillChunk], log: bool = True) -> None:
        marker = os.environ.get("TINY_ENGINE_FAIL_MARKER", "")
        for c in chunks:
            if c.start == 0:
                text = self.decode(c.prompt)
                faults = frozenset(kind for kind, key in (("oom", "TINY_ENGINE_OOM_MARKER"), ("overflow", "TINY_ENGINE_OVERFLOW_MARKER"),
                                                          ("device", "TINY_ENGINE_DEVICE_FAULT_MARKER"),
                                                          ("decode-oom", "TINY_ENGINE_DECODE_OOM_MARKER"))
                                   if os.environ.get(key) and os.environ[key] in text)
                self._shapes[c.slot] = _SlotShape(bool(marker) and marker in text, self._scripted_answer(c.prompt), faults)
                self._shapes[c.slot].completion = "<|code_middle|>" in text  # an infill prompt: no metadata line
                self._shapes[c.slot].raw = not c.prompt or int(c.prompt[-1]) != self.tokenizer.get_command("<|assistant|>")
        if log:
            self._log_admitted(chunks)
        if any("oom" in self._shapes[c.slot].faults for c in chunks):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.50 GiB (injected: TINY_ENGINE_OOM_MARKER)")

    def _log_admitted(self, chunks: Sequence[PrefillChunk]) -> None:
        for c in chunks:
            if c.start == 0:
                self._log_prompt(c.prompt)

    def _took(self, slots: Sequence[int], tokens: Sequence[int]) -> None:
        for slot, token in zip(slots, tokens):
            self._shapes[slot].took(int(token))
        if any(self._shapes[s].fails and self._shapes[s].produced >= 3 for s in slots):
            raise RuntimeError("injected engine failure (TINY_ENGINE_FAIL_MARKER)")
        if any("device" in self._shapes[s].faults and self._shapes[s].produced >= 3 for s in slots):
            raise RuntimeError("CUDA error: an illegal memory access was encountered (injected: TINY_ENGINE_DEVICE_FAULT_MARKER)")

    def close_row(self, slot: int) -> None:
        self._shapes.pop(slot, None)
        super().close_row(slot)

    def reset(self) -> None:
        self._shapes.clear()
        super().reset()

    def _shape(self, slots: Sequence[int], logits: torch.Tensor) -> torch.Tensor:
        """Adds each row's mask (one of SHAPES, by the row's state) to its logits."""
        if not slots:
            return logits
        stop_after = int(os.environ.get("TINY_ENGINE_STOP_AFTER", "0") or 0)
        masks = []
        for slot in slots:
            shape = self._shapes[slot]
            lead = 0 if shape.completion or shape.raw else 1  # a completion or raw continuation has no metadata line
            stop = RAW_STOP if shape.raw and not shape.completion else SHAPES[STOP]  # raw text ends at end-of-text
            if shape.produced < lead:
                masks.append(SHAPES[METADATA_LINE])  # the (empty) metadata line ChatGLM3 starts every answer with
            elif shape.script is not None:
                index = shape.produced - lead
                masks.append(_forced_shape(shape.script[index]) if index < len(shape.script) else stop)
            elif stop_after and shape.produced - lead >= stop_after:
                masks.append(stop)
            else:
                masks.append(SHAPES[CONTINUE_CHARACTER if shape.pending else START_CHARACTER])
        shaped = logits + torch.stack(masks).to(logits.dtype)
        for i, slot in enumerate(slots):
            if "overflow" in self._shapes[slot].faults:
                shaped[i] = 3e38  # finite in float32; divided by any temperature below 1 it is not
        return shaped

    def _scripted_answer(self, prompt: Sequence[int]) -> Optional[List[int]]:
        """The tokens of the first TINY_ENGINE_SCRIPTS answer whose match the row's last user message contains."""
        path = os.environ.get("TINY_ENGINE_SCRIPTS")
        if not path or not os.path.exists(path):
            return None
        users = [m["content"] for m in _split_messages(self.tokenizer, prompt) if m["role"] == "user"]
        if not users:
            return None
        with open(path, encoding="utf-8") as f:
            scripts = json.load(f)
        for script in scripts:
            if script["match"] in users[-1]:
                return self.tokenizer.encode(script["answer"])
        return None

    @staticmethod
    def _pace(started: float) -> None:
        """Pads a forward pass to TINY_ENGINE_STEP_DELAY_MS: like a GPU step, which costs about the same for 1 or 8
        rows, the tiny model's own (CPU, batch-dependent) time is hidden inside it."""
        delay = float(os.environ.get("TINY_ENGINE_STEP_DELAY_MS", "0") or 0) / 1000.0
        remaining = delay - (time.monotonic() - started)
        if remaining > 0:
            time.sleep(remaining)

    def _log_step(self, slots: Sequence[int], chunks: Sequence[PrefillChunk]) -> None:
        """TINY_ENGINE_STEP_LOG: one JSON line per forward pass, the kind of each row in it ("completion": an infill
        prompt, else "chat"): decoding rows and prompt chunks."""
        path = os.environ.get("TINY_ENGINE_STEP_LOG")
        if not path:
            return
        kind = lambda slot: "completion" if self._shapes[slot].completion else "chat"  # noqa: E731
        line = json.dumps({"decode": [kind(s) for s in slots], "prefill": [kind(c.slot) for c in chunks]})
        with self._log_lock, open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def _log_prompt(self, ids: Sequence[int]) -> None:
        path = os.environ.get("TINY_ENGINE_PROMPT_LOG")
        if path:
            text = self.decode(ids)
            with self._log_lock, open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"prompt": text, "messages": _split_messages(self.tokenizer, ids), "ids": list(ids)},
                                   ensure_ascii=False) + "\n")


def _split_messages(tokenizer: TinyTokenizer, ids: Sequence[int]) -> List[dict]:
    """Recovers [{role, metadata, content}] from prompt ids (what the model actually received)."""
    roles = {tokenizer.get_command(f"<|{r}|>"): r for r in ("system", "user", "assistant", "observation")}
    messages, current = [], None
    for i in ids:
        if i in roles:
            current = {"role": roles[i], "ids": []}
            messages.append(current)
        elif current is not None:
            current["ids"].append(i)
    out = []
    for m in messages:
        text = tokenizer.decode(m["ids"])
        metadata, _, content = text.partition("\n")
        out.append({"role": m["role"], "metadata": metadata, "content": content})
    return out
