"""Reads a ChatGLM2/3 checkpoint folder: `config.json` (validated) and the weights, by ChatGLM3's own parameter
names, from `*.safetensors` or `pytorch_model*.bin` (single file or shards with their index).

Anything the native forward pass does not implement (LayerNorm instead of RMSNorm, biases on every linear layer,
prefix tuning, quantized weights, ...) or does not know is a load error that names the key, so a checkpoint that
would run wrongly never runs.
"""
from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Tuple

import torch

DTYPES = {"float16": torch.float16, "fp16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
          "float32": torch.float32, "fp32": torch.float32}

# Keys of config.json that do not change the arithmetic (dropout is off at inference, layer scaling and fp32
# softmax are the same maths as our scaled fp32 softmax), plus what transformers' PretrainedConfig writes.
IGNORED_KEYS = frozenset("""
    _name_or_path architectures auto_map model_type transformers_version torch_dtype use_cache
    attention_dropout hidden_dropout classifier_dropout bias_dropout_fusion attention_softmax_in_fp32
    apply_query_key_layer_scaling prefix_projection vocab_size eos_token_id pad_token_id bos_token_id
    multi_query_attention interleaved_qkv
    return_dict output_hidden_states output_attentions torchscript use_bfloat16 tf_legacy_loss pruned_heads
    is_encoder_decoder is_decoder cross_attention_hidden_size add_cross_attention tie_encoder_decoder max_length
    min_length do_sample early_stopping num_beams num_beam_groups diversity_penalty temperature top_k top_p
    typical_p repetition_penalty length_penalty no_repeat_ngram_size encoder_no_repeat_ngram_size bad_words_ids
    num_return_sequences chunk_size_feed_forward output_scores return_dict_in_generate forced_bos_token_id
    forced_eos_token_id remove_invalid_values exponential_decay_length_penalty suppress_tokens
    begin_suppress_tokens finetuning_task id2label label2id tokenizer_class prefix sep_token_id
    decoder_start_token_id task_specific_params problem_type
""".split())
# Keys whose only supported value is fixed: (value the forward pass implements, why another one is refused).
FIXED_KEYS = {
    "rmsnorm": (True, "LayerNorm checkpoints (rmsnorm false) are not supported"),
    "add_bias_linear": (False, "biases on every linear layer (add_bias_linear) are not supported"),
    "apply_residual_connection_post_layernorm": (False, "residuals after the layer norm are not supported"),
    "fp32_residual_connection": (False, "fp32 residual connections are not supported"),
    "original_rope": (True, "only ChatGLM's original rotary layout is supported"),
    "tie_word_embeddings": (False, "tied input/output embeddings are not supported"),
    "quantization_bit": (0, "quantized checkpoints are not supported: use the float16 weights"),
    "pre_seq_len": (None, "prefix-tuned (P-Tuning v2) checkpoints are not supported"),
}
INV_FREQ = "transformer.rotary_pos_emb.inv_freq"  # a buffer ChatGLM recomputes anyway; accepted and ignored


class CheckpointError(ValueError):
    """The checkpoint cannot be served; the message says why (it becomes the load error Triton reports)."""


@dataclass(frozen=True)
class ChatGLMConfig:
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    kv_channels: int  # head dimension
    multi_query_group_num: int  # key/value heads (ChatGLM3-6B: 2)
    ffn_hidden_size: int
    padded_vocab_size: int
    layernorm_epsilon: float
    add_qkv_bias: bool
    post_layer_norm: bool
    seq_length: int  # longest context the model was trained for
    rope_ratio: float = 1.0  # the -32k/-128k variants stretch the rotary base

    @property
    def head_dim(self) -> int:
        return self.kv_channels

    @property
    def rotary_dim(self) -> int:
        """ChatGLM rotates the first half of each head, in (even, odd) pairs."""
        return self.kv_channels // 2

    @property
    def qkv_size(self) -> int:
        return (self.num_attention_heads + 2 * self.multi_query_group_num) * self.kv_channels

    def kv_bytes_per_token(self, dtype: torch.dtype) -> int:
        element = torch.tensor([], dtype=dtype).element_size()
        return 2 * self.num_layers * self.multi_query_group_num * self.kv_channels * element


_FIELDS = frozenset(ChatGLMConfig.__dataclass_fields__)


def parse_config(raw: Mapping, source: str = "config.json") -> ChatGLMConfig:
    """Validates a ChatGLM config dict; every problem is listed in one CheckpointError."""
    problems: List[str] = []

    def integer(key: str, default: Optional[int] = None) -> int:
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(f"{key} must be a positive integer, got {value!r}")
            return 1
        return value

    def flag(key: str, default: Optional[bool] = None) -> bool:
        value = raw.get(key, default)
        if not isinstance(value, bool):
            problems.append(f"{key} must be true or false, got {value!r}")
            return False
        return value

    foreign = foreign_layout(raw)
    if foreign:
        raise CheckpointError(f"{source}: {foreign}")
    unknown = sorted(k for k in raw if k not in IGNORED_KEYS and k not in FIXED_KEYS and k not in _FIELDS
                     and k != "num_hidden_layers")
    if unknown:
        problems.append(f"unknown keys {', '.join(unknown)} (the native engine does not know what they change)")
    for key, (expected, why) in FIXED_KEYS.items():
        if key in raw and raw[key] != expected and not (expected == 0 and raw[key] is None):
            problems.append(f"{key} = {raw[key]!r}: {why}")

    layers, hidden, heads = integer("num_layers"), integer("hidden_size"), integer("num_attention_heads")
    if "num_hidden_layers" in raw and raw["num_hidden_layers"] != layers:  # GLM-4's config states both
        problems.append(f"num_hidden_layers ({raw['num_hidden_layers']!r}) differs from num_layers ({layers})")
    kv_channels = raw.get("kv_channels")
    if kv_channels is None and hidden % heads == 0:
        kv_channels = hidden // heads
    if isinstance(kv_channels, bool) or not isinstance(kv_channels, int) or kv_channels < 4 or kv_channels % 4:
        problems.append(f"kv_channels must be a positive multiple of 4 (rotary on half of each head), got {kv_channels!r}")
        kv_channels = 4
    if raw.get("multi_query_attention", False) is not True:
        # Without multi-query attention THUDM's code lays query_key_value out per head ([q k v] of head 0, then
        # head 1, ...); the forward pass reads the grouped layout ([all q][all k][all v]) and would compute garbage.
        problems.append(f"multi_query_attention = {raw.get('multi_query_attention', False)!r}: checkpoints without "
                        f"multi-query attention (per-head query_key_value layout) are not supported")
    groups = integer("multi_query_group_num", heads) if raw.get("multi_query_attention", False) else heads
    if heads % groups:
        problems.append(f"num_attention_heads ({heads}) must be a multiple of multi_query_group_num ({groups})")
    epsilon = raw.get("layernorm_epsilon")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < 1:
        problems.append(f"layernorm_epsilon must be a small positive number, got {epsilon!r}")
        epsilon = 1e-5
    rope_ratio = raw.get("rope_ratio", 1.0)
    if isinstance(rope_ratio, bool) or not isinstance(rope_ratio, (int, float)) or rope_ratio <= 0:
        problems.append(f"rope_ratio must be a positive number, got {rope_ratio!r}")
        rope_ratio = 1.0
    config = ChatGLMConfig(
        num_layers=layers, hidden_size=hidden, num_attention_heads=heads, kv_channels=kv_channels,
        multi_query_group_num=groups, ffn_hidden_size=integer("ffn_hidden_size"),
        padded_vocab_size=integer("padded_vocab_size"), layernorm_epsilon=float(epsilon),
        add_qkv_bias=flag("add_qkv_bias", False), post_layer_norm=flag("post_layer_norm", True),
        seq_length=integer("seq_length"), rope_ratio=float(rope_ratio),
    )
    if problems:
        raise CheckpointError(f"{source}: " + "; ".join(problems))
    return config


# Layouts of the same models that we do not load, and what to fetch instead: transformers' own GlmForCausalLM
# (THUDM/glm-4-9b-chat-hf, and any THUDM repository revision converted to it: other names, split q/k/v).
_FOREIGN_ARCHITECTURES = {"GlmForCausalLM", "Glm4ForCausalLM"}


def _fetch_hint() -> str:
    """What to fetch instead: the catalog's repositories at their revisions (chatglm/catalog.json)."""
    from chatglm.catalog import load_catalog  # the catalog reads configs through this module: imported late

    where = ", ".join(f"{m.repo} at revision {m.revision}" for m in load_catalog().values())
    return (f"fetch the THUDM-format checkpoint instead ({where}; its config.json has model_type 'chatglm' and "
            f"architectures ChatGLMModel or ChatGLMForConditionalGeneration)")


def foreign_layout(raw: Mapping) -> Optional[str]:
    """Why a config.json describes a layout the native engine does not load, or None."""
    architectures = raw.get("architectures") or []
    if not isinstance(architectures, list):
        architectures = [architectures]
    foreign = sorted(str(a) for a in architectures if a in _FOREIGN_ARCHITECTURES)
    model_type = raw.get("model_type", "chatglm")
    if foreign or model_type != "chatglm":
        what = f"architectures {', '.join(foreign)}" if foreign else f"model_type {model_type!r}"
        return f"this checkpoint uses transformers' own layout ({what}), which the native engine does not load: {_fetch_hint()}"
    return None


def read_config(folder: str) -> ChatGLMConfig:
    path = os.path.join(folder, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"no config.json in {folder!r}: weights_path must be a ChatGLM3 checkpoint folder") from None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"cannot read {path}: {exc}") from None
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path} must hold a JSON object")
    return parse_config(raw, path)


def parameter_shapes(config: ChatGLMConfig) -> Dict[str, Tuple[int, ...]]:
    """Every tensor the forward pass reads, by ChatGLM3's parameter name."""
    h, f, v = config.hidden_size, config.ffn_hidden_size, config.padded_vocab_size
    shapes = {"transformer.embedding.word_embeddings.weight": (v, h), "transformer.output_layer.weight": (v, h)}
    for i in range(config.num_layers):
        layer = f"transformer.encoder.layers.{i}."
        shapes[layer + "input_layernorm.weight"] = (h,)
        shapes[layer + "self_attention.query_key_value.weight"] = (config.qkv_size, h)
        if config.add_qkv_bias:
            shapes[layer + "self_attention.query_key_value.bias"] = (config.qkv_size,)
        shapes[layer + "self_attention.dense.weight"] = (h, config.num_attention_heads * config.kv_channels)
        shapes[layer + "post_attention_layernorm.weight"] = (h,)
        shapes[layer + "mlp.dense_h_to_4h.weight"] = (2 * f, h)
        shapes[layer + "mlp.dense_4h_to_h.weight"] = (h, f)
    if config.post_layer_norm:
        shapes["transformer.encoder.final_layernorm.weight"] = (h,)
    return shapes


def weight_bytes(config: ChatGLMConfig, dtype: torch.dtype) -> int:
    element = torch.tensor([], dtype=dtype).element_size()
    total = 0
    for shape in parameter_shapes(config).values():
        count = 1
        for dim in shape:
            count *= dim
        total += count * element
    return total


def checkpoint_files(folder: str) -> List[str]:
    """The weight files, safetensors first: a sharded index, a single file, then the same for pytorch .bin."""
    for index, single in (("model.safetensors.index.json", "model.safetensors"),
                          ("pytorch_model.bin.index.json", "pytorch_model.bin")):
        index_path = os.path.join(folder, index)
        if os.path.isfile(index_path):
            try:
                with open(index_path, encoding="utf-8") as f:
                    weight_map = json.load(f)["weight_map"]
                files = sorted(set(weight_map.values()))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                raise CheckpointError(f"cannot read the shard index {index_path}: {exc!r}") from None
            missing = [name for name in files if not os.path.isfile(os.path.join(folder, name))]
            if missing:
                raise CheckpointError(f"{index_path} names shards that are missing: {', '.join(missing)}")
            return [os.path.join(folder, name) for name in files]
        if os.path.isfile(os.path.join(folder, single)):
            return [os.path.join(folder, single)]
    raise CheckpointError(f"no weights in {folder!r}: expected *.safetensors or pytorch_model*.bin (with their index)")


def _read_shard(path: str) -> Iterable[Tuple[str, torch.Tensor]]:
    """(name, tensor) of one shard; a file that cannot be read (truncated, corrupt, not a checkpoint) is a load
    error naming it."""
    try:
        yield from _shard_tensors(path)
    except CheckpointError:
        raise
    except Exception as exc:  # noqa: BLE001 - safetensors, pickle and zip each raise their own kinds
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"cannot read {path}: {detail[:300]} (the file is truncated or corrupt: download it "
                              f"again)") from None


def _shard_tensors(path: str) -> Iterable[Tuple[str, torch.Tensor]]:
    """(name, tensor) of one shard, one tensor at a time where the format allows it (safetensors)."""
    if path.endswith(".safetensors"):
        try:
            from safetensors import safe_open
        except ImportError:
            raise CheckpointError("reading *.safetensors needs the safetensors package (pip install safetensors)") from None
        with safe_open(path, framework="pt", device="cpu") as f:
            for name in f.keys():
                yield name, f.get_tensor(name)
        return
    kwargs = {"map_location": "cpu"}
    parameters = inspect.signature(torch.load).parameters
    if "weights_only" in parameters:
        kwargs["weights_only"] = True  # tensors only: a .bin is a pickle, and pickles can run code
    if "mmap" in parameters:
        kwargs["mmap"] = True  # torch >= 2.1: pages in what is read instead of the whole shard
    state = torch.load(path, **kwargs)
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} does not hold a state dict")
    yield from state.items()


def load_weights(folder: str, config: ChatGLMConfig, dtype: torch.dtype, device,
                 convert: Optional[Callable[[str, torch.Tensor], object]] = None,
                 on_shard: Optional[Callable[[int, int, str], None]] = None) -> Dict[str, torch.Tensor]:
    """Every tensor of `parameter_shapes`, converted to `dtype` on `device` shard by shard (so the host holds one
    shard at a time), or by `convert(name, tensor)` as it is read (int8: chatglm.model.quantization.load_converter).
    Missing, unexpected or misshapen tensors are one load error naming them. `on_shard(i, n, path)` is told before
    shard i of n (1-based) is read: the load's progress as the extension shows it."""
    expected = parameter_shapes(config)
    tensors: Dict[str, torch.Tensor] = {}
    unexpected, misshapen = [], []
    source: Dict[str, str] = {}
    files = checkpoint_files(folder)
    for number, path in enumerate(files, start=1):
        if on_shard is not None:
            on_shard(number, len(files), path)
        for name, tensor in _read_shard(path):
            if name == INV_FREQ:
                continue
            if name in source:  # which copy would win is an accident of file order: refuse instead
                raise CheckpointError(f"tensor {name} is in two shards: {os.path.basename(source[name])} and "
                                      f"{os.path.basename(path)} ({folder!r})")
            source[name] = path
            if name not in expected:
                unexpected.append(name)
            elif tuple(tensor.shape) != expected[name]:
                misshapen.append(f"{name} {tuple(tensor.shape)} (expected {expected[name]})")
            else:
                tensors[name] = convert(name, tensor) if convert else tensor.to(device=device, dtype=dtype)
    missing = sorted(set(expected) - set(tensors))
    problems = []
    if missing:
        problems.append(f"missing {len(missing)} tensors: {', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}")
    if unexpected:
        problems.append(f"unexpected tensors: {', '.join(sorted(unexpected)[:6])}{' ...' if len(unexpected) > 6 else ''}")
    if misshapen:
        problems.append(f"wrong shapes: {', '.join(misshapen[:6])}")
    if problems:
        raise CheckpointError(f"the weights in {folder!r} do not match config.json: " + "; ".join(problems))
    return tensors


def generation_defaults(folder: str) -> Dict[str, object]:
    """The sampling defaults of the checkpoint's generation_config.json (only the keys the model serves: top_k);
    {} when the file is absent or unreadable (then transformers' defaults apply, as for ChatGLM3's chat())."""
    path = os.path.join(folder, "generation_config.json") if folder else ""
    if not path or not os.path.isfile(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, ValueError):
        return {}
    top_k = raw.get("top_k") if isinstance(raw, dict) else None
    return {"top_k": top_k} if isinstance(top_k, int) and not isinstance(top_k, bool) and top_k >= 0 else {}

