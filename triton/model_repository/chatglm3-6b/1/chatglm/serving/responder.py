"""The one thread that talks to Triton for the engine thread (continuous scheduler).

Sending a response and asking whether a request was cancelled are IPC round trips to the server (they release
the GIL). Done here, they overlap the engine's next forward passes instead of adding to them, and so does
building a streamed delta's response from its text (`send_delta`). Responses go out in
the order the engine produced them. One cancellation check is in flight at a time: the engine takes its result
at the start of the next iteration if it is done, and waits for it only once it is `MAX_LAG` iterations old, so
a cancellation is acted on within two steps of the check that saw it, and the sends never fall far behind.

It also notices an unload. Triton calls finalize() only once every streaming request has its FINAL, so without
this an unload would wait for every running answer to end. While requests are open, the responder asks Triton
every `probe_interval` seconds whether this model is still ready (the probe answers None, not asked, while the
requests are warmup: chatglm/serving/readiness.py); once it is not, it is being unloaded and `unloading` turns True.
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Callable, List, Optional, Sequence

import chatglm.log as log
from chatglm.serving.reply import Channel

MAX_LAG = 2  # iterations the engine may run ahead of a cancellation check before it waits for it


class Responder:
    def __init__(self, ready_probe: Optional[Callable[[], Optional[bool]]] = None, probe_interval: float = 0.5):
        self._ready_probe = ready_probe
        self._probe_interval = probe_interval
        self._next_probe = 0.0
        self.unloading = False
        self._abandoned = False  # set when close() gave up waiting: the thread then stops at its next job
        self._jobs: "queue.SimpleQueue" = queue.SimpleQueue()
        self._poll_done = threading.Event()
        self._poll_started: Optional[int] = None  # the iteration whose check is in flight
        self._cancelled: List[Channel] = []
        self._thread = threading.Thread(target=self._run, name="chatglm3-responder", daemon=True)
        self._thread.start()

    def send(self, channel: Channel, response, final: bool) -> None:
        self._jobs.put(("send", channel, response, final))

    def send_delta(self, channel: Channel, text: str) -> None:
        """Streams `text`: the response is built here too, off the engine thread."""
        self._jobs.put(("delta", channel, text))

    def call(self, work: Callable[[], None]) -> None:
        """Runs other IPC work (metric updates) in order with the sends."""
        self._jobs.put(("call", work))

    def start_poll(self, channels: Sequence[Channel], iteration: int) -> None:
        """Checks these requests for cancellation after the sends queued so far (unless a check is in flight)."""
        if channels and self._poll_started is None:
            self._poll_started = iteration
            self._poll_done.clear()
            self._jobs.put(("poll", list(channels)))

    def collect(self, iteration: int) -> List[Channel]:
        """The requests the finished check found cancelled; [] while the check is still young."""
        if self._poll_started is None:
            return []
        if not self._poll_done.is_set():
            if iteration - self._poll_started < MAX_LAG:
                return []
            self._poll_done.wait()
        self._poll_started = None
        found, self._cancelled = self._cancelled, []
        return found

    def close(self, timeout: float) -> bool:
        """Sends what is queued (without asking Triton about readiness any more: finalize has begun, and at
        server exit the question breaks the stub, see readiness.py), then stops; False if the thread did not stop
        in time, and then it drops whatever it would still do: nothing may call into the stub once finalize()
        returned."""
        self._ready_probe = None
        self._jobs.put(None)
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._abandoned = True
            return False
        return True

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None or self._abandoned:
                return
            if job[0] == "call":
                try:
                    job[1]()
                except Exception as exc:  # noqa: BLE001 - figures must not stop the answers
                    log.warn(f"responder work failed: {exc!r}")
                continue
            if job[0] == "send" and job[3]:
                job[1].send_final(job[2])
                continue
            if job[0] in ("send", "delta"):
                channel = job[1]
                try:
                    response = channel.delta_response(job[2]) if job[0] == "delta" else job[2]
                    if response is not None:  # None: not decoupled, the FINAL carries the whole answer
                        channel.send(response, False)
                except Exception as exc:  # noqa: BLE001 - a vanished client must not stop the others
                    log.warn(f"request {channel.request_id()}: could not send a delta: {exc}")
            else:
                # A request whose FINAL went out is complete and must not be queried any more.
                self._cancelled = [c for c in job[1] if not c.completed and c.is_cancelled()]
                self._probe_readiness()
                self._poll_done.set()

    def _probe_readiness(self) -> None:
        now = time.monotonic()
        if self._ready_probe is None or now < self._next_probe:
            return
        self._next_probe = now + self._probe_interval
        try:
            ready = self._ready_probe()
        except Exception as exc:  # noqa: BLE001 - unknown is not "unloading"
            log.warn(f"could not ask Triton whether the model is ready: {exc!r}")
            return
        if ready is None:  # not asked (warmup: chatglm/serving/readiness.py); the first request after it asks at once
            self._next_probe = 0.0
            return
        if not ready and not self.unloading:
            self.unloading = True
            log.info("the model is being unloaded: ending the requests still running")
