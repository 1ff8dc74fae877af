"""Secret files never reach the symbol index, its cache, or any symbol answer (issue 20,
item 6): `search_symbols` used to print `.env.py:1: constant API_KEY | API_KEY = '…'`.

Written as an attacker would probe it: a query by name, an empty query listing everything,
a path filter naming the folder, the outline tool naming the file, a symlink with an
innocent name, an unsaved buffer and a staged edit of the secret, the persistent cache on
disk, a read-deny rule added after the index was built, and the editor's own
`workspace/symbol` / `documentSymbol` over real stdio.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from agentls.agent.framework.context import ToolContext
from agentls.errors import ToolError
from agentls.index import index_for
from agentls.index.registry import forget
from agentls.testing import ScriptedMessagesServer
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.secrets import SecretMatcher
from tests.lsp_support import editor_session, server_env
from tests.test_index_tools import outline, search

VALUE = "envpy-0123456789-do-not-leak"
SECRETS = {
    ".env.py": f"API_KEY = '{VALUE}'\ndef load_env_secret():\n    return API_KEY\n",
    "config/.env.production.ts": f"export const DB_PASSWORD = '{VALUE}';\n",
    "id_rsa_helper.py": f"PRIVATE_PEM = '{VALUE}'\n",
}
PUBLIC = {"app/settings.py": "DEBUG = True\ndef load_settings():\n    return DEBUG\n"}


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolContext]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    for rel, text in {**SECRETS, **PUBLIC}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "notes.py").symlink_to(root / ".env.py")
    workspace = Workspace([root])
    yield ToolContext(session_id="s", workspace=workspace, changes=ChangeSet())
    forget(workspace)


def built(ctx: ToolContext) -> None:
    index = index_for(ctx.workspace)
    assert index.wait_built(10)


@pytest.mark.parametrize(
    "query",
    [
        {"query": "API_KEY"},
        {"query": "DB_PASSWORD"},
        {"query": "PRIVATE_PEM"},
        {"query": "load_env_secret"},
        {"query": "", "kind": "constant"},
        {"query": "", "path": "."},
        {"query": "", "path": "config"},
        {"query": "", "path": ".env.py"},
    ],
)
async def test_search_symbols_never_shows_a_secret_file(
    ctx: ToolContext, query: dict[str, str]
) -> None:
    built(ctx)
    out = await search(ctx, **query)
    shown = out.splitlines()[1:]
    assert VALUE not in out, out
    assert not [line for line in shown if line.startswith((".env", "config/", "id_rsa", "notes"))]
    assert "app/settings.py:2: function load_settings" in await search(ctx, query="load_settings")


async def test_document_symbols_refuses_a_secret_file_by_any_name(ctx: ToolContext) -> None:
    for path in (".env.py", "config/.env.production.ts", "notes.py"):
        with pytest.raises(ToolError) as caught:
            await outline(ctx, path)
        assert "secret-file pattern" in str(caught.value)
        assert VALUE not in str(caught.value)
    assert "load_settings" in await outline(ctx, "app/settings.py")


async def test_buffers_and_staged_edits_of_secrets_stay_out(ctx: ToolContext) -> None:
    built(ctx)
    root = ctx.workspace.roots[0]
    ctx.workspace.set_buffer(root / ".env.py", "BUFFERED_TOKEN = 'x'\n", 2)
    ctx.changes.stage_write(root / ".env.staged.py", "STAGED_TOKEN = 'y'\n", None)
    await asyncio.sleep(0.3)  # let the index's update thread run
    index = index_for(ctx.workspace)
    assert index.search("BUFFERED_TOKEN").symbols == []
    out = await search(ctx, query="STAGED_TOKEN")
    assert out.startswith("No definitions match"), out


async def test_the_persistent_cache_never_holds_secret_text(ctx: ToolContext) -> None:
    built(ctx)
    index = index_for(ctx.workspace)
    index.flush()
    cache = index._store.path if index._store is not None else None
    assert cache is not None
    assert cache.exists()
    stored = ""
    for _ in range(100):  # the build's own flush may still be writing
        with sqlite3.connect(cache) as db:
            stored = repr(db.execute("SELECT path, names, rows FROM files").fetchall())
        if "load_settings" in stored:
            break
        await asyncio.sleep(0.05)
    assert "load_settings" in stored
    assert VALUE not in stored
    assert ".env" not in stored
    assert "id_rsa" not in stored


async def test_a_deny_rule_added_later_hides_what_was_indexed(ctx: ToolContext) -> None:
    built(ctx)
    assert "function load_settings" in await search(ctx, query="load_settings")
    root = ctx.workspace.roots[0]
    ctx.workspace.services.secrets = SecretMatcher(
        roots=[root],
        deny_reads=lambda p: "Read(./app/**)" if p.startswith(str(root / "app")) else None,
    )
    out = await search(ctx, query="load_settings")
    assert out.startswith("No definitions match"), out
    with pytest.raises(ToolError, match="deny rule"):
        await outline(ctx, "app/settings.py")


@pytest.fixture
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


async def test_editor_symbol_requests_never_show_secrets(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for rel, text in {**SECRETS, **PUBLIC}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = server_env(api.base_url, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        found: list[object] = []
        for _ in range(200):  # until the index answers for the public file
            found = list(
                await editor.client.workspace_symbol_async(
                    types.WorkspaceSymbolParams(query="load_settings")
                )
                or []
            )
            if found:
                break
            await asyncio.sleep(0.05)
        assert found
        for query in ("API_KEY", "DB_PASSWORD", "load_env_secret", "PRIVATE_PEM"):
            result = await editor.client.workspace_symbol_async(
                types.WorkspaceSymbolParams(query=query)
            )
            assert not result, (query, result)
        uri = editor.open(root / ".env.py")
        outline_result = await editor.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert not outline_result
