"""gpu_check.py's CPU mode (--device cpu --small), so the GPU script cannot rot between GPU runs."""
import json

import gpu_check


def test_gpu_check_small_cpu_mode(tmp_path):
    out = tmp_path / "gpu.json"
    assert gpu_check.main(["--device", "cpu", "--small", "--rows", "1,2", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["ok"] and report["checks"]["ok"], report["checks"]["failures"]
    assert report["fixture"]["ok"] and max(report["fixture"]["float32"].values()) < 1e-4
    rows = report["checks"]["rows"]
    assert [r["finish_reason"] for r in rows] == ["length", "length", "cancelled", "length"]
    assert rows[0]["deltas"] > 0 and rows[2]["completion_tokens"] < 16
    assert set(report["decode"]) == set(report["served"]) == {"1", "2"}
    assert all(report["decode"][k]["tokens_per_second"] > 0 for k in ("1", "2"))
    assert report["served"]["2"]["tokens"] == 32
    assert report["prefill"]["prompt_tokens"] == 200 and report["prefill"]["tokens_per_second"] > 0
    late = report["late_join"]
    assert late["steps_from_admission_to_first_token"] <= 2 and late["steps_from_arrival_to_first_token"] <= 3
    roofline = report["roofline"]
    assert roofline["weight_bytes_per_step"] > 0 and roofline["achieved_gbps"] is not None
    assert roofline["nominal_gbps"] is None and roofline["fraction"] is None  # no GPU: nothing to compare against
    int8 = report["int8"]
    assert int8["ok"] and max(int8["fixture"]["chosen"].values()) < 1e-4
    assert set(int8["decode"]) == {"1", "8"} and all(v["tokens_per_second"] > 0 for v in int8["decode"].values())
    assert int8["conversion_seconds"] >= 0 and int8["memory_plan"]["quantization"] == "int8"
    assert "1" in int8["tokens_per_second_int8_over_float"]
