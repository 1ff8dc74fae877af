"""Per-hunk review over LSP: hunk ids in `agentls.status`, `agentls.accept`/`reject {hunks,
reason}`, and the reason reaching the model when the session continues (issue 30).

Runs the real server against the scripted Messages API, as Neovim and Emacs (the clients
that keep a run's edits staged for review).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

ORIGINAL = "".join(f"line{n} = {n}\n" for n in range(1, 13))
"""Twelve lines: the agent changes line 2 and line 10 (two hunks, far apart)."""
CHANGED = ORIGINAL.replace("line2 = 2", "line2 = 'two'").replace("line10 = 10", "renamed = 10")


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["neovim", "emacs"])
async def editor(
    request: pytest.FixtureRequest,
    api: ScriptedMessagesServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[FakeEditor]:
    root = tmp_path_factory.mktemp("ws")
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    async with editor_session(request.param, root, env) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _script_fully_played(api: ScriptedMessagesServer) -> Iterator[None]:
    yield
    assert api.remaining == 0, "the test left scripted turns unplayed"


async def _staged_session(editor: FakeEditor, api: ScriptedMessagesServer, name: str) -> str:
    path = editor.root / name
    path.write_text(ORIGINAL)
    editor.open(path)
    api.extend(tool_turn(("write_file", {"path": name, "content": CHANGED})), text_turn("done"))
    result = await command(editor, "agentls.run", {"prompt": "rename things", "wait": True})
    assert result["status"] == "completed"
    assert result["edit"]["applied"] is None, "this client keeps the edits staged"
    return str(result["session"])


def _session_status(status: dict[str, Any], session: str) -> dict[str, Any]:
    return next(s for s in status["sessions"] if s["id"] == session)


async def test_status_lists_the_hunks_of_the_staged_diff(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    session = await _staged_session(editor, api, "a.py")
    hunks = _session_status(await command(editor, "agentls.status", {}), session)["hunks"]
    assert [(h["id"], h["index"], h["where"]) for h in hunks] == [
        (1, 1, "line 2"),
        (2, 2, "line 10"),
    ]
    assert hunks[1]["diff"] == "@@ -10,1 +10,1 @@\n-line10 = 10\n+renamed = 10"
    assert hunks[0]["path"] == str((editor.root / "a.py").resolve())
    staged = await command(editor, "agentls.staged", {"session": session})
    assert [h["id"] for h in staged["hunks"]] == [1, 2]
    await command(editor, "agentls.reject", {"session": session})


async def test_reject_hunk_two_with_a_reason_accept_hunk_one(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    session = await _staged_session(editor, api, "b.py")
    path = editor.root / "b.py"
    rejected = await command(
        editor,
        "agentls.reject",
        {"session": session, "hunks": [2], "reason": "keep the name line10, callers use it"},
    )
    assert rejected["hunks"] == [2]
    left = _session_status(await command(editor, "agentls.status", {}), session)["hunks"]
    assert [h["where"] for h in left] == ["line 2"], "the rejected hunk is no longer staged"

    accepted = await command(editor, "agentls.accept", {"session": session, "hunks": [1]})
    assert accepted["applied"] is True, accepted
    want = ORIGINAL.replace("line2 = 2", "line2 = 'two'")
    assert editor.text(path) == want
    assert _session_status(await command(editor, "agentls.status", {}), session)["hunks"] == []

    api.extend(text_turn("understood"))
    await command(editor, "agentls.run", {"prompt": "go on", "session": session, "wait": True})
    last = json.dumps(api.message_requests[-1].json["messages"][-1])
    assert (
        "The user rejected hunk 2 of b.py (line 10): keep the name line10, callers use it" in last
    )


async def test_accepting_one_hunk_keeps_the_other_staged_on_top(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    session = await _staged_session(editor, api, "c.py")
    accepted = await command(editor, "agentls.accept", {"session": session, "hunks": [2]})
    assert accepted["applied"] is True, accepted
    path = editor.root / "c.py"
    assert editor.text(path) == ORIGINAL.replace("line10 = 10", "renamed = 10")
    left = _session_status(await command(editor, "agentls.status", {}), session)["hunks"]
    assert [(h["id"], h["where"]) for h in left] == [(1, "line 2")]
    accepted = await command(editor, "agentls.accept", {"session": session, "hunks": [1]})
    assert accepted["applied"] is True, accepted
    assert editor.text(path) == CHANGED


async def test_unknown_hunks_are_refused_and_nothing_is_lost(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    session = await _staged_session(editor, api, "d.py")
    with pytest.raises(Exception, match="no staged hunk 7"):
        await command(editor, "agentls.reject", {"session": session, "hunks": [7]})
    uri = (editor.root / "d.py").as_uri()
    with pytest.raises(Exception, match="not both"):
        await command(editor, "agentls.accept", {"session": session, "hunks": [1], "uris": [uri]})
    left = _session_status(await command(editor, "agentls.status", {}), session)["hunks"]
    assert len(left) == 2
    await command(editor, "agentls.reject", {"session": session})
    assert editor.text(editor.root / "d.py") == ORIGINAL


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def vscode(
    api: ScriptedMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    root = tmp_path_factory.mktemp("ws")
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("visual-studio-code", root, env) as fake:
        yield fake


async def test_refactor_preview_lists_hunks_and_an_unticked_one_stays_staged(
    vscode: FakeEditor, api: ScriptedMessagesServer
) -> None:
    path = vscode.root / "e.py"
    path.write_text(ORIGINAL)
    vscode.open(path)
    # each hunk's label carries its file's check before review (ruff: nothing new)
    vscode.unticked_labels = {"Hunk 2 of e.py (line 10) — 0 new errors"}
    api.extend(tool_turn(("write_file", {"path": "e.py", "content": CHANGED})), text_turn("ok"))
    result = await command(vscode, "agentls.run", {"prompt": "both", "wait": True})
    notes = vscode.edits[-1].change_annotations or {}
    assert sorted(n.label for n in notes.values()) == [
        "Hunk 1 of e.py (line 2) — 0 new errors",
        "Hunk 2 of e.py (line 10) — 0 new errors",
    ]
    assert all(n.needs_confirmation for n in notes.values())
    assert result["edit"]["applied"] is True, result["edit"]
    assert vscode.text(path) == ORIGINAL.replace("line2 = 2", "line2 = 'two'")
    status = await command(vscode, "agentls.status", {})
    left = _session_status(status, result["session"])["hunks"]
    assert [h["where"] for h in left] == ["line 10"], "the unticked hunk stays staged"
    (check,) = _session_status(status, result["session"])["checks"]
    assert (check["path"], check["summary"]) == (str(path), "0 new errors")
    staged = await command(vscode, "agentls.staged", {"session": result["session"]})
    assert [f["check"] for f in staged["files"]] == ["0 new errors"]
    await command(vscode, "agentls.reject", {"session": result["session"]})
