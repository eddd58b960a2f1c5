"""Raw continuations (input `raw_prompt`, OpenAI's /v1/completions): the model continues a text instead of
answering a chat turn.

The prompt is the model's prefix tokens ([gMASK] sop for ChatGLM3) followed by the text as the tokenizer encodes
it (special-token text inside it stays text), with no role tokens and no <|assistant|>: what ChatGLM3's own
tokenizer builds for `tokenizer(text)`. The answer is raw text (no metadata line, nothing stripped) and ends at the
end-of-text token or max_new_tokens only (the chat stops <|user|> and <|observation|> belong to the chat layout), or
at a stop text of the `stop` input. A text longer than max_input_tokens is refused, never cut: a continuation of a
text that lost its start is not what was asked for.
"""
from __future__ import annotations

from typing import List, Tuple

from chatglm.serving.request import RequestError


def check_raw_prompt(text: str, prompt: str, history_given: bool) -> None:
    """A raw prompt is the whole input text: a chat prompt or history beside it is a contradiction, not ignored."""
    if text == "":
        raise RequestError("input 'raw_prompt' is empty")
    if prompt:
        raise RequestError("input 'prompt' must be empty when 'raw_prompt' is given (the raw text is the whole prompt)")
    if history_given:
        raise RequestError("input 'history' must be absent or empty when 'raw_prompt' is given (a raw continuation "
                           "has no conversation)")


def end_of_text_id(engine) -> int:
    """The tokenizer's end-of-text token (ChatGLM3: </s> 2; GLM-4: <|endoftext|>)."""
    eos = getattr(getattr(engine, "tokenizer", None), "eos_token_id", None)
    if eos is None:
        raise RequestError("this model's tokenizer has no end-of-text token: raw prompts are not available")
    return int(eos)


def raw_prompt_ids(engine, text: str, max_input_tokens: int) -> Tuple[List[int], Tuple[int, ...]]:
    """(prompt ids, stop ids) of a raw continuation."""
    ids = list(engine.prefix_ids()) + list(engine.text_ids(text))
    if len(ids) > max_input_tokens:
        raise RequestError(f"raw_prompt is too long: {len(ids)} tokens (limit max_input_tokens = {max_input_tokens})")
    return ids, (end_of_text_id(engine),)
