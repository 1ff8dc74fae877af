"""Fixture workspaces and a pipeline runner for the workspace and file-tool tests."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.tools import builtin_tools
from agentls.workspace import ChangeSet, Workspace


def make_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write `files` (relative path → text or bytes) under `root`; text is written verbatim."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return root


def make_ctx(root: Path, changes: ChangeSet | None = None, **kw: Any) -> ToolContext:
    return ToolContext(
        session_id="test", workspace=Workspace([root]), changes=changes or ChangeSet(), **kw
    )


class Runner:
    """Runs built-in tools through the real pipeline (validation, errors as is_error)."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.pipeline = Pipeline(ToolPool(builtin_tools()))
        self._ids = 0

    async def call(self, name: str, **input: Any) -> ToolCallResult:
        self._ids += 1
        return await self.pipeline.execute(ToolCall(f"t{self._ids}", name, input), self.ctx)

    async def ok(self, name: str, **input: Any) -> str:
        result = await self.call(name, **input)
        assert not result.is_error, result.content
        assert isinstance(result.content, str)
        return result.content

    async def error(self, name: str, **input: Any) -> str:
        result = await self.call(name, **input)
        assert result.is_error, result.content
        assert isinstance(result.content, str)
        return result.content


def lines_of(output: str) -> list[str]:
    """Output lines without bracketed footers/notes."""
    return [line for line in output.splitlines() if line and not line.startswith("[")]
