"""Fill-in-the-middle requests (input `infill`, code completion): validation and CodeGeeX4's infilling prompt.

The layout is THUDM's CodeGeeX4 infilling guide's (guides/Infilling_guideline.md in THUDM/CodeGeeX4; Continue's
`codegeexFimTemplate` builds the same):

    [gMASK] <sop> <|user|> "\\n" [###REFERENCE:\\n###PATH:{path}\\n{text}\\n ...] ###PATH:{path}\\n###LANGUAGE:{language}
    \\n###MODE:{LINE|BLOCK}\\n<|code_suffix|>{suffix}<|code_prefix|>{prefix}<|code_middle|> <|assistant|> "\\n"

`<|user|>` and `<|assistant|>` are special tokens. The three code markers are whatever the weights' own
tokenizer_config.json makes them: GLM-4's tokenizer (tokenization_chatglm.py: tiktoken ranks + the added tokens of
tokenizer_config.json, split out of the text first) has 14 added tokens, 151329 <|endoftext|> ... 151342
<|end_of_video|>, and no code markers, so with those files the markers are ordinary text and the user text between
the two special tokens is encoded as ONE string; GLM-4.5's tokenizer added them (151347-151349). Should a CodeGeeX4
tokenizer_config.json declare all three, each is its id and the text between them is encoded piece by piece, as
that tokenizer would do (marker_ids). Either way the client's text (prefix, suffix, references) is plain text, so
special-token text inside a file never becomes a special token. The sources: triton/README.md, "Prompt".

The prompt fits `budget` tokens: references are dropped first (the last ones first), then the prefix is cut from
its start and the suffix from its end, the suffix keeping at most a quarter of the room when both must be cut.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from chatglm.serving.request import RequestError

SUFFIX_MARK, PREFIX_MARK, MIDDLE_MARK = "<|code_suffix|>", "<|code_prefix|>", "<|code_middle|>"
# CodeGeeX4 may write the markers as text (they are ordinary tokens): the middle ends there, as Continue stops.
STOP_TEXTS = (SUFFIX_MARK, PREFIX_MARK, MIDDLE_MARK)
MODES = ("line", "block")
KEYS = frozenset(("prefix", "suffix", "path", "language", "mode", "references"))
REFERENCE_KEYS = frozenset(("path", "text"))
MAX_INFILL_BYTES = 1024 * 1024  # the whole `infill` input
MAX_PATH_CHARS = 1024
MAX_LANGUAGE_CHARS = 64
MAX_REFERENCES = 32
SUFFIX_SHARE = 4  # when both must be cut, the suffix keeps at most 1/SUFFIX_SHARE of the room


@dataclass(frozen=True)
class Reference:
    path: str
    text: str


@dataclass(frozen=True)
class InfillRequest:
    prefix: str
    suffix: str
    path: str = ""
    language: str = ""
    mode: str = "block"
    references: Tuple[Reference, ...] = ()


@dataclass(frozen=True)
class InfillLayout:
    """What the prompt kept after fitting the budget (logged; tests read it)."""

    prefix: str
    suffix: str
    references: Tuple[Reference, ...]


def _one_line(where: str, value, limit: int) -> str:
    if not isinstance(value, str):
        raise RequestError(f"infill.{where} must be a string, got {type(value).__name__}")
    if len(value) > limit:
        raise RequestError(f"infill.{where} is too long: {len(value)} characters (limit {limit})")
    if "\n" in value or "\r" in value:
        raise RequestError(f"infill.{where} must be one line (it is a header of the prompt)")
    return value


def parse_infill(text: str) -> InfillRequest:
    """The `infill` input: a JSON object {prefix, suffix, path?, language?, mode?, references?}; anything else is
    a RequestError naming the field."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise RequestError("infill is nested too deeply") from None
    except ValueError as exc:
        raise RequestError(f"infill must be a JSON object ({exc})") from None
    if not isinstance(value, dict):
        raise RequestError(f"infill must be a JSON object, got {type(value).__name__}")
    unknown = sorted(repr(k)[:40] for k in value if k not in KEYS)
    if unknown:
        raise RequestError(f"infill has unknown keys: {', '.join(unknown[:5])} (known: {', '.join(sorted(KEYS))})")
    for key in ("prefix", "suffix"):
        if key not in value:
            raise RequestError(f"infill.{key} is required")
        if not isinstance(value[key], str):
            raise RequestError(f"infill.{key} must be a string, got {type(value[key]).__name__}")
    mode = value.get("mode", "block")
    if mode not in MODES:
        raise RequestError(f"infill.mode must be one of {', '.join(MODES)}, got {repr(mode)[:40]}")
    raw_refs = value.get("references", [])
    if not isinstance(raw_refs, list):
        raise RequestError(f"infill.references must be a list, got {type(raw_refs).__name__}")
    if len(raw_refs) > MAX_REFERENCES:
        raise RequestError(f"infill.references has too many entries: {len(raw_refs)} (limit {MAX_REFERENCES})")
    references = []
    for i, ref in enumerate(raw_refs):
        if not isinstance(ref, dict):
            raise RequestError(f"infill.references[{i}] must be an object with 'path' and 'text'")
        extra = sorted(repr(k)[:40] for k in ref if k not in REFERENCE_KEYS)
        if extra:
            raise RequestError(f"infill.references[{i}] has unknown keys: {', '.join(extra[:5])}")
        if "path" not in ref or "text" not in ref:
            raise RequestError(f"infill.references[{i}] needs 'path' and 'text'")
        if not isinstance(ref["text"], str):
            raise RequestError(f"infill.references[{i}].text must be a string")
        references.append(Reference(_one_line(f"references[{i}].path", ref["path"], MAX_PATH_CHARS), ref["text"]))
    return InfillRequest(value["prefix"], value["suffix"], _one_line("path", value.get("path", ""), MAX_PATH_CHARS),
                         _one_line("language", value.get("language", ""), MAX_LANGUAGE_CHARS), mode, tuple(references))


def reference_text(ref: Reference) -> str:
    return f"###REFERENCE:\n###PATH:{ref.path}\n{ref.text}" + ("" if ref.text.endswith("\n") else "\n")


def header_text(request: InfillRequest, references: Sequence[Reference]) -> str:
    """The user message's text before the code markers."""
    return ("\n" + "".join(reference_text(r) for r in references)
            + f"###PATH:{request.path}\n###LANGUAGE:{request.language}\n###MODE:{request.mode.upper()}\n")


def user_text(request: InfillRequest, prefix: str, suffix: str, references: Sequence[Reference]) -> str:
    """The user message's text (after <|user|>, before <|assistant|>) with the markers as text."""
    return header_text(request, references) + f"{SUFFIX_MARK}{suffix}{PREFIX_MARK}{prefix}{MIDDLE_MARK}"


def marker_ids(engine) -> Optional[Tuple[int, int, int]]:
    """The markers' ids when the weights' tokenizer files declare all three as added tokens (a tokenizer then
    splits them out of the text before encoding the rest, as Hugging Face's does); None: they are plain text."""
    ids = [getattr(engine, "added_token_id", lambda _name: None)(m) for m in (SUFFIX_MARK, PREFIX_MARK, MIDDLE_MARK)]
    return None if any(i is None for i in ids) else (ids[0], ids[1], ids[2])


def _tail_text(text: str, ids: List[int], keep: int, decode: Callable) -> str:
    """The end of `text` that its last `keep` tokens hold (a character cut in two is left out)."""
    if keep <= 0:
        return ""
    if keep >= len(ids):
        return text
    kept = decode(ids[-keep:])
    while kept and not text.endswith(kept):
        kept = kept[1:]
    return kept


def _head_text(text: str, ids: List[int], keep: int, decode: Callable) -> str:
    if keep <= 0:
        return ""
    if keep >= len(ids):
        return text
    kept = decode(ids[:keep])
    while kept and not text.startswith(kept):
        kept = kept[:-1]
    return kept


def infill_ids(engine, request: InfillRequest, budget: int) -> Tuple[List[int], InfillLayout]:
    """The prompt ids within `budget` tokens, and what of the request they hold."""
    encode, decode = engine.text_ids, engine.decode
    head = list(engine.prefix_ids()) + [engine.special_id("<|user|>")]
    tail = [engine.special_id("<|assistant|>")] + list(encode("\n"))

    markers = marker_ids(engine)

    def build(prefix: str, suffix: str, refs: Sequence[Reference]) -> List[int]:
        if markers is None:
            return head + list(encode(user_text(request, prefix, suffix, refs))) + tail
        # Each piece of text on its own between the marker ids; the client's text stays plain text either way.
        suf, pre, mid = markers
        return (head + list(encode(header_text(request, refs))) + [suf] + list(encode(suffix)) + [pre]
                + list(encode(prefix)) + [mid] + tail)

    room = budget - len(build("", "", ()))
    if room < 0:
        raise RequestError(f"infill does not fit max_input_tokens for completions ({budget} tokens) even without "
                           f"code: shorten infill.path / infill.language")
    prefix_ids, suffix_ids = list(encode(request.prefix)), list(encode(request.suffix))
    if len(prefix_ids) + len(suffix_ids) <= room:
        ids = build(request.prefix, request.suffix, ())
        if len(ids) <= budget:
            kept: List[Reference] = []
            for ref in request.references:  # in the client's order while they fit; the rest are dropped
                candidate = build(request.prefix, request.suffix, kept + [ref])
                if len(candidate) > budget:
                    break
                kept.append(ref)
                ids = candidate
            return ids, InfillLayout(request.prefix, request.suffix, tuple(kept))
    # Cut: the suffix keeps at most a quarter of the room (less if the prefix is short), the prefix the rest. The
    # text boundaries may merge differently from the separate encodings: cut a little more until it fits.
    suffix_keep = min(len(suffix_ids), max(room // SUFFIX_SHARE, room - len(prefix_ids)))
    prefix_keep = min(len(prefix_ids), room - suffix_keep)
    for _ in range(64):
        prefix = _tail_text(request.prefix, prefix_ids, prefix_keep, decode)
        suffix = _head_text(request.suffix, suffix_ids, suffix_keep, decode)
        ids = build(prefix, suffix, ())
        excess = len(ids) - budget
        if excess <= 0:
            return ids, InfillLayout(prefix, suffix, ())
        if suffix_keep > 0 and suffix_keep * SUFFIX_SHARE > prefix_keep:
            suffix_keep = max(0, suffix_keep - excess)
        else:
            prefix_keep = max(0, prefix_keep - excess)
    raise RequestError(f"infill could not be fitted into {budget} tokens")  # not reached with byte-level BPE
