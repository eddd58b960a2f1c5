"""Unload and server exit on the REAL tritonserver (2.51, CPU): the stub ends cleanly (model.py enables
faulthandler, so a crash of the stub process would print "Fatal Python error" into the server log) and its
metric series leave /metrics. Before the fix the stub freed our metric objects at its own teardown and segfaulted
there (Metric::SaveToSharedMemory, triton/README.md), leaving the series behind."""
import os
import re
import signal

from triton_server import MODEL, TritonServer
from test_scheduler_server import PACED, OpenStream, body


def series_of_the_model(server):
    return re.findall(rf'^chatglm3_\w+\{{[^}}]*model="{MODEL}"', server.metrics(), re.M)


def test_unload_while_answers_stream_then_load_again_answers_and_the_stub_never_crashes(tmp_path):
    server = TritonServer(workdir=tmp_path, env=PACED)
    try:
        server.start()
        server.load()
        assert len(series_of_the_model(server)) >= 13
        streams = [OpenStream(server, body(f"unload me {i}", 400)) for i in range(3)]
        for s in streams:
            assert s.next_event() is not None  # generating, hundreds of steps to go
        server.unload()
        for s in streams:
            events = s.rest()
            finals = [e for e in events if "finish_reason" in e or "error" in e]
            assert len(finals) == 1 and finals[0].get("error", "").startswith("model unloaded"), events[-2:]
        server.wait_state("UNAVAILABLE", timeout=60)
        assert series_of_the_model(server) == []  # freed while the stub was alive

        server.load()
        again = OpenStream(server, body("after the reload", 5)).rest()
        assert again[-1].get("finish_reason") == "length" and again[-1]["completion_tokens"] == 5, again[-1]
        # Server exit with the model loaded: Triton finalizes it, then the stub tears down.
        process, server.process = server.process, None
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(60) == 0
    finally:
        server.stop()
    log = server.log()
    assert log.count("chatglm3: finalized") == 2
    assert "Fatal Python error" not in log and "Signal (11)" not in log, log[-3000:]


def test_server_exit_with_answers_streaming_ends_them_and_the_stub_cleanly(tmp_path):
    """SIGTERM while 2 answers stream: Triton 2.51 waits for its HTTP connections first, with the model still ready,
    so the answers run to their end; then finalize(), exit status 0 and no stub crash."""
    server = TritonServer(workdir=tmp_path, env=PACED)
    try:
        server.start()
        server.load()
        streams = [OpenStream(server, body(f"exit with me {i}", 200)) for i in range(2)]
        for s in streams:
            assert s.next_event() is not None
        process, server.process = server.process, None
        os.killpg(process.pid, signal.SIGTERM)
        finals = [s.rest()[-1] for s in streams]
        assert process.wait(60) == 0
    finally:
        server.stop()
    assert [f.get("completion_tokens") for f in finals] == [200, 200], finals
    log = server.log()
    assert "Signal (15) received" in log and log.count("chatglm3: finalized") == 1
    assert "Fatal Python error" not in log and "Signal (11)" not in log, log[-3000:]
