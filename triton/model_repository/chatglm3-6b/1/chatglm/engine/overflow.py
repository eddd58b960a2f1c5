"""Rows whose logits come out NaN/inf. ChatGLM3's own code forces token 5 then (InvalidScoreLogitsProcessor, which
generation.guard_invalid_scores keeps for ChatGLM3); GLM-4 is a bfloat16 model that can overflow float16, and
forcing a token there writes garbage, so an engine whose tokenizer has no fallback fails such a row alone, with
what to change."""
from __future__ import annotations

import torch

OVERFLOW_TOKEN = -2  # mark_overflow's id for a row whose logits are not finite (INVALID_TOKEN is -1)


def overflow_message(dtype: str) -> str:
    return (f"the model's activations overflowed in {dtype} for this request (its next-token scores are not finite); "
            f"set the dtype to bfloat16 (or auto, on a GPU that has bfloat16) or float32 and load the model again")


def mark_overflow(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """ids with OVERFLOW_TOKEN for the rows whose logits are not all finite; no host synchronisation."""
    finite = torch.isfinite(logits).all(dim=-1)
    return torch.where(finite, ids, torch.full_like(ids, OVERFLOW_TOKEN))
