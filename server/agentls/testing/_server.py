"""A real HTTP/1.1 fake of the Messages API that plays a scripted scenario.

It is a real socket server (not an httpx mock transport) so that the same fake serves an
in-process `AsyncAnthropic` client and a language-server subprocess pointed at it through
`ANTHROPIC_BASE_URL`, and so that connection-level faults (a stream cut mid-block, a hung
response) reach the client exactly as a network would deliver them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self, cast

from agentls.testing._http import (
    POLL_SECONDS,
    DropReply,
    HTTPServer,
    JsonReply,
    RawReply,
    Reply,
    StreamReply,
)
from agentls.testing._validation import IssuedThinking, validate_request
from agentls.testing._wire import (
    RenderContext,
    SseEvent,
    block_json,
    default_error_type,
    error_body,
    estimate_input_tokens,
    message_json,
    stream_events,
)
from agentls.testing.recorded import RecordedRequest
from agentls.testing.scenario import (
    Scenario,
    Turn,
    TurnFactory,
    TurnLike,
    coerce_turn,
    resolve_turn,
)

log = logging.getLogger(__name__)


def _error(status: int, message: str, error_type: str | None = None) -> JsonReply:
    return JsonReply(status, error_body(error_type or default_error_type(status), message))


def _model_list(ids: Sequence[str]) -> dict[str, object]:
    """One page of the Models API listing `ids`."""
    data = [
        {"type": "model", "id": i, "display_name": i, "created_at": "2025-01-01T00:00:00Z"}
        for i in ids
    ]
    return {
        "data": data,
        "has_more": False,
        "first_id": ids[0] if ids else None,
        "last_id": ids[-1] if ids else None,
    }


def _turn_error(turn: Turn) -> JsonReply:
    """The HTTP error a turn injects, with `retry-after` when scripted."""
    status = cast(int, turn.error_status)
    headers = {} if turn.retry_after is None else {"retry-after": str(turn.retry_after)}
    message = turn.error_message or f"scripted error {status}"
    body = error_body(turn.error_type or default_error_type(status), message)
    return JsonReply(status, body, headers)


@dataclass
class _Attempts:
    """Faults already injected for the current turn; reset when the turn is consumed."""

    errors: int = 0
    raws: int = 0
    cuts: int = 0
    truncations: int = 0
    sse_errors: int = 0


class ScriptedMessagesServer:
    """Serves `POST /v1/messages` (streaming and not) and `/v1/messages/count_tokens`, and
    `GET /v1/models` when given `models` (the ids it lists; without them: 404, an endpoint
    with no Models API).

    Each `/v1/messages` request plays the next scripted turn; see `Turn` for the faults a
    turn can inject first. Every request is recorded, whatever its outcome.
    """

    def __init__(
        self,
        scenario: Scenario | Iterable[TurnLike],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        require_auth: str | None = None,
        validate: bool = True,
        on_request: Callable[[RecordedRequest], None] | None = None,
        models: Sequence[str] | None = None,
    ) -> None:
        self._models = list(models) if models is not None else None
        self._turns: list[Turn | TurnFactory] = list(Scenario.coerce(scenario).turns)
        self._address = (host, port)
        self._require_auth = require_auth
        self._validate = validate
        self._on_request = on_request
        self._position = 0
        self._attempts = _Attempts()
        self._state = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self.issued_thinking = IssuedThinking()
        """Thinking blocks played so far: requests must send them back unchanged."""
        self._stopping = threading.Event()
        self._httpd: HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> Self:
        """Binds the port and serves from a daemon thread; returns self for chaining."""
        if self._httpd is not None or self._stopping.is_set():
            raise RuntimeError("a ScriptedMessagesServer can be started only once")
        self._httpd = HTTPServer(self._address, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": POLL_SECONDS},
            name=f"scripted-messages-server:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops serving and drops open connections, ending hung and slow streams."""
        httpd, self._httpd = self._httpd, None
        self._stopping.set()
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- introspection -----------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What to pass as `base_url=` / `ANTHROPIC_BASE_URL` (no trailing slash)."""
        return f"http://{self._address[0]}:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._state:
            return list(self._requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """Only the `POST /v1/messages` requests (skips token counts and stray calls)."""
        return [r for r in self.requests if r.method == "POST" and r.route == "/v1/messages"]

    @property
    def remaining(self) -> int:
        """Turns not yet played (a turn whose faults are still pending counts as unplayed)."""
        with self._state:
            return len(self._turns) - self._position

    def extend(self, *turns: TurnLike) -> None:
        """Appends turns while serving, for tests that script the next reply as they go."""
        with self._state:
            self._turns.extend(coerce_turn(turn) for turn in turns)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Blocks until `count` requests were recorded; for clients in other processes."""
        deadline = time.monotonic() + timeout
        with self._state:
            while len(self._requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"got {len(self._requests)} of {count} requests")
                self._state.wait(left)
            return list(self._requests)

    # -- request handling (called from handler threads) -------------------------------------

    @property
    def stopping(self) -> threading.Event:
        return self._stopping

    def reply_to(self, request: RecordedRequest) -> Reply:
        """Records the request and decides the whole response before any byte is sent."""
        self._record(request)
        if not self._authorised(request):
            return _error(401, "invalid x-api-key")
        if request.method == "POST" and request.route == "/v1/messages":
            return self._messages(request)
        if request.method == "POST" and request.route == "/v1/messages/count_tokens":
            return self._count_tokens(request)
        if request.method == "GET" and request.route == "/v1/models" and self._models is not None:
            return JsonReply(200, _model_list(self._models))
        return _error(404, f"Not found: {request.method} {request.route}")

    def _record(self, request: RecordedRequest) -> None:
        with self._state:
            self._requests.append(request)
            self._state.notify_all()
        if self._on_request is not None:
            self._on_request(request)

    def _authorised(self, request: RecordedRequest) -> bool:
        return self._require_auth is None or request.api_key == self._require_auth

    def _invalid(self, request: RecordedRequest, *, needs_max_tokens: bool) -> JsonReply | None:
        problem = validate_request(request, needs_max_tokens=needs_max_tokens)
        if problem is None:
            with self._state:
                problem = self.issued_thinking.problem(request)
        return _error(400, problem) if self._validate and problem else None

    def _count_tokens(self, request: RecordedRequest) -> JsonReply:
        invalid = self._invalid(request, needs_max_tokens=False)
        return invalid or JsonReply(200, {"input_tokens": estimate_input_tokens(request)})

    def _messages(self, request: RecordedRequest) -> Reply:
        invalid = self._invalid(request, needs_max_tokens=True)
        if invalid:
            return invalid
        with self._state:
            return self._next_reply(request)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        """Picks the pending fault of the current turn, or plays (and consumes) the turn."""
        if self._position >= len(self._turns):
            return _error(500, f"scenario exhausted: all {len(self._turns)} turns were played")
        try:
            turn = resolve_turn(self._turns[self._position], request)
        except Exception as exc:
            log.exception("turn factory %d failed", self._position)
            return _error(500, f"turn factory for turn {self._position} raised {exc!r}")
        fault = self._next_fault(turn, request)
        if fault is not None:
            return fault
        self._position += 1
        self._attempts = _Attempts()
        self.issued_thinking.issue([block_json(block) for block in turn.content])
        return _play(turn, request)

    def _next_fault(self, turn: Turn, request: RecordedRequest) -> Reply | None:
        attempts = self._attempts
        if turn.error_status is not None and attempts.errors < turn.error_times:
            attempts.errors += 1
            return _turn_error(turn)
        if turn.raw_body is not None and attempts.raws < turn.raw_times:
            attempts.raws += 1
            return RawReply(turn.raw_status, turn.raw_body.encode(), turn.raw_content_type)
        if turn.cut_stream_after_events is not None and attempts.cuts < turn.cut_times:
            attempts.cuts += 1
            return _cut(turn, request, turn.cut_stream_after_events)
        after = turn.truncate_after_events
        if after is not None and attempts.truncations < turn.truncate_times:
            attempts.truncations += 1
            return _truncate(turn, request, after)
        if turn.sse_error and request.stream and attempts.sse_errors < 1:
            attempts.sse_errors += 1
            return _sse_error(turn, request)
        return None


def _events(turn: Turn, request: RecordedRequest) -> list[SseEvent]:
    return stream_events(turn, RenderContext.for_turn(turn, request))


def _cut(turn: Turn, request: RecordedRequest, after: int) -> Reply:
    if not request.stream:
        return DropReply()
    return StreamReply(_events(turn, request), "cut", after, turn.event_delay)


def _truncate(turn: Turn, request: RecordedRequest, after: int) -> Reply:
    """Ends the response cleanly, but before `message_stop` (at most all but that event)."""
    if not request.stream:
        return DropReply()
    events = _events(turn, request)
    return StreamReply(events, "truncate", min(after, len(events) - 1), turn.event_delay)


def _sse_error(turn: Turn, request: RecordedRequest) -> StreamReply:
    """Sends the error before `message_stop` at the latest, so it really is mid-stream."""
    events = _events(turn, request)
    after = min(turn.sse_error_after_events, len(events) - 1)
    return StreamReply(events, "error", after, turn.event_delay)


def _play(turn: Turn, request: RecordedRequest) -> Reply:
    if not request.stream:
        if turn.hang:
            return DropReply(hang=True)
        body = message_json(turn, RenderContext.for_turn(turn, request))
        return JsonReply(200, body, delay=turn.event_delay)
    if turn.hang:
        events = _events(turn, request)
        return StreamReply(
            events, "hang", turn.hang_after_events, turn.event_delay, turn.keepalive_interval
        )
    return StreamReply(
        _events(turn, request),
        delay=turn.event_delay,
        keepalive=turn.keepalive_interval,
        warmup=turn.ping_before_content,
    )
