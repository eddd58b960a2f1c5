"""model.py as Triton initialises each instance of several (tritonChatglm.gpus: one instance per GPU), under the
pb_utils stand-in: the device comes from model_instance_device_id, every series carries the instance and its
device, and each instance has its own engine and continuous scheduler (one finalized, the other still answers).
The GPU placement itself is recorded, not run: the engine is loaded on the CPU here."""
import importlib.util
import json

from chatglm.serving.metrics import FAMILIES
from harness import MODEL_DIR, make_request, model_config, run


def load_instance(name: str, kind: str, device_id: str, placed: list):
    spec = importlib.util.spec_from_file_location(f"chatglm3_instance_{name}", MODEL_DIR / "1" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    real = module.load_engine

    def on_cpu(engine, options):  # records where model.py asked for the engine, loads it where this test can run
        placed.append(options.device)
        options.device = "cpu"
        return real(engine, options)

    module.load_engine = on_cpu
    model = module.TritonPythonModel()
    model.initialize({
        "model_config": json.dumps(model_config(stream_interval_ms="0")),
        "model_instance_kind": kind, "model_instance_device_id": device_id, "model_instance_name": name,
        "model_repository": str(MODEL_DIR), "model_version": "1", "model_name": "chatglm3-6b",
    })
    return model


def series_labels(model, metric_name: str):
    """The label sets of one instance's series of a family (the stand-in keys each series by name and labels)."""
    metric = model.metrics._series[next(a for a, (n, _, _) in FAMILIES.items() if n == metric_name)]  # the stand-in's
    name, labels = metric._key
    assert name == metric_name
    return [dict(labels)]


def test_each_gpu_instance_takes_its_device_and_has_its_own_engine_and_scheduler():
    placed = []
    first = load_instance("chatglm3-6b_0_0", "GPU", "0", placed)
    second = load_instance("chatglm3-6b_1_0", "GPU", "1", placed)
    try:
        assert placed == ["cuda:0", "cuda:1"]
        assert series_labels(second, "chatglm3_active_rows") == [
            {"model": "chatglm3-6b", "version": "1", "instance": "chatglm3-6b_1_0", "device": "cuda:1"}]
        assert series_labels(first, "chatglm3_active_rows")[0]["device"] == "cuda:0"
        assert first.engine is not second.engine and first.scheduler is not second.scheduler
        first.finalize()
        outcomes = run(second, [make_request("still here?", max_new_tokens=6, temperature=0.0)])
        assert outcomes[0].error is None and outcomes[0].completion_tokens == 6
    finally:
        first.finalize()
        second.finalize()


def test_a_cpu_instance_is_labelled_cpu():
    placed = []
    model = load_instance("chatglm3-6b_0_1", "CPU", "0", placed)
    try:
        assert placed == ["cpu"] and series_labels(model, "chatglm3_waiting_requests")[0]["device"] == "cpu"
    finally:
        model.finalize()
