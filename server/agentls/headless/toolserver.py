"""The tool server behind `agentls tool --reuse`: one `agentls serve`, kept warm.

Started detached by the client (`agentls.headless.reuse`) for one workspace, it starts
`agentls serve` the way the direct `agentls tool` does (`ServerConnection`, index on
demand), then answers tool calls on a Unix socket (0600, in the client's checked folder)
until `--idle` seconds pass without one; then it shuts the language server down, removes
its socket and exits.

Each call runs as the direct path would: `--trust` recorded (or the held-back note
written), the workspace's trust assessed again, the tool run through `agentls.tool`, its
staged writes accepted into a fresh `EditLedger` (dry run unless `apply`). When the trust
state or the settings it covers changed since the language server started (`agentls trust
--revoke`, an edited `.claude/settings.json`, a deny rule added to the user's
`~/.claude/settings.json` or the managed settings), the language server is restarted first,
so a reused server never acts on settings or a trust answer a fresh one would not see.

Protocol: on connect the server writes a greeting line; the client sends one JSON-RPC
request line (`method: "tool"`); the server writes one response line and closes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import io
import json
import logging
import os
import signal
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.headless.client import ServerConnection, ServerError
from agentls.headless.edits import EditLedger
from agentls.headless.mcp_options import with_mcp
from agentls.headless.reuse import HELLO, PROTOCOL, peer_uid

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
REQUEST_LIMIT = 64 << 20


class Notices:
    """A `Listener` keeping the server's warnings and errors for the next answer's stderr
    (the direct path writes them on stderr as they come)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def on_event(self, event: Any) -> None:
        return None

    def on_progress(self, kind: str, message: str) -> None:
        return None

    def on_message(self, kind: int, message: str) -> None:
        if kind <= 2:  # error, warning
            self.lines.append(message + "\n")

    def take(self) -> str:
        text, self.lines = "".join(self.lines), []
        return text


class BadRequest(ValueError):
    """A request this server does not take (wrong workspace, bad fields)."""


@dataclass
class ToolServer:
    workspace: Path
    socket_path: Path
    idle: float
    allow_mcp: list[str]
    conn: ServerConnection | None = None
    trust_key: tuple[str, str] | None = None
    """What the language server was started on (`_trust_key`): restarted when it changes."""
    notices: Notices = field(default_factory=Notices)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last: float = 0.0
    busy: int = 0
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    # -- the language server ---------------------------------------------------------

    async def ensure_server(self) -> ServerConnection:
        """The language server, (re)started when the trust state changed or it died."""
        key = _trust_key(self.workspace)
        conn = self.conn
        dead = conn is not None and (conn.process is None or conn.process.returncode is not None)
        if conn is not None and (dead or key != self.trust_key):
            log.info("restarting the language server (trust %s → %s)", self.trust_key, key)
            self.conn = None
            await conn.stop()
            conn = None
        if conn is None:
            conn = ServerConnection(
                self.workspace,
                listener=self.notices,
                initialization_options=with_mcp(None, self.allow_mcp),
                index_on_demand=True,
            )
            await conn.start()
            self.conn, self.trust_key = conn, key
        return conn

    async def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            await conn.stop()

    # -- a call ------------------------------------------------------------------------

    async def call(self, params: dict[str, object]) -> dict[str, object]:
        name, tool_input, apply, trust = _checked(params, self.workspace)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            _trust_or_note(self.workspace, trust)
        conn = await self.ensure_server()
        ledger = EditLedger(self.workspace, encoding=conn.encoding, apply=apply)
        conn.ledger = ledger
        try:
            result = await conn.command("agentls.tool", {"name": name, "input": tool_input})
            if not result.get("is_error"):
                await conn.command("agentls.accept", {"session": "tool"})
        except ServerError as exc:
            return {"stderr": stderr.getvalue() + self.notices.take(), "error": str(exc)}
        finally:
            conn.ledger = None
            await _discard_staged(conn)
        return {
            "stderr": stderr.getvalue() + self.notices.take(),
            "result": result,
            "diff": ledger.diff(),
        }

    async def answer(self, line: bytes) -> dict[str, object]:
        try:
            message = json.loads(line)
            if not isinstance(message, dict) or message.get("method") != "tool":
                raise BadRequest("expected a `tool` request")
            params = message.get("params")
            if not isinstance(params, dict):
                raise BadRequest("params must be an object")
        except (ValueError, BadRequest) as exc:
            return _error(None, str(exc))
        async with self.lock:
            self.busy += 1
            try:
                result = await self.call(params)
                return {"jsonrpc": "2.0", "id": message.get("id"), "result": result}
            except BadRequest as exc:
                return _error(message.get("id"), str(exc))
            except Exception as exc:  # the server stays up for the next call
                log.exception("tool call failed")
                return {"jsonrpc": "2.0", "id": message.get("id"), "result": {"error": str(exc)}}
            finally:
                self.busy -= 1
                self.last = asyncio.get_running_loop().time()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if not _same_user(writer.get_extra_info("socket")):
                return
            writer.write(f"{HELLO} {PROTOCOL}\n".encode())
            await writer.drain()
            line = await reader.readline()
            if line.strip():
                response = await self.answer(line)
                writer.write(json.dumps(response, ensure_ascii=False).encode("utf-8") + b"\n")
                await writer.drain()
        except (OSError, ValueError) as exc:  # the client went away, an overlong line
            log.info("connection: %s", exc)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    # -- life --------------------------------------------------------------------------

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(signum, self.stop.set)
        await self.ensure_server()
        _write_pidfile(self.socket_path, self.conn)
        sock, inode = _bind(self.socket_path)
        listener = await asyncio.start_unix_server(self.connection, sock=sock, limit=REQUEST_LIMIT)
        self.last = loop.time()
        try:
            while not self.stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), min(1.0, self.idle / 4))
                if not self.busy and loop.time() - self.last >= self.idle:
                    log.info("idle for %.0f s: exiting", self.idle)
                    break
        finally:
            _unlink_if_ours(self.socket_path, inode)
            listener.close()
            await self.close()
            with contextlib.suppress(OSError):
                self.socket_path.with_suffix(".pid").unlink()


async def _discard_staged(conn: ServerConnection) -> None:
    """Drop what a dry run left staged: a direct call's server ends with it, so the next
    call must not see it (`read_file` would show it, a second edit would stack on it)."""
    with contextlib.suppress(ServerError):
        await conn.command("agentls.reject", {"session": "tool"})


def _checked(
    params: dict[str, object], workspace: Path
) -> tuple[str, dict[str, object], bool, bool]:
    """(name, input, apply, trust) of a request for this server's workspace."""
    if params.get("workspace") != str(workspace):
        raise BadRequest(f"this tool server serves {workspace}, not {params.get('workspace')}")
    name, tool_input = params.get("name"), params.get("input")
    if not isinstance(name, str) or not isinstance(tool_input, dict):
        raise BadRequest("a tool call needs a `name` (string) and an `input` (object)")
    return name, tool_input, params.get("apply") is True, params.get("trust") is True


def _error(request_id: object, message: str) -> dict[str, object]:
    error = {"code": INVALID_PARAMS, "message": message}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _trust_key(workspace: Path) -> tuple[str, str]:
    """The workspace's trust state and settings digest, as a fresh server would assess,
    and a digest of the user's and managed settings files (a deny rule added there since
    the language server started must apply, as on a fresh one)."""
    from agentls.headless.trust import assess

    trust = assess(workspace)
    return trust.state, trust.digest + ":" + _settings_digest(workspace)


def _settings_digest(workspace: Path) -> str:
    from agentls.agent.claude.settings import managed_settings_files
    from agentls.agent.safety import claude_settings_files

    files = [path for path, _, _ in claude_settings_files([workspace], Path.home())]
    digest = hashlib.sha256()
    for path in files + managed_settings_files():
        digest.update(os.fsencode(path) + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"\0absent")
        digest.update(b"\0")
    return digest.hexdigest()


def _trust_or_note(workspace: Path, trust: bool) -> None:
    """What the direct path does before it starts the server (`_trust_if_asked`)."""
    from agentls.headless.trust import held_back_note, trust_workspace

    if trust:
        trust_workspace(workspace)
    else:
        held_back_note(workspace)


def _same_user(sock: socket.socket | None) -> bool:
    if sock is None:
        return False
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        log.warning("refused a connection from uid %d", uid)
        return False
    return True


def _bind(path: Path) -> tuple[socket.socket, int]:
    """A listening socket at `path`, 0600 from the start (bound under a umask, then
    renamed into place so a client never sees it half set up); returns its inode."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(os.fsencode(temporary))
    finally:
        os.umask(old)
    os.chmod(temporary, 0o600)
    sock.listen(64)
    os.replace(temporary, path)
    sock.setblocking(False)
    return sock, os.lstat(path).st_ino


def _unlink_if_ours(path: Path, inode: int) -> None:
    with contextlib.suppress(OSError):
        if os.lstat(path).st_ino == inode:
            os.unlink(path)


def _write_pidfile(path: Path, conn: ServerConnection | None) -> None:
    """The pids of this server and its language server (for tests and `kill`)."""
    process = conn.process if conn is not None else None
    pids = {"pid": os.getpid(), "server": process.pid if process is not None else None}
    fd = os.open(path.with_suffix(".pid"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(json.dumps(pids))


def main(argv: list[str] | None = None) -> int:
    from agentls import credentials

    if argv is None:
        credentials.isolate()  # as `agentls` does: the key never in /proc/<pid>/environ
    parser = argparse.ArgumentParser(prog="agentls-tool-server")
    parser.add_argument("--socket", required=True, type=Path)
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--idle", type=float, default=600.0)
    parser.add_argument("--allow-mcp-json", default="[]")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("AGENTLS_CLI_LOG_LEVEL", "WARNING").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("pygls").setLevel(logging.CRITICAL)
    server = ToolServer(
        args.workspace, args.socket, args.idle, list(json.loads(args.allow_mcp_json))
    )
    asyncio.run(server.run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
