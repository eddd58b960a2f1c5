"""The model catalog (chatglm/catalog.json, read here by chatglm.catalog and by the extension through
src/core/models/catalog.ts, test/unit/models/catalog.test.ts): every entry is one the engine loads, its facts
agree with each other and with what the fixtures and the Hub publish."""
import copy
import json

import pytest
import torch

from chatglm.catalog import CATALOG_PATH, CatalogError, identify, load_catalog, parse_entry
from chatglm.model.checkpoint import read_config, weight_bytes
from fixture_check import GLM4_FIXTURE


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_the_catalog_lists_the_three_models(catalog):
    assert list(catalog) == ["chatglm3-6b", "glm-4-9b-chat", "codegeex4-all-9b"]
    assert json.loads(CATALOG_PATH.read_text(encoding="utf-8"))["default"] == "chatglm3-6b"
    assert [m.tokenizer for m in catalog.values()] == ["sentencepiece", "tiktoken", "tiktoken"]
    assert [m.fill_in_middle for m in catalog.values()] == [False, False, True]


def test_each_model_has_the_published_shape(catalog):
    """The issue's table: layers, vocabulary, rotary base, epsilon, context, KV cache per token."""
    shape = {m: (c.num_layers, c.padded_vocab_size, 10000 * c.rope_ratio, c.layernorm_epsilon, c.seq_length,
                 c.kv_bytes_per_token(torch.bfloat16))
             for m, c in ((m, e.checkpoint_config()) for m, e in catalog.items())}
    assert shape == {"chatglm3-6b": (28, 65024, 10000, 1e-5, 8192, 28 << 10),
                     "glm-4-9b-chat": (40, 151552, 5_000_000, 1.5625e-7, 131072, 40 << 10),
                     "codegeex4-all-9b": (40, 151552, 5_000_000, 1e-5, 131072, 40 << 10)}


def test_weights_match_the_download_size(catalog):
    """The tensors the engine reads, in the checkpoint's own dtype, are the published files less their headers
    (and the inv_freq buffer): the config of each entry is the Hub checkpoint's."""
    for entry in catalog.values():
        if entry.download_bytes is None:
            continue
        dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16}[entry.weights_dtype]
        expected = weight_bytes(entry.checkpoint_config(), dtype)
        assert 0 < entry.download_bytes - expected < 0.001 * expected, entry.id


def test_glm4_special_ids_are_the_fixtures_shifted(catalog):
    """glm4-tiny numbers GLM-4's special tokens from 656 where the real model starts at 151329 (its README)."""
    golden = json.loads((GLM4_FIXTURE / "golden.json").read_text(encoding="utf-8"))
    for model in ("glm-4-9b-chat", "codegeex4-all-9b"):
        entry = catalog[model]
        shifted = {name: i + 151329 - 656 for name, i in golden["special_token_ids"].items()}
        for name, i in entry.special_token_ids.items():
            assert shifted["<|endoftext|>" if name == "eos" else name] == i, (model, name)
        assert [s + 656 - 151329 for s in entry.stop_ids] == golden["stop_token_ids"]


def test_the_fixture_config_is_not_a_catalog_model_and_the_catalog_configs_are(catalog):
    assert identify(read_config(str(GLM4_FIXTURE)), catalog) is None
    for entry in catalog.values():
        assert identify(entry.checkpoint_config(), catalog) is entry


def test_a_broken_entry_is_an_error_naming_it(catalog):
    raw = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))["models"][1]
    cases = [(("tokenizer",), "bpe", "tokenizer must be one of sentencepiece, tiktoken"),
             (("stopIds",), [151329], "stopIds must be eos, <|user|>, <|observation|>"),
             (("config", "num_layers"), 0, "num_layers must be a positive integer"),
             (("specialTokenIds", "<sop>"), None, "specialTokenIds has no id for '<sop>'")]
    for path, value, message in cases:
        broken = copy.deepcopy(raw)
        target = broken
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        with pytest.raises((CatalogError, ValueError), match="glm-4-9b-chat") as info:
            parse_entry(broken, 1)
        assert message in str(info.value)
