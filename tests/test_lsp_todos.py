"""`todo_write` over real stdio: the list in `$/progress`, `agentls/event` and
`agentls.status`, kept by a server restart (the state file) and by a compaction (pinned).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from agentls.agent.persistence import journal
from agentls.agent.persistence.store import SessionStore
from agentls.agent.run.session import AgentSession
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.tools import builtin_tools
from tests.agent_support import close_at_loop_end, make_session
from tests.lsp_support import command, editor_session, server_env

TODOS = [
    {"content": "Rename greet", "status": "completed", "active_form": "Renaming greet"},
    {"content": "Run tests", "status": "in_progress", "active_form": "Running tests"},
    {"content": "Update docs", "status": "pending", "active_form": "Updating docs"},
]


def reports(client: Any) -> list[str]:
    return [
        r.message or ""
        for values in client.progress_reports.values()
        for r in values
        if isinstance(r, types.WorkDoneProgressReport)
    ]


async def test_todos_show_in_progress_events_and_status_and_survive_restart_and_compaction(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    transcripts = tmp_path / "transcripts"
    env = server_env(api.base_url, transcripts, AGENTLS_COMPACT_KEEP_TURNS="1")
    api.extend(
        tool_turn(("todo_write", {"todos": TODOS})),
        tool_turn(("read_file", {"path": "app.py"})),
        text_turn("Half way."),
    )
    async with editor_session("visual-studio-code", root, env) as editor:
        result = await command(editor, "agentls.run", {"prompt": "do it", "wait": True})
        assert result["status"] == "completed"
        session = result["session"]
        # agentls/event: exactly the shape the editor views render
        (event,) = [e for e in editor.events if e["type"] == "todos"]
        assert event == {"type": "todos", "session_id": session, "todos": TODOS}
        # $/progress: the list's state, then each step with the count in front
        shown = reports(editor.client)
        assert "1/3 · Running tests" in shown
        assert "1/3 · Reading app.py" in shown
        (confirmation,) = api.message_requests[1].tool_results()
        assert confirmation["content"].startswith("Todo list updated: 1/3 · Running tests.")
        status = await command(editor, "agentls.status")
        (entry,) = [s for s in status["sessions"] if s["id"] == session]
        assert entry["todos"] == TODOS
    # a new server: the session comes back from its state file with its list
    async with editor_session("visual-studio-code", root, env) as editor:
        staged = await command(editor, "agentls.staged", {"session": session})  # loads it
        assert staged["files"] == []
        status = await command(editor, "agentls.status")
        (entry,) = [s for s in status["sessions"] if s["id"] == session]
        assert entry["todos"] == TODOS
        # a compaction keeps the current list pinned for the model
        api.extend(text_turn("Summary: renamed greet, tests next."))
        compacted = await command(editor, "agentls.compact", {"session": session})
        assert compacted["summarized_messages"] > 0
        api.extend(tool_turn(("read_file", {"path": "app.py"})), text_turn("Continuing."))
        follow = await command(
            editor, "agentls.run", {"prompt": "continue", "session": session, "wait": True}
        )
        assert follow["status"] == "completed"
        # the follow-up run's steps carry the list's count from its first step on
        assert "1/3 · Reading app.py" in reports(editor.client)
        first = api.message_requests[-2].messages[0]
        pinned = "\n".join(b.get("text", "") for b in first["content"])
        assert 'agentls-pinned="todos"' in pinned
        assert "- [x] Rename greet\n- [~] Running tests\n- [ ] Update docs" in pinned
        status = await command(editor, "agentls.status")
        (entry,) = [s for s in status["sessions"] if s["id"] == session]
        assert entry["todos"] == TODOS


async def test_the_turn_journal_carries_the_list_for_a_crash_resume(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("todo_write", {"todos": TODOS[:2]})),
        tool_turn(("todo_write", {"todos": TODOS})),
        text_turn("ok"),
    )
    session = make_session(api, tmp_path, tools=builtin_tools())
    await session.run("plan")
    recovery = journal.recover(session.transcript.path, 1, [])
    assert recovery.found
    assert recovery.todos == TODOS
    # a state saved mid-run (status running) resumes with the journal's list
    store = SessionStore(tmp_path / "transcripts")
    state = store.load(session.id)
    state.status = "running"
    state.todos = []
    store.save(state)
    resumed = close_at_loop_end(
        AgentSession.resume(session.id, session.client, session.config, store)
    )
    assert resumed.status == "interrupted"
    assert [t.model_dump() for t in resumed.todos] == TODOS


@pytest.mark.parametrize(
    "bad",
    [
        [{"content": "", "status": "pending", "active_form": "x"}],
        [{"content": "x", "status": "done", "active_form": "x"}],
        [{"content": "x", "status": "pending"}],
    ],
)
async def test_a_malformed_list_is_refused_field_by_field(
    api: ScriptedMessagesServer, tmp_path: Path, bad: list[dict[str, str]]
) -> None:
    api.extend(tool_turn(("todo_write", {"todos": bad})), text_turn("ok"))
    session = make_session(api, tmp_path, tools=builtin_tools())
    await session.run("plan")
    (result,) = api.message_requests[-1].tool_results()
    assert result["is_error"]
    assert "todo_write input is invalid" in result["content"]
    assert "todos.0" in result["content"]
    assert session.todos == []


async def test_outside_a_run_the_session_tools_say_why_they_cannot_work(tmp_path: Path) -> None:
    """`agentls.tool todo_write …` (no model, no run): a clear error, nothing changed."""
    from agentls.host import AgentHost
    from agentls.workspace import Workspace

    host = AgentHost(Workspace([tmp_path]))
    result = await host.run_tool("todo_write", {"todos": TODOS})
    assert result.is_error
    assert "todo_write works only while the agent runs a prompt" in str(result.content)
    task = await host.run_tool("task", {"description": "x", "prompt": "y"})
    assert task.is_error
    assert "task works only while the agent runs a prompt" in str(task.content)
    plan = await host.run_tool("exit_plan_mode", {"plan": "p"}, mode="plan")
    assert plan.is_error
    assert "exit_plan_mode works only while the agent runs" in str(plan.content)
    await host.shutdown()
