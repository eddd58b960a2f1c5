"""Turns one Triton request's input tensors into a validated chat request, and builds its prompt ids.

Everything a client controls is checked here; a problem raises `RequestError` with a message that says what
is wrong, and model.py answers that request alone with INVALID_ARG. History is JSON; a Python literal (the
format of the original tutorial) is accepted through `ast.literal_eval` after size and depth checks — never
`eval`.
"""
from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

ROLES = ("system", "user", "assistant", "observation")
MESSAGE_KEYS = frozenset(("role", "content", "metadata", "tools"))
MAX_PROMPT_BYTES = 256 * 1024
MAX_HISTORY_BYTES = 1024 * 1024
MAX_HISTORY_MESSAGES = 1000
MAX_LITERAL_DEPTH = 8  # list > message dict > tools list > tool schema ... ; deeper input is rejected
MAX_TEMPERATURE = 2.0
MAX_REPETITION_PENALTY = 10.0  # above ~2 answers degrade already; far above, scores overflow
# Below 1 a penalty multiplies seen tokens' scores by 1/penalty; a tiny one overflows float32 (65504 / 1e-38 = inf)
# and the row could only fail later with a sampling error. 0.01 keeps even an fp16-max score / greedy-threshold
# temperature finite (65504 * 100 / 1e-5 < 3.4e38) and is far below any useful value.
MIN_REPETITION_PENALTY = 0.01
DEFAULT_TOP_K = 50  # transformers' default, which ChatGLM3's chat() gets unless generation_config.json says otherwise
GREEDY_BELOW = 1e-5  # chatglm.engine.generation.GREEDY_BELOW: a smaller temperature means greedy


class RequestError(ValueError):
    """A client error in one request (answered with INVALID_ARG)."""


def _show(value, limit: int = 40) -> str:
    """A client value inside an error message: repr (no raw newlines in logs), shortened."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass(frozen=True)
class Limits:
    max_input_tokens: int = 6144
    max_new_tokens_limit: int = 2048
    default_max_new_tokens: int = 512
    default_temperature: float = 0.8
    default_top_p: float = 0.8
    default_top_k: int = DEFAULT_TOP_K  # model.py takes the checkpoint's generation_config.json value when it has one
    # Prompt budget of a fill-in-the-middle request (code completion): short, so that its prefill stays short.
    infill_max_input_tokens: int = 2048

    @staticmethod
    def from_parameters(params: Mapping[str, str]) -> "Limits":
        def get(key, conv, default):
            raw = params.get(key)
            if raw is None or str(raw).strip() == "":
                return default
            try:
                return conv(str(raw).strip())
            except ValueError as exc:
                raise ValueError(f"config parameter {key} must be a number, got {raw!r}") from exc

        d = Limits()
        limits = Limits(
            max_input_tokens=get("max_input_tokens", int, d.max_input_tokens),
            max_new_tokens_limit=get("max_new_tokens_limit", int, d.max_new_tokens_limit),
            default_max_new_tokens=get("default_max_new_tokens", int, d.default_max_new_tokens),
            default_temperature=get("default_temperature", float, d.default_temperature),
            default_top_p=get("default_top_p", float, d.default_top_p),
            infill_max_input_tokens=get("infill_max_input_tokens", int, d.infill_max_input_tokens),
        )
        if limits.max_input_tokens < 16 or limits.max_new_tokens_limit < 1:
            raise ValueError("config: max_input_tokens must be >= 16 and max_new_tokens_limit >= 1")
        if not 64 <= limits.infill_max_input_tokens:
            raise ValueError("config: infill_max_input_tokens must be >= 64")
        if not 1 <= limits.default_max_new_tokens <= limits.max_new_tokens_limit:
            raise ValueError("config: default_max_new_tokens must be in [1, max_new_tokens_limit]")
        if not (0 <= limits.default_temperature <= MAX_TEMPERATURE and 0 < limits.default_top_p <= 1):
            raise ValueError("config: default_temperature must be in [0, 2] and default_top_p in (0, 1]")
        return limits


@dataclass
class ChatRequest:
    prompt: str
    history: List[Dict[str, Any]]
    temperature: float
    top_p: float
    max_new_tokens: int
    history_len: Optional[int] = None  # turns to keep; None = all that fit
    top_k: int = 0  # 0 = off
    repetition_penalty: float = 1.0
    seed: Optional[int] = None  # None: random per request
    infill: Optional[Any] = None  # chatglm.serving.infill.InfillRequest: a code completion (prompt/history ignored)
    raw_prompt: Optional[str] = None  # a raw continuation of this text (chatglm.serving.raw_prompt); prompt is ""
    stop: Tuple[str, ...] = ()  # stop texts (chatglm.serving.stop_texts)


@dataclass
class PromptPlan:
    """The prompt as the model will see it, after history_len and token-budget trimming."""

    ids: List[int]
    messages: List[Dict[str, Any]]  # history actually used (returned, with the new turn, as output history)
    trimmed: int  # messages dropped for the token budget
    prompt_message: Dict[str, Any] = field(default_factory=dict)
    infill: Optional[Any] = None  # chatglm.serving.infill.InfillLayout of a fill-in-the-middle request
    stop_ids: Optional[Sequence[int]] = None  # None: the engine's chat stop ids
    raw: bool = False  # a raw continuation: no conversation, the answer is raw text


# ---------------------------------------------------------------------------------------------- tensors


def _single(name: str, value: Optional[np.ndarray]):
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.size != 1:
        raise RequestError(
            f"input '{name}' must hold exactly one element (one conversation per request), got shape {list(arr.shape)}"
        )
    return arr.reshape(-1)[0]


def _text(name: str, value, max_bytes: int) -> str:
    if isinstance(value, str):  # the stand-in may hand str; Triton hands bytes
        value = value.encode("utf-8")
    if not isinstance(value, (bytes, bytearray, np.bytes_)):
        raise RequestError(f"input '{name}' must be a string")
    if len(value) > max_bytes:
        raise RequestError(f"input '{name}' is too large: {len(value)} bytes (limit {max_bytes})")
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(f"input '{name}' is not valid UTF-8 (byte {exc.start})") from None


def _number(name: str, value, kind):
    """A number of the declared kind; NaN and infinities are refused here, before any range check."""
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise RequestError(f"input '{name}' must be a finite number, got {_show(value)}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise RequestError(f"input '{name}' must be a finite number, got {number}")
    return number


def _optional(inputs, name: str, kind, default):
    value = _single(name, inputs.get(name))
    if isinstance(value, np.floating):
        # An FP32 input as the decimal the client wrote (0.8, not 0.800000011920929), so that top_p's threshold
        # 1 - top_p is what ChatGLM3's chat() computes from a Python float.
        value = float(str(value)) if np.isfinite(value) else float(value)
    return default if value is None else _number(name, value, kind)


def parse_request(inputs: Mapping[str, Optional[np.ndarray]], limits: Limits) -> ChatRequest:
    """`inputs` maps input names to numpy arrays (None = absent optional input)."""
    from chatglm.serving.infill import MAX_INFILL_BYTES, parse_infill

    raw_infill = _single("infill", inputs.get("infill"))
    infill = None if raw_infill is None else parse_infill(_text("infill", raw_infill, MAX_INFILL_BYTES))
    raw_prompt = _single("prompt", inputs.get("prompt"))
    if raw_prompt is None and infill is None:
        raise RequestError("input 'prompt' is required")
    raw_text = _raw_prompt_text(inputs, infill is not None, raw_prompt)
    if raw_text is not None:
        prompt, history = "", []
    elif infill is None:
        prompt = _text("prompt", raw_prompt, MAX_PROMPT_BYTES)
        if not prompt.strip():
            raise RequestError("input 'prompt' is empty")
        raw_history = _single("history", inputs.get("history"))
        history = [] if raw_history is None else parse_history(_text("history", raw_history, MAX_HISTORY_BYTES))
    else:  # a completion: prompt and history are ignored
        prompt, history = "", []

    temperature = _optional(inputs, "temperature", float, limits.default_temperature)
    if not 0 <= temperature <= MAX_TEMPERATURE:
        raise RequestError(f"input 'temperature' must be between 0 and {MAX_TEMPERATURE:g} (below {GREEDY_BELOW:g} = "
                           f"greedy), got {temperature:g}")

    top_p = _optional(inputs, "top_p", float, limits.default_top_p)
    if not 0 < top_p <= 1:
        raise RequestError(f"input 'top_p' must be in (0, 1], got {top_p:g}")

    top_k = _optional(inputs, "top_k", int, limits.default_top_k)
    if top_k < 0:
        raise RequestError(f"input 'top_k' must be >= 0 (0 = off), got {top_k}")

    penalty = _optional(inputs, "repetition_penalty", float, 1.0)
    if not MIN_REPETITION_PENALTY <= penalty <= MAX_REPETITION_PENALTY:
        raise RequestError(f"input 'repetition_penalty' must be between {MIN_REPETITION_PENALTY:g} and "
                           f"{MAX_REPETITION_PENALTY:g} (1 = off), got {penalty:g}")

    seed = _optional(inputs, "seed", int, None)

    max_new = _single("max_new_tokens", inputs.get("max_new_tokens"))
    max_new = limits.default_max_new_tokens if max_new is None else _number("max_new_tokens", max_new, int)
    if not 1 <= max_new <= limits.max_new_tokens_limit:
        raise RequestError(f"input 'max_new_tokens' must be between 1 and {limits.max_new_tokens_limit}, got {max_new}")

    history_len = _single("history_len", inputs.get("history_len"))
    if history_len is not None:
        history_len = _number("history_len", history_len, int)
        if history_len < 0:
            raise RequestError(f"input 'history_len' must be >= 0 (turns to keep), got {history_len}")

    return ChatRequest(prompt, history, float(temperature), float(top_p), int(max_new), history_len, int(top_k),
                       float(penalty), None if seed is None else int(seed), infill, raw_text, _stop_texts(inputs))


def _raw_prompt_text(inputs, infill: bool, prompt) -> Optional[str]:
    """The `raw_prompt` input (a raw continuation), validated against the chat inputs beside it."""
    from chatglm.serving.raw_prompt import check_raw_prompt

    value = _single("raw_prompt", inputs.get("raw_prompt"))
    if value is None:
        return None
    if infill:
        raise RequestError("inputs 'raw_prompt' and 'infill' exclude each other")
    text = _text("raw_prompt", value, MAX_PROMPT_BYTES)
    history = _single("history", inputs.get("history"))
    history_text = "" if history is None else _text("history", history, MAX_HISTORY_BYTES)
    check_raw_prompt(text, "" if prompt is None else _text("prompt", prompt, MAX_PROMPT_BYTES),
                     bool(parse_history(history_text)))
    return text


def _stop_texts(inputs) -> Tuple[str, ...]:
    from chatglm.serving.stop_texts import MAX_STOP_BYTES, parse_stop

    value = _single("stop", inputs.get("stop"))
    return () if value is None else parse_stop(_text("stop", value, MAX_STOP_BYTES))


# ---------------------------------------------------------------------------------------------- history


def _literal_depth(node: ast.AST) -> int:
    """Nesting depth of containers in a parsed literal, computed iteratively (no recursion on hostile input)."""
    deepest = 0
    stack = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            depth += 1
            deepest = max(deepest, depth)
        for child in ast.iter_child_nodes(current):
            stack.append((child, depth))
    return deepest


def _load_history(text: str):
    try:
        return json.loads(text)
    except RecursionError:
        raise RequestError("history is nested too deeply") from None
    except ValueError as json_error:
        json_message = str(json_error)
    # The tutorial's clients send str(list_of_dicts), i.e. a Python literal. Parse it without evaluating code.
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise RequestError(f"history is neither JSON nor a Python literal ({json_message})") from None
    if _literal_depth(tree) > MAX_LITERAL_DEPTH:
        raise RequestError("history is nested too deeply")
    try:
        return ast.literal_eval(tree)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise RequestError("history must be a list of message objects (only literals are accepted, code is never run)") from None


def parse_history(text: str) -> List[Dict[str, Any]]:
    """Validates history: a list of {role, content, metadata?, tools? (system only)}; empty text = []."""
    if not text.strip():
        return []
    value = _load_history(text)
    if not isinstance(value, list):
        raise RequestError(f"history must be a JSON list of messages, got {type(value).__name__}")
    if len(value) > MAX_HISTORY_MESSAGES:
        raise RequestError(f"history has too many messages: {len(value)} (limit {MAX_HISTORY_MESSAGES})")
    messages = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise RequestError(f"history[{i}] must be an object with 'role' and 'content', got {type(item).__name__}")
        unknown = sorted(_show(k) for k in item if k not in MESSAGE_KEYS)
        if unknown:
            raise RequestError(f"history[{i}] has unknown keys: {', '.join(unknown[:5])}")
        role = item.get("role")
        if role not in ROLES:
            raise RequestError(f"history[{i}].role must be one of {', '.join(ROLES)}, got {_show(role)}")
        content = item.get("content")
        if not isinstance(content, str):
            raise RequestError(f"history[{i}].content must be a string")
        metadata = item.get("metadata", "")
        if metadata is None:
            metadata = ""
        if not isinstance(metadata, str):
            raise RequestError(f"history[{i}].metadata must be a string")
        message: Dict[str, Any] = {"role": role, "content": content}
        if metadata:
            message["metadata"] = metadata
        if "tools" in item:
            if role != "system" or not isinstance(item["tools"], list):
                raise RequestError(f"history[{i}].tools must be a list on a system message")
            message["tools"] = item["tools"]
        messages.append(message)
    return messages


def keep_last_turns(messages: Sequence[Dict[str, Any]], turns: Optional[int]) -> List[Dict[str, Any]]:
    """history_len: keep the last `turns` turns (a turn starts at a user message); a leading system stays."""
    messages = list(messages)
    if turns is None:
        return messages
    head = messages[:1] if messages and messages[0]["role"] == "system" else []
    body = messages[len(head):]
    if turns == 0:
        return head
    starts = [i for i, m in enumerate(body) if m["role"] == "user"]
    if len(starts) <= turns:
        return head + body
    return head + body[starts[-turns]:]


# ---------------------------------------------------------------------------------------------- prompt


def message_content(message: Mapping[str, Any]) -> str:
    """What ChatGLM3's tokenizer encodes for a message (a system message's tools are appended as JSON)."""
    content = message["content"]
    if message["role"] == "system" and "tools" in message:
        content = content + "\n" + json.dumps(message["tools"], indent=4, ensure_ascii=False)
    return content


def plan_prompt(engine, request: ChatRequest, limits: Limits) -> PromptPlan:
    """[gMASK] sop + messages + <|user|> prompt + <|assistant|>, dropping the oldest messages (never a leading
    system message) while the prompt exceeds max_input_tokens. A fill-in-the-middle request gets CodeGeeX4's
    infilling prompt instead (chatglm.serving.infill), within infill_max_input_tokens."""
    if request.raw_prompt is not None:
        from chatglm.serving.raw_prompt import raw_prompt_ids

        ids, stop_ids = raw_prompt_ids(engine, request.raw_prompt, limits.max_input_tokens)
        return PromptPlan(ids=ids, messages=[], trimmed=0, stop_ids=stop_ids, raw=True)
    if request.infill is not None:
        from chatglm.serving.infill import infill_ids

        ids, layout = infill_ids(engine, request.infill, min(limits.infill_max_input_tokens, limits.max_input_tokens))
        return PromptPlan(ids=ids, messages=[], trimmed=0, infill=layout, stop_ids=tuple(engine.infill_stop_ids()))
    messages = keep_last_turns(request.history, request.history_len)
    encoded = [engine.message_ids(m["role"], m.get("metadata", ""), message_content(m)) for m in messages]
    prompt_message = {"role": "user", "content": request.prompt}
    prefix = list(engine.prefix_ids())
    tail = list(engine.message_ids("user", "", request.prompt)) + list(engine.assistant_ids())
    total = len(prefix) + sum(len(e) for e in encoded) + len(tail)

    keep_head = 1 if messages and messages[0]["role"] == "system" else 0
    trimmed = 0
    while total > limits.max_input_tokens and len(messages) > keep_head:
        total -= len(encoded.pop(keep_head))
        messages.pop(keep_head)
        trimmed += 1
        # Never start the kept history in the middle of a turn (an answer without its question).
        while len(messages) > keep_head and messages[keep_head]["role"] != "user":
            total -= len(encoded.pop(keep_head))
            messages.pop(keep_head)
            trimmed += 1
    if total > limits.max_input_tokens:
        raise RequestError(f"prompt is too long: {total} tokens (limit max_input_tokens = {limits.max_input_tokens})")
    ids = prefix + [t for e in encoded for t in e] + tail
    return PromptPlan(ids=ids, messages=messages, trimmed=trimmed, prompt_message=prompt_message)
