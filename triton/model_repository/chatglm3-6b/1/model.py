"""ChatGLM3-6B on Triton's Python backend.

initialize() loads the configured engine (`native` by default) and starts its scheduler; execute() validates each
request (a bad one fails alone, at once, with INVALID_ARG) and hands the valid ones to the scheduler; finalize()
stops it. With `scheduler: continuous` (the default for the native engine) execute() returns at once and one
engine thread generates for every running request, step by step, admitting new ones between steps
(chatglm/serving/continuous_scheduler.py). With `scheduler: per_execute` (the HF engine) the requests of one execute() are
generated together inside it (chatglm/serving/per_execute_scheduler.py). Either way each request gets exactly one FINAL response;
with `decoupled: false` that is its one complete response.

Inputs and outputs: chatglm/serving/io.py; parameters: chatglm/serving/options.py and chatglm.serving.request.Limits; the contract:
triton/README.md.
"""
from __future__ import annotations

import dataclasses
import faulthandler
import json
from typing import Dict, Optional

import triton_python_backend_utils as pb_utils

import chatglm.log as log
from chatglm.engine.factory import load_engine
from chatglm.engine.types import EngineOptions, is_step_engine
from chatglm.model.checkpoint import generation_defaults
from chatglm.serving.answer import AnswerStream
from chatglm.serving.continuous_scheduler import ContinuousScheduler, SchedulerLimits
from chatglm.serving.infill import STOP_TEXTS as INFILL_STOP_TEXTS
from chatglm.serving.io import read_inputs
from chatglm.serving.metrics import Metrics
from chatglm.serving.options import ServingOptions
from chatglm.serving.per_execute_scheduler import PerExecuteScheduler
from chatglm.serving.readiness import readiness_probe
from chatglm.serving.reply import Channel, Reply, error_response
from chatglm.serving.request import RequestError, parse_request, plan_prompt


class TritonPythonModel:
    def initialize(self, args: Dict[str, str]) -> None:
        # A crash of the stub process (a segfault in its C++ side) then leaves "Fatal Python error" and the Python
        # stacks in the server log (the stub's stderr), where tests and users look, instead of a silent exit.
        try:
            faulthandler.enable()
        except (AttributeError, ValueError, OSError):  # no usable stderr: run without it rather than fail the load
            pass
        config = json.loads(args["model_config"])
        params = {k: v.get("string_value", "") for k, v in config.get("parameters", {}).items()}
        self.decoupled = bool(pb_utils.using_decoupled_model_transaction_policy(config))
        options = ServingOptions.from_parameters(params, int(config.get("max_batch_size", 0) or 0))
        # top_k's default is the checkpoint's generation_config.json value where it has one (else transformers' 50).
        self.limits = dataclasses.replace(options.limits, **{
            f"default_{k}": v for k, v in generation_defaults(params.get("weights_path", "")).items()})
        device = "cpu"
        if args.get("model_instance_kind") == "GPU":
            device = f"cuda:{int(args.get('model_instance_device_id', '0'))}"
        self.engine = load_engine(options.engine, EngineOptions(
            weights_path=params.get("weights_path", ""), dtype=params.get("dtype", "float16"), device=device,
            parameters=params, max_rows=options.max_active_rows, max_context=options.max_context,
            context_needed=options.context_needed,
        ))
        if options.fill_in_middle != "auto":  # the renderer knows which catalog model it installed
            self.engine.fill_in_middle = options.fill_in_middle == "on"
        step_engine = is_step_engine(self.engine)
        scheduler = options.scheduler or ("continuous" if step_engine else "per_execute")
        if scheduler == "continuous" and not step_engine:
            self.engine.close()
            raise ValueError(f"scheduler 'continuous' needs an engine that decodes step by step (native); engine "
                             f"{options.engine!r} supports 'per_execute' only")
        self.continuous = scheduler == "continuous"
        # A step engine has a context per row; a request that cannot fit is refused up front.
        self.max_context: Optional[int] = self.engine.max_context if step_engine else None
        self.metrics = Metrics(args.get("model_name", "chatglm3-6b"), args.get("model_version", "1"),
                               args.get("model_instance_name", "0"), device)
        try:
            self.metrics.describe_weights(getattr(self.engine, "quantization", "none"), str(getattr(
                self.engine, "dtype", params.get("dtype", "float16"))).replace("torch.", ""))
            self.readiness = readiness_probe(args, config) if self.continuous else None
            if self.continuous:
                self.scheduler = ContinuousScheduler(self.engine, SchedulerLimits(
                    options.max_active_rows, options.max_waiting, options.prefill_token_budget,
                    options.stream_interval_s, options.prefill_stall_target, options.idle_gather_s,
                ), self.metrics, ready_probe=self.readiness)
            else:
                self.scheduler = PerExecuteScheduler(self.engine, self.metrics, options.stream_interval_s)
        except BaseException:
            # The stub skips finalize() after a failed initialize(): the metrics must be freed here (Metrics.close).
            self.metrics.close()
            self.engine.close()
            raise
        log.info(
            f"engine {options.engine} on {device}, scheduler {scheduler}, decoupled={self.decoupled}, "
            f"max_active_rows={options.max_active_rows}, max_waiting={options.max_waiting}, "
            f"max_input_tokens={self.limits.max_input_tokens}, max_new_tokens_limit={self.limits.max_new_tokens_limit}, "
            f"fill_in_middle={'on' if getattr(self.engine, 'fill_in_middle', False) else 'off'}"
        )

    def is_ready(self) -> bool:
        """Triton 26.03+ asks this for model readiness: False once a device fault stopped the model (the cause is
        in every refusal, the log and the chatglm3_model_failed gauge; older servers only see those)."""
        return getattr(getattr(self, "scheduler", None), "failed", None) is None

    def execute(self, requests):
        if self.readiness is not None:
            self.readiness.saw_requests(len(requests))
        # The continuous scheduler answers after execute() returned, so it always needs the response senders.
        channels = [Channel(r, self.decoupled, use_sender=self.decoupled or self.continuous) for r in requests]
        replies = [reply for reply in map(self._prepare, channels) if reply is not None]
        self.scheduler.submit(replies)
        if self.decoupled or self.continuous:
            return None
        return [c.response for c in channels]

    def _prepare(self, channel: Channel) -> Optional[Reply]:
        """A valid request as a Reply; an invalid one is answered here, alone."""
        try:
            chat = parse_request(read_inputs(channel.request), self.limits)
            if chat.infill is not None:
                self._check_infill()
            if (chat.raw_prompt is not None or chat.stop) and not self.continuous:
                raise RequestError("raw_prompt and stop need scheduler 'continuous' (they end a row on their own stops)")
            plan = plan_prompt(self.engine, chat, self.limits)
            if self.max_context is not None and len(plan.ids) + chat.max_new_tokens > self.max_context:
                raise RequestError(f"prompt ({len(plan.ids)} tokens) + max_new_tokens ({chat.max_new_tokens}) exceed "
                                   f"the context of {self.max_context} tokens per request")
        except RequestError as exc:
            self.metrics.invalid.increment(1)
            log.info(f"request {channel.request_id()} rejected: {exc}")
            self._fail(channel, str(exc), pb_utils.TritonError.INVALID_ARG)
            return None
        except Exception as exc:  # noqa: BLE001 - e.g. a tokenizer failure: this request fails, not the batch
            log.error(f"request {channel.request_id()} failed while preparing: {exc!r}")
            self._fail(channel, f"could not prepare the request: {exc}", pb_utils.TritonError.INTERNAL)
            return None
        if chat.infill is not None:
            answer = AnswerStream(self.engine.decode, raw=True, stop_texts=INFILL_STOP_TEXTS + chat.stop)
        else:
            answer = AnswerStream(self.engine.decode, raw=chat.raw_prompt is not None, stop_texts=chat.stop)
        return Reply(channel, chat, plan, answer)

    def _check_infill(self) -> None:
        """Only a model made for fill-in-the-middle (the catalog's fillInMiddle: CodeGeeX4) takes `infill`."""
        if not getattr(self.engine, "fill_in_middle", False):
            name = getattr(self.engine, "model_id", None) or "this model"
            raise RequestError(f"{name} has no fill-in-the-middle (code completion): load CodeGeeX4-ALL-9B "
                               f"(codegeex4-all-9b) for completions")
        if not self.continuous:
            raise RequestError("infill needs scheduler 'continuous' (completions share its rows with chat)")

    @staticmethod
    def _fail(channel: Channel, message: str, code) -> None:
        if channel.claim_final():
            channel.send_final(error_response(message, code))

    def finalize(self) -> None:
        """Unload or server exit. Nothing of ours may call into the stub once this returns (the stub then tears
        itself down): the metrics close first (no write from here on, their objects freed now: Metrics.close),
        then the scheduler stops its threads, joins them and ends the open requests."""
        metrics = getattr(self, "metrics", None)
        if metrics is not None:
            metrics.close()
        scheduler = getattr(self, "scheduler", None)
        if scheduler is not None:
            scheduler.close()
        engine, self.engine = getattr(self, "engine", None), None
        if engine is not None:
            engine.close()
        log.info("finalized")
