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
    assert report["complete"] and not report.get("errors")
    assert set(report["decode"]) == set(report["served"]) == {"1", "2"}
    assert all(report["decode"][k]["tokens_per_second"] > 0 for k in ("1", "2"))
    by_context = report["decode_by_context"]
    assert set(by_context) == {"32", "1024"} and by_context["1024"]["2"]["context"] >= 1000
    assert by_context["32"]["1"]["eager"]["tokens_per_second"] > 0 and by_context["32"]["1"]["cuda_graphs"] is None  # CPU
    assert report["decode_host_syncs_per_step"]["value"] <= 1, report["decode_host_syncs_per_step"]
    assert report["memory_plan"]["kv_cache_bytes"] > 0
    assert report["served"]["2"]["tokens"] == 32
    assert report["prefill"]["prompt_tokens"] == 200 and report["prefill"]["tokens_per_second"] > 0
    mixed = report["mixed_pass"]
    assert mixed["rows"] == 1 and all(mixed[c]["mixed_ms"] > 0 and mixed[c]["separate_ms"] > 0 for c in ("16", "64"))
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


def test_gpu_check_fails_without_its_fixture_unless_told_to_leave_it_out(tmp_path):
    out = tmp_path / "gpu.json"
    assert gpu_check.main(["--device", "cpu", "--small", "--rows", "1", "--contexts", "32", "--steps", "2",
                           "--fixture", str(tmp_path / "absent"), "--out", str(out)]) == 1
    report = json.loads(out.read_text())
    assert not report["ok"] and not report["fixture"]["ok"] and "fixture not found" in report["fixture"]["error"]
    assert report["decode"]["1"]["tokens_per_second"] > 0  # measured and written all the same
    assert gpu_check.main(["--device", "cpu", "--small", "--rows", "1", "--contexts", "32", "--steps", "2",
                           "--no-fixture", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["fixture"] == {"ok": True, "left_out": "--no-fixture"}
