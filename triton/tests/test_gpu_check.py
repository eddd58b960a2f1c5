"""gpu_check.py's CPU mode (--device cpu --small), so the GPU script cannot rot between GPU runs."""
import json

import pytest

pytest.importorskip("transformers")

import gpu_check  # noqa: E402


def test_gpu_check_small_cpu_mode(tmp_path):
    out = tmp_path / "check.json"
    assert gpu_check.main(["--device", "cpu", "--small", "--new-tokens", "12", "--batches", "1,2", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["checks"]["ok"], report["checks"]["failures"]
    rows = report["checks"]["rows"]
    assert [r["finish_reason"] for r in rows] == ["length", "length", "cancelled", "length"]
    assert rows[0]["deltas"] > 0 and rows[2]["completion_tokens"] < 12
    assert set(report["throughput"]) == {"1", "2"}
    assert report["throughput"]["2"]["tokens"] == 24 and report["throughput"]["1"]["tokens_per_second"] > 0
    bandwidth = report["bandwidth"]
    assert bandwidth["weight_bytes_per_step"] > 0 and bandwidth["achieved_gbps"] is not None
    assert bandwidth["nominal_gbps"] is None  # no GPU: nothing to compare against
