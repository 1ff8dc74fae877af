"""Helpers for the MCP tests: server configs, an in-thread HTTP server, session factory."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import uvicorn

from agentls.agent.framework.registry import AnyTool, PoolFilter, ToolSearchSettings, ToolSource
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer
from agentls.workspace import Workspace
from tests.agent_support import close_at_loop_end
from tests.mcp_servers import demo_server

SERVER = str(Path(demo_server.__file__).resolve())


def stdio(*args: str) -> dict[str, Any]:
    """A `.mcp.json` stdio entry running the demo server with the test's Python."""
    return {"command": sys.executable, "args": [SERVER, *args]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpDemoServer:
    """The demo server over streamable HTTP (or legacy SSE) on a free 127.0.0.1 port, run
    by uvicorn in a thread (the test process has the SDK imported already, so this starts
    in well under a second, unlike a fresh interpreter)."""

    def __init__(self, name: str = "web", kind: str = "http") -> None:
        self.port = free_port()
        path = "/sse" if kind == "sse" else "/mcp"
        self.url = f"http://127.0.0.1:{self.port}{path}"
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        try:
            server = demo_server.build(name, 0)
            app = server.sse_app() if kind == "sse" else server.streamable_http_app()
        finally:
            # MCPServer() calls logging.basicConfig; keep the test process's logging as it was.
            root.handlers[:] = handlers
            root.setLevel(level)
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> HttpDemoServer:
        self._thread.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the HTTP demo server did not come up")

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


def make_session(
    api: ScriptedMessagesServer,
    tmp_path: Path,
    *,
    sources: Sequence[ToolSource] = (),
    tools: Sequence[AnyTool] = (),
    search: ToolSearchSettings | None = None,
    pool_filter: PoolFilter | None = None,
    permissions: Any = None,
) -> AgentSession:
    settings = AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.base_url},
        retry_base_delay=0.01,
        retry_max_delay=0.05,
    )
    extra: dict[str, Any] = {}
    if permissions is not None:
        extra["permissions"] = permissions
    config = SessionConfig(
        settings=settings,
        workspace=Workspace([tmp_path]),
        tools=tools,
        tool_sources=sources,
        tool_search=search or ToolSearchSettings(),
        pool_filter=pool_filter or PoolFilter(),
        transcript_dir=tmp_path / "transcripts",
        **extra,
    )
    return close_at_loop_end(AgentSession(AnthropicModelClient(settings), config))


def pid_alive(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def wait_until_dead(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        await asyncio.sleep(0.05)
    return not pid_alive(pid)
