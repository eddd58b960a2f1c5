"""Incremental answer text of one row: deltas for streaming, and the final (metadata, content) split.

ChatGLM3 starts an answer with a metadata line (normally empty, a tool name for tool calls) followed by "\\n";
its `process_response` drops that line and strips the content when the metadata is blank. Streaming has to
produce the same text, so this class
- holds everything back until the metadata line is complete (or clearly absent),
- holds back a trailing incomplete UTF-8 character (decoded as U+FFFD) and trailing whitespace,
so that the concatenated deltas equal the final content exactly.

A fill-in-the-middle answer or a raw continuation (`raw`) is text as generated: no metadata line, nothing stripped
(indentation and newlines are the answer). Any answer with `stop_texts` (infill's markers, the client's `stop`)
ends at the first of them (`stopped`), which is not part of it (in a chat answer: of its content, and the text
before it is kept as it is); a trailing part of one is held back until it is clearly something else.
"""
from __future__ import annotations

from typing import Callable, List, Sequence, Tuple

REPLACEMENT = "\ufffd"
MAX_METADATA_CHARS = 128  # a first line longer than this is content, not metadata


class AnswerStream:
    def __init__(self, decode: Callable[[Sequence[int]], str], raw: bool = False, stop_texts: Sequence[str] = ()):
        self._decode = decode
        self.raw = raw
        self.stop_texts = tuple(stop_texts)
        self.stopped = False  # a stop text appeared: the answer ends before it
        self._ids: List[int] = []
        # Incremental detokenisation: only ids[prefix:] are decoded per token (not the whole answer), and text is
        # taken over once it no longer ends in an incomplete character.
        self._text = ""
        self._prefix = 0
        self._read = 0
        self.sent = ""  # text already streamed

    @property
    def token_count(self) -> int:
        return len(self._ids)

    def push(self, token_id: int) -> str:
        """Adds a generated token; returns the text that became safe to stream (may be "")."""
        self._ids.append(token_id)
        self._detokenize(final=False)
        return self._delta(self._stable_content(final=False))

    def _detokenize(self, final: bool) -> None:
        known = self._decode(self._ids[self._prefix:self._read])
        window = self._decode(self._ids[self._prefix:])
        if len(window) > len(known) and (final or not window.endswith(REPLACEMENT)):
            self._text += window[len(known):]
            self._prefix, self._read = self._read, len(self._ids)

    def finish(self) -> Tuple[str, str, str]:
        """Returns (last delta, metadata, content) once the row is finished."""
        self._detokenize(final=True)
        metadata, _ = self.split(final=True)
        content = self._stable_content(final=True)
        return self._delta(content), metadata, content

    def split(self, final: bool):
        """(metadata, content) of the text so far; metadata None while it may still be incomplete."""
        text = self._text
        if self.raw:
            return "", text
        newline = text.find("\n")
        if 0 <= newline <= MAX_METADATA_CHARS:
            metadata, content = text[:newline], text[newline + 1:]
        elif final or len(text) > MAX_METADATA_CHARS:
            metadata, content = "", text
        else:
            return None, ""
        if not metadata.strip():
            # With stop texts the trailing whitespace is dropped later (_stable_content), after the stop search: a
            # stop text that ends in whitespace ("\n") is then seen at the token that completes it.
            content = content.lstrip() if self.stop_texts else content.strip()
        return metadata, content

    def _stable_content(self, final: bool) -> str:
        metadata, content = self.split(final)
        if metadata is None:
            return ""
        # An incomplete multi-byte character at the end: wait for the rest, or drop it when the row was cut off.
        content = content.rstrip(REPLACEMENT)
        if self.raw or self.stop_texts:
            content = self._before_stop(content, final)
        if not self.raw and not self.stopped and (not final or self.stop_texts):
            content = content.rstrip()  # trailing whitespace is dropped if the answer ends here
        return content

    def _before_stop(self, content: str, final: bool) -> str:
        """Raw text up to the first stop text; without one, less any end that may still become one."""
        found = [i for i in (content.find(t) for t in self.stop_texts) if i >= 0]
        if found:
            self.stopped = True
            return content[:min(found)]
        if not final:
            held = max((k for t in self.stop_texts for k in range(1, len(t)) if content.endswith(t[:k])), default=0)
            content = content[:len(content) - held]
        return content

    def _delta(self, content: str) -> str:
        if not content.startswith(self.sent):
            # Decoding changed text that was already sent (should not happen for byte-level UTF-8); the final
            # outputs carry the authoritative text, the stream just continues after what it has.
            if len(content) <= len(self.sent):
                return ""
        delta = content[len(self.sent):]
        if delta:
            self.sent += delta
        return delta
