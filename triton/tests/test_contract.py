"""The pieces that must agree: warmup files ↔ warmup_requests.json ↔ config.pbtxt, config.pbtxt ↔ model.py ↔
README contract table, the pb_utils stand-in ↔ the real module, the image ↔ the tested versions."""
import ast
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest
import triton_python_backend_utils as standin

import gen_warmup
from chatglm.serving.request import MAX_HISTORY_BYTES, MAX_HISTORY_MESSAGES, MAX_LITERAL_DEPTH, MAX_PROMPT_BYTES, \
    MAX_TEMPERATURE, Limits, parse_request, plan_prompt
from chatglm.serving.io import INPUT_NAMES, OUTPUT_NAMES
from chatglm.serving.options import ServingOptions
from harness import MODEL_DIR, load_model, make_request, outcome_of, wait_for_finals
from pbtxt import parse_pbtxt
from tiny_engine import TinyEngine

ROOT = Path(__file__).resolve().parents[2]
CONFIG = parse_pbtxt((MODEL_DIR / "config.pbtxt").read_text(encoding="utf-8"))
PARAMS = {k: v["string_value"] for k, v in CONFIG["parameters"].items()}
WARMUP_DIR = MODEL_DIR / "warmup"
OPTIONAL_PARAMETERS = {"stream_interval_ms", "prefill_token_budget", "prefill_stall_target", "max_context",
                       "infill_max_input_tokens", "fill_in_middle"}  # documented, not rendered
TYPE_TO_README = {"TYPE_STRING": "STRING", "TYPE_FP32": "FP32", "TYPE_INT32": "INT32", "TYPE_INT64": "INT64"}
TYPE_TO_NUMPY = {"TYPE_STRING": np.object_, "TYPE_FP32": np.float32, "TYPE_INT32": np.int32, "TYPE_INT64": np.int64}


# ------------------------------------------------------------------------------------------------ warmup


def test_warmup_files_are_a_fresh_generation(tmp_path):
    assert gen_warmup.main(["--out", str(tmp_path)]) == 0
    fresh = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    committed = {p.name: p.read_bytes() for p in WARMUP_DIR.iterdir()}
    assert fresh == committed
    assert gen_warmup.main(["--check"]) == 0


def test_warmup_check_detects_a_stale_file(tmp_path, capsys):
    gen_warmup.main(["--out", str(tmp_path)])
    (tmp_path / "prompt.bin").write_bytes(b"\x00\x00\x00\x00")
    assert gen_warmup.main(["--out", str(tmp_path), "--check"]) == 1
    assert "prompt.bin" in capsys.readouterr().err


def test_warmup_files_use_tritons_binary_tensor_format():
    from tritonclient.utils import serialize_byte_tensor

    source = json.loads((ROOT / "triton" / "warmup_requests.json").read_text(encoding="utf-8"))
    for name in ("prompt", "history"):
        value = source[name] if isinstance(source[name], str) else json.dumps(source[name], ensure_ascii=False, separators=(",", ":"))
        expected = serialize_byte_tensor(np.array([value.encode("utf-8")], dtype=np.object_)).item()
        assert (WARMUP_DIR / f"{name}.bin").read_bytes() == expected
    assert (WARMUP_DIR / "max_new_tokens.bin").read_bytes() == np.array([source["max_new_tokens"]], dtype="<i8").tobytes()
    # The history is compact JSON, byte-identical to what JavaScript's JSON.stringify writes.
    assert (WARMUP_DIR / "history.bin").read_bytes()[4:] == json.dumps(source["history"], ensure_ascii=False, separators=(",", ":")).encode()


def test_warmup_files_decode_to_a_valid_request():
    inputs = {}
    for sample in CONFIG["model_warmup"]:
        for name, spec in sample["inputs"].items():
            data = (WARMUP_DIR / spec["input_data_file"]).read_bytes()
            if spec["data_type"] == "TYPE_STRING":
                arr = standin.deserialize_bytes_tensor(data)
            else:
                arr = np.frombuffer(data, dtype=np.dtype(TYPE_TO_NUMPY[spec["data_type"]]).newbyteorder("<"))
            assert arr.size == int(np.prod(spec["dims"])), name
            inputs[name] = arr.reshape([1] + spec["dims"])
    limits = Limits.from_parameters(PARAMS)
    request = parse_request(inputs, limits)
    assert request.prompt and request.history and request.max_new_tokens <= 16  # warmup stays short
    plan = plan_prompt(TinyEngine(), request, limits)
    assert plan.trimmed == 0 and len(plan.messages) == len(request.history)


def test_warmup_config_matches_inputs_and_files():
    inputs = {i["name"]: i for i in CONFIG["input"]}
    referenced = set()
    for sample in CONFIG["model_warmup"]:
        assert 1 <= sample["batch_size"] <= CONFIG["max_batch_size"]
        assert sample["batch_size"] >= 2, "warmup must exercise the batched path"
        for name, spec in sample["inputs"].items():
            assert spec["data_type"] == inputs[name]["data_type"] and spec["dims"] == inputs[name]["dims"]
            assert (WARMUP_DIR / spec["input_data_file"]).is_file()
            referenced.add(spec["input_data_file"])
        assert "prompt" in sample["inputs"]
    assert referenced == {p.name for p in WARMUP_DIR.iterdir()}


def test_warmup_runs_through_model_py_with_one_final_each():
    model = load_model()
    try:
        reqs = []
        for _ in range(CONFIG["model_warmup"][0]["batch_size"]):
            tensors = []
            for name, spec in CONFIG["model_warmup"][0]["inputs"].items():
                data = (WARMUP_DIR / spec["input_data_file"]).read_bytes()
                if spec["data_type"] == "TYPE_STRING":
                    arr = standin.deserialize_bytes_tensor(data).reshape(1, 1)
                else:
                    arr = np.frombuffer(data, dtype=TYPE_TO_NUMPY[spec["data_type"]]).reshape(1, 1)
                tensors.append(standin.Tensor(name, arr))
            reqs.append(standin.InferenceRequest(inputs=tensors))
        assert model.execute(reqs) is None
        wait_for_finals(reqs)  # the continuous scheduler answers on its engine thread
        outs = [outcome_of(r) for r in reqs]
    finally:
        model.finalize()
    assert all(o.finals == 1 and o.error is None and o.finish_reason == "length" for o in outs)


# ------------------------------------------------------------------------------------------------ config ↔ model.py


def test_model_reads_exactly_the_config_inputs():
    assert sorted(INPUT_NAMES) == sorted(i["name"] for i in CONFIG["input"])
    assert list(OUTPUT_NAMES) == [o["name"] for o in CONFIG["output"]]
    assert [i["name"] for i in CONFIG["input"] if not i.get("optional")] == ["prompt"]
    assert all(i["dims"] == [1] for i in CONFIG["input"] + CONFIG["output"])
    model_py = (MODEL_DIR / "1" / "model.py").read_text(encoding="utf-8")
    assert "read_inputs(" in model_py and '"prompt"' not in model_py  # the names live in chatglm.serving.io only


def test_integer_inputs_are_int64():
    """Triton's HTTP JSON parser narrows a number to an INT32 input's width silently (4294967303 became 7); an INT64
    input takes it intact, and the model's range check refuses it."""
    integers = {i["name"]: i["data_type"] for i in CONFIG["input"] if "INT" in i["data_type"]}
    assert integers == {name: "TYPE_INT64" for name in ("max_new_tokens", "history_len", "top_k", "seed")}


def test_model_outputs_match_config_names_and_types():
    model = load_model()
    try:
        req = make_request("hello", max_new_tokens=4, temperature=0.0)
        model.execute([req])
        wait_for_finals([req])
    finally:
        model.finalize()
    *deltas, (final, flags) = req.sender.responses
    assert flags == standin.TRITONSERVER_RESPONSE_COMPLETE_FINAL
    for response, _ in deltas:
        assert [t.name() for t in response.output_tensors()] == ["response"]
    tensors = {t.name(): t.as_numpy() for t in final.output_tensors()}
    assert sorted(tensors) == sorted(o["name"] for o in CONFIG["output"])
    for out in CONFIG["output"]:
        arr = tensors[out["name"]]
        assert arr.dtype == TYPE_TO_NUMPY[out["data_type"]], out["name"]
        assert list(arr.shape) == [1] + out["dims"]


def test_config_parameters_are_valid_for_the_model():
    from chatglm.model.checkpoint import DTYPES

    limits = Limits.from_parameters(PARAMS)
    assert PARAMS["engine"] == "native" and PARAMS["scheduler"] == "continuous" and (PARAMS["dtype"] == "auto" or PARAMS["dtype"] in DTYPES)
    options = ServingOptions.from_parameters(PARAMS, CONFIG["max_batch_size"])
    assert options.max_active_rows == CONFIG["max_batch_size"]
    # Triton's queue holds a burst above the model's own bound, so that "server busy" is the refusal (README)
    assert options.max_waiting + 1024 == CONFIG["dynamic_batching"]["default_queue_policy"]["max_queue_size"]
    assert limits.default_max_new_tokens <= limits.max_new_tokens_limit
    assert CONFIG["model_transaction_policy"]["decoupled"] is True
    assert all(g["kind"] == "KIND_GPU" for g in CONFIG["instance_group"])


# ------------------------------------------------------------------------------------------------ README


def readme_tables():
    text = (ROOT / "triton" / "README.md").read_text(encoding="utf-8")
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if current is None:
                current = {"header": cells, "rows": []}
                tables.append(current)
            else:
                current["rows"].append(dict(zip(current["header"], cells)))
        elif not line.startswith("|"):
            current = None
    return text, tables


def test_readme_contract_table_matches_config_and_limits():
    text, tables = readme_tables()
    contract = next(t for t in tables if t["header"][:3] == ["Name", "Kind", "Type"])
    rows = {(r["Kind"], r["Name"].strip("`")): r for r in contract["rows"]}
    assert {n for k, n in rows if k == "input"} == {i["name"] for i in CONFIG["input"]}
    assert {n for k, n in rows if k == "output"} == {o["name"] for o in CONFIG["output"]}
    for kind, key in (("input", "input"), ("output", "output")):
        for spec in CONFIG[key]:
            row = rows[(kind, spec["name"])]
            assert row["Type"] == TYPE_TO_README[spec["data_type"]], spec["name"]
            if kind == "input":
                assert row["Required"] == ("no" if spec.get("optional") else "yes"), spec["name"]
    limits = Limits.from_parameters(PARAMS)
    assert f"({limits.default_temperature:g})" in rows[("input", "temperature")]["Default"]
    assert f"({limits.default_top_p:g})" in rows[("input", "top_p")]["Default"]
    assert f"({limits.default_max_new_tokens})" in rows[("input", "max_new_tokens")]["Default"]
    assert f"({limits.max_new_tokens_limit})" in rows[("input", "max_new_tokens")]["Limits and errors"]
    assert f"≤ {MAX_TEMPERATURE:g}" in rows[("input", "temperature")]["Limits and errors"]
    assert f"≤ {MAX_PROMPT_BYTES // 1024} KiB" in rows[("input", "prompt")]["Limits and errors"]
    history = rows[("input", "history")]["Limits and errors"]
    assert f"≤ {MAX_HISTORY_BYTES // 2**20} MiB" in history and f"≤ {MAX_HISTORY_MESSAGES} messages" in history
    assert f"nesting ≤ {MAX_LITERAL_DEPTH}" in history
    assert f"max_batch_size` {CONFIG['max_batch_size']}" in text


def test_readme_parameter_table_covers_the_config():
    _, tables = readme_tables()
    params = next(t for t in tables if t["header"][:2] == ["Key", "Default"])
    documented = set()
    for row in params["rows"]:
        documented |= set(re.findall(r"`([a-z_]+)`", row["Key"]))
    assert set(PARAMS) | OPTIONAL_PARAMETERS == documented
    defaults = {re.findall(r"`([a-z_]+)`", r["Key"])[0]: r["Default"] for r in params["rows"]}
    assert defaults["max_input_tokens"] == PARAMS["max_input_tokens"]
    assert defaults["max_new_tokens_limit"] == PARAMS["max_new_tokens_limit"]
    assert defaults["engine"].strip("`") == PARAMS["engine"] and defaults["dtype"].strip("`") == PARAMS["dtype"]


# ------------------------------------------------------------------------------------------------ stand-in ↔ real


def real_pb_utils():
    marker = ROOT / ".venv" / "tritonserver-home"
    if not marker.is_file():
        pytest.skip("tritonserver is not installed (scripts/setup-python.sh)")
    path = Path(marker.read_text().strip()) / "backends" / "python" / "triton_python_backend_utils.py"
    spec = importlib.util.spec_from_file_location("real_triton_python_backend_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def test_standin_offers_the_real_modules_python_api():
    path, real = real_pb_utils()
    tree = ast.parse(path.read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    # ModelConfig only serves auto_complete_config, which model.py does not define.
    missing = sorted(n for n in names - {"ModelConfig"} if not hasattr(standin, n))
    assert not missing
    for name in names:
        if name.isupper() and not name.startswith("_") and isinstance(getattr(real, name), int):
            assert getattr(standin, name) == getattr(real, name), name
    assert standin.TRITON_STRING_TO_NUMPY == real.TRITON_STRING_TO_NUMPY


def test_standin_helpers_behave_like_the_real_ones():
    _, real = real_pb_utils()
    arrays = [np.array([b"a", "b\u00e9", b"", b"\x00x"], dtype=np.object_), np.array([[b"q"], [b"r"]], dtype=np.object_),
              np.array([], dtype=np.object_)]
    for arr in arrays:
        assert standin.serialize_byte_tensor(arr) == real.serialize_byte_tensor(arr)
    blob = real.serialize_byte_tensor(arrays[0])
    assert list(standin.deserialize_bytes_tensor(blob)) == list(real.deserialize_bytes_tensor(blob))
    for code in range(0, 15):
        assert standin.triton_to_numpy_type(code) == real.triton_to_numpy_type(code)
    for t in (np.bool_, np.int32, np.float32, np.object_, np.bytes_, np.float16):
        assert standin.numpy_to_triton_type(t) == real.numpy_to_triton_type(t)
    for cfg in (CONFIG, {"model_transaction_policy": {"decoupled": False}}, {}):
        assert standin.using_decoupled_model_transaction_policy(cfg) == real.using_decoupled_model_transaction_policy(cfg)
    assert standin.get_output_config_by_name(CONFIG, "history") == real.get_output_config_by_name(CONFIG, "history")
    assert standin.get_input_config_by_name(CONFIG, "nope") is real.get_input_config_by_name(CONFIG, "nope") is None


def test_standin_classes_cover_the_backend_api_model_py_uses():
    for code in ("UNKNOWN", "INTERNAL", "NOT_FOUND", "INVALID_ARG", "UNAVAILABLE", "UNSUPPORTED", "ALREADY_EXISTS", "CANCELLED"):
        assert isinstance(getattr(standin.TritonError, code), int)
    assert standin.TritonError("x").code() == standin.TritonError.INTERNAL
    for method in ("log", "log_info", "log_warn", "log_error", "log_verbose"):
        assert callable(getattr(standin.Logger, method))
    assert {standin.MetricFamily.COUNTER, standin.MetricFamily.GAUGE, standin.MetricFamily.HISTOGRAM} == {0, 1, 2}
    with pytest.raises(standin.TritonModelException, match="NumPy dtype is not supported"):
        standin.Tensor("x", np.array(["unicode"]))
    request = standin.InferenceRequest(inputs=[], decoupled=False)
    request.get_response_sender().send(standin.InferenceResponse([]), flags=standin.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
    with pytest.raises(standin.TritonModelException):
        request.get_response_sender().send(standin.InferenceResponse([]), flags=standin.TRITONSERVER_RESPONSE_COMPLETE_FINAL)


# ------------------------------------------------------------------------------------------------ image


def test_image_matches_the_tested_versions():
    dockerfile = (ROOT / "triton" / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM nvcr\.io/nvidia/tritonserver:24\.10-py3$", dockerfile, re.M)
    assert re.findall(r"^COPY (\S+)", dockerfile, re.M) == ["requirements-serving.txt"]  # no weights, no repository
    assert re.search(r"^USER triton-server$", dockerfile, re.M)
    for env in ("HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1", "HF_HOME="):
        assert env in dockerfile
    pins = dict(re.findall(r"^([A-Za-z0-9_-]+)==(\S+)$", (ROOT / "triton" / "requirements-serving.txt").read_text(), re.M))
    test_pins = dict(re.findall(r"^([A-Za-z0-9_-]+)==(\S+)$", (ROOT / "triton" / "requirements-test.txt").read_text(), re.M))
    assert pins["torch"].startswith("2.")
    for tokenizer_package in ("sentencepiece", "tiktoken"):  # the tokenizers the tests check are the served ones
        assert pins[tokenizer_package] == test_pins[tokenizer_package], tokenizer_package
    # Nothing served can run a weights folder's Python files: the remote-code machinery is not in the image.
    assert "transformers" not in pins and "accelerate" not in pins
