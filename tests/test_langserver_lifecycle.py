"""Language-server lifecycle with real servers (ruff's and bash-language-server, from
`scripts/deps/langservers.sh`): a killed server restarts, and after
`languageServerMaxRestarts` crashes stays down with a clear message; an idle server is
stopped; over the memory budget the least recently used one is stopped; RSS in status."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import psutil
import pytest

from agentls.codeintel.model import Document, Overlay, SourceFailed
from agentls.codeintel.settings import (
    ConfiguredServer,
    LanguageServerConfig,
    LanguageServerSettings,
)
from agentls.langservers import pool as pool_module
from agentls.langservers.managed import ManagedServer
from agentls.langservers.pool import LanguageServerPool
from agentls.workspace import Workspace
from tests.langserver_registry_support import INSTALL, find_server

pytestmark = pytest.mark.asyncio


def _program(name: str) -> Path:
    found = find_server(name)
    if found is None:
        pytest.skip(f"{name} is not installed: {INSTALL}")
    return found


def _pool(root: Path, **lifecycle: float) -> LanguageServerPool:
    ruff = LanguageServerConfig(command=(str(_program("ruff")), "server"))
    bash = LanguageServerConfig(command=(str(_program("bash-language-server")), "start"))
    configured = {
        "python": ConfiguredServer(ruff, "user settings"),
        "bash": ConfiguredServer(bash, "user settings"),
    }
    settings = LanguageServerSettings(configured, **lifecycle)  # type: ignore[arg-type]
    (root / "a.py").write_text("import os\n", encoding="utf-8")
    (root / "a.sh").write_text("echo $1\n", encoding="utf-8")
    return LanguageServerPool(Workspace([root]), lambda: settings)


async def _use(pool: LanguageServerPool, root: Path, name: str) -> ManagedServer:
    path = root / name
    language = "python" if name.endswith(".py") else "bash"
    doc = Document(path, path.read_text(encoding="utf-8"), language)
    await pool.diagnostics([doc], Overlay())
    (server,) = [s for s in pool._servers.values() if language in s.languages]
    return server


def _server_process(server: ManagedServer, name: str) -> psutil.Process:
    """The server itself (under the sandbox's processes)."""
    assert server.connection is not None
    leader = psutil.Process(server.connection.spawned.pid)
    for process in [leader, *leader.children(recursive=True)]:
        if name in " ".join(process.cmdline()):
            return process
    raise AssertionError(f"no {name} process under {leader.pid}")


async def _kill(server: ManagedServer) -> int:
    process = _server_process(server, "ruff")
    os.kill(process.pid, signal.SIGKILL)
    for _ in range(100):
        if not server.running:
            return process.pid
        await asyncio.sleep(0.05)
    raise AssertionError("the killed server was not noticed")


async def test_a_killed_server_restarts_then_stays_down(tmp_path: Path) -> None:
    pool = _pool(tmp_path, max_restarts=2)
    try:
        server = await _use(pool, tmp_path, "a.py")
        first = await _kill(server)
        assert server.state == "crashed"
        assert "killed by signal 9" in server.last_error
        await _use(pool, tmp_path, "a.py")  # restarted at once after a first crash
        second = await _kill(server)
        assert second != first
        await asyncio.sleep(1.1)  # the back-off after a second crash
        await _use(pool, tmp_path, "a.py")
        assert server.running
        await _kill(server)  # a third crash: more than languageServerMaxRestarts (2)
        with pytest.raises(SourceFailed, match="crashed 3 times within 10 minutes") as failed:
            await _use(pool, tmp_path, "a.py")
        assert "languageServerMaxRestarts: 2" in str(failed.value)
        assert failed.value.final
        (entry,) = [e for e in pool.status() if e["language"] == "python"]
        assert entry["state"] == "failed"
        assert "does not restart it again" in entry["reason"]
        assert not server.running
    finally:
        await pool.aclose()


async def test_an_idle_server_is_stopped_and_starts_again(tmp_path: Path) -> None:
    pool = _pool(tmp_path, idle_timeout=0.6)
    try:
        server = await _use(pool, tmp_path, "a.py")
        process = _server_process(server, "ruff")
        (entry,) = [e for e in pool.status() if e["language"] == "python"]
        assert entry["state"] == "running"
        assert entry["rss_mb"] > 1  # RSS per server in agentls.status
        for _ in range(60):
            if not pool._servers:
                break
            await asyncio.sleep(0.1)
        assert not pool._servers
        await asyncio.sleep(0.5)
        assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
        (entry,) = [e for e in pool.status() if e["language"] == "python"]
        assert entry["state"] == "idle"
        assert "languageServerIdleTimeout" in entry["reason"]
        again = await _use(pool, tmp_path, "a.py")
        assert again.running
    finally:
        await pool.aclose()


async def test_over_the_memory_budget_the_least_recently_used_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_module, "REAP_SECONDS", 0.2)
    pool = _pool(tmp_path, memory_budget_mb=1, idle_timeout=3600)
    try:
        ruff = await _use(pool, tmp_path, "a.py")
        bash = await _use(pool, tmp_path, "a.sh")  # used last: it stays
        for _ in range(50):
            if not ruff.running:
                break
            await asyncio.sleep(0.1)
        assert not ruff.running
        assert bash.running  # the most recently used server always stays
        (entry,) = [e for e in pool.status() if e["language"] == "python"]
        assert "languageServerMemoryBudget" in entry["reason"]
        assert "least recently used" in entry["reason"]
    finally:
        await pool.aclose()
