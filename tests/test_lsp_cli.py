"""`agentls serve` transports and arguments (stdio is covered by every other LSP test)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.lsp_support import server_env


def test_serve_over_tcp_answers_initialize(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls", "serve", "--tcp", f"127.0.0.1:{port}"],
        env=server_env(None, tmp_path),
        stderr=subprocess.PIPE,
    )
    try:
        conn = _connect(port)
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        ).encode()
        conn.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        reply = _read_message(conn)
        assert reply["id"] == 1
        assert "agentls.run" in str(reply["result"])
        conn.close()
    finally:
        proc.kill()
        proc.communicate()  # reaps it and closes its pipes


def test_serve_over_tcp_survives_an_overlong_header_line(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls", "serve", "--tcp", f"127.0.0.1:{port}"],
        env=server_env(None, tmp_path),
        stderr=subprocess.DEVNULL,
    )
    try:
        conn = _connect(port)
        body = json.dumps(INITIALIZE).encode()
        junk = b"X-Junk: " + b"a" * (2 << 20) + b"\r\n"
        conn.sendall(junk + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        reply = _read_message(conn)
        assert reply["id"] == 1
        assert "result" in reply
        assert proc.poll() is None
        conn.close()
    finally:
        proc.kill()
        proc.communicate()  # reaps it and closes its pipes


def test_serve_rejects_a_bad_address(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentls", "serve", "--tcp", "nowhere"],
        env=server_env(None, tmp_path),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "HOST:PORT" in proc.stderr


def _connect(port: int) -> socket.socket:
    deadline = time.monotonic() + 20
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _read_message(conn: socket.socket) -> dict[str, object]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(4096)
    header, _, rest = data.partition(b"\r\n\r\n")
    fields = dict(line.split(b":", 1) for line in header.split(b"\r\n"))
    length = int(fields[b"Content-Length"])
    while len(rest) < length:
        rest += conn.recv(4096)
    result: dict[str, object] = json.loads(rest[:length])
    return result


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


def test_serve_over_websocket_answers_initialize(tmp_path: Path) -> None:
    from websockets.sync.client import connect

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls", "serve", "--ws", f"127.0.0.1:{port}"],
        env=server_env(None, tmp_path),
        stderr=subprocess.PIPE,
    )
    try:
        _connect(port).close()  # wait until it listens
        with connect(f"ws://127.0.0.1:{port}", open_timeout=20) as ws:
            request = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"capabilities": {}},
            }
            ws.send(json.dumps(request))
            reply = json.loads(ws.recv(timeout=30))
        assert reply["id"] == 1
        assert "agentls.run" in str(reply["result"])
    finally:
        proc.kill()
        proc.communicate()  # reaps it and closes its pipes


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_serve_writes_its_log_to_the_log_file(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    ).encode()
    exit_body = json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode()
    stdin = b"".join(b"Content-Length: %d\r\n\r\n" % len(b) + b for b in (body, exit_body))
    proc = subprocess.run(
        [sys.executable, "-m", "agentls", "serve", "--log-file", str(log), "--log-level", "debug"],
        env=server_env(None, tmp_path),
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    assert b'"id": 1' in proc.stdout or b'"id":1' in proc.stdout
    assert proc.stderr == b"", "logs go to the file, never to the LSP channel or stderr"
    assert "initialize" in log.read_text()
