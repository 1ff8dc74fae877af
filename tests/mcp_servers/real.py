"""The real MCP servers of the tests, found where `scripts/deps/mcp.sh` installs them.

- `@modelcontextprotocol/server-everything` (npm) in
  `${AGENTLS_TOOLS_DIR:-~/.cache/agentls-tools}/mcp-<hash of the lock file>/`, run with
  Node.js over stdio or streamable HTTP;
- `mcp-server-time` (PyPI, a dev dependency) with this interpreter.

A missing one fails the test with the command that installs it (never a silent skip).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEPS = REPO / "scripts" / "deps" / "mcp"
INSTALL = "run `bash scripts/deps/mcp.sh` (or `bash scripts/test-deps.sh`)"
ENTRY = Path("node_modules/@modelcontextprotocol/server-everything/dist/index.js")


def tools_dir() -> Path:
    return Path(os.environ.get("AGENTLS_TOOLS_DIR") or Path.home() / ".cache" / "agentls-tools")


def _key() -> str:
    data = (DEPS / "package.json").read_bytes() + (DEPS / "package-lock.json").read_bytes()
    return hashlib.sha256(data).hexdigest()[:12]


def node() -> str:
    found = shutil.which("node")
    if found is None:
        raise AssertionError(f"Node.js is missing: server-everything needs it; {INSTALL}")
    return found


def everything_entry() -> Path:
    entry = tools_dir() / f"mcp-{_key()}" / ENTRY
    if not entry.is_file():
        raise AssertionError(
            f"@modelcontextprotocol/server-everything not found at {entry}; {INSTALL}"
        )
    return entry


def everything_stdio() -> dict[str, Any]:
    """A `.mcp.json` entry running server-everything over stdio."""
    return {"command": node(), "args": [str(everything_entry()), "stdio"]}


def time_server() -> dict[str, Any]:
    """A `.mcp.json` entry running mcp-server-time (UTC, so results are predictable)."""
    if importlib.util.find_spec("mcp_server_time") is None:
        raise AssertionError(f"mcp-server-time is not installed; {INSTALL}")
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EverythingHttp:
    """server-everything's streamable-HTTP transport on a free 127.0.0.1 port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> EverythingHttp:
        env = {**os.environ, "PORT": str(self.port)}
        self._proc = subprocess.Popen(
            [node(), str(everything_entry()), "streamableHttp"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise AssertionError(
                    f"server-everything (HTTP) exited with {self._proc.returncode}"
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise AssertionError("server-everything (HTTP) did not come up within 60 s")

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
