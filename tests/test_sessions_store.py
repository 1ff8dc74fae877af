"""Session persistence: state files, resume after a restart, listing, corrupt state."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.agent.persistence import staged
from agentls.agent.persistence.store import SessionStateError, SessionStore
from agentls.agent.persistence.transcript import read_records
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.workspace import Workspace
from tests.agent_support import all_test_tools, close_at_loop_end


class Args(ToolInput):
    item_id: str = ""


class Deferrable(Tool[Args]):
    """An MCP-like tool, deferred once the pool is large."""

    input_model = Args
    defer_when_large = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.usage = f"Look up a record ({name})."

    def is_read_only(self, input: Args | None = None) -> bool:
        return True

    async def call(self, input: Args, ctx: ToolContext) -> str:
        return f"{self.name}:{input.item_id}"


def _config(
    api: ScriptedMessagesServer, tmp_path: Path, root: Path | None = None, **settings: Any
) -> SessionConfig:
    values: dict[str, Any] = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}
    values.update(settings)
    return SessionConfig(
        settings=AgentSettings.from_env(
            {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.base_url}, **values
        ),
        workspace=Workspace([root or tmp_path]),
        tools=all_test_tools(),
        external_tools=[Deferrable(f"mcp__svc__record_{i:02d}") for i in range(31)],
        transcript_dir=tmp_path / "transcripts",
    )


def _session(config: SessionConfig) -> AgentSession:
    return close_at_loop_end(AgentSession(AnthropicModelClient(config.settings), config))


def _resume(session_id: str, config: SessionConfig, store: SessionStore) -> AgentSession:
    client = AnthropicModelClient(config.settings)
    return close_at_loop_end(AgentSession.resume(session_id, client, config, store))


async def test_resume_after_restart_continues_with_history_and_discovered_tools(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("tool_search", {"query": "select:mcp__svc__record_07"})),
        tool_turn(("mcp__svc__record_07", {"item_id": "A-1"})),
        text_turn("Record A-1 looked up."),
    )
    first = _session(_config(api, tmp_path))
    result = await first.run("look up record A-1")
    assert result.status == "completed"
    assert "mcp__svc__record_07" in api.message_requests[-1].tool_names
    await first.client.close()
    first.transcript.close()
    del first  # the "server" stops; only files remain

    store = SessionStore(tmp_path / "transcripts")
    state_file = store.path(result.session_id)
    assert state_file.is_file()
    assert "test-key" not in state_file.read_text()
    state = store.load(result.session_id)
    assert state.status == "completed"
    assert state.first_prompt == "look up record A-1"
    assert state.discovered_tools == ["mcp__svc__record_07"]

    api.extend(tool_turn(("mcp__svc__record_07", {"item_id": "B-2"})), text_turn("And B-2."))
    config = _config(api, tmp_path)  # a new host: new tool objects, new client
    resumed = _resume(result.session_id, config, store)
    assert resumed.id == result.session_id
    assert resumed.runs == 1
    follow_up = await resumed.run("now B-2")
    assert follow_up.status == "completed"
    assert follow_up.text == "And B-2."

    request = api.message_requests[3]
    assert "mcp__svc__record_07" in request.tool_names  # discovered before the restart
    assert [m["role"] for m in request.messages][:6] == ["user", "assistant"] * 3
    assert request.messages[-1]["content"][-1]["text"] == "now B-2"
    call_result = api.message_requests[4].tool_results()[0]
    assert not call_result.get("is_error")
    assert call_result["content"] == "mcp__svc__record_07:B-2"
    assert resumed.runs == 2
    assert resumed.usage.input_tokens > follow_up.usage.input_tokens
    kinds = [r["type"] for r in read_records(follow_up.transcript)]
    assert kinds[0] == "session"
    assert "resume" in kinds
    assert kinds[-1] == "run_end"
    assert store.load(result.session_id).runs == 2


async def test_state_is_written_at_status_changes(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    seen: list[str] = []
    store = SessionStore(tmp_path / "transcripts")

    def on_request(request: Any) -> None:
        if request.route == "/v1/messages":
            seen.append(json.loads(store.path(session.id).read_text())["status"])

    api.extend(text_turn("ok"))
    session = _session(_config(api, tmp_path))
    api_hook = api._on_request
    assert api_hook is None
    api._on_request = on_request
    await session.run("hi")
    assert seen == ["running"]
    assert store.load(session.id).status == "completed"
    # a state left "running" by a crash comes back as interrupted
    state = store.load(session.id)
    state.status = "running"
    store.save(state)
    config = _config(api, tmp_path)
    resumed = _resume(session.id, config, store)
    assert resumed.status == "interrupted"


async def test_lost_staged_edits_are_reported_to_the_model_after_resume(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """A state file from before staged edits were saved names their paths only: the model
    is told those edits were lost."""
    api.extend(text_turn("staged"), text_turn("redone"))
    session = _session(_config(api, tmp_path))
    await session.run("edit it")
    session.changes.stage_write(tmp_path / "app.py", "new\n", "old\n")
    session.persist()
    store = SessionStore(tmp_path / "transcripts")
    assert store.load(session.id).staged_paths == [str(tmp_path / "app.py")]
    older = json.loads(store.path(session.id).read_text())
    del older["staged"]  # as an agentls that did not save the changeset wrote it
    store.path(session.id).write_text(json.dumps(older))
    config = _config(api, tmp_path)
    resumed = _resume(session.id, config, store)
    assert resumed.changes.is_empty()
    await resumed.run("go on")
    text = api.message_requests[-1].user_text()
    assert "were lost" in text
    assert str(tmp_path / "app.py") in text
    assert "go on" in text


async def test_list_shows_summaries_newest_first_and_filters_by_workspace(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    api.extend(text_turn("first", usage={"input_tokens": 100, "output_tokens": 10}))
    api.extend(text_turn("second", usage={"input_tokens": 200, "output_tokens": 20}))
    sonnet = {"claude-sonnet-": [3, 15]}  # the scripted endpoint has no price
    a = _session(_config(api, tmp_path, one, prices=sonnet))
    await a.run("fix the parser")
    b = _session(_config(api, tmp_path, two, prices=sonnet))
    await b.run("explain the lexer\nin detail")
    store = SessionStore(tmp_path / "transcripts")
    listed = store.list()
    assert [s["id"] for s in listed] == [b.id, a.id]
    newest = listed[0]
    assert newest["first_prompt"] == "explain the lexer\nin detail"
    assert newest["status"] == "completed"
    assert newest["tokens"] == 220
    assert newest["workspace"] == [str(two.resolve())]
    assert newest["cost_usd"] == pytest.approx((200 * 3 + 20 * 15) / 1e6)
    assert newest["updated"] >= newest["created"] > 0
    assert [s["id"] for s in store.list(workspace=one)] == [a.id]
    assert [s["id"] for s in store.list(workspace=one / "sub")] == [a.id]
    assert store.list(workspace=tmp_path / "elsewhere") == []
    assert {s["id"] for s in store.list(workspace=tmp_path)} == {a.id, b.id}


async def test_corrupt_missing_and_foreign_state_give_clear_errors(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("ok"))
    session = _session(_config(api, tmp_path))
    await session.run("hi")
    store = SessionStore(tmp_path / "transcripts")
    good = store.path(session.id).read_text()

    store.path(session.id).write_text(good[: len(good) // 2])
    with pytest.raises(SessionStateError, match=r"corrupt .*invalid JSON"):
        store.load(session.id)
    assert store.list() == []  # skipped, not a crash

    store.path(session.id).write_text(json.dumps({"version": 99}))
    with pytest.raises(SessionStateError, match="version 99"):
        store.load(session.id)
    store.path(session.id).write_text(json.dumps({**json.loads(good), "messages": "nope"}))
    with pytest.raises(SessionStateError, match="not a valid session state"):
        store.load(session.id)
    store.path(session.id).write_text(json.dumps({**json.loads(good), "id": "other"}))
    with pytest.raises(SessionStateError, match="belongs to session 'other'"):
        store.load(session.id)
    store.path(session.id).write_text(json.dumps(["a list"]))
    with pytest.raises(SessionStateError, match="not a session state file"):
        store.load(session.id)
    with pytest.raises(SessionStateError, match="no saved session 'nothere'"):
        store.load("nothere")
    with pytest.raises(SessionStateError, match="not a valid session id"):
        store.load("../../etc/passwd")
    config = _config(api, tmp_path)
    with pytest.raises(SessionStateError):
        _resume("nothere", config, store)


async def test_sessions_without_persistence_write_no_state(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("ok"))
    config = _config(api, tmp_path)
    config.persist = False
    session = _session(config)
    await session.run("hi")
    assert session.persist() is None
    assert list((tmp_path / "transcripts").glob("*.state.json")) == []


async def test_staged_edits_are_saved_and_restored_with_the_session(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """Every kind of staged change comes back after a restart, with its base text, and the
    core API a later `agentls apply` uses finds them (and says which went stale)."""
    for name, text in {"mod.py": "old\n", "gone.py": "bye\n", "move.py": "same\n"}.items():
        (tmp_path / name).write_text(text)
    api.extend(text_turn("staged"), text_turn("still here"))
    session = _session(_config(api, tmp_path))
    await session.run("edit things")
    changes = session.changes
    changes.stage_write(tmp_path / "mod.py", "new\n", "old\n", 3)
    changes.stage_write(tmp_path / "made.py", "fresh\n", None)
    changes.stage_delete(tmp_path / "gone.py", "bye\n")
    changes.stage_rename(tmp_path / "move.py", tmp_path / "moved.py", "same\n")
    before = changes.entries()
    session.persist()

    store = SessionStore(tmp_path / "transcripts")
    config = _config(api, tmp_path)
    resumed = _resume(session.id, config, store)
    after = resumed.changes.entries()
    assert [(c.kind, c.path, c.old_path, c.original_text, c.new_text) for c in after] == [
        (c.kind, c.path, c.old_path, c.original_text, c.new_text) for c in before
    ]
    assert all(c.base_version is None for c in after)  # versions belong to the old editor
    await resumed.run("go on")
    assert "were lost" not in api.message_requests[-1].user_text()

    loaded = store.staged_changes(session.id)
    assert [c.path for c in loaded.entries()] == [c.path for c in before]
    (tmp_path / "mod.py").write_text("changed by the user\n")
    (tmp_path / "made.py").write_text("also made by the user\n")
    stale = staged.stale_changes(loaded, lambda p: p.read_text() if p.exists() else None)
    assert {(s.path.name, s.reason) for s in stale} == {
        ("mod.py", "the file changed since the edit was staged"),
        ("made.py", "the file exists now"),
    }


async def test_accepting_or_rejecting_between_runs_is_saved(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("staged"))
    session = _session(_config(api, tmp_path))
    await session.run("edit")
    session.changes.stage_write(tmp_path / "a.py", "A\n", None)
    session.changes.stage_write(tmp_path / "b.py", "B\n", None)
    session.persist()
    store = SessionStore(tmp_path / "transcripts")
    session.changes.discard([tmp_path / "a.py"])  # what accept/reject do once delivered
    await asyncio.sleep(0)  # the save is batched on the event loop
    state = store.load(session.id)
    assert state.staged_paths == [str(tmp_path / "b.py")]
    assert [c.path for c in state.staged or []] == [str(tmp_path / "b.py")]


async def test_sessions_saved_without_staged_changes_say_so(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("ok"))
    session = _session(_config(api, tmp_path))
    await session.run("hi")
    store = SessionStore(tmp_path / "transcripts")
    assert store.staged_changes(session.id).is_empty()
    older = json.loads(store.path(session.id).read_text())
    del older["staged"]
    store.path(session.id).write_text(json.dumps(older))
    with pytest.raises(SessionStateError, match="without its staged edits"):
        store.staged_changes(session.id)


async def test_a_run_the_server_did_not_survive_resumes_from_its_journal(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """The files as a crash leaves them (copied while the third turn hangs) come back as
    the history up to the last complete turn, with the staged edit and a note."""
    from agentls.tools.write_file import WriteFile

    api.extend(
        tool_turn(("write_file", {"path": "w.py", "content": "staged\n"})),
        tool_turn(("probe_read", {"label": "x"})),
        text_turn("never", hang=True),
        text_turn("resumed"),
    )
    config = _config(api, tmp_path)
    config.tools = [*all_test_tools(), WriteFile()]
    session = _session(config)
    task = asyncio.create_task(session.run("write then probe"))
    await asyncio.to_thread(api.wait_for_requests, 3, 10)
    folder = tmp_path / "transcripts"
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    for name in (f"{session.id}.state.json", f"{session.id}.jsonl"):
        (crashed / name).write_bytes((folder / name).read_bytes())
    complete = list(session.messages)  # two turns, each with its results
    session.cancel()
    await task

    config = _config(api, tmp_path)
    config.transcript_dir = crashed
    store = SessionStore(crashed)
    assert store.load(session.id).status == "running"
    resumed = _resume(session.id, config, store)
    assert resumed.status == "interrupted"
    assert resumed.messages == complete
    assert resumed.turns == 2
    assert resumed.usage.output_tokens > 0
    assert [c.path.name for c in resumed.changes.entries()] == ["w.py"]
    assert store.load(session.id).status == "interrupted"  # saved at once: no second replay

    result = await resumed.run("go on")
    assert result.status == "completed"
    assert result.text == "resumed"
    text = api.message_requests[-1].user_text()
    assert "interrupted" in text
    assert "write then probe" in text
    assert str(tmp_path / "w.py") in text
