"""The fixture's int8 half (../shared/fixtures/chatglm3-tiny, golden-int8.*, see its README): ChatGLM3's own
`quantize(8)` weights and scales of the tiny checkpoint, and THUDM's logits with them. `Int8Fixture` runs the same
checks as fixture_check.Fixture (alone, padded batch, joining, chunked) against those logits, through the native
engine loaded with `quantization: int8`. Used by tests/test_quantization.py and gpu_check.py's int8 part."""
from __future__ import annotations

import json
from pathlib import Path

from chatglm.engine.native import NativeEngine
from chatglm.engine.types import EngineOptions
from fixture_check import FIXTURE, Fixture, FixtureTokenizer


class Int8Fixture(Fixture):
    def __init__(self, path: Path = FIXTURE):
        from safetensors.torch import load_file

        super().__init__(path)
        if not (path / "golden-int8.json").is_file():
            raise FileNotFoundError(f"the fixture's int8 files are missing: {path / 'golden-int8.json'}")
        golden = json.loads((path / "golden-int8.json").read_text(encoding="utf-8"))
        self.quantized_layers = golden["quantized_layers"]
        self.greedy = [case["greedy_tokens"] for case in golden["cases"]]
        tensors = load_file(str(path / "golden-int8.safetensors"))
        self.prefill = [tensors[f"int8_prefill_logits_{i}"] for i in range(len(self.prompts))]
        self.decode = [tensors[f"int8_decode_logits_{i}"] for i in range(len(self.prompts))]
        self.weights_int8 = {layer: tensors[layer + ".weight_int8"] for layer in self.quantized_layers}
        self.scales = {layer: tensors[layer + ".weight_scale"] for layer in self.quantized_layers}

    def engine(self, device: str = "cpu", dtype: str = "float32", rows: int = 4, weights_path: str = "",
               quantization: str = "int8") -> NativeEngine:
        options = EngineOptions(weights_path=weights_path or str(self.path), dtype=dtype, device=device, max_rows=rows,
                                context_needed=128, parameters={"quantization": quantization})
        return NativeEngine(options, tokenizer=FixtureTokenizer(), sampling_seed=0)
