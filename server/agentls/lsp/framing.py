"""Reading LSP frames (`Content-Length` headers + JSON bodies) so that no input can stop us.

pygls's own loop reads header lines with `readline`: a header line longer than the stream's
limit raises out of the loop and the process exits (losing staged edits), and a
`Content-Length` shorter than its body leaves the rest of the body to be read as header
lines, so the stream never finds its footing again. This reader works on a byte buffer:

- a header block ends at the first blank line; its `Content-Length` is the last one in the
  block, wherever it starts, so the leftover of a short body before the next real header
  is skipped and the stream resynchronises at that header;
- a header block that grows past `MAX_HEADER_BYTES` without ending is dropped up to the
  last `Content-Length` seen in it (or entirely), so memory stays bounded;
- a body longer than `MAX_BODY_BYTES` is read and discarded, never held;
- a body still incomplete `BODY_TIMEOUT_S` after its header (`Content-Length: 999999`
  before a small body) is given up by `expire`, called by the read loop when the input
  pauses: the stream resynchronises at the next header inside what was read as its body,
  and the body is reported as a `BadFrame` that gets `-32700` (a body still arriving, with
  no header inside it, is waited for);
- everything dropped is reported (as a `BadFrame`) so the server can log it and, for a
  body it could not parse, answer `-32700 Parse error`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

MAX_HEADER_BYTES = 64 * 1024
"""A header block is two short lines; anything this long is garbage."""
MAX_BODY_BYTES = 256 * 1024 * 1024
"""Larger bodies are skipped: no editor sends a quarter of a gigabyte in one message."""
BODY_TIMEOUT_S = 3.0
"""A body incomplete this long after its header, with a header inside it or no bytes
arriving, was announced with the wrong `Content-Length`."""

_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,12})[ \t]*(?:\r?\n|$)", re.I)
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_HEADER_LINE = re.compile(rb"content-length[ \t]*:[ \t]*\d{1,12}[ \t]*\r?\n", re.I)
"""A whole `Content-Length` line: inside a JSON body only a broken frame has one (a JSON
string holds no raw line break, and the text is no JSON token outside a string)."""


@dataclass(frozen=True)
class Body:
    """One complete message body (not yet parsed)."""

    data: bytes


@dataclass(frozen=True)
class BadFrame:
    """Input that was dropped, and why (for the log)."""

    reason: str
    dropped: int
    answer: bool = False
    """Whether this was a message's body (the client waits for an answer: `-32700`)."""


Frame = Body | BadFrame


class _Again:
    """A parsing step consumed input but completed no frame: try the next step."""


_AGAIN = _Again()
_KEEP_TAIL = 64
"""Bytes kept when garbage is dropped: a `Content-Length` header may be cut by the chunk."""


class FrameParser:
    """Turns a byte stream, fed in chunks of any size, into bodies and reports of garbage."""

    def __init__(self, max_header: int = MAX_HEADER_BYTES, max_body: int = MAX_BODY_BYTES) -> None:
        self.max_header = max_header
        self.max_body = max_body
        self._buffer = bytearray()
        self._length: int | None = None
        """Bytes of body still expected, once a header block ended."""
        self._skipping = 0
        """Bytes of an oversized body still to discard."""
        self._dropped = 0
        """Garbage dropped so far in front of the next header (reported once, with it)."""
        self._body_since = 0.0
        """`time.monotonic()` when the pending body's header was read."""
        self._last_feed = 0.0

    @property
    def waiting_for_body(self) -> bool:
        """Whether a header was read and its body is not complete yet."""
        return self._length is not None and not self._skipping

    def expire(self, timeout: float = BODY_TIMEOUT_S) -> Iterator[Frame]:
        """Give up a body incomplete `timeout` seconds after its header, if it holds the
        next header or nothing arrived for that long; yield the report and what follows."""
        now = time.monotonic()
        if not self.waiting_for_body or now - self._body_since < timeout:
            return
        cut = _HEADER_LINE.search(self._buffer)
        if cut is None and now - self._last_feed < timeout:
            return  # a long body still arriving
        dropped = cut.start() if cut is not None else len(self._buffer)
        del self._buffer[:dropped]
        self._length = None
        yield BadFrame("an incomplete body (a Content-Length too long?)", dropped, answer=True)
        yield from self.feed(b"")

    def feed(self, chunk: bytes) -> Iterator[Frame]:
        """Add bytes; yield every frame (or garbage report) they complete."""
        self._buffer += chunk
        if chunk:
            self._last_feed = time.monotonic()
        while True:
            frame = self._next()
            if frame is None:
                return
            if not isinstance(frame, _Again):
                yield frame

    def _next(self) -> Frame | _Again | None:
        """The next frame, `_AGAIN` when a step consumed input without one, None for "need
        more bytes"."""
        if self._skipping:
            return self._skip()
        if self._length is not None:
            return self._body()
        return self._header()

    def _skip(self) -> _Again | None:
        taken = min(self._skipping, len(self._buffer))
        del self._buffer[:taken]
        self._skipping -= taken
        return None if self._skipping else _AGAIN

    def _body(self) -> Frame | None:
        assert self._length is not None
        if len(self._buffer) < self._length:
            return None
        data = bytes(self._buffer[: self._length])
        del self._buffer[: self._length]
        self._length = None
        return Body(data)

    def _header(self) -> Frame | _Again | None:
        end = _HEADER_END.search(self._buffer)
        if end is None:
            self._drop_overlong_header()
            return None
        block = bytes(self._buffer[: end.start()])
        del self._buffer[: end.end()]
        lengths = list(_CONTENT_LENGTH.finditer(block))
        if not lengths:
            if block.strip():
                return self._garbage("a header without Content-Length", len(block))
            return _AGAIN  # stray blank lines between messages
        last = lengths[-1]
        length = int(last.group(1))
        if length > self.max_body:
            self._skipping = length
            return self._garbage("a message body over the size limit", length)
        self._length = length
        self._body_since = time.monotonic()
        if block[: last.start()].strip():
            return self._garbage(
                "bytes before a header (a Content-Length too short?)", last.start()
            )
        if self._dropped:
            return self._garbage("an overlong header line", 0)
        return _AGAIN

    def _garbage(self, reason: str, size: int) -> BadFrame:
        dropped, self._dropped = self._dropped + size, 0
        return BadFrame(reason, dropped)

    def _drop_overlong_header(self) -> None:
        if len(self._buffer) <= self.max_header:
            return
        lengths = list(_CONTENT_LENGTH.finditer(self._buffer))
        # keep a possible header that starts near the end; drop everything before it
        tail = len(self._buffer) - _KEEP_TAIL
        keep_from = lengths[-1].start() if lengths else tail
        if keep_from < len(self._buffer) - self.max_header:
            keep_from = tail  # that header is itself deep inside the garbage
        dropped = max(keep_from, 0)
        del self._buffer[:dropped]
        self._dropped += dropped
