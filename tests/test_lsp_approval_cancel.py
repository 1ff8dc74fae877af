"""Cancelling a run while its approval prompt is open (over real stdio).

The user asked to cancel: the run must end at once, not when the prompt is answered; the
pending request is answered as denied (and withdrawn from the editor); every tool_use still
gets its tool_result; and an "Allow" clicked afterwards runs nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env, wait_for

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ws")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    api: ScriptedMessagesServer, root: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("visual-studio-code", root, env) as fake:
        yield fake


async def test_cancel_ends_the_run_while_the_prompt_is_open_and_a_late_allow_runs_nothing(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    api.extend(
        tool_turn(
            ("write_file", {"path": "first.txt", "content": "one\n"}),
            ("write_file", {"path": "second.txt", "content": "two\n"}),
        )
    )
    editor.prompt_gate = asyncio.Event()
    editor.edits.clear()
    try:
        run = asyncio.ensure_future(
            command(editor, "agentls.run", {"prompt": "write", "mode": "auto", "wait": True})
        )
        # the user has not answered (the first run also imports the model SDK: be patient)
        await wait_for(lambda: len(editor.held_prompts) == 1, 120)
        status = await command(editor, "agentls.status")
        (session,) = [s["id"] for s in status["sessions"] if s["running"]]
        cancelled = await command(editor, "agentls.cancel", {"session": session})
        assert cancelled == {"cancelled": [session]}
        # the run ends at once, with the prompt still unanswered
        result = await asyncio.wait_for(run, 5)
        assert not editor.prompt_gate.is_set()
        assert result["status"] == "cancelled"
        # the editor is told the question is void (a real editor closes the prompt)
        await wait_for(lambda: len(editor.withdrawn_prompts) == 1)
        # a late "Allow" (an editor that ignores the withdrawal) must run nothing
        editor.choices[:] = ["Allow once"]
    finally:
        editor.prompt_gate.set()
        editor.prompt_gate = None
    await asyncio.sleep(0.5)
    assert editor.edits == []
    assert not (root / "first.txt").exists()
    assert not (root / "second.txt").exists()
    status = await command(editor, "agentls.status")
    assert not any(s["running"] for s in status["sessions"] if s["id"] == session)
    # the history holds one tool_result per tool_use: the session continues cleanly
    api.extend(text_turn("fine, nothing written"))
    follow = await command(
        editor, "agentls.run", {"prompt": "go on", "session": session, "wait": True}
    )
    assert follow["status"] == "completed"
    results = api.message_requests[-1].tool_results()
    assert len(results) == 2
    assert all(r["is_error"] for r in results)
    assert all(
        "denied" in str(r["content"]).lower() or "cancel" in str(r["content"]).lower()
        for r in results
    )
    assert editor.edits == []
    assert not (root / "first.txt").exists()
