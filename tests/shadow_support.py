"""Helpers for the shadow, lint and run_tests tests: contexts, staging, tree snapshots."""

from __future__ import annotations

import hashlib
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.workspace import ChangeSet, Workspace


def unsandboxed(workspace: Workspace) -> Workspace:
    """Run this workspace's commands without the sandbox (tests of the plain process
    tree handling, whose children report their host pids through files outside it)."""
    from agentls.sandbox import SandboxConfig, SandboxSettings, use_sandbox

    use_sandbox(workspace, SandboxConfig(SandboxSettings(enabled=False)))
    return workspace


def make_ctx(
    workspace: Workspace, changes: ChangeSet | None = None, session: str = "t"
) -> ToolContext:
    return ToolContext(session_id=session, workspace=workspace, changes=changes or ChangeSet())


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
