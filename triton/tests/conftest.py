"""Puts model.py's directory, the test engine/stand-in (triton/testing), triton/scripts and these helpers on
sys.path."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT / "triton" / "scripts", ROOT / "triton" / "tests", ROOT / "triton" / "testing", ROOT / "triton" / "model_repository" / "chatglm3-6b" / "1"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
