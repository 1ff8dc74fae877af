"""Input that ended or froze the servers (issue 27, items 4 and 6a), sent as an attacker would.

- 100,000 nested `[` raised `RecursionError` out of the read loop of `agentls serve` (stdio
  and TCP) and `agentls acp`, and the process exited: now a `-32700` and the next request
  is answered.
- `Content-Length: 999999` before a small body swallowed every following request: now the
  body is given up after `BODY_TIMEOUT_S`, answered with `-32700`, and the stream resyncs.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentls.jsonbody import MAX_DEPTH, loads_bounded, nesting_depth
from agentls.lsp.framing import BODY_TIMEOUT_S
from agentls.testing import ScriptedMessagesServer
from tests.lsp_support import server_env
from tests.test_acp_protocol import start_raw
from tests.test_lsp_cli import _connect, _free_port, _read_message
from tests.test_lsp_framing import RawClient, alive_and_answering, frame, request

BOMB = b"[" * 100_000
STATUS = {"command": "agentls.status"}


def test_the_depth_check_ignores_brackets_in_strings() -> None:
    text = json.dumps({"text": "[" * 5000 + '\\"[{', "list": [[[1]]]}).encode()
    assert nesting_depth(text) == 4
    assert loads_bounded(text)["list"] == [[[1]]]
    deep = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    assert nesting_depth(deep) == MAX_DEPTH + 1
    with pytest.raises(ValueError, match="nested"):
        loads_bounded(deep)


def test_lsp_stdio_answers_a_json_bomb_and_keeps_serving(tmp_path: Path) -> None:
    client = RawClient(tmp_path)
    try:
        client.initialize()
        client.send(frame(BOMB))
        assert client.response(None)["error"]["code"] == -32700
        alive_and_answering(client, 7)
    finally:
        client.close()


def test_lsp_tcp_answers_a_json_bomb_and_keeps_serving(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls", "serve", "--tcp", f"127.0.0.1:{port}"],
        env=server_env(None, tmp_path),
        stderr=subprocess.DEVNULL,
    )
    conn = _connect(port)
    try:
        conn.sendall(frame(BOMB))
        error = _next_response(conn)
        assert error.get("id") is None
        assert error["error"]["code"] == -32700  # type: ignore[index]
        conn.sendall(request(1, "initialize", {"capabilities": {}}))
        reply = _next_response(conn)
        assert reply["id"] == 1
        assert "result" in reply
        assert proc.poll() is None
    finally:
        conn.close()
        proc.kill()
        proc.communicate()


def _next_response(conn: socket.socket) -> dict[str, object]:
    """The next message that answers a request (notifications skipped)."""
    while "method" in (message := _read_message(conn)):
        pass
    return message


async def test_acp_answers_a_json_bomb_and_keeps_serving(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    from tests.acp_support import agent_env

    root = tmp_path / "proj"
    root.mkdir()
    peer = await start_raw(agent_env(api.base_url, tmp_path / "home"), root)
    try:
        await peer.send_line(BOMB)
        error = await peer.read_message()
        assert error["id"] is None
        assert error["error"]["code"] == -32700
        ok = await peer.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert ok["result"]["agentInfo"]["name"] == "agentls"
        assert peer.process.returncode is None
    finally:
        peer.process.kill()
        await peer.process.communicate()


def test_a_content_length_too_long_is_given_up_and_the_stream_resyncs(tmp_path: Path) -> None:
    client = RawClient(tmp_path)
    try:
        client.initialize()
        body = b'{"jsonrpc": "2.0", "id": 5, "method": "shutdown"}'
        client.send(b"Content-Length: 999999\r\n\r\n" + body)
        began = time.monotonic()
        for msg_id in (11, 12, 13, 14):
            client.send(request(msg_id, "workspace/executeCommand", STATUS))
        assert client.response(None, timeout=BODY_TIMEOUT_S + 30)["error"]["code"] == -32700
        assert time.monotonic() - began >= BODY_TIMEOUT_S - 0.5
        for msg_id in (11, 12, 13, 14):  # the stream resyncs at the first one's header
            assert "result" in client.response(msg_id), msg_id
        alive_and_answering(client, 15)
    finally:
        client.close()


def test_a_stalled_body_is_given_up_and_the_next_message_is_answered(tmp_path: Path) -> None:
    client = RawClient(tmp_path)
    try:
        client.initialize()
        client.send(b"Content-Length: 999999\r\n\r\n{}")
        assert client.response(None, timeout=BODY_TIMEOUT_S + 30)["error"]["code"] == -32700
        alive_and_answering(client, 21)
    finally:
        client.close()


def test_a_long_body_still_arriving_is_not_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentls.lsp import framing

    clock = [100.0]
    monkeypatch.setattr(framing.time, "monotonic", lambda: clock[0])
    body = json.dumps({"text": "Content-Length: 5" + "x" * 100}).encode()
    parser = framing.FrameParser()
    assert list(parser.feed(b"Content-Length: %d\r\n\r\n" % len(body) + body[:30])) == []
    for step in range(1, 10):  # a slow sender: a few bytes a second, for seconds
        clock[0] += 1.0
        assert list(parser.feed(body[30 + step - 1 : 30 + step])) == []
        assert list(parser.expire()) == []
    frames = list(parser.feed(body[39:]))
    assert [f.data for f in frames if isinstance(f, framing.Body)] == [body]
