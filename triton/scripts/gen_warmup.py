#!/usr/bin/env python3
"""Writes the model's warmup input files from triton/warmup_requests.json.

config.pbtxt's model_warmup reads <model>/warmup/<input>.bin: TYPE_STRING elements are a uint32 little-endian
byte length followed by the UTF-8 bytes (the binary tensor format); INT64 is 8 bytes little-endian; FP32 is
4 bytes IEEE little-endian. `history` is stored as JSON text. One element per file (dims [1]; Triton repeats
the sample for every request of the warmup batch).

Usage: gen_warmup.py [--source triton/warmup_requests.json] [--out <model dir>/warmup] [--check]
(--check compares instead of writing and exits 1 when a file differs.)
"""
from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = ROOT / "warmup_requests.json"
DEFAULT_OUT = ROOT / "model_repository" / "chatglm3-6b" / "warmup"

STRING_INPUTS = ("prompt", "history")
INT64_INPUTS = ("max_new_tokens", "history_len")
FP32_INPUTS = ("temperature", "top_p")


def encode_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<I", len(data)) + data


def warmup_files(request: Dict) -> Dict[str, bytes]:
    """Maps file name → bytes for every input present in the warmup request."""
    unknown = set(request) - set(STRING_INPUTS + INT64_INPUTS + FP32_INPUTS)
    if unknown:
        raise ValueError(f"unknown warmup inputs: {sorted(unknown)}")
    files = {}
    for name, value in request.items():
        if name in STRING_INPUTS:
            # Compact JSON, byte-identical to JavaScript's JSON.stringify (the extension writes the same files).
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            files[f"{name}.bin"] = encode_string(text)
        elif name in INT64_INPUTS:
            files[f"{name}.bin"] = struct.pack("<q", int(value))
        else:
            files[f"{name}.bin"] = struct.pack("<f", float(value))
    return files


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    files = warmup_files(json.loads(args.source.read_text(encoding="utf-8")))
    stale = []
    if not args.check:
        args.out.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(files.items()):
        path = args.out / name
        if args.check:
            if not path.is_file() or path.read_bytes() != data:
                stale.append(str(path))
        else:
            path.write_bytes(data)
    if stale:
        print("out of date (run triton/scripts/gen_warmup.py):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    if not args.check:
        print(f"wrote {len(files)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
