"""Sessions outlive the server: list, resume after a restart, and compact on demand."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from agentls.testing import ScriptedMessagesServer, text_turn
from tests.lsp_support import command, editor_session, server_env, wait_for


async def test_a_session_resumes_after_a_server_restart_and_compacts(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    env = server_env(api.base_url, tmp_path / "transcripts")
    api.extend(text_turn("Noted: the code word is heron."))
    async with editor_session("neovim", root, env) as editor:
        first = await command(
            editor, "agentls.run", {"prompt": "Remember the code word heron.", "wait": True}
        )
    assert first["status"] == "completed"
    session = first["session"]

    api.extend(
        text_turn("The code word was heron."),
        text_turn("Summary: the user asked to remember the code word heron; it was recalled."),
        text_turn("Still heron."),
    )
    async with editor_session("neovim", root, env) as editor:  # a new server process
        listed = await command(editor, "agentls.sessions", {})
        assert [s["id"] for s in listed["sessions"]] == [session]
        assert listed["sessions"][0]["first_prompt"] == "Remember the code word heron."
        second = await command(
            editor, "agentls.run", {"prompt": "What was it?", "session": session, "wait": True}
        )
        compacted = await command(editor, "agentls.compact", {"session": session})
        third = await command(
            editor, "agentls.run", {"prompt": "And now?", "session": session, "wait": True}
        )
        status = await command(editor, "agentls.status", {})

    assert second["status"] == "completed"
    assert second["text"] == "The code word was heron."
    resumed_request = api.message_requests[1]
    assert "Remember the code word heron." in str(resumed_request.messages[0])
    assert resumed_request.messages[1]["role"] == "assistant"
    assert compacted
    assert third["status"] == "completed"
    after_compaction = str(api.message_requests[-1].messages)
    assert "the code word heron" in after_compaction
    assert "And now?" in after_compaction
    (entry,) = status["sessions"]
    assert entry["id"] == session
    assert entry["runs"] == 3
    assert entry["usage"]["output_tokens"] > 0


async def test_an_unknown_session_is_a_clear_error(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    async with editor_session("neovim", root, server_env(api.base_url, tmp_path / "t")) as editor:
        with pytest.raises(JsonRpcException, match="unknown session 'nope123'"):
            await command(editor, "agentls.run", {"prompt": "hi", "session": "nope123"})
        with pytest.raises(JsonRpcException, match="unknown session"):
            await command(editor, "agentls.compact", {"session": "nope123"})


async def test_a_busy_session_is_a_clear_request_failed_error(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """Compacting (or running) a session that is running answers RequestFailed with what
    to do, not an internal error."""
    root = tmp_path / "ws"
    root.mkdir()
    api.extend(text_turn("never finishes", hang=True))
    async with editor_session("neovim", root, server_env(api.base_url, tmp_path / "t")) as editor:
        started = await command(editor, "agentls.run", {"prompt": "hang"})
        session = started["session"]
        await wait_for(lambda: api.remaining == 0)  # the model request is in flight
        for name, argument in (
            ("agentls.compact", {"session": session}),
            ("agentls.run", {"prompt": "again", "session": session}),
        ):
            with pytest.raises(JsonRpcException) as raised:
                await command(editor, name, argument)
            assert raised.value.code == -32803, (name, raised.value)
            assert "busy" in str(raised.value) or "already running" in str(raised.value)
            assert "cancel it or wait" in str(raised.value) or "when the run ends" in str(
                raised.value
            )
        await command(editor, "agentls.cancel", {"session": session})
