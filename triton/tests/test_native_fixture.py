"""The native engine against ChatGLM3's own numbers (../shared/fixtures/chatglm3-tiny, see its README), loaded
through the production loader; and the loader's handling of the checkpoint formats and of bad checkpoints.

The fixture must be present (CI has ../shared beside the clone): a missing fixture fails these tests."""
import json
import shutil

import pytest
import torch

from chatglm.engine import native as native_engine
from chatglm.model.checkpoint import CheckpointError, load_weights, parameter_shapes, parse_config, read_config
from fixture_check import FIXTURE, Fixture, run_checks

TOLERANCE = 1e-4  # float32; the fixture's own cache-vs-full check is ~1.5e-6


@pytest.fixture(scope="module")
def fixture():
    try:
        return Fixture()
    except FileNotFoundError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def checks(fixture):
    return run_checks(fixture, fixture.engine())


@pytest.mark.parametrize("case", ["alone_prefill", "alone_decode", "padded_batch_prefill", "padded_batch_decode",
                                  "join_mid_generation_decode", "chunked_prefill_decode",
                                  "mixed_step_with_chunks"])
def test_logits_match_chatglm3s_own_code(checks, case):
    assert checks[case] < TOLERANCE, checks


def test_fixture_is_what_the_readme_describes(fixture):
    config = read_config(str(FIXTURE))
    assert (config.num_layers, config.hidden_size, config.num_attention_heads, config.multi_query_group_num,
            config.kv_channels, config.ffn_hidden_size, config.padded_vocab_size) == (2, 64, 4, 2, 16, 128, 416)
    assert [len(p) for p in fixture.prompts] == [7, 12, 20, 41] and fixture.steps == 12


def test_bfloat16_runs_the_same_model(fixture):
    checks = run_checks(fixture, fixture.engine(dtype="bfloat16"))
    assert max(checks.values()) < 0.1, checks  # bfloat16 keeps ~3 significant digits; RMSNorm stays float32


def _copy_fixture(tmp_path):
    target = tmp_path / "ckpt"
    target.mkdir(parents=True)
    shutil.copy(FIXTURE / "config.json", target / "config.json")
    return target


def _tensors():
    from safetensors.torch import load_file

    return load_file(str(FIXTURE / "model.safetensors"))


def test_pytorch_bin_shards_with_index_load_the_same_weights(fixture, tmp_path):
    target = _copy_fixture(tmp_path)
    tensors = _tensors()
    names = sorted(tensors)
    halves = {"pytorch_model-00001-of-00002.bin": names[::2], "pytorch_model-00002-of-00002.bin": names[1::2]}
    weight_map = {}
    for file, part in halves.items():
        torch.save({n: tensors[n] for n in part}, target / file)
        weight_map.update({n: file for n in part})
    (target / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    checks = run_checks(fixture, fixture.engine(weights_path=str(target)))
    assert max(checks.values()) < TOLERANCE, checks


def test_safetensors_shards_with_index_load(fixture, tmp_path):
    from safetensors.torch import save_file

    target = _copy_fixture(tmp_path)
    tensors = _tensors()
    names = sorted(tensors)
    weight_map = {}
    for k, part in enumerate((names[:5], names[5:])):
        file = f"model-0000{k + 1}-of-00002.safetensors"
        save_file({n: tensors[n].contiguous() for n in part}, str(target / file))
        weight_map.update({n: file for n in part})
    (target / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    checks = run_checks(fixture, fixture.engine(weights_path=str(target)))
    assert checks["alone_decode"] < TOLERANCE
    # Each shard is announced before it is read, numbered: the extension shows "loading weights i/n".
    seen = []
    load_weights(str(target), read_config(str(target)), torch.float32, "cpu",
                 on_shard=lambda i, n, path: seen.append((i, n, path.rsplit("/", 1)[-1])))
    assert seen == [(1, 2, "model-00001-of-00002.safetensors"), (2, 2, "model-00002-of-00002.safetensors")]


def _load_error(fixture, folder) -> str:
    with pytest.raises(CheckpointError) as info:
        fixture.engine(weights_path=str(folder))
    return str(info.value)


def test_broken_checkpoints_fail_the_load_with_what_is_wrong(fixture, tmp_path):
    from safetensors.torch import save_file

    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no config.json" in _load_error(fixture, empty)
    no_weights = _copy_fixture(tmp_path / "a")
    assert "no weights" in _load_error(fixture, no_weights)

    tensors = _tensors()
    missing = {k: v for k, v in tensors.items() if "layers.1.mlp.dense_4h_to_h" not in k}
    save_file(missing, str(no_weights / "model.safetensors"))
    assert "missing 1 tensors: transformer.encoder.layers.1.mlp.dense_4h_to_h.weight" in _load_error(fixture, no_weights)

    wrong = dict(tensors, **{"transformer.output_layer.weight": torch.zeros(415, 64),
                             "transformer.prefix_encoder.embedding.weight": torch.zeros(2, 2)})
    save_file(wrong, str(no_weights / "model.safetensors"))
    message = _load_error(fixture, no_weights)
    assert "wrong shapes: transformer.output_layer.weight (415, 64) (expected (416, 64))" in message
    assert "unexpected tensors: transformer.prefix_encoder.embedding.weight" in message

    index = _copy_fixture(tmp_path / "b")
    (index / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"x": "model-1-of-2.safetensors"}}))
    assert "names shards that are missing: model-1-of-2.safetensors" in _load_error(fixture, index)


def test_config_values_the_forward_pass_does_not_implement_are_load_errors():
    raw = json.loads((FIXTURE / "config.json").read_text())
    parse_config(raw)  # the fixture itself is fine
    cases = [
        ({"rmsnorm": False}, "LayerNorm checkpoints (rmsnorm false) are not supported"),
        ({"add_bias_linear": True}, "add_bias_linear"),
        ({"pre_seq_len": 128}, "prefix-tuned"),
        ({"quantization_bit": 4}, "quantized checkpoints are not supported"),
        ({"multi_query_group_num": 3}, "must be a multiple of multi_query_group_num (3)"),
        ({"kv_channels": 18}, "kv_channels must be a positive multiple of 4"),
        ({"num_layers": 0}, "num_layers must be a positive integer"),
        ({"layernorm_epsilon": "tiny"}, "layernorm_epsilon"),
        ({"sliding_window": 4096}, "unknown keys sliding_window"),
        ({"model_type": "llama"}, "transformers' own layout (model_type 'llama')"),
    ]
    for change, expected in cases:
        with pytest.raises(CheckpointError, match="config.json: ") as info:
            parse_config({**raw, **change})
        assert expected in str(info.value), (change, str(info.value))
    assert parse_config({**raw, "rope_ratio": 50}).rope_ratio == 50.0  # the -32k variant


def test_chatglm3_6b_shapes():
    """The real checkpoint's config (reference §8.1): 28 layers, 4096 wide, 2 KV groups, ~6.2 B parameters."""
    config = parse_config({"num_layers": 28, "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128,
                           "multi_query_attention": True, "multi_query_group_num": 2, "ffn_hidden_size": 13696,
                           "padded_vocab_size": 65024, "layernorm_epsilon": 1e-5, "add_qkv_bias": True,
                           "post_layer_norm": True, "rmsnorm": True, "seq_length": 8192, "original_rope": True})
    count = sum(torch.Size(s).numel() for s in parameter_shapes(config).values())
    assert 6.2e9 < count < 6.3e9
    assert config.kv_bytes_per_token(torch.float16) == 28 * 1024  # 2 (K, V) x 28 layers x 2 groups x 128 x 2 bytes


def test_weights_plus_cache_that_do_not_fit_fail_before_loading(fixture, monkeypatch):
    monkeypatch.setattr(native_engine, "free_memory_bytes", lambda device: 100_000)
    message = _load_error(fixture, FIXTURE)
    assert "the model does not fit: weights" in message and "KV cache" in message and "Not even 1 row" in message


def test_float16_on_a_cpu_without_half_kernels_is_a_clear_load_error(fixture):
    try:
        torch.nn.functional.linear(torch.ones(1, 2, dtype=torch.float16), torch.ones(2, 2, dtype=torch.float16))
    except RuntimeError:
        with pytest.raises(CheckpointError, match="dtype float16 is not supported on cpu"):
            fixture.engine(dtype="float16")
    else:
        assert fixture.engine(dtype="float16") is not None  # a torch with CPU half kernels just runs it


def test_an_unreadable_shard_is_named(fixture, tmp_path):
    """A truncated .safetensors and a corrupt .bin: the load error names the file (and says to fetch it again)."""
    truncated = _copy_fixture(tmp_path / "s")
    data = (FIXTURE / "model.safetensors").read_bytes()
    (truncated / "model.safetensors").write_bytes(data[: len(data) // 2])
    message = _load_error(fixture, truncated)
    assert message.startswith(f"cannot read {truncated / 'model.safetensors'}: "), message
    assert "truncated or corrupt" in message

    corrupt = _copy_fixture(tmp_path / "b")
    torch.save(_tensors(), corrupt / "pytorch_model.bin")
    raw = (corrupt / "pytorch_model.bin").read_bytes()
    (corrupt / "pytorch_model.bin").write_bytes(raw[:100] + b"\0" * 64 + raw[164:len(raw) // 3])
    message = _load_error(fixture, corrupt)
    assert message.startswith(f"cannot read {corrupt / 'pytorch_model.bin'}: "), message


def test_a_tensor_in_two_shards_is_a_load_error(fixture, tmp_path):
    from safetensors.torch import save_file

    target = _copy_fixture(tmp_path)
    tensors = _tensors()
    names = sorted(tensors)
    twice = names[0]
    weight_map = {}
    for k, part in enumerate((names[:5], names[5:] + [twice])):
        file = f"model-0000{k + 1}-of-00002.safetensors"
        save_file({n: tensors[n].contiguous() for n in part}, str(target / file))
        weight_map.update({n: file for n in part})
    (target / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    message = _load_error(fixture, target)
    assert f"tensor {twice} is in two shards: model-00001-of-00002.safetensors and model-00002-of-00002.safetensors" \
        in message


def test_a_checkpoint_without_multi_query_attention_is_refused_at_load():
    raw = json.loads((FIXTURE / "config.json").read_text())
    for value in (False, None):
        config = dict(raw, multi_query_attention=value) if value is not None else \
            {k: v for k, v in raw.items() if k != "multi_query_attention"}
        with pytest.raises(CheckpointError, match="checkpoints without multi-query attention .* are not supported"):
            parse_config(config)


def test_generation_config_gives_the_top_k_default(tmp_path):
    from chatglm.model.checkpoint import generation_defaults

    assert generation_defaults(str(tmp_path)) == {}  # absent: transformers' 50 applies (request.DEFAULT_TOP_K)
    (tmp_path / "generation_config.json").write_text(json.dumps({"top_k": 20, "do_sample": True}))
    assert generation_defaults(str(tmp_path)) == {"top_k": 20}
    (tmp_path / "generation_config.json").write_text("{not json")
    assert generation_defaults(str(tmp_path)) == {}
