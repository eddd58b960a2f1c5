"""The native engine (`engine: native`, the default): ChatGLM3 in plain torch with a KV cache made for continuous
batching, driven one step at a time by the continuous scheduler (or, for `scheduler: per_execute`, by its own
loop over the same steps).

Load: the tokenizer (ChatGLM3's own, AutoTokenizer from the weights folder), config.json, a memory check (weights +
cache must fit in what the device has free), the weights by ChatGLM3's parameter names, then the cache, whose size
is logged. Everything runs on torch 1.13 (tests) and 2.x (the image, where attention uses SDPA).

Decode steps have static shapes and, on CUDA with `cuda_graphs: auto`, replay one captured graph per row bucket
(chatglm.engine.decode_step); the sampled ids come back through one pinned, non-blocking copy (`readback`).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import torch

import chatglm.log as log
from chatglm.model.checkpoint import DTYPES, ChatGLMConfig, CheckpointError, load_weights, read_config, weight_bytes
from chatglm.engine.types import EngineOptions, PrefillChunk, TokenizerPrompts
from chatglm.model.forward import HAS_SDPA, ChatGLMModel, logits_rows
from chatglm.engine.generation import BatchTracker, choose_tokens
from chatglm.engine.decode_step import StaticDecoder, TokenReadback
from chatglm.model.kv_cache import KVCache, describe_bytes, free_memory_bytes

CUDA_HEADROOM_BYTES = 1 << 30  # activations of a prefill chunk, the logits, the CUDA context's own allocations


class NativeEngine(TokenizerPrompts):
    def __init__(self, options: EngineOptions, *, tokenizer=None, config: Optional[ChatGLMConfig] = None,
                 tensors: Optional[Dict[str, torch.Tensor]] = None, dtype: Optional[torch.dtype] = None,
                 sampling_seed: Optional[int] = None):
        """Production: everything from options.weights_path. Tests pass the tokenizer, config and tensors."""
        self.device = torch.device(options.device)
        if dtype is None:
            if options.dtype not in DTYPES:
                raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {options.dtype!r}")
            dtype = DTYPES[options.dtype]
        self.dtype = dtype
        check_dtype(self.device, dtype)
        if tokenizer is None:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(options.weights_path, trust_remote_code=True)
        self.tokenizer = tokenizer
        self.stop_ids = self.chat_stop_ids()
        if config is None:
            config = read_config(options.weights_path)
        self.config = config
        self.max_rows = options.max_rows
        self.max_context = min(config.seq_length, options.max_context or options.context_needed)
        cache_bytes = KVCache.bytes_needed(config.num_layers, config.multi_query_group_num, config.head_dim,
                                           self.max_rows, self.max_context, dtype)
        check_memory(self.device, weight_bytes(config, dtype) if tensors is None else 0, cache_bytes,
                     self.max_rows, self.max_context)
        if tensors is None:
            tensors = load_weights(options.weights_path, config, dtype, self.device)
        self.model = ChatGLMModel(config, tensors, self.max_context)
        self.cache = KVCache(config.num_layers, config.multi_query_group_num, config.head_dim, self.max_rows,
                             self.max_context, dtype, self.device)
        self.decoder = StaticDecoder(self.model, self.cache, (options.parameters.get("cuda_graphs") or "auto").strip())
        self.readback = TokenReadback(self.max_rows, self.device)
        self.generator = torch.Generator(device=self.device)
        if sampling_seed is None:
            self.generator.seed()
        else:
            self.generator.manual_seed(sampling_seed)
        log.info(
            f"native engine: {config.num_layers} layers, hidden {config.hidden_size}, {config.num_attention_heads} heads / "
            f"{config.multi_query_group_num} KV groups, {str(dtype).replace('torch.', '')} on {self.device} "
            f"({'SDPA' if HAS_SDPA else 'plain'} attention); weights {describe_bytes(self.model.parameter_bytes())}; "
            f"KV cache {self.max_rows} rows x {self.max_context} tokens = {describe_bytes(self.cache.nbytes)} "
            f"({describe_bytes(config.kv_bytes_per_token(dtype))} per token); decode step: row buckets "
            f"{', '.join(map(str, self.decoder.buckets))}, {self.decoder.graph_note}"
        )

    # -- steps (the continuous scheduler's interface, chatglm.engine.types.StepEngine)
    def open_row(self) -> int:
        return self.cache.acquire()

    def close_row(self, slot: int) -> None:
        self.cache.release(slot)

    def prefill(self, chunks: Sequence[PrefillChunk]) -> torch.Tensor:
        """Logits after each chunk; those of a chunk that does not complete its prompt are 0 (never sampled: the
        output layer, as many weights as a decode step reads, runs for complete chunks only)."""
        for c in chunks:
            if self.cache.length(c.slot) != c.start or not c.start < c.stop <= len(c.prompt):
                raise RuntimeError(f"prefill chunk [{c.start}, {c.stop}) does not continue slot {c.slot}")
        return self._run([c.slot for c in chunks], [list(c.prompt[c.start:c.stop]) for c in chunks],
                         [i for i, c in enumerate(chunks) if c.complete])

    def decode_step(self, slots: Sequence[int], tokens: Sequence[int]) -> torch.Tensor:
        """The static-shape step (chatglm.engine.decode_step): no host synchronisation inside."""
        positions = [self.cache.length(s) for s in slots]
        if any(p >= self.max_context for p in positions):
            raise RuntimeError(f"a row would exceed the context of {self.max_context} tokens")
        logits = self.decoder.step([self.cache.row_of(s) for s in slots], [int(t) for t in tokens], positions)
        for s in slots:
            self.cache.advance(s, 1)
        return logits

    def _run(self, slots: Sequence[int], tokens: List[List[int]], wanted: Sequence[int]) -> torch.Tensor:
        order, rows, block = self.cache.plan(slots)
        starts = [self.cache.length(slots[i]) for i in order]
        ordered = [tokens[i] for i in order]
        if any(s + len(t) > self.max_context for s, t in zip(starts, ordered)):
            raise RuntimeError(f"a row would exceed the context of {self.max_context} tokens")
        wanted = set(wanted)
        logits = self.model.forward(self.cache, rows, block, ordered, starts,
                                    wanted=[k for k, i in enumerate(order) if i in wanted])
        for i in order:
            self.cache.advance(slots[i], len(tokens[i]))
        return logits_rows(logits, order)

    def reset(self) -> None:
        self.cache.reset()

    # -- one batched generation (scheduler per_execute), on the same steps
    def generate(self, prompts, settings, observer):
        tracker = BatchTracker(settings, self.stop_ids, observer)
        tracker.poll_cancelled()
        pending = tracker.active_rows()
        for first in range(0, len(pending), self.max_rows):
            self._generate_group(pending[first:first + self.max_rows], prompts, settings, tracker)
        return tracker.results()

    def _generate_group(self, rows: List[int], prompts, settings, tracker: BatchTracker) -> None:
        rows = [r for r in rows if tracker.rows[r].finish is None]
        slots: Dict[int, int] = {}
        try:
            for r in rows:
                slots[r] = self.open_row()
            logits = self.prefill([PrefillChunk(slots[r], prompts[r], 0, len(prompts[r])) for r in rows])
            while rows:
                tokens = choose_tokens(logits, [settings[r] for r in rows], self.generator)
                tracker.step(tokens, rows)
                kept = [(r, t) for r, t in zip(rows, tokens) if tracker.rows[r].finish is None]
                for r in rows:
                    if tracker.rows[r].finish is not None:
                        self.close_row(slots.pop(r))  # a finished row costs nothing from the next step on
                if not kept:
                    break
                rows = [r for r, _ in kept]
                logits = self.decode_step([slots[r] for r in rows], [t for _, t in kept])
        finally:
            for slot in slots.values():
                self.close_row(slot)

    def close(self) -> None:
        self.decoder = None
        self.model = None
        self.cache = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def check_dtype(device: torch.device, dtype: torch.dtype) -> None:
    """A dtype this torch build cannot multiply on this device is a load error, not a failure at the first request
    (torch 1.13 has no float16 matmul on CPU)."""
    try:
        torch.nn.functional.linear(torch.ones(1, 2, dtype=dtype, device=device), torch.ones(2, 2, dtype=dtype, device=device))
    except RuntimeError as exc:
        raise CheckpointError(f"dtype {str(dtype).replace('torch.', '')} is not supported on {device} by torch "
                              f"{torch.__version__} ({exc}); use float32 or bfloat16 there") from None


def check_memory(device: torch.device, weights: int, cache: int, rows: int, context: int) -> None:
    """Fails the load before anything large is allocated if weights + cache cannot fit in free memory."""
    free = free_memory_bytes(device)
    if free is None:
        return
    headroom = CUDA_HEADROOM_BYTES if device.type == "cuda" else 0
    if weights + cache + headroom > free:
        where = "GPU memory" if device.type == "cuda" else "host memory (MemAvailable)"
        raise CheckpointError(
            f"the model does not fit: weights {describe_bytes(weights)} + KV cache {describe_bytes(cache)} "
            f"({rows} rows x {context} tokens) + headroom {describe_bytes(headroom)} > {describe_bytes(free)} of free "
            f"{where} on {device}. Lower tritonChatglm.maxBatchSize (max_active_rows) or the context "
            f"(max_input_tokens + max_new_tokens_limit, or max_context), or free the device."
        )
