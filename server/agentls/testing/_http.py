"""HTTP/1.1 plumbing: turns sockets into `RecordedRequest`s and writes `Reply`s back.

Kept apart from the scenario logic so that the wire-level behaviour (chunked SSE, abrupt
closes, hanging until the peer leaves) can be read on its own. Responses are decided in full
before the first byte goes out; this module only executes them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Protocol, TypeAlias, cast

from agentls.testing._wire import JsonObject, SseEvent, encode_sse, error_body, new_request_id
from agentls.testing.recorded import RecordedRequest

log = logging.getLogger(__name__)

POLL_SECONDS = 0.01
"""How often the accept loop and blocked waits re-check for stop / client disconnect.

Short, because `stop()` waits up to one interval and tests start and stop many servers."""

StreamEnding: TypeAlias = Literal["complete", "cut", "error", "hang", "truncate"]


@dataclass(frozen=True)
class JsonReply:
    """A complete JSON response (a message, a token count or an error)."""

    status: int
    body: JsonObject
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class StreamReply:
    """An SSE response; `ending` says what happens after the first `after` events."""

    events: list[SseEvent]
    ending: StreamEnding = "complete"
    after: int | None = None
    delay: float = 0.0
    keepalive: float | None = None
    """With `hang`: send a ping this often while hanging."""
    warmup: float = 0.0
    """Seconds of pings (every `keepalive`, default 0.5 s) after `message_start`, before the
    rest: a CPU endpoint reading a long prompt."""

    @property
    def events_to_send(self) -> list[SseEvent]:
        return self.events if self.after is None else self.events[: self.after]


@dataclass(frozen=True)
class DropReply:
    """Close the connection without answering, after hanging if asked."""

    hang: bool = False


@dataclass(frozen=True)
class RawReply:
    """A complete response with any body: not what a Messages API client expects."""

    status: int
    body: bytes
    content_type: str


Reply: TypeAlias = JsonReply | StreamReply | DropReply | RawReply

_OVERLOADED_SSE = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class App(Protocol):
    """What the transport needs from the application behind it."""

    @property
    def stopping(self) -> threading.Event: ...

    def reply_to(self, request: RecordedRequest) -> Reply: ...


class HTTPServer(ThreadingHTTPServer):
    """Tracks live connections so `stop()` can end them instead of leaking blocked threads."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], app: App) -> None:
        self.app = app
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        if isinstance(request, socket.socket):
            with self._connections_lock:
                self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        if isinstance(request, socket.socket):
            with self._connections_lock:
                self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            _quiet_shutdown(connection)

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        log.debug("connection from %s failed", client_address, exc_info=True)


def _quiet_shutdown(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    """Turns HTTP into `RecordedRequest`s and writes the app's `Reply` back."""

    protocol_version = "HTTP/1.1"
    server_version = "scripted-anthropic/1"

    def version_string(self) -> str:
        return self.server_version

    @property
    def _app(self) -> App:
        return cast(HTTPServer, self.server).app

    def setup(self) -> None:
        super().setup()
        # SSE events are small writes: without this, Nagle + delayed ACK add ~40 ms stalls.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_POST(self) -> None:
        self._dispatch()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_POST

    def _dispatch(self) -> None:
        body = self._read_body()
        request = RecordedRequest.build(self.command, self.path, dict(self.headers.items()), body)
        try:
            reply = self._app.reply_to(request)
        except Exception as exc:
            log.exception("scripted server failed on %s %s", self.command, self.path)
            reply = JsonReply(500, error_body("api_error", f"scripted server bug: {exc!r}"))
        try:
            self._send(reply)
        except OSError:
            self.close_connection = True  # the client went away mid-response

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            return self._read_chunked_body()
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _read_chunked_body(self) -> bytes:
        parts: list[bytes] = []
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            parts.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(parts)

    def _send(self, reply: Reply) -> None:
        if isinstance(reply, JsonReply):
            self._send_json(reply)
        elif isinstance(reply, RawReply):
            self._send_raw(reply)
        elif isinstance(reply, StreamReply):
            self._send_stream(reply)
        else:
            self._drop(reply)

    def _pause(self, seconds: float) -> bool:
        """Sleeps unless the server stops first; False means "stop now"."""
        return seconds <= 0 or not self._app.stopping.wait(seconds)

    def _send_headers(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in {"request-id": new_request_id(), **headers}.items():
            self.send_header(name, value)
        self.end_headers()

    def _send_json(self, reply: JsonReply) -> None:
        if not self._pause(reply.delay):
            self._abort()
            return
        payload = json.dumps(reply.body).encode()
        headers = {"content-type": "application/json", "content-length": str(len(payload))}
        self._send_headers(reply.status, {**headers, **reply.headers})
        self.wfile.write(payload)

    def _send_raw(self, reply: RawReply) -> None:
        headers = {"content-type": reply.content_type, "content-length": str(len(reply.body))}
        self._send_headers(reply.status, headers)
        self.wfile.write(reply.body)

    def _send_stream(self, reply: StreamReply) -> None:
        self._send_headers(200, _SSE_HEADERS)
        for index, (name, data) in enumerate(reply.events_to_send):
            if index and not self._pause(reply.delay):
                self._abort()
                return
            self._write_chunk(encode_sse(name, data))
            if index == 0 and reply.warmup > 0:
                self._ping_for(reply.warmup, reply.keepalive or 0.5)
        self._end_stream(reply.ending, reply.keepalive)

    def _ping_for(self, seconds: float, interval: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and self._pause(min(interval, end - time.monotonic())):
            self._write_chunk(encode_sse("ping", {"type": "ping"}))

    def _end_stream(self, ending: StreamEnding, keepalive: float | None = None) -> None:
        if ending == "error":
            self._write_chunk(encode_sse("error", _OVERLOADED_SSE))
        if ending in ("complete", "error", "truncate"):
            self.wfile.write(b"0\r\n\r\n")
            return
        if ending == "hang":
            if keepalive is not None:
                self._ping_until_disconnect(keepalive)
            else:
                self._wait_for_disconnect()
        self._abort()

    def _ping_until_disconnect(self, interval: float) -> None:
        """Keep the connection busy with pings and never send anything else."""
        while self._pause(interval) and not self._peer_closed():
            try:
                self._write_chunk(encode_sse("ping", {"type": "ping"}))
            except OSError:
                return

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _drop(self, reply: DropReply) -> None:
        if reply.hang:
            self._wait_for_disconnect()
        self._abort()

    def _abort(self) -> None:
        """Ends the connection without completing the response, like a network failure."""
        self.close_connection = True
        _quiet_shutdown(self.connection)

    def _wait_for_disconnect(self) -> None:
        while not self._app.stopping.wait(POLL_SECONDS):
            if self._peer_closed():
                return

    def _peer_closed(self) -> bool:
        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except OSError:
            return True


_SSE_HEADERS = {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "transfer-encoding": "chunked",
}
