"""Stop texts (input `stop`, OpenAI's `stop`): the answer ends before the first of them to appear, which is not
part of it. The model checks them as it generates (chatglm.serving.answer.AnswerStream), so the row ends at the
step that completed one and its completion_tokens are the tokens generated up to and including that step's token —
what vLLM and OpenAI count (the tokens of the stop text are generated, then cut from the text)."""
from __future__ import annotations

import json
from typing import Tuple

from chatglm.serving.request import RequestError

MAX_STOP_TEXTS = 4  # OpenAI's limit
MAX_STOP_CHARS = 256
MAX_STOP_BYTES = 8 * 1024  # the whole input


def parse_stop(text: str) -> Tuple[str, ...]:
    """The `stop` input: a JSON list of at most 4 non-empty strings ("" or [] = none)."""
    if not text.strip():
        return ()
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RequestError(f"stop must be a JSON list of strings ({str(exc)[:80]})") from None
    if not isinstance(value, list):
        raise RequestError(f"stop must be a JSON list of strings, got {type(value).__name__}")
    if len(value) > MAX_STOP_TEXTS:
        raise RequestError(f"stop has too many entries: {len(value)} (limit {MAX_STOP_TEXTS})")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise RequestError(f"stop[{i}] must be a string, got {type(item).__name__}")
        if item == "":
            raise RequestError(f"stop[{i}] is empty")
        if len(item) > MAX_STOP_CHARS:
            raise RequestError(f"stop[{i}] is too long: {len(item)} characters (limit {MAX_STOP_CHARS})")
    return tuple(value)
