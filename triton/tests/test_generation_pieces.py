"""Engine-independent pieces: streaming text (metadata line, UTF-8 hold-back), per-row warping, tracker, padding."""
import math

import pytest
import torch

from chatglm.serving.answer import AnswerStream
from chatglm.engine.generation import BatchTracker, RowSettings, RowWarper, guard_invalid_scores, left_pad
from chatglm.serving.request import keep_last_turns
from tiny_engine import TinyTokenizer

tok = TinyTokenizer()


def stream(text: str):
    answer = AnswerStream(tok.decode)
    deltas = [answer.push(t) for t in tok.encode(text)]
    last, metadata, content = answer.finish()
    return [d for d in deltas if d], last, metadata, content


def test_multibyte_characters_are_never_split():
    deltas, last, metadata, content = stream("\n你好, 世界")
    assert metadata == "" and content == "你好, 世界"
    assert deltas == ["你", "好", ",", " 世", "界"]  # the space waits for the next visible character
    assert last == ""


def test_metadata_line_is_held_back_and_stripped():
    deltas, last, metadata, content = stream("get_weather\n```python\ntool_call(city='x')\n```")
    assert metadata == "get_weather"
    assert "".join(deltas) + last == content == "```python\ntool_call(city='x')\n```"


def test_blank_metadata_strips_content_like_process_response():
    deltas, last, metadata, content = stream("\n  hi there \n\n")
    assert (metadata, content) == ("", "hi there")
    assert "".join(deltas) + last == "hi there"


def test_answer_without_metadata_line_is_released_after_the_limit():
    text = "x" * 200
    deltas, last, metadata, content = stream(text)
    assert metadata == "" and "".join(deltas) + last == content == text
    assert deltas  # streamed before the end


def test_truncated_character_is_dropped_at_the_end():
    answer = AnswerStream(tok.decode)
    for t in tok.encode("\nab") + tok.encode("好")[:2]:
        answer.push(t)
    assert answer.sent == "ab"
    assert answer.finish() == ("", "", "ab")


def test_row_warper_per_row_settings():
    scores = torch.tensor([[1.0, 3.0, 2.0, 0.0]] * 4)
    warped = RowWarper([RowSettings(0.0, 1.0, 1), RowSettings(1.0, 1.0, 1), RowSettings(0.5, 1.0, 1),
                        RowSettings(1.0, 0.6, 1)])(scores)
    assert torch.isinf(warped[0]).tolist() == [True, False, True, True]  # greedy: argmax only
    assert torch.allclose(warped[1], scores[1])
    assert torch.allclose(warped[2], scores[2] / 0.5)
    p = torch.softmax(scores[3], -1)  # 0.64, 0.24, ... → nucleus 0.6 keeps only the top token
    assert p.max() > 0.6
    assert torch.isfinite(warped[3]).tolist() == [False, True, False, False]
    rows = torch.tensor([3, 0])  # compacted batch: settings follow the original rows
    assert torch.equal(RowWarper([RowSettings(0.0, 1.0, 1)] * 3 + [RowSettings(1.0, 1.0, 1)])(scores[:2], rows)[0],
                       scores[0])


def test_nucleus_keeps_smallest_set_reaching_top_p():
    scores = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    warped = RowWarper([RowSettings(1.0, 0.8, 1)])(scores)
    assert torch.isfinite(warped[0]).tolist() == [True, True, False, False]


def test_invalid_scores_guard_only_touches_bad_rows():
    scores = torch.tensor([[0.1, float("nan"), 0.3, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.0, 0.0, 0.0]])
    out = guard_invalid_scores(scores, fallback_id=5)
    assert out[0].tolist() == [0, 0, 0, 0, 0, 5e4] and torch.equal(out[1], scores[1])


class Recorder:
    def __init__(self, cancel_at=None):
        self.tokens, self.finished, self.polls, self.cancel_at = {}, {}, 0, cancel_at or {}

    def on_token(self, row, token):
        self.tokens.setdefault(row, []).append(token)

    def cancelled(self, rows):
        self.polls += len(rows)
        return [len(self.tokens.get(row, [])) >= self.cancel_at.get(row, math.inf) for row in rows]

    def on_finished(self, row, result):
        assert row not in self.finished
        self.finished[row] = result.finish_reason


def test_tracker_stops_rows_independently_and_polls_cancellation_each_step():
    rec = Recorder(cancel_at={2: 2})
    tr = BatchTracker([RowSettings(1, 1, 2), RowSettings(1, 1, 10), RowSettings(1, 1, 10)], stop_ids=[9], observer=rec)
    tr.step([5, 5, 5])
    tr.step([5, 9, 5])
    assert rec.finished == {0: "length", 1: "stop", 2: "cancelled"}
    assert rec.tokens == {0: [5, 5], 1: [5], 2: [5, 5]}
    assert tr.done_mask().tolist() == [True, True, True] and tr.all_done()
    tr.step([7, 7, 7])  # finished rows ignore later (padding) tokens
    assert rec.tokens[0] == [5, 5] and rec.polls == 3 + 1  # every open row, every step


def test_left_pad_matches_chatglm_layout():
    ids, mask, pos = left_pad([[7, 8, 9], [4]])
    assert ids.tolist() == [[7, 8, 9], [0, 0, 4]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert pos.tolist() == [[0, 1, 2], [0, 0, 0]]
    with pytest.raises(ValueError):
        left_pad([[1], []])


def test_keep_last_turns():
    h = [{"role": "system", "content": "s"}] + [{"role": r, "content": str(i)} for i in range(3) for r in ("user", "assistant")]
    assert keep_last_turns(h, None) == h
    assert [m["content"] for m in keep_last_turns(h, 1)] == ["s", "2", "2"]
    assert [m["content"] for m in keep_last_turns(h, 0)] == ["s"]
    assert keep_last_turns(h, 10) == h


def reference_content(text: str) -> str:
    """What ChatGLM3's process_response keeps of a complete answer (plus dropping a cut-off last character)."""
    metadata, sep, content = text.partition("\n")
    if not sep or len(metadata) > 128:
        metadata, content = "", text
    content = content.strip() if not metadata.strip() else content
    return content.rstrip("\ufffd")


def test_incremental_detokenizing_matches_decoding_the_whole_answer():
    import random

    rng = random.Random(7)
    alphabet = list("ab \n") + ["好", "é", "🙂"]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        ids = tok.encode(text)
        if rng.random() < 0.3 and ids:  # cut inside a character, or add a stray continuation byte
            ids = ids[:-1] if rng.random() < 0.5 else ids + [3 + 0x80]
        answer = AnswerStream(tok.decode)
        deltas = "".join(answer.push(t) for t in ids)
        last, _, content = answer.finish()
        assert content == reference_content(tok.decode(ids))
        assert deltas + last == content


def test_incremental_detokenizing_keeps_sentencepiece_spaces():
    pieces = {1: "▁Hello", 2: "▁world", 3: "!", 4: "<0x0A>"}

    def decode(ids):  # SentencePiece drops the space of the first piece of what it decodes
        text = "".join("\n" if pieces[i] == "<0x0A>" else pieces[i] for i in ids).replace("▁", " ")
        return text[1:] if text.startswith(" ") else text

    answer = AnswerStream(decode)
    deltas = "".join(answer.push(t) for t in [4, 1, 2, 3, 1])
    last, metadata, content = answer.finish()
    assert metadata == "" and content == "Hello world! Hello" == deltas + last
