"""The native engine (`engine: native`, the default): ChatGLM3 in plain torch with a KV cache made for continuous
batching, driven one step at a time by the continuous scheduler (or, for `scheduler: per_execute`, by its own
loop over the same steps).

Load: the tokenizer (chatglm.tokenizer: ChatGLM3's SentencePiece or GLM-4's rank file, read by our code; no Python
file of the weights folder runs), config.json, the memory plan
(chatglm.engine.memory_plan: weights + cache + transients against what the device has free; it picks the
quantization and the prefill chunk, or refuses the load with what does fit), the weights by ChatGLM3's parameter
names (int8 layers quantized as they are read), then the cache; the plan is logged as a table. Everything runs on
torch 1.13 (tests) and 2.x (the image, where attention uses SDPA).

Decode steps have static shapes and, on CUDA with `cuda_graphs: auto`, replay one captured graph per row bucket
(chatglm.engine.decode_step); the sampled ids come back through one pinned, non-blocking copy (`readback`).
"""
from __future__ import annotations

import os
import random
from typing import Dict, List, Optional, Sequence

import torch

import chatglm.log as log
from chatglm.engine.memory_plan import plan_load, split_prefill
from chatglm.model.checkpoint import DTYPES, ChatGLMConfig, CheckpointError, load_weights, read_config
from chatglm.catalog import identify
from chatglm.tokenizer.load import load_tokenizer
from chatglm.engine.types import EngineOptions, PrefillChunk, TokenizerPrompts
from chatglm.model.forward import HAS_SDPA, ChatGLMModel, logits_rows
from chatglm.engine.generation import CHATGLM_NAN_FALLBACK_ID, BatchTracker, choose_tokens, random_seed
from chatglm.engine.decode_step import StaticDecoder, TokenReadback
from chatglm.model.kv_cache import KVCache, describe_bytes, free_memory_bytes, total_memory_bytes
from chatglm.model.quantization import (DequantizeLinear, choose_int8_matmul, load_converter, quantize_tensors,
                                        weight_nbytes)

DEFAULT_PREFILL_CHUNK = 2048  # config.pbtxt's prefill_token_budget when it is not set (chatglm.serving.options)


class NativeEngine(TokenizerPrompts):
    def __init__(self, options: EngineOptions, *, tokenizer=None, config: Optional[ChatGLMConfig] = None,
                 tensors: Optional[Dict[str, torch.Tensor]] = None, dtype: Optional[torch.dtype] = None,
                 sampling_seed: Optional[int] = None):
        """Production: everything from options.weights_path. Tests pass the tokenizer, config and tensors."""
        self.device = torch.device(options.device)
        if dtype is None:
            dtype = resolve_dtype(options.dtype, self.device)
        self.dtype = dtype
        self.dtype_name = str(dtype).replace("torch.", "")
        check_dtype(self.device, dtype)
        if config is None:
            config = read_config(options.weights_path)  # first: a layout we do not load is refused before anything
        self.config = config
        entry = identify(config)
        self.model_id = entry.id if entry else None  # the catalog model this checkpoint is (None: not one it lists)
        # Takes `infill` (code completion) only where the catalog says the model was trained for it (CodeGeeX4).
        self.fill_in_middle = bool(entry and entry.fill_in_middle)
        if tokenizer is None:
            tokenizer = load_tokenizer(options.weights_path)  # our code over the data files: nothing runs from there
        self.tokenizer = tokenizer
        self.stop_ids = self.chat_stop_ids()
        # ChatGLM3 forces token 5 on NaN/inf logits (its InvalidScoreLogitsProcessor, kept for ChatGLM3); a tokenizer
        # that says None (GLM-4's: overflow in float16 is a known risk) fails the row with a clear error instead.
        self.nan_fallback_id = getattr(tokenizer, "nan_fallback_id", CHATGLM_NAN_FALLBACK_ID)
        self.fails_on_overflow = self.nan_fallback_id is None
        self.max_rows = options.max_rows
        self.max_context = min(config.seq_length, options.max_context or options.context_needed)
        # Tensors passed in (tests, gpu_check) already take their part of the device's memory.
        loaded = 0 if tensors is None else sum(weight_nbytes(t) for t in tensors.values())
        self.memory_plan = plan_device_memory(self.device, config, options, self.max_rows, self.max_context, dtype, loaded)
        self.prefill_chunk = self.memory_plan.prefill_chunk  # padded tokens per prefill forward, at most
        self.quantization = self.memory_plan.quantization
        if tensors is None:
            # One line per shard: the extension reads "loading weights i/n" as the load's progress.
            tensors = load_weights(options.weights_path, config, dtype, self.device,
                                   convert=load_converter(self.device, dtype, self.quantization),
                                   on_shard=lambda i, n, path: log.info(f"loading weights {i}/{n} ({os.path.basename(path)})"))
        elif self.quantization == "int8":
            quantize_tensors(tensors)
        int8_linear = choose_int8_matmul(self.device, dtype) if self.quantization == "int8" else DequantizeLinear
        self.model = ChatGLMModel(config, tensors, self.max_context, int8_linear)
        self.cache = KVCache(config.num_layers, config.multi_query_group_num, config.head_dim, self.max_rows,
                             self.max_context, dtype, self.device)
        self.decoder = StaticDecoder(self.model, self.cache, (options.parameters.get("cuda_graphs") or "auto").strip())
        self.readback = TokenReadback(self.max_rows, self.device)
        self.generator = torch.Generator(device=self.device)
        if sampling_seed is None:
            self.generator.seed()
        else:
            self.generator.manual_seed(sampling_seed)
        # Seeds for requests without one: from the OS, or reproducible when the engine has a sampling seed (tests).
        self.seeds = None if sampling_seed is None else random.Random(sampling_seed)
        log.info(
            f"native engine: {self.model_id or 'a model the catalog does not list'}, {config.num_layers} layers, hidden {config.hidden_size}, {config.num_attention_heads} heads / "
            f"{config.multi_query_group_num} KV groups, {str(dtype).replace('torch.', '')} on {self.device} "
            f"({'SDPA' if HAS_SDPA else 'plain'} attention); weights {describe_bytes(self.model.parameter_bytes())}; "
            f"KV cache {self.max_rows} rows x {self.max_context} tokens = {describe_bytes(self.cache.nbytes)} "
            f"({describe_bytes(config.kv_bytes_per_token(dtype))} per token); quantization {self.model.quantization}; "
            f"decode step: row buckets {', '.join(map(str, self.decoder.buckets))}, {self.decoder.graph_note}"
        )
        log.info(self.memory_plan.table())
        for reason in self.memory_plan.reasons:
            log.info(reason)

    # -- steps (the continuous scheduler's interface, chatglm.engine.types.StepEngine)
    def open_row(self) -> int:
        return self.cache.acquire()

    def close_row(self, slot: int) -> None:
        self.cache.release(slot)

    def prefill(self, chunks: Sequence[PrefillChunk]) -> torch.Tensor:
        """Logits after each chunk; those of a chunk that does not complete its prompt are 0 (never sampled: the
        output layer, as many weights as a decode step reads, runs for complete chunks only)."""
        self._check_chunks(chunks)
        complete = [i for i, c in enumerate(chunks) if c.complete]
        if len(chunks) * max(c.stop - c.start for c in chunks) <= self.prefill_chunk:
            return self._run([c.slot for c in chunks], [list(c.prompt[c.start:c.stop]) for c in chunks], complete)
        # More padded tokens than the memory plan allows in one forward: pieces, in order, each within the bound;
        # the output layer runs for the piece that completes a prompt only.
        last: Dict[int, torch.Tensor] = {}
        for forward in split_prefill([(c.start, c.stop) for c in chunks], self.prefill_chunk):
            ends = [k for k, (i, _, stop) in enumerate(forward) if stop == chunks[i].stop]
            logits = self._run([chunks[i].slot for i, _, _ in forward],
                               [list(chunks[i].prompt[start:stop]) for i, start, stop in forward],
                               [k for k in ends if chunks[forward[k][0]].complete])
            for k in ends:
                last[forward[k][0]] = logits[k]
        return torch.stack([last[i] for i in range(len(chunks))])

    def decode_step(self, slots: Sequence[int], tokens: Sequence[int]) -> torch.Tensor:
        """The static-shape step (chatglm.engine.decode_step): no host synchronisation inside."""
        positions = self._step_positions(slots)
        logits = self.decoder.step([self.cache.row_of(s) for s in slots], [int(t) for t in tokens], positions)
        for s in slots:
            self.cache.advance(s, 1)
        return logits

    def step_with_chunks(self, chunks: Sequence[PrefillChunk], slots: Sequence[int], tokens: Sequence[int]):
        """A decode step of `slots` and the prompt chunks in one forward pass (ChatGLMModel.mixed): (logits after
        each chunk that completes its prompt, in the order of `chunks`; the step's logits). None when the chunks'
        padded tokens and the step's rows are more than one prefill forward may hold (the memory plan's bound):
        the caller runs `prefill` and `decode_step` instead. Nothing advances when it raises."""
        self._check_chunks(chunks)
        width = max(c.stop - c.start for c in chunks)
        bucket = self.decoder.bucket_for(max(self.cache.row_of(s) for s in slots) + 1)
        if len(chunks) * width + bucket > self.prefill_chunk:
            return None
        positions = self._step_positions(slots)
        if any(c.stop > self.max_context for c in chunks):
            raise RuntimeError(f"a row would exceed the context of {self.max_context} tokens")
        order, rows, block = self.cache.plan([c.slot for c in chunks])
        starts = [chunks[i].start for i in order]
        wanted = [k for k, i in enumerate(order) if chunks[i].complete]
        logits, chunk_logits = self.decoder.step_with_chunks(
            [self.cache.row_of(s) for s in slots], [int(t) for t in tokens], positions, rows, block,
            [list(chunks[i].prompt[chunks[i].start:chunks[i].stop]) for i in order], starts, wanted)
        for c in chunks:
            self.cache.advance(c.slot, c.stop - c.start)
        for s in slots:
            self.cache.advance(s, 1)
        computed = [order[k] for k in wanted]  # chunk indices, in the order their logits were computed
        rank = {i: r for r, i in enumerate(sorted(computed))}
        return logits_rows(chunk_logits, [rank[i] for i in computed]), logits

    def _check_chunks(self, chunks: Sequence[PrefillChunk]) -> None:
        for c in chunks:
            if self.cache.length(c.slot) != c.start or not c.start < c.stop <= len(c.prompt):
                raise RuntimeError(f"prefill chunk [{c.start}, {c.stop}) does not continue slot {c.slot}")

    def _step_positions(self, slots: Sequence[int]) -> List[int]:
        positions = [self.cache.length(s) for s in slots]
        if any(p >= self.max_context for p in positions):
            raise RuntimeError(f"a row would exceed the context of {self.max_context} tokens")
        return positions

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
        tracker = BatchTracker(settings, self.stop_ids, observer, self.dtype_name)
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
            seeds = {r: settings[r].seed if settings[r].seed is not None else random_seed(self.seeds) for r in rows}
            logits = self.prefill([PrefillChunk(slots[r], prompts[r], 0, len(prompts[r])) for r in rows])
            step = 0
            while rows:
                penalized = any(settings[r].repetition_penalty != 1.0 for r in rows)
                seen = self._seen(rows, prompts, tracker, logits.shape[-1]) if penalized else None
                tokens = choose_tokens(logits, [settings[r] for r in rows], [step] * len(rows),
                                       [seeds[r] for r in rows], seen, fail_on_overflow=self.fails_on_overflow)
                step += 1
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

    def _seen(self, rows, prompts, tracker: BatchTracker, vocab: int) -> torch.Tensor:
        """The tokens each row has seen so far (prompt + answer), for the repetition penalty."""
        seen = torch.zeros((len(rows), vocab), dtype=torch.bool)
        for i, r in enumerate(rows):
            seen[i, torch.tensor(list(prompts[r]) + tracker.rows[r].tokens, dtype=torch.long)] = True
        return seen.to(self.device)

    def close(self) -> None:
        self.decoder = None
        self.model = None
        self.cache = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    """config.pbtxt's dtype; `auto` is bfloat16 on a GPU that has it (Ampere and later), float16 on older GPUs,
    float32 on the CPU (torch.cuda.is_bf16_supported exists in torch 1.13 and 2.x)."""
    if name == "auto":
        if device.type != "cuda":
            return torch.float32
        with torch.cuda.device(device):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if name not in DTYPES:
        raise ValueError(f"dtype must be auto or one of {', '.join(DTYPES)}, got {name!r}")
    return DTYPES[name]


def check_dtype(device: torch.device, dtype: torch.dtype) -> None:
    """A dtype this torch build cannot multiply on this device is a load error, not a failure at the first request
    (torch 1.13 has no float16 matmul on CPU)."""
    try:
        torch.nn.functional.linear(torch.ones(1, 2, dtype=dtype, device=device), torch.ones(2, 2, dtype=dtype, device=device))
    except RuntimeError as exc:
        raise CheckpointError(f"dtype {str(dtype).replace('torch.', '')} is not supported on {device} by torch "
                              f"{torch.__version__} ({exc}); use float32 or bfloat16 there") from None


def plan_device_memory(device: torch.device, config: ChatGLMConfig, options: EngineOptions, rows: int, context: int,
                       dtype: torch.dtype, loaded: int = 0):
    """The load's memory plan against the device's free memory (CUDA's, or the host's MemAvailable); raises
    chatglm.engine.memory_plan.MemoryPlanError with what does fit."""
    params = options.parameters or {}
    quantization = (params.get("quantization") or "auto").strip()
    chunk = int(params.get("prefill_token_budget") or DEFAULT_PREFILL_CHUNK)
    where = f"this GPU ({device})" if device.type == "cuda" else f"this host ({device}, MemAvailable)"
    free = free_memory_bytes(device)
    return plan_load(config, rows, context, chunk, str(dtype).replace("torch.", ""), quantization,
                     None if free is None else free + loaded, total_memory_bytes(device), where)
