"""What a run's or an accept's edits came to, as the editor clients see it (issue 21).

- Neovim lists resource operations but not `documentChanges`: creating files works.
- An applied edit is confirmed by the document's version and text, not by a short timer:
  eglot's late didChange still confirms it; an edit already in the buffer is not a conflict.
- Clients that sync before answering (`experimental.agentls.syncBeforeApplyReply`) are
  judged at once; an edit they did not make stays staged and is named in `left_out`.
- `run_result` / `edit_result` events carry the outcome to every client; `agentls.staged`
  and `agentls.toolResult` feed the agent views.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import client_capabilities

from agentls.lsp.capabilities import ClientFeatures
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env, wait_for

ORIGINAL = "def greet(name):\n    return 'hi ' + name\n"
RENAMED = "def welcome(name):\n    return 'hi ' + name\n"


@pytest.fixture
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


def _ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir(exist_ok=True)
    return folder


def _with_agentls_flags(preset: str, **flags: bool) -> types.ClientCapabilities:
    caps = client_capabilities(preset)
    caps.experimental = {"agentls": flags}
    return caps


def _rename_turns(api: ScriptedMessagesServer) -> None:
    api.extend(
        tool_turn(
            ("read_file", {"path": "hello.py"}),
        ),
        tool_turn(
            (
                "edit_file",
                {"path": "hello.py", "old_string": "greet", "new_string": "welcome"},
            ),
        ),
        text_turn("Renamed."),
    )


async def _staged_run(editor: FakeEditor, api: ScriptedMessagesServer) -> tuple[str, str]:
    """A review run whose rename of hello.py stays staged; returns (session, uri)."""
    path = editor.root / "hello.py"
    path.write_text(ORIGINAL, encoding="utf-8")
    uri = editor.open(path)
    _rename_turns(api)
    result = await command(editor, "agentls.run", {"prompt": "rename greet", "wait": True})
    assert result["status"] == "completed"
    assert result["edit"]["applied"] is None
    return result["session"], uri


def test_resource_operations_imply_document_changes() -> None:
    neovim = ClientFeatures.of(client_capabilities("neovim"), "utf-8")
    assert neovim.document_changes  # Neovim applies them; it only lists resourceOperations
    assert {"create", "rename", "delete"} <= neovim.resource_operations
    emacs = ClientFeatures.of(client_capabilities("emacs"), "utf-32")
    assert emacs.document_changes
    assert not emacs.resource_operations
    flags = ClientFeatures.of(
        _with_agentls_flags("neovim", runResults=True, syncBeforeApplyReply=True), "utf-8"
    )
    assert flags.shows_outcomes
    assert flags.syncs_before_apply_reply


@pytest.mark.asyncio
async def test_a_late_did_change_still_confirms_the_edit(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """eglot sends didChange on an idle timer (0.5 s, longer under load): 2 s here."""
    env = server_env(api.base_url, tmp_path / "t")
    async with editor_session("emacs", _ws(tmp_path), env) as editor:
        session, uri = await _staged_run(editor, api)
        editor.change_delay = 2.0
        accepted = await command(editor, "agentls.accept", {"session": session})
        assert accepted["applied"] is True, accepted
        assert accepted["files"] == [uri]
        assert "left_out" not in accepted
        staged = await command(editor, "agentls.staged", {"session": session})
        assert staged["files"] == []  # confirmed: nothing left to accept
        again = await command(editor, "agentls.accept", {"session": session})
        assert again["files"] == []
        assert not again.get("conflicts")


@pytest.mark.asyncio
async def test_an_edit_already_in_the_buffer_is_accepted_not_a_conflict(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """A client judged at its answer whose didChange still came late: the change stays
    staged at first; accepting again finds it in the buffer and reports it applied."""
    env = server_env(api.base_url, tmp_path / "t")
    caps = _with_agentls_flags("emacs", syncBeforeApplyReply=True)
    async with editor_session("emacs", _ws(tmp_path), env, caps=caps) as editor:
        session, uri = await _staged_run(editor, api)
        editor.change_delay = 0.5
        first = await command(editor, "agentls.accept", {"session": session})
        assert first["applied"] is False
        assert first["left_out"][0]["uri"] == uri
        assert editor.docs[uri].text == RENAMED  # the editor did apply it…
        await asyncio.sleep(1.0)  # …and its didChange arrives after the answer
        second = await command(editor, "agentls.accept", {"session": session})
        assert second["applied"] is True, second
        assert second["files"] == [uri], second
        assert not second.get("conflicts")
        assert not second.get("left_out")
        assert (await command(editor, "agentls.staged", {"session": session}))["files"] == []


@pytest.mark.asyncio
async def test_an_edit_the_editor_skipped_stays_staged_and_is_named(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """Neovim 0.7.2 answers applied: true for a stale edit it skipped."""
    env = server_env(api.base_url, tmp_path / "t")
    caps = _with_agentls_flags("neovim", runResults=True, syncBeforeApplyReply=True)
    async with editor_session("neovim", _ws(tmp_path), env, caps=caps) as editor:
        session, uri = await _staged_run(editor, api)
        editor.skip_edits = True
        accepted = await command(editor, "agentls.accept", {"session": session})
        assert accepted["applied"] is False
        assert accepted["files"] == [uri]
        [left] = accepted["left_out"]
        assert left["uri"] == uri
        assert "did not change" in left["reason"]
        staged = await command(editor, "agentls.staged", {"session": session})
        assert [f["uri"] for f in staged["files"]] == [uri]
        # the client renders outcomes itself: no server message repeats them
        assert not any("agentls accept" in m.message for m in editor.client.messages)
        assert not any("staged changes" in m.message for m in editor.client.messages)


@pytest.mark.asyncio
async def test_run_and_edit_results_reach_the_client_as_events(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    env = server_env(api.base_url, tmp_path / "t")
    async with editor_session("neovim", _ws(tmp_path), env) as editor:
        session, uri = await _staged_run(editor, api)
        [run_result] = [e for e in editor.events if e["type"] == "run_result"]
        assert run_result["session_id"] == session
        assert run_result["status"] == "completed"
        assert run_result["edit"]["files"] == [uri]
        assert run_result["edit"]["applied"] is None
        assert "1 file(s) staged for review" in run_result["outcome"]
        assert run_result["outcome"].count("staged for review") == 1  # not doubled
        await command(editor, "agentls.reject", {"session": session})
        await wait_for(lambda: any(e["type"] == "edit_result" for e in editor.events))
        [edit_result] = [e for e in editor.events if e["type"] == "edit_result"]
        assert edit_result == {
            "type": "edit_result",
            "session_id": session,
            "action": "reject",
            "files": [uri],
        }


@pytest.mark.asyncio
async def test_staged_files_and_tool_results_for_the_agent_view(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    env = server_env(api.base_url, tmp_path / "t")
    async with editor_session("emacs", _ws(tmp_path), env) as editor:
        session, uri = await _staged_run(editor, api)
        editor.type(uri, (1, 0), (1, 0), "    # typed by the user\n")
        await wait_for(lambda: True)
        staged = await command(editor, "agentls.staged", {"session": session})
        [entry] = staged["files"]
        assert entry["uri"] == uri
        assert entry["kind"] == "modify"
        assert entry["original"] == ORIGINAL
        assert entry["staged"] == RENAMED
        await wait_for(lambda: True, 0.1)
        assert "# typed by the user" in entry["current"] or entry["current"] == ORIGINAL
        reads = [
            e for e in editor.events if e["type"] == "tool_started" and e["name"] == "read_file"
        ]
        output: dict[str, Any] = await command(
            editor,
            "agentls.toolResult",
            {"session": session, "tool_use_id": reads[0]["tool_use_id"]},
        )
        assert "def greet(name):" in output["content"]
        assert output["is_error"] is False
        with pytest.raises(JsonRpcInvalidParams, match="no tool call"):
            await command(
                editor, "agentls.toolResult", {"session": session, "tool_use_id": "toolu_nope"}
            )


def test_shows_edit_tells_an_applied_edit_from_a_skipped_one_while_the_user_types() -> None:
    from agentls.lsp.edits import shows_edit

    before = "a\nb\nc\nd\ne\n"
    expected = "A\nb\nc\nd\ne\n"  # the agent changes line 1
    assert shows_edit(before, expected, expected)
    assert shows_edit(before, expected, "A\nb\nc\nd\ntyped\ne\n")  # applied; typing below
    assert not shows_edit(before, expected, "a\nb\nc\nd\ntyped\ne\n")  # skipped; typing below
    assert not shows_edit(before, expected, before)
