"""Test-only engine: ChatGLM3-6B through Hugging Face transformers (pinned 4.40.2). It needs ChatGLM3's remote code
(AutoModel with trust_remote_code: THUDM's modeling_chatglm.py from the weights folder), so since #29 it is no
longer served (chatglm.engine.factory refuses `engine: hf`); it stays as the reference for ChatGLM3's generate
hooks, tested on a tiny Llama by tests/test_hf_engine.py.

One `model.generate` call per batch, with
- a NaN/inf guard (ChatGLM's InvalidScoreLogitsProcessor, per row; matters in fp16),
- per-row repetition penalty / temperature / top-k / top-p as a LogitsProcessor (generate's own warpers are
  disabled: they are global); a request's `seed` is not honoured here (generate samples with torch's global
  generator), only by the native engine,
- per-row stopping as a StoppingCriteria returning BoolTensor[B] (transformers >= 4.39): stop ids, each row's
  own max_new_tokens and cancellation, polled at every decode step,
- a batched BaseStreamer that forwards each step's tokens to the tracker (TextStreamer only handles batch 1).
The shared logic lives in chatglm.engine.generation; these classes only adapt it to generate's hooks.
"""
from __future__ import annotations

import torch
from transformers import GenerationMixin, LogitsProcessor, LogitsProcessorList, StoppingCriteria, StoppingCriteriaList
from transformers.generation.streamers import BaseStreamer

from chatglm.engine.types import TokenizerPrompts
from chatglm.engine.generation import CHATGLM_NAN_FALLBACK_ID, FINISH_LENGTH, BatchTracker, RowWarper, guard_invalid_scores, \
    left_pad, seen_from_ids
from chatglm.model.checkpoint import DTYPES


class InvalidScoreGuard(LogitsProcessor):
    def __init__(self, fallback_id: int = CHATGLM_NAN_FALLBACK_ID):
        self.fallback_id = fallback_id

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        return guard_invalid_scores(scores, self.fallback_id)


class PerRowSampling(LogitsProcessor):
    """Row i gets settings[i]'s penalty, temperature, top-k and top-p; a greedy row keeps only its argmax."""

    def __init__(self, warper: RowWarper):
        self.warper = warper

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        seen = seen_from_ids(input_ids, scores.shape[-1]) if self.warper.penalized else None
        return self.warper(scores, seen=seen)


class PerRowStopping(StoppingCriteria):
    """Per-row finished flags from the tracker (stop id, own max_new_tokens, cancellation)."""

    def __init__(self, tracker: BatchTracker):
        self.tracker = tracker

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs) -> torch.BoolTensor:
        return self.tracker.done_mask(device=input_ids.device)


class BatchStreamer(BaseStreamer):
    """generate() puts the prompt ids ([B, T]) once, then the sampled tokens ([B]) after every step."""

    def __init__(self, tracker: BatchTracker):
        self.tracker = tracker

    def put(self, value: torch.Tensor) -> None:
        if value.dim() > 1:
            return  # the prompt
        self.tracker.step(value.tolist())

    def end(self) -> None:
        pass


def carries_position_ids(model) -> bool:
    """Whether `generate` keeps explicit position_ids current from step to step. The generic
    `_update_model_kwargs_for_generation` of transformers 4.40.2 leaves them as passed, so a prompt-length copy is
    wrong from the second step (Llama derives them from the attention mask instead). ChatGLM3's remote code
    overrides it to append one position per step, and needs them passed: its fallback numbers the left padding
    as real positions."""
    own = getattr(type(model), "_update_model_kwargs_for_generation", None)
    return own is not None and own is not GenerationMixin._update_model_kwargs_for_generation


class HFEngine(TokenizerPrompts):
    """ChatGLM3 via AutoTokenizer/AutoModel(trust_remote_code=True) from a local snapshot (offline); runs under the
    per-execute scheduler only (one `generate` per batch)."""

    def __init__(self, options, model=None, tokenizer=None):
        self.device = torch.device(options.device)
        if model is None:
            from transformers import AutoModel, AutoTokenizer

            if options.dtype not in DTYPES:
                raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {options.dtype!r}")
            tokenizer = AutoTokenizer.from_pretrained(options.weights_path, trust_remote_code=True)
            model = AutoModel.from_pretrained(
                options.weights_path, trust_remote_code=True, torch_dtype=DTYPES[options.dtype], low_cpu_mem_usage=True
            )
            model = model.to(self.device)
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.pad_id = 0
        self.stop_ids = self.chat_stop_ids()

    # -- generation
    def generate(self, prompts, settings, observer):
        tracker = BatchTracker(settings, self.stop_ids, observer)
        tracker.poll_cancelled()
        if tracker.all_done():
            return tracker.results()
        input_ids, attention_mask, position_ids = left_pad(prompts, self.pad_id, device=self.device)
        kwargs = {"position_ids": position_ids} if carries_position_ids(self.model) else {}
        with torch.inference_mode():
            self.model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                **kwargs,
                do_sample=True,
                temperature=1.0,
                top_p=1.0,
                top_k=0,
                num_beams=1,
                max_new_tokens=max(s.max_new_tokens for s in settings),
                eos_token_id=list(self.stop_ids),
                pad_token_id=self.pad_id,
                logits_processor=LogitsProcessorList([InvalidScoreGuard(), PerRowSampling(RowWarper(settings))]),
                stopping_criteria=StoppingCriteriaList([PerRowStopping(tracker)]),
                streamer=BatchStreamer(tracker),
            )
        tracker.finish_remaining(FINISH_LENGTH)
        return tracker.results()

    def close(self) -> None:
        model, self.model = self.model, None
        del model
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
