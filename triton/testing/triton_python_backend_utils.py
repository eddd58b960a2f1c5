"""Stand-in for Triton's `triton_python_backend_utils` (Python backend r24.10), for unit tests of model.py
without a server.

The real module is a Python file (<tritonserver-home>/backends/python/triton_python_backend_utils.py: helper
functions and constants) into which the stub injects its C++ classes (Tensor, InferenceRequest,
InferenceResponse, response sender, TritonError, Logger, MetricFamily). This file offers the same names and
call signatures as far as model.py uses them, with the same checks that matter (numpy unicode arrays are
rejected, a closed response sender refuses to send, FINAL is a flag), plus test hooks that the real module
does not have: `InferenceRequest.cancel()`, `InferenceResponseSender.responses`, `Logger.records`,
`MetricFamily.registry`, `set_model_ready()`, `stub_phase()`.

The Triton stub does not read PYTHONPATH (see triton/README.md), so this file never shadows the real module.
"""
from __future__ import annotations

import json
import struct
import threading
import weakref
from typing import Dict, List, Optional

import numpy as np

TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
TRITONSERVER_REQUEST_RELEASE_ALL = 1
TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2

TRITON_STRING_TO_NUMPY = {
    "TYPE_BOOL": bool,
    "TYPE_UINT8": np.uint8,
    "TYPE_UINT16": np.uint16,
    "TYPE_UINT32": np.uint32,
    "TYPE_UINT64": np.uint64,
    "TYPE_INT8": np.int8,
    "TYPE_INT16": np.int16,
    "TYPE_INT32": np.int32,
    "TYPE_INT64": np.int64,
    "TYPE_FP16": np.float16,
    "TYPE_FP32": np.float32,
    "TYPE_FP64": np.float64,
    "TYPE_STRING": np.object_,
}
_TYPE_CODES = [np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64,
               np.float16, np.float32, np.float64, np.object_]


class TritonModelException(Exception):
    """Raised by the real stub for API misuse (e.g. sending on a closed response sender)."""


class TritonError:
    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    def __init__(self, message: str, code: int = INTERNAL):
        self._message = str(message)
        self._code = code

    def message(self) -> str:
        return self._message

    def code(self) -> int:
        return self._code

    def __repr__(self) -> str:
        return f"TritonError({self._message!r}, code={self._code})"


class Tensor:
    def __init__(self, name: str, array):
        array = np.asarray(array) if not isinstance(array, np.ndarray) else array
        if array.dtype.kind == "U":
            raise TritonModelException("NumPy dtype is not supported.")
        if array.dtype == np.object_:
            for item in array.reshape(-1):
                if not isinstance(item, (bytes, str)):
                    raise TritonModelException("Only bytes and str objects are supported in object tensors.")
        self._name = name
        self._array = array

    def name(self) -> str:
        return self._name

    def as_numpy(self) -> np.ndarray:
        return self._array

    def shape(self):
        return list(self._array.shape)

    def is_cpu(self) -> bool:
        return True


class InferenceResponse:
    def __init__(self, output_tensors=None, error: Optional[TritonError] = None, parameters=None):
        tensors = list(output_tensors or [])
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TritonModelException("output_tensors must be a list of pb_utils.Tensor")
        if error is not None and not isinstance(error, TritonError):
            raise TritonModelException("error must be a pb_utils.TritonError")
        self._tensors = tensors
        self._error = error
        self._parameters = json.dumps(parameters or {})

    def output_tensors(self) -> List[Tensor]:
        return self._tensors

    def has_error(self) -> bool:
        return self._error is not None

    def error(self) -> Optional[TritonError]:
        return self._error

    def parameters(self) -> str:
        return self._parameters


class InferenceResponseSender:
    """Decoupled senders accept any number of responses and exactly one FINAL flag; a non-decoupled one
    accepts one response (the real backend allows this since 24.06)."""

    def __init__(self, request: "InferenceRequest", decoupled: bool = True):
        self._request = request
        self._decoupled = decoupled
        self._closed = False
        self._lock = threading.Lock()
        self.responses: List[tuple] = []  # (response or None, flags), test hook

    def send(self, response: Optional[InferenceResponse] = None, flags: int = 0) -> None:
        with self._lock:
            if self._closed:
                raise TritonModelException("Unable to send response. Response sender has been closed.")
            if response is not None and not isinstance(response, InferenceResponse):
                raise TritonModelException("response must be a pb_utils.InferenceResponse")
            if not self._decoupled and (response is None or flags != TRITONSERVER_RESPONSE_COMPLETE_FINAL
                                        or self.responses):
                raise TritonModelException("Non-decoupled model cannot send more than one response")
            self.responses.append((response, flags))
            if flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL:
                self._closed = True

    def is_cancelled(self) -> bool:
        return self._request.is_cancelled()

    # test hooks
    @property
    def closed(self) -> bool:
        return self._closed

    def final_count(self) -> int:
        return sum(1 for _, f in self.responses if f & TRITONSERVER_RESPONSE_COMPLETE_FINAL)


class InferenceRequest:
    """A request as execute() receives it. `decoupled` is the model's transaction policy (it decides what the
    response sender accepts); `cancel()` simulates the client going away."""

    def __init__(self, inputs=None, request_id: str = "", requested_output_names=None, parameters=None,
                 decoupled: bool = True, flags: int = 0):
        self._inputs = list(inputs or [])
        self._id = request_id
        self._outputs = list(requested_output_names or [])
        self._parameters = parameters if isinstance(parameters, str) else json.dumps(parameters or {})
        self._flags = flags
        self._cancelled = threading.Event()
        self._sender = InferenceResponseSender(self, decoupled)
        self.sender_requested = False

    def inputs(self) -> List[Tensor]:
        return self._inputs

    def request_id(self) -> str:
        return self._id

    def requested_output_names(self) -> List[str]:
        return self._outputs

    def parameters(self) -> str:
        return self._parameters

    def flags(self) -> int:
        return self._flags

    def get_response_sender(self) -> InferenceResponseSender:
        self.sender_requested = True
        return self._sender

    def is_cancelled(self) -> bool:
        return self._cancelled.is_set()

    # test hooks
    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def sender(self) -> InferenceResponseSender:
        return self._sender


class Logger:
    INFO = 0
    WARNING = 1
    ERROR = 2
    VERBOSE = 3
    records: List[tuple] = []  # (level, message), test hook

    @classmethod
    def log(cls, message: str, level: int = INFO) -> None:
        cls.records.append((level, str(message)))

    @classmethod
    def log_info(cls, message: str) -> None:
        cls.log(message, cls.INFO)

    @classmethod
    def log_warn(cls, message: str) -> None:
        cls.log(message, cls.WARNING)

    @classmethod
    def log_error(cls, message: str) -> None:
        cls.log(message, cls.ERROR)

    @classmethod
    def log_verbose(cls, message: str) -> None:
        cls.log(message, cls.VERBOSE)


class Metric:
    """Like Triton (prometheus-cpp underneath), metrics with the same family name and labels share one value.

    Like the real stub, a metric must neither be written nor freed once the stub began to finalize (test hooks
    `stub_phase`, `MetricFamily.late_writes`, `MetricFamily.live`): the real stub's Metric destructor calls into
    the stub, and at its teardown that is a segfault (chatglm/serving/metrics.py, Metrics.close)."""

    def __init__(self, family: "MetricFamily", labels: Dict[str, str]):
        self._kind = family.kind  # not the family itself: the family holds its metrics, as Triton's does
        self._key = (family.name, tuple(sorted((labels or {}).items())))
        MetricFamily.values.setdefault(self._key, 0.0)
        MetricFamily.live.add(self)

    def increment(self, value: float) -> None:
        _count_late_write()
        if self._kind == MetricFamily.COUNTER and value < 0:
            raise TritonModelException("Counter metrics cannot be decremented")
        MetricFamily.values[self._key] += value

    def set(self, value: float) -> None:
        _count_late_write()
        if self._kind != MetricFamily.GAUGE:
            raise TritonModelException("Only gauge metrics can be set")
        MetricFamily.values[self._key] = value

    def value(self) -> float:
        return MetricFamily.values[self._key]


class MetricFamily:
    COUNTER = 0
    GAUGE = 1
    HISTOGRAM = 2
    registry: "weakref.WeakValueDictionary[str, MetricFamily]" = weakref.WeakValueDictionary()  # name → live family
    values: Dict[tuple, float] = {}  # (name, labels) → value, test hook
    live: "weakref.WeakSet[Metric]" = weakref.WeakSet()  # metrics not yet freed, test hook
    late_writes = 0  # writes made while the stub finalizes or after (stub_phase), test hook

    def __init__(self, name: str, description: str, kind: int):
        if kind not in (self.COUNTER, self.GAUGE, self.HISTOGRAM):
            raise TritonModelException("Unknown metric family kind")
        known = MetricFamily.registry.get(name)
        if known is not None and (known.kind, known.description) != (kind, description):
            raise TritonModelException(f"metric family '{name}' already exists with a different kind or description")
        self.name, self.description, self.kind = name, description, kind
        self.metrics: List[Metric] = []
        MetricFamily.registry[name] = self

    @classmethod
    def total(cls, name: str) -> float:
        """Sum over all label sets of a family (test hook)."""
        return sum(v for (n, _), v in cls.values.items() if n == name)

    def Metric(self, labels: Optional[Dict[str, str]] = None, buckets=None) -> Metric:  # noqa: N802 - real API
        metric = Metric(self, labels or {})
        self.metrics.append(metric)
        return metric


_phase = "running"  # test hook: stub_phase


def stub_phase(phase: str) -> None:
    """Test hook: "running", "finalizing" (the stub called finalize()) or "torn_down" (finalize() returned)."""
    global _phase
    assert phase in ("running", "finalizing", "torn_down"), phase
    _phase = phase


def _count_late_write() -> None:
    if _phase != "running":
        MetricFamily.late_writes += 1


# ------------------------------------------------------------------ BLS model control (injected by the real stub)

_not_ready: set = set()  # test hook: names set_model_ready(name, False) made unready
_server_starting = False  # test hook: set_server_starting(True), a server loading its --load-model models
calls_while_starting = 0  # is_model_ready calls made then: each one breaks the real stub (chatglm/serving/readiness.py)


def is_model_ready(model_name: str, model_version: str = "") -> bool:
    global calls_while_starting
    if _server_starting:
        calls_while_starting += 1
        raise TritonModelException("Failed to check model readiness: Server not ready")
    return model_name not in _not_ready


def set_server_starting(starting: bool) -> None:
    """Test hook: Triton answers is_model_ready with an error until the server is ready."""
    global _server_starting
    _server_starting = starting


def set_model_ready(model_name: str, ready: bool) -> None:
    """Test hook: what Triton answers while a model is being unloaded."""
    (_not_ready.discard if ready else _not_ready.add)(model_name)


# ------------------------------------------------------------------ helpers with the real module's signatures


def get_input_tensor_by_name(inference_request, name):
    for tensor in inference_request.inputs():
        if tensor.name() == name:
            return tensor
    return None


def get_output_tensor_by_name(inference_response, name):
    for tensor in inference_response.output_tensors():
        if tensor.name() == name:
            return tensor
    return None


def get_input_config_by_name(model_config, name):
    return next((c for c in model_config.get("input", []) if c["name"] == name), None)


def get_output_config_by_name(model_config, name):
    return next((c for c in model_config.get("output", []) if c["name"] == name), None)


def using_decoupled_model_transaction_policy(model_config):
    return bool(model_config.get("model_transaction_policy", {}).get("decoupled", False))


def triton_string_to_numpy(triton_type_string):
    return TRITON_STRING_TO_NUMPY[triton_type_string]


def triton_to_numpy_type(data_type):
    return _TYPE_CODES[data_type - 1] if 1 <= data_type <= len(_TYPE_CODES) else None


def numpy_to_triton_type(data_type):
    if data_type == np.bytes_:
        return 13
    for code, np_type in enumerate(_TYPE_CODES, start=1):
        if data_type == np_type:
            return code
    return None


def serialize_byte_tensor(input_tensor):
    """Flattens an object/bytes array into uint32-LE-length-prefixed elements, row-major."""
    if input_tensor.size == 0:
        return ()
    if input_tensor.dtype != np.object_ and input_tensor.dtype.type != np.bytes_:
        return None
    parts = []
    for item in input_tensor.reshape(-1, order="C"):
        data = item if isinstance(item, bytes) else str(item).encode("utf-8")
        parts.append(struct.pack("<I", len(data)) + data)
    return b"".join(parts)


def deserialize_bytes_tensor(encoded_tensor):
    items, offset = [], 0
    while offset < len(encoded_tensor):
        (length,) = struct.unpack_from("<I", encoded_tensor, offset)
        offset += 4
        items.append(bytes(encoded_tensor[offset:offset + length]))
        offset += length
    return np.array(items, dtype=np.object_)
