"""A tiny, real torch language model behind the engine seam, for tests and benchmarks on CPU.

- Tokenizer: byte level (ids 3..258 = bytes 0..255) plus ChatGLM3-like specials ([gMASK], sop, <|system|>,
  <|user|>, <|assistant|>, <|observation|>, ...) and ChatGLM3's prompt layout:
  [gMASK] sop + per message <|role|> + encode(metadata + "\\n") + encode(content), ending with <|assistant|>.
- Model: 2 transformer layers, 64 wide, seeded random weights, KV cache, left padding with attention mask
  and position ids. Finished rows are dropped from the batch (their cache rows are freed).
- Like ChatGLM3 it starts every answer with the empty metadata line ("\\n"); after that it writes valid UTF-8
  (ASCII and 3-byte CJK characters, so characters span several tokens) until its max_new_tokens; it never
  stops by itself unless TINY_ENGINE_STOP_AFTER is set.
- Sampling, stopping and cancellation use the same code as the production engine (chatglm_generation).

Environment knobs (all optional, test-only): TINY_ENGINE_PROMPT_LOG=<file> appends one JSON line per row with
the decoded prompt and the messages it contained; TINY_ENGINE_STEP_DELAY_MS=<ms> sleeps per decode step;
TINY_ENGINE_SEED=<int> changes the weights; TINY_ENGINE_STOP_AFTER=<n> makes every row emit <|user|> after
n answer tokens (to test finish_reason "stop").
"""
from __future__ import annotations

import json
import math
import os
import threading
import time
from typing import List, Sequence

import torch
from torch import nn

from chatglm_generation import BatchTracker, RowWarper, guard_invalid_scores, left_pad

BYTE_OFFSET = 3
SPECIALS = ["[MASK]", "[gMASK]", "[sMASK]", "sop", "eop", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"]
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2
VOCAB_SIZE = BYTE_OFFSET + 256 + len(SPECIALS)
NEWLINE_ID = BYTE_OFFSET + ord("\n")


class TinyTokenizer:
    """Byte-level tokenizer with ChatGLM3's special tokens and chat-message builder."""

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


class _Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x, bias, cache, start: int):
        """Writes this step's keys/values into the preallocated cache at [start, start+t) and attends to all."""
        b, t, w = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, h, w // h).permute(2, 0, 3, 1, 4)
        k_cache, v_cache = cache
        k_cache[:, :, start:start + t] = k
        v_cache[:, :, start:start + t] = v
        k, v = k_cache[:, :, :start + t], v_cache[:, :, :start + t]
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(w // h) + bias, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, w))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    """Decoder-only transformer; sinusoidal positions from explicit position ids (like ChatGLM's left padding)."""

    def __init__(self, seed: int = 0, width: int = 64, layers: int = 2, heads: int = 4):
        super().__init__()
        torch.manual_seed(seed)
        self.width = width
        self.embed = nn.Embedding(VOCAB_SIZE, width)
        self.blocks = nn.ModuleList(_Block(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, VOCAB_SIZE, bias=False)
        with torch.no_grad():  # peaked enough that greedy answers are not dominated by near-ties
            self.head.weight.mul_(4.0)
        # Like a trained chat model it only writes valid UTF-8 text: printable ASCII, newlines and 3-byte CJK
        # characters (lead bytes E4..E9, then two continuation bytes), so multi-byte characters span tokens.
        start = torch.zeros(VOCAB_SIZE, dtype=torch.bool)
        start[BYTE_OFFSET + 0x20:BYTE_OFFSET + 0x7F] = True
        start[NEWLINE_ID] = True
        start[BYTE_OFFSET + 0xE4:BYTE_OFFSET + 0xEA] = True
        continuation = torch.zeros(VOCAB_SIZE, dtype=torch.bool)
        continuation[BYTE_OFFSET + 0x80:BYTE_OFFSET + 0xC0] = True
        self.register_buffer("start_allowed", start)
        self.register_buffer("continuation_allowed", continuation)

    def positions(self, pos: torch.Tensor) -> torch.Tensor:
        half = self.width // 2
        freq = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float64) / half)
        angle = pos.to(torch.float64).unsqueeze(-1) * freq
        return torch.cat([angle.sin(), angle.cos()], dim=-1).to(self.embed.weight.dtype)

    def new_cache(self, batch: int, capacity: int) -> list:
        """Key/value buffers for `capacity` positions (no per-step concatenation)."""
        block = self.blocks[0]
        shape = (batch, block.heads, capacity, self.width // block.heads)
        dtype = self.embed.weight.dtype
        return [(torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)) for _ in self.blocks]

    def forward(self, ids, pos, mask, cache: list, start: int):
        """ids/pos [B,T] new tokens at cache positions [start, start+T); mask [B, start+T]; returns last logits."""
        b, t = ids.shape
        s = start + t
        x = self.embed(ids) + self.positions(pos)
        causal = torch.ones(t, s, dtype=torch.bool).tril(diagonal=start)
        allowed = causal.unsqueeze(0) & mask.bool().unsqueeze(1)
        # A large finite negative (not -inf) so fully padded query rows stay finite.
        bias = torch.where(allowed, 0.0, -1e9).to(x.dtype).unsqueeze(1)
        for block, layer_cache in zip(self.blocks, cache):
            x = block(x, bias, layer_cache, start)
        return self.head(self.norm(x[:, -1, :]))

    def restrict(self, logits: torch.Tensor, pending: torch.Tensor) -> torch.Tensor:
        """Masks logits to valid UTF-8 continuations; `pending[b]` = continuation bytes row b still owes."""
        allowed = torch.where(pending.unsqueeze(1) > 0, self.continuation_allowed, self.start_allowed)
        return logits.masked_fill(~allowed, -1e9)


class TinyEngine:
    """Engine seam implementation (see chatglm_engine.Engine)."""

    def __init__(self, options=None):
        torch.set_num_threads(max(1, int(os.environ.get("TINY_ENGINE_THREADS", "1"))))
        self.tokenizer = TinyTokenizer()
        self.model = TinyLM(seed=int(os.environ.get("TINY_ENGINE_SEED", "0"))).double().eval()
        t = self.tokenizer
        self.stop_ids = (EOS_ID, t.get_command("<|user|>"), t.get_command("<|observation|>"))
        self._log_lock = threading.Lock()
        self.generator = torch.Generator().manual_seed(1234)

    # -- prompt
    def prefix_ids(self) -> List[int]:
        return self.tokenizer.get_prefix_tokens()

    def message_ids(self, role: str, metadata: str, content: str) -> List[int]:
        return self.tokenizer.build_single_message(role, metadata, content)

    def assistant_ids(self) -> List[int]:
        return [self.tokenizer.get_command("<|assistant|>")]

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(ids)

    # -- generation
    def generate(self, prompts, settings, observer):
        self._log_prompts(prompts)
        tracker = BatchTracker(settings, self.stop_ids, observer)
        warper = RowWarper(settings)
        delay = float(os.environ.get("TINY_ENGINE_STEP_DELAY_MS", "0") or 0) / 1000.0
        stop_after = int(os.environ.get("TINY_ENGINE_STOP_AFTER", "0") or 0)
        user_id = self.tokenizer.get_command("<|user|>")

        tracker.poll_cancelled()
        rows = torch.tensor(tracker.active_rows(), dtype=torch.long)
        if len(rows) == 0:
            return tracker.results()
        ids, prompt_mask, pos = left_pad([prompts[i] for i in rows.tolist()])
        width = ids.shape[1]
        capacity = width + max(s.max_new_tokens for s in settings) + 1
        cache = self.model.new_cache(len(rows), capacity)
        mask = torch.zeros((len(rows), capacity), dtype=torch.long)
        mask[:, :width] = prompt_mask
        start, step = 0, 0
        pending = torch.zeros(len(rows), dtype=torch.long)  # UTF-8 continuation bytes still owed per row
        with torch.no_grad():
            while True:
                logits = self.model(ids, pos, mask[:, :start + ids.shape[1]], cache, start)
                start += ids.shape[1]
                logits = self.model.restrict(guard_invalid_scores(logits, fallback_id=NEWLINE_ID), pending)
                if step == 0:
                    tokens = torch.full((len(rows),), NEWLINE_ID, dtype=torch.long)  # empty metadata line
                else:
                    tokens = warper.choose(logits, rows, self.generator)
                if stop_after:
                    for j, r in enumerate(rows.tolist()):
                        if len(tracker.tokens[r]) - 1 >= stop_after:
                            tokens[j] = user_id
                lead = (tokens >= BYTE_OFFSET + 0xE0) & (tokens < BYTE_OFFSET + 0xF0)
                pending = torch.where(lead, torch.full_like(pending, 2), (pending - 1).clamp(min=0))
                if delay:
                    time.sleep(delay)
                row_list = rows.tolist()
                tracker.step(tokens.tolist(), row_list)
                step += 1
                keep = [tracker.finish[r] is None for r in row_list]
                if not any(keep):
                    break
                if not all(keep):  # free finished rows
                    index = torch.tensor([j for j, k in enumerate(keep) if k], dtype=torch.long)
                    rows, tokens, mask, pos = rows[index], tokens[index], mask[index], pos[index]
                    pending = pending[index]
                    cache = [(k.index_select(0, index), v.index_select(0, index)) for k, v in cache]
                ids = tokens.unsqueeze(1)
                pos = pos[:, -1:] + 1
                mask[:, start] = 1
        return tracker.results()

    def _log_prompts(self, prompts) -> None:
        path = os.environ.get("TINY_ENGINE_PROMPT_LOG")
        if not path:
            return
        with self._log_lock, open(path, "a", encoding="utf-8") as f:
            for ids in prompts:
                f.write(json.dumps({"prompt": self.decode(ids), "messages": _split_messages(self.tokenizer, ids)},
                                   ensure_ascii=False) + "\n")

    def close(self) -> None:
        self.model = None


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
