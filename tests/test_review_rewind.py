"""Rewind over LSP (issue 30): `agentls.rewind {session, turn}` rolls a session back to the
end of a turn — its history, its staged changeset, and the reverse of what was applied
since (rebased on the current text, conflicts never overwritten)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    api: ScriptedMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    root = tmp_path_factory.mktemp("ws")
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("neovim", root, env) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _script_fully_played(api: ScriptedMessagesServer) -> Iterator[None]:
    yield
    assert api.remaining == 0, "the test left scripted turns unplayed"


def _write(name: str, content: str) -> Any:
    return tool_turn(("write_file", {"path": name, "content": content}))


async def _run(editor: FakeEditor, prompt: str, session: str | None = None) -> str:
    args: dict[str, Any] = {"prompt": prompt, "wait": True}
    if session:
        args["session"] = session
    result = await command(editor, "agentls.run", args)
    assert result["status"] == "completed", result
    return str(result["session"])


async def test_rewind_keeps_turn_one_staged_and_drops_turn_two(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    api.extend(_write("one.py", "ONE = 1\n"), text_turn("made one"))
    session = await _run(editor, "first prompt: make one.py")
    api.extend(_write("two.py", "TWO = 2\n"), text_turn("made two"))
    await _run(editor, "second prompt: make two.py", session)

    status = await command(editor, "agentls.status", {})
    history = next(s for s in status["sessions"] if s["id"] == session)["history"]
    assert [(t["turn"], t["prompt"]) for t in history] == [
        (1, "first prompt: make one.py"),
        (2, "second prompt: make two.py"),
    ]
    assert [t["files"][0].rsplit("/", 1)[-1] for t in history] == ["one.py", "two.py"]

    result = await command(editor, "agentls.rewind", {"session": session, "turn": 1})
    assert [d["prompt"] for d in result["dropped"]] == ["second prompt: make two.py"]
    assert [p.rsplit("/", 1)[-1] for p in result["staged"]] == ["one.py"]
    assert result["reverted"] == []

    api.extend(text_turn("ok"))
    await _run(editor, "third prompt", session)
    sent = json.dumps(api.message_requests[-1].json["messages"])
    assert "first prompt: make one.py" in sent
    assert "second prompt" not in sent
    assert "made two" not in sent
    await command(editor, "agentls.reject", {"session": session})


async def test_rewind_reverses_an_applied_change_and_never_overwrites_the_users(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    path = editor.root / "values.py"
    path.write_text("A = 1\nB = 2\n")
    uri = editor.open(path)
    api.extend(_write("values.py", "A = 10\nB = 2\n"), text_turn("a"))
    session = await _run(editor, "change A")
    assert (await command(editor, "agentls.accept", {"session": session}))["applied"] is True
    api.extend(_write("values.py", "A = 10\nB = 20\n"), text_turn("b"))
    await _run(editor, "change B", session)
    assert (await command(editor, "agentls.accept", {"session": session}))["applied"] is True
    assert editor.text(path) == "A = 10\nB = 20\n"

    result = await command(editor, "agentls.rewind", {"session": session, "turn": 1})
    assert [p.rsplit("/", 1)[-1] for p in result["reverted"]] == ["values.py"]
    # the reverse of turn 2's applied change is staged; the user typed on another line
    editor.type(uri, (0, 4), (0, 6), "11")
    accepted = await command(editor, "agentls.accept", {"session": session})
    assert accepted["applied"] is True, accepted
    assert editor.text(path) == "A = 11\nB = 2\n"


async def test_a_reverse_that_meets_the_users_change_is_a_conflict(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    path = editor.root / "clash.py"
    path.write_text("X = 1\n")
    uri = editor.open(path)
    api.extend(text_turn("nothing yet"))
    session = await _run(editor, "look")
    api.extend(_write("clash.py", "X = 2\n"), text_turn("x"))
    await _run(editor, "change X", session)
    assert (await command(editor, "agentls.accept", {"session": session}))["applied"] is True
    await command(editor, "agentls.rewind", {"session": session, "turn": 1})
    editor.type(uri, (0, 4), (0, 5), "3")  # the user changed the same line since
    accepted = await command(editor, "agentls.accept", {"session": session})
    assert accepted["applied"] is False
    assert accepted["conflicts"] == [uri]
    assert editor.text(path) == "X = 3\n", "the user's text is never overwritten"
    await command(editor, "agentls.reject", {"session": session})


async def test_an_unknown_turn_is_refused(editor: FakeEditor, api: ScriptedMessagesServer) -> None:
    api.extend(text_turn("hi"))
    session = await _run(editor, "hello")
    with pytest.raises(Exception, match="has no turn 5"):
        await command(editor, "agentls.rewind", {"session": session, "turn": 5})
