"""The model's inputs and outputs, declared once (config.pbtxt and triton/README.md list the same), and the
tensors they travel in. Every input and output has the batch dimension of `max_batch_size > 0` and one element."""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np
import triton_python_backend_utils as pb_utils

INPUT_NAMES = ("prompt", "history", "temperature", "top_p", "max_new_tokens", "history_len", "top_k",
               "repetition_penalty", "seed", "infill", "raw_prompt", "stop")
# Streaming: deltas carry only `response`; the FINAL carries all of them.
OUTPUT_NAMES = ("response", "history", "finish_reason", "prompt_tokens", "completion_tokens", "history_trimmed")
DELTA_OUTPUT = "response"


def read_inputs(request) -> Dict[str, Optional[np.ndarray]]:
    """Input name → numpy array, None for an absent optional input (validated by chatglm.serving.request)."""
    inputs = {}
    for name in INPUT_NAMES:
        tensor = pb_utils.get_input_tensor_by_name(request, name)
        inputs[name] = None if tensor is None else tensor.as_numpy()
    return inputs


def string_tensor(name: str, text: str):
    return pb_utils.Tensor(name, np.array([[text.encode("utf-8")]], dtype=np.object_))


def int_tensor(name: str, value: int):
    return pb_utils.Tensor(name, np.array([[value]], dtype=np.int32))
