"""Helpers for the shadow, lint and run_tests tests: contexts, staging, tree snapshots."""

from __future__ import annotations

import hashlib
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.services import ToolServices
from agentls.workspace import ChangeSet, Workspace


def unsandboxed(workspace: Workspace) -> ToolServices:
    """Services that run this workspace's commands without the sandbox (tests of the plain
    process tree handling, whose children report their host pids through files outside it)."""
    from agentls.sandbox import SandboxConfig, SandboxSettings

    services = ToolServices(workspace)
    services.sandbox.config = SandboxConfig(SandboxSettings(enabled=False))
    return services


def make_ctx(
    where: Workspace | ToolServices, changes: ChangeSet | None = None, session: str = "t"
) -> ToolContext:
    """A context on a workspace (the default services) or on these services."""
    services = where if isinstance(where, ToolServices) else ToolServices(where)
    return ToolContext(
        session_id=session,
        workspace=services.workspace,
        changes=changes or ChangeSet(),
        services=services,
    )


def stage(changes: ChangeSet, path: Path, text: str) -> None:
    """Stage a write the way the edit tools do (base = what is on disk now)."""
    base = path.read_text() if path.is_file() else None
    changes.stage_write(path, text, base)


def tree_state(root: Path) -> dict[str, str]:
    """Every file's hash and every folder: a new __pycache__ or .pytest_cache shows up here."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "dir"
        for p in sorted(root.rglob("*"))
    }


def process_gone(pid: int) -> bool:
    """True when `pid` has exited (a zombie waiting for a reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] in "ZX"


def read_when_there(path: Path) -> str:
    return path.read_text() if path.exists() else ""
