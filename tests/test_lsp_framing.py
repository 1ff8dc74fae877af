"""Hostile and clumsy input over real stdio: the server answers and never exits because of it.

The client here writes raw bytes (pytest-lsp frames every message correctly, which is not
what these tests are about) and reads the server's frames with its own small parser.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.lsp.framing import BadFrame, Body, FrameParser


def frame(payload: dict[str, Any] | bytes) -> bytes:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: int, method: str, params: Any = None) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


def notification(method: str, params: Any = None) -> bytes:
    return frame({"jsonrpc": "2.0", "method": method, "params": params})


class RawClient:
    """`agentls serve` on pipes; the server's messages are collected by a reader thread."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentls", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=root,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        buffer = b""
        while chunk := self.proc.stdout.read1(65536):
            buffer += chunk
            while b"\r\n\r\n" in buffer:
                head, rest = buffer.split(b"\r\n\r\n", 1)
                length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
                if len(rest) < length:
                    break
                self.messages.put(json.loads(rest[:length]))
                buffer = rest[length:]

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def response(self, msg_id: int | None, timeout: float = 30.0) -> dict[str, Any]:
        """The next response to `msg_id` (None: an error answered to no id)."""
        deadline = time.monotonic() + timeout
        while True:
            for message in self.seen:
                if "method" not in message and message.get("id") == msg_id:
                    self.seen.remove(message)
                    return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no response to {msg_id!r}; saw {self.seen!r}")
            try:
                self.seen.append(self.messages.get(timeout=remaining))
            except queue.Empty:
                continue

    def initialize(self, msg_id: int = 1) -> dict[str, Any]:
        params = {"processId": None, "rootUri": self.root.as_uri(), "capabilities": {}}
        self.send(request(msg_id, "initialize", params))
        answer = self.response(msg_id)
        self.send(notification("initialized", {}))
        return answer

    def shown_messages(self) -> list[str]:
        while not self.messages.empty():
            self.seen.append(self.messages.get())
        return [
            str(m["params"]["message"])
            for m in self.seen
            if m.get("method") in ("window/showMessage", "window/showMessageRequest")
        ]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.reader.join(10)  # it reads to the end of the dead process's output
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[RawClient]:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    raw = RawClient(tmp_path)
    yield raw
    raw.close()


def alive_and_answering(client: RawClient, msg_id: int) -> None:
    """The process is up and answers a request after the bad input."""
    client.send(request(msg_id, "workspace/executeCommand", {"command": "agentls.status"}))
    answer = client.response(msg_id)
    assert "result" in answer, answer
    assert client.proc.poll() is None


def test_an_overlong_header_line_does_not_end_the_server(client: RawClient) -> None:
    client.send(b"X-Junk: " + b"a" * (2 << 20) + b"\r\n")
    assert "result" in client.initialize()
    alive_and_answering(client, 2)


def test_a_content_length_shorter_than_a_large_body_is_survived(client: RawClient) -> None:
    client.initialize()
    body = json.dumps({"jsonrpc": "2.0", "method": "x", "params": "y" * (3 << 20)}).encode()
    client.send(b"Content-Length: 100\r\n\r\n" + body)
    assert client.response(None)["error"]["code"] == -32700
    alive_and_answering(client, 2)


def test_a_short_content_length_on_a_small_body_does_not_desync_the_stream(
    client: RawClient,
) -> None:
    client.initialize()
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "shutdown"}).encode()
    client.send(b"Content-Length: %d\r\n\r\n" % (len(body) - 5) + body)
    assert client.response(None)["error"]["code"] == -32700
    alive_and_answering(client, 2)
    alive_and_answering(client, 3)


def test_an_unparsable_body_gets_a_parse_error(client: RawClient) -> None:
    client.initialize()
    client.send(frame(b"{not json"))
    assert client.response(None)["error"]["code"] == -32700
    client.send(frame(b"[1, 2]"))
    assert client.response(None)["error"]["code"] == -32600
    alive_and_answering(client, 2)


def test_a_request_with_malformed_params_gets_an_error_for_its_id(client: RawClient) -> None:
    client.initialize()
    client.send(request(5, "textDocument/documentSymbol", {"textDocument": 42}))
    answer = client.response(5)
    assert answer["error"]["code"] in (-32602, -32603)
    alive_and_answering(client, 2)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("workspace/executeCommand", {"command": "agentls.status"}),
        ("textDocument/documentSymbol", {"textDocument": {"uri": "file:///x.py"}}),
        ("workspace/symbol", {"query": "add"}),
    ],
)
def test_requests_before_initialize_are_refused_at_once(
    client: RawClient, method: str, params: dict[str, Any]
) -> None:
    client.send(notification("textDocument/didOpen", {}))  # dropped, not an error
    client.send(request(9, method, params))
    answer = client.response(9, timeout=10)
    assert answer["error"]["code"] == -32002
    assert "result" in client.initialize(msg_id=10)
    alive_and_answering(client, 11)


def test_did_change_for_a_document_never_opened_is_ignored(client: RawClient) -> None:
    client.initialize()
    change = {
        "textDocument": {"uri": (client.root / "calc.py").as_uri(), "version": 3},
        "contentChanges": [{"text": "x = 1\n"}],
    }
    client.send(notification("textDocument/didChange", change))
    alive_and_answering(client, 2)
    assert [m for m in client.shown_messages() if "Error" in m or "KeyError" in m] == []


def test_the_parser_resynchronises_at_the_next_header() -> None:
    parser = FrameParser(max_header=1024)
    good = frame({"jsonrpc": "2.0", "method": "ok"})
    data = b"X: " + b"z" * 50_000 + b"\r\n" + good + b"Content-Length: 3\r\n\r\n{}}}" + good
    frames = [f for i in range(0, len(data), 777) for f in parser.feed(data[i : i + 777])]
    bodies = [f.data for f in frames if isinstance(f, Body)]
    assert bodies == [good.split(b"\r\n\r\n")[1], b"{}}", good.split(b"\r\n\r\n")[1]]
    assert [f.reason for f in frames if isinstance(f, BadFrame)] != []
    assert len(parser._buffer) == 0


def test_the_parser_holds_no_more_than_its_limits_of_garbage() -> None:
    parser = FrameParser(max_header=4096, max_body=1000)
    for _ in range(200):
        list(parser.feed(b"Content-Length: 12 garbage " * 100))
        assert len(parser._buffer) <= 4096 + 2700
    assert [type(f) for f in parser.feed(b"\r\n\r\n" + b"x" * 12)] != []


def test_the_pygls_internals_we_rely_on_still_exist() -> None:
    """An upgrade of pygls that renames them must fail here, not in a user's editor."""
    import pygls.protocol
    import pygls.server

    from agentls.lsp.protocol import PRIVATE_PYGLS_ATTRIBUTES

    owners = {
        "JsonRPCProtocol": pygls.protocol.JsonRPCProtocol,
        "JsonRPCServer": pygls.server.JsonRPCServer,
    }
    for owner, attribute in PRIVATE_PYGLS_ATTRIBUTES:
        cls = owners[owner]
        if attribute.startswith("_stop"):
            assert attribute in cls.__init__.__code__.co_names, (owner, attribute)
        else:
            assert callable(getattr(cls, attribute)), (owner, attribute)
