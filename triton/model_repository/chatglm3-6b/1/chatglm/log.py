"""The one logger of the model directory: Triton's pb_utils.Logger, every line prefixed with `chatglm3: `.

Triton's log carries lines of every model and backend, so ours are recognisable by that prefix (tests and the
extension's log view look for it). Verbose lines appear only with `--log-verbose=1`.
"""
from __future__ import annotations

import triton_python_backend_utils as pb_utils

PREFIX = "chatglm3: "


def info(message: str) -> None:
    pb_utils.Logger.log_info(PREFIX + message)


def warn(message: str) -> None:
    pb_utils.Logger.log_warn(PREFIX + message)


def error(message: str) -> None:
    pb_utils.Logger.log_error(PREFIX + message)


def verbose(message: str) -> None:
    pb_utils.Logger.log_verbose(PREFIX + message)
