"""The model catalog (catalog.json beside this file; the extension's bundle reads the same file through
src/core/models/catalog.ts): per model its Hub repository and revision, expected files, tokenizer kind, prompt
layout, stop ids, config, scores and licence. The engine reads it to name the model it loaded and to build the
config the memory plan uses for each model; a malformed catalog is an error naming the entry and field."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

from chatglm.model.checkpoint import ChatGLMConfig, parse_config

CATALOG_PATH = Path(__file__).resolve().parent / "catalog.json"
TOKENIZER_KINDS = ("sentencepiece", "tiktoken")
ROLES = ("system", "user", "assistant", "observation")
CONFIG_FIELDS = ("num_layers", "hidden_size", "num_attention_heads", "kv_channels", "multi_query_group_num",
                 "ffn_hidden_size", "padded_vocab_size", "add_qkv_bias", "post_layer_norm", "seq_length",
                 "rope_ratio", "layernorm_epsilon")


class CatalogError(ValueError):
    pass


@dataclass(frozen=True)
class ModelEntry:
    id: str
    display_name: str
    repo: str
    revision: str
    tokenizer: str
    prefix: Tuple[str, ...]
    special_token_ids: Mapping[str, int]
    stop_ids: Tuple[int, ...]
    fill_in_middle: bool
    config: Mapping[str, object]
    weights_dtype: str
    download_bytes: Optional[int]
    license_name: str
    license_url: str
    raw: Mapping[str, object]

    def checkpoint_config(self) -> ChatGLMConfig:
        """The model's ChatGLMConfig, as its config.json would give it (the memory plan's input)."""
        return parse_config({**self.config, "multi_query_attention": True, "rmsnorm": True, "original_rope": True},
                            f"catalog.json ({self.id})")


def _need(entry: Mapping, key: str, kind, where: str):
    value = entry.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise CatalogError(f"{where}: {key} must be {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def parse_entry(raw: Mapping, index: int) -> ModelEntry:
    where = f"catalog.json models[{index}]"
    model_id = _need(raw, "id", str, where)
    where = f"catalog.json {model_id!r}"
    hub, prompt, license_ = (_need(raw, key, dict, where) for key in ("hub", "prompt", "license"))
    tokenizer = _need(raw, "tokenizer", str, where)
    if tokenizer not in TOKENIZER_KINDS:
        raise CatalogError(f"{where}: tokenizer must be one of {', '.join(TOKENIZER_KINDS)}, got {tokenizer!r}")
    specials = _need(raw, "specialTokenIds", dict, where)
    roles = _need(prompt, "roles", dict, where + " prompt")
    prefix = tuple(_need(prompt, "prefix", list, where + " prompt"))
    for name in (*prefix, *(roles.get(r) for r in ROLES), "eos"):
        if not isinstance(specials.get(name), int):
            raise CatalogError(f"{where}: specialTokenIds has no id for {name!r}")
    stop_ids = tuple(_need(raw, "stopIds", list, where))
    expected_stops = (specials["eos"], specials[roles["user"]], specials[roles["observation"]])
    if stop_ids != expected_stops:
        raise CatalogError(f"{where}: stopIds must be eos, <|user|>, <|observation|> {expected_stops}, got {stop_ids}")
    config = _need(raw, "config", dict, where)
    missing = [f for f in CONFIG_FIELDS if f not in config]
    if missing:
        raise CatalogError(f"{where}: config lacks {', '.join(missing)}")
    download = raw.get("downloadBytes")
    if download is not None and (not isinstance(download, int) or download <= 0):
        raise CatalogError(f"{where}: downloadBytes must be a positive integer or null, got {download!r}")
    entry = ModelEntry(
        id=model_id, display_name=_need(raw, "displayName", str, where), repo=_need(hub, "repo", str, where + " hub"),
        revision=_need(hub, "revision", str, where + " hub"), tokenizer=tokenizer, prefix=prefix,
        special_token_ids=dict(specials), stop_ids=stop_ids, fill_in_middle=_need(raw, "fillInMiddle", bool, where),
        config=dict(config), weights_dtype=_need(raw, "weightsDtype", str, where), download_bytes=download,
        license_name=_need(license_, "name", str, where + " license"), license_url=_need(license_, "url", str, where + " license"),
        raw=raw)
    entry.checkpoint_config()  # the config must be one the engine loads
    return entry


def load_catalog(path: Path = CATALOG_PATH) -> Dict[str, ModelEntry]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogError(f"cannot read {path}: {exc}") from None
    models: List[ModelEntry] = [parse_entry(m, i) for i, m in enumerate(_need(raw, "models", list, str(path)))]
    by_id = {m.id: m for m in models}
    if len(by_id) != len(models):
        raise CatalogError(f"{path}: model ids must be unique")
    if raw.get("default") not in by_id:
        raise CatalogError(f"{path}: default {raw.get('default')!r} is not a model of the catalog")
    return by_id


def identify(config: ChatGLMConfig, catalog: Optional[Mapping[str, ModelEntry]] = None) -> Optional[ModelEntry]:
    """The catalog model whose architecture a loaded config.json has (layers, sizes, vocabulary, rotary base,
    epsilon), or None for a checkpoint the catalog does not list (a fine-tune may still load)."""
    for entry in (catalog or load_catalog()).values():
        if entry.checkpoint_config() == config:
            return entry
    return None
