"""A small protobuf text-format reader for config.pbtxt (enough for Triton model configs), producing the JSON
shape Triton hands to `initialize` as args["model_config"] (maps for `parameters` and warmup `inputs`)."""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Tuple

_TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"#]+')
_REPEATED = {"input", "output", "instance_group", "model_warmup", "gpus", "dims", "preferred_batch_size"}
_MAPS = {"parameters", "inputs"}


def _tokens(text: str) -> List[str]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"unexpected character at {pos}: {text[pos:pos + 20]!r}")
        pos = m.end()
        tok = m.group(0)
        if tok.strip() and not tok.startswith("#"):
            out.append(tok)
    return out


def _scalar(tok: str) -> Any:
    if tok.startswith('"'):
        return json.loads(tok)
    if tok in ("true", "false"):
        return tok == "true"
    if re.fullmatch(r"-?\d+", tok):
        return int(tok)
    if re.fullmatch(r"-?\d+\.\d*(e-?\d+)?", tok):
        return float(tok)
    return tok  # enum


def _message(toks: List[str], i: int, end: str) -> Tuple[Dict[str, List[Any]], int]:
    fields: Dict[str, List[Any]] = {}
    while toks[i] != end:
        name = toks[i]
        i += 1
        if toks[i] == ":":
            i += 1
        if toks[i] == "[":
            i += 1
            values = []
            while toks[i] != "]":
                value, i = _value(toks, i)
                values.append(value)
                if toks[i] == ",":
                    i += 1
            i += 1
            fields.setdefault(name, []).extend(values)
        else:
            value, i = _value(toks, i)
            fields.setdefault(name, []).append(value)
        if toks[i] in (",", ";"):
            i += 1
    return fields, i + 1


def _value(toks: List[str], i: int):
    if toks[i] == "{":
        return _message(toks, i + 1, "}")
    return _scalar(toks[i]), i + 1


def _normalise(name: str, values: List[Any]):
    values = [_to_json(v) if isinstance(v, dict) else v for v in values]
    if name in _MAPS:
        return {v["key"]: v["value"] for v in values}
    if name in _REPEATED:
        return values
    if len(values) != 1:
        raise ValueError(f"field {name} repeated")
    return values[0]


def _to_json(fields: Dict[str, List[Any]]) -> Dict[str, Any]:
    return {name: _normalise(name, values) for name, values in fields.items()}


def parse_pbtxt(text: str) -> Dict[str, Any]:
    toks = _tokens(text) + ["<end>"]
    fields, _ = _message(toks, 0, "<end>")
    return _to_json(fields)
