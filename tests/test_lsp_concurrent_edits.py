"""Edits under concurrency (issue 20 item 15), over real stdio with the fake editor.

- The agent's change to line 10 and the user's change to line 11 rebase: only changes that
  share a line conflict.
- 20 sessions delivering to one open buffer at once: deliveries to a document are
  serialized and each is built on the version the previous one produced, so all 20 apply
  (before: 15 of 20 were refused for a version mismatch).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from agentls.testing import RecordedRequest, ScriptedMessagesServer, Turn, text_turn, tool_turn
from tests.lsp_support import command, editor_session, server_env

pytestmark = pytest.mark.asyncio

SESSIONS = 20


def _lines(count: int) -> str:
    return "".join(f"value_{n:02d} = {n}\n" for n in range(1, count + 1))


async def test_the_agents_line_10_and_the_users_line_11_both_apply(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "values.py"
    path.write_text(_lines(12))
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        uri = editor.open(path)
        staged = await command(
            editor,
            "agentls.tool",
            {
                "name": "edit_file",
                "input": {
                    "path": "values.py",
                    "old_string": "value_10 = 10\n",
                    "new_string": "value_10 = 100  # agent\n",
                },
            },
        )
        assert not staged["is_error"], staged
        editor.type(uri, (10, 0), (10, 13), "value_11 = 111  # user")  # line 11, 1-based
        result = await command(editor, "agentls.accept", {"session": "tool"})
    assert result["applied"] is True, result
    assert not result.get("conflicts")
    text = editor.docs[uri].text
    assert "value_10 = 100  # agent\n" in text
    assert "value_11 = 111  # user\n" in text
    assert text.count("\n") == 12


async def test_the_same_line_still_conflicts_and_nothing_is_overwritten(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "values.py"
    path.write_text(_lines(12))
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        uri = editor.open(path)
        await command(
            editor,
            "agentls.tool",
            {
                "name": "edit_file",
                "input": {
                    "path": "values.py",
                    "old_string": "value_10 = 10\n",
                    "new_string": "x\n",
                },
            },
        )
        editor.type(uri, (9, 0), (9, 13), "value_10 = 'mine'")
        result = await command(editor, "agentls.accept", {"session": "tool"})
    assert result["conflicts"] == [uri]
    assert "value_10 = 'mine'\n" in editor.docs[uri].text


def _edit_or_finish(request: RecordedRequest) -> Turn:
    """Each session's first request edits the line its prompt names; the second ends it."""
    messages = request.messages
    last = messages[-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return text_turn("done")
    prompt = str(messages[0]["content"])
    match = re.search(r"set value_(\d\d)", prompt)  # the prompt, not the overview
    assert match is not None, prompt
    name = f"value_{match.group(1)}"
    number = int(match.group(1))
    return tool_turn(
        (
            "edit_file",
            {
                "path": "values.py",
                "old_string": f"{name} = {number}\n",
                "new_string": f"{name} = {number * 100}  # session\n",
            },
        )
    )


async def test_twenty_sessions_delivering_to_one_open_buffer_all_apply(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "values.py"
    path.write_text(_lines(SESSIONS))
    env = server_env(api.base_url, tmp_path / "transcripts")
    api.extend(*[_edit_or_finish for _ in range(2 * SESSIONS)])
    options = {"permissionMode": "acceptEdits"}  # auto delivery without a prompt per edit
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=options
    ) as editor:
        uri = editor.open(path)

        async def run(n: int) -> Any:
            arguments = {"prompt": f"set value_{n:02d}", "mode": "auto", "wait": True}
            return await command(editor, "agentls.run", arguments)

        results = await asyncio.gather(*(run(n) for n in range(1, SESSIONS + 1)))
        refusals = [r for r in api.requests if "did not apply" in repr(r.json.get("messages", []))]
    assert all(r["status"] == "completed" for r in results), results
    text = editor.docs[uri].text
    missing = [n for n in range(1, SESSIONS + 1) if f"= {n * 100}  # session" not in text]
    assert missing == [], f"not applied: {missing}\n{text}"
    assert text.count("\n") == SESSIONS
    assert refusals == []  # no session was told its edit stays staged
    assert all(r["edit"] is None or not r["edit"].get("left_out") for r in results), results
