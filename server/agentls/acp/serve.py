"""`agentls acp`: the agent over the Agent Client Protocol on stdin/stdout.

Nothing but protocol goes to stdout. The process keeps its own copy of the stdout file
descriptor for the protocol and points descriptor 1 at stderr, so a stray `print`, a
library's warning or a child process that inherits stdout can never corrupt the stream.
Logs go to `--log-file` or stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from acp.agent.connection import AgentSideConnection
    from acp.router import MessageRouter

    from agentls.acp.agent import AgentlsAcpAgent
    from agentls.acp.transport import StdioTransport

log = logging.getLogger(__name__)


def load_settings(value: str | None) -> tuple[object, str | None]:
    """`--settings`: inline JSON or a JSON file holding the `agentls` section; (section,
    problem). A bad value is reported and ignored (the other layers still apply)."""
    if not value:
        return None, None
    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            return None, f"--settings: cannot read {value}: {exc.strerror or exc}"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"--settings: invalid JSON at line {exc.lineno}: {exc.msg}"


def serve(args: argparse.Namespace) -> int:
    from agentls.lsp.serve import configure_logging

    configure_logging(args.log_level, args.log_file)
    settings, problem = load_settings(args.settings)
    if problem:
        sys.stderr.write(f"agentls acp: {problem}\n")
        return 2
    if getattr(args, "login", False):
        from agentls.acp.login import check_login

        return check_login(settings)
    protocol_fd = claim_stdout()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(protocol_fd, settings))
    return 0


def claim_stdout() -> int:
    """A private descriptor for the protocol; descriptor 1 (and `sys.stdout`) → stderr."""
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


async def run(protocol_fd: int, settings: object) -> None:
    """Serve one client until it closes the connection."""
    from agentls.acp.agent import AgentlsAcpAgent
    from agentls.acp.transport import StdioTransport

    reader, writer = await _streams(protocol_fd)
    agent = AgentlsAcpAgent(settings)
    try:
        conn = connect(agent, StdioTransport(reader, writer))
        try:
            await conn.listen()
        finally:
            await asyncio.shield(conn.close())
    finally:
        await agent.close()
    log.info("the client closed the connection")


def connect(agent: AgentlsAcpAgent, transport: StdioTransport) -> AgentSideConnection:
    """The SDK's connection with the session methods it marks unstable (resume, fork, close,
    config options) routed, and `session/delete`, which this SDK release does not route."""
    from acp import Agent
    from acp.agent.connection import AgentSideConnection
    from acp.meta import AGENT_METHODS
    from acp.schema import DeleteSessionRequest

    conn = AgentSideConnection(
        cast(Agent, agent), cast(Any, transport), listening=False, use_unstable_protocol=True
    )
    router = cast("MessageRouter", conn._conn._handler)  # the SDK offers no public hook
    router.route_request(
        AGENT_METHODS["session_delete"], DeleteSessionRequest, agent, "delete_session"
    )
    return conn


async def _streams(protocol_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    from agentls.acp.transport import MAX_LINE

    reader = asyncio.StreamReader(limit=MAX_LINE)
    protocol = asyncio.StreamReaderProtocol(reader)
    try:
        await loop.connect_read_pipe(lambda: protocol, sys.stdin)
    except ValueError:  # not a pipe (a file, a terminal): read it in a thread
        _feed_from_thread(loop, reader)
    out = os.fdopen(protocol_fd, "wb", buffering=0)
    transport, writer_protocol = await loop.connect_write_pipe(_WriteProtocol, out)
    writer = asyncio.StreamWriter(transport, writer_protocol, None, loop)
    return reader, writer


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    import threading

    def pump() -> None:
        try:
            while chunk := os.read(0, 65536):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="agentls-acp-stdin", daemon=True).start()


class _WriteProtocol(asyncio.streams.FlowControlMixin):
    """Flow control for the protocol pipe (what `asyncio.StreamWriter.drain` waits on)."""

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        log.info("the protocol pipe closed: %s", exc or "end of stream")
