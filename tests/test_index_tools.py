"""The `search_symbols` and `document_symbols` tools over a real `Workspace`: output the
model can act on, the session's staged edits, editor buffers, filters and refusals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.errors import ToolError, WorkspaceError
from agentls.index import index_for
from agentls.index.registry import forget
from agentls.tools.symbols import DocumentSymbols, SearchSymbols
from agentls.workspace import ChangeSet, Workspace

FILES = {
    "app/users.py": (
        "class UserService:\n"
        "    def fetch(self, user_id):\n"
        "        return user_id\n"
        "\n"
        "def make_service():\n"
        "    return UserService()\n"
    ),
    "web/client.ts": "export class ApiClient {\n  get(url: string) {}\n}\n",
    "node_modules/lib/index.js": "function ignoredHelper() {}\n",
    "README.md": "class NotCode\n",
}


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolContext]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    workspace = Workspace([root])
    yield ToolContext(session_id="s", workspace=workspace, changes=ChangeSet())
    forget(workspace)


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll (the index applies buffer changes on its own thread, debounced)."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


async def search(ctx: ToolContext, **raw: object) -> str:
    tool = SearchSymbols()
    parsed = tool.parse_input(dict(raw))
    problem = await tool.validate_input(parsed, ctx)
    if problem:
        raise ToolError(problem)
    return await tool.call(parsed, ctx)


async def outline(ctx: ToolContext, path: str) -> str:
    tool = DocumentSymbols()
    parsed = tool.parse_input({"path": path})
    problem = await tool.validate_input(parsed, ctx)
    if problem:
        raise ToolError(problem)
    return await tool.call(parsed, ctx)


async def test_search_lists_ranked_definitions_with_locations(ctx: ToolContext) -> None:
    out = await search(ctx, query="UserServ")
    lines = out.splitlines()
    assert lines[0].startswith('1 definition for "UserServ"')
    assert lines[1] == "app/users.py:1: class UserService | class UserService:"
    out = await search(ctx, query="fetch")
    assert "app/users.py:2: method UserService.fetch | def fetch(self, user_id):" in out


async def test_search_respects_ignore_rules_and_filters(ctx: ToolContext) -> None:
    assert "No definitions match" in await search(ctx, query="ignoredHelper")
    out = await search(ctx, query="", kind="class", path="web")
    assert out.splitlines()[1:] == ["web/client.ts:1: class ApiClient | export class ApiClient {"]
    out = await search(ctx, query="get", path="web/client.ts")
    assert "method ApiClient.get" in out
    with pytest.raises(ToolError, match="Give a query"):
        await search(ctx, query="  ")
    with pytest.raises(WorkspaceError):
        await search(ctx, query="x", path="no/such/dir")


async def test_search_sees_staged_edits(ctx: ToolContext) -> None:
    ws = ctx.workspace
    users = ws.resolve("app/users.py")
    ctx.changes.stage_write(users, "class AccountService:\n    pass\n", FILES["app/users.py"])
    ctx.changes.stage_write(ws.resolve("app/new.go"), "package app\nfunc NewThing() {}\n", None)
    out = await search(ctx, query="service")
    assert "class AccountService" in out
    assert "UserService" not in out
    assert "app/new.go:2: function NewThing" in await search(ctx, query="NewThing")
    # Another session (no staged changes) still sees disk.
    other = ToolContext(session_id="t", workspace=ws, changes=ChangeSet())
    assert "UserService" in await search(other, query="UserService")


async def test_search_follows_editor_buffers(ctx: ToolContext) -> None:
    ws = ctx.workspace
    index = index_for(ws)
    assert index.wait_built(10)
    ws.set_buffer(ws.resolve("app/users.py"), "class EditedInEditor:\n    pass\n", 3)
    await asyncio.to_thread(wait_until, lambda: bool(index.search("EditedInEditor").symbols))
    out = await search(ctx, query="EditedInEditor")
    assert "app/users.py:1: class EditedInEditor" in out
    ws.close_buffer(ws.resolve("app/users.py"))
    await asyncio.to_thread(wait_until, lambda: not index.search("EditedInEditor").symbols)
    assert "UserService" in await search(ctx, query="UserService")


async def test_document_symbols_outline_with_line_ranges(ctx: ToolContext) -> None:
    out = await outline(ctx, "app/users.py")
    assert out.splitlines() == [
        "app/users.py: 3 definitions",
        "class UserService  L1-3",
        "  method fetch  L2-3",
        "function make_service  L5-6",
    ]


async def test_document_symbols_reads_the_session_view(ctx: ToolContext) -> None:
    path = ctx.workspace.resolve("app/users.py")
    ctx.changes.stage_write(path, "\n\ndef moved():\n    pass\n", FILES["app/users.py"])
    out = await outline(ctx, "app/users.py")
    assert out.splitlines()[1:] == ["function moved  L3-4"]


async def test_document_symbols_refusals(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="not a supported language"):
        await outline(ctx, "README.md")
    with pytest.raises(WorkspaceError):
        await outline(ctx, "app/missing.py")
    with pytest.raises(ToolError):
        await outline(ctx, "../outside.py")


def test_tools_are_read_only_and_parallel_safe() -> None:
    for tool in (SearchSymbols(), DocumentSymbols()):
        assert tool.is_read_only()
        raw = {"query": "x"} if tool.name == "search_symbols" else {"path": "a.py"}
        parsed = tool.parse_input(raw)
        assert tool.is_concurrency_safe(parsed)
        assert "Example" in tool.description()
        assert tool.input_schema()["type"] == "object"
