"""`todo_write` → ACP `plan` end to end, driven by both official SDK clients.

The join between the core's todo list (issue 15's `todo_write`, the `Todos` event) and the
ACP host's reporter (issue 16: "`plan` from `todo_write`"): a scripted model calls
`todo_write` in an `agentls acp` session and the client receives `session/update` with
`sessionUpdate: "plan"`, whose entries mirror the list; a second call replaces the plan
whole. The TypeScript client validates every update against the ACP schema.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.acp_support import (
    CLIENTS,
    AnyClient,
    FakeEditor,
    acp_client,
    initialize,
    initialized_client,
    new_session,
    prompt,
    write_project,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIRST = [
    {"content": "Read the module", "status": "completed", "active_form": "Reading the module"},
    {"content": "Rename alpha", "status": "in_progress", "active_form": "Renaming alpha"},
    {"content": "Run the tests", "status": "pending", "active_form": "Running the tests"},
]
SECOND = [
    {"content": "Read the module", "status": "completed", "active_form": "Reading the module"},
    {"content": "Rename alpha", "status": "completed", "active_form": "Renaming alpha"},
    {"content": "Run the tests", "status": "in_progress", "active_form": "Running the tests"},
    {"content": "Update the docs", "status": "pending", "active_form": "Updating the docs"},
]


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def client(
    request: pytest.FixtureRequest,
    api: ScriptedMessagesServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[AnyClient]:
    home = tmp_path_factory.mktemp("home")
    async with initialized_client(request.param, api.base_url, home) as found:
        yield found


def expected(todos: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The plan entries a todo list becomes: its content and status, in order (todos carry
    no priority, so every entry has ACP's neutral one)."""
    return [{"content": t["content"], "status": t["status"], "priority": "medium"} for t in todos]


async def test_todo_write_sends_a_plan_and_a_second_call_replaces_it(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {"a.py": "def alpha():\n    return 1\n"})
    editor = client.editor
    api.extend(
        tool_turn(("todo_write", {"todos": FIRST})),
        tool_turn(("read_file", {"path": "a.py"})),
        tool_turn(("todo_write", {"todos": SECOND})),
        text_turn("Renamed; the tests are next."),
    )
    session = await new_session(client, root)
    result = await prompt(client, session, "rename alpha, then run the tests")
    assert result["stopReason"] == "end_turn"
    plans = editor.session_updates(session, "plan")
    assert [p["entries"] for p in plans] == [expected(FIRST), expected(SECOND)]
    # each plan arrives while its call runs: after the todo_write call starts, before the
    # next call (the read) starts
    updates = editor.session_updates(session)
    order = [
        ("plan", len(u["entries"]))
        if u["sessionUpdate"] == "plan"
        else (u["sessionUpdate"], u["rawInput"].get("path", "todos"))
        for u in updates
        if u["sessionUpdate"] == "plan" or u["sessionUpdate"] == "tool_call"
    ]
    assert order == [
        ("tool_call", "todos"),
        ("plan", 3),
        ("tool_call", "a.py"),
        ("tool_call", "todos"),
        ("plan", 4),
    ]
    # the call itself shows as a "think" step that completed
    todo_calls = [
        c for c in editor.tool_calls(session).values() if "todos" in (c.get("rawInput") or {})
    ]
    assert [(c["kind"], c["status"]) for c in todo_calls] == [("think", "completed")] * 2


async def test_clearing_the_list_sends_an_empty_plan_and_other_sessions_see_nothing(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {"a.py": "x = 1\n"})
    editor = client.editor
    bystander = await new_session(client, root)
    session = await new_session(client, root)
    api.extend(
        tool_turn(("todo_write", {"todos": FIRST[:1]})),
        tool_turn(("todo_write", {"todos": []})),
        text_turn("Nothing left to do."),
    )
    await prompt(client, session, "plan, then drop the plan")
    plans = [p["entries"] for p in editor.session_updates(session, "plan")]
    assert plans == [expected(FIRST[:1]), []]
    assert editor.session_updates(bystander, "plan") == []


async def test_a_rejected_todo_list_sends_no_plan(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """Input the tool refuses (a blank item) changes nothing the client shows."""
    root = write_project(tmp_path / "proj", {"a.py": "x = 1\n"})
    editor = client.editor
    bad = [{"content": "   ", "status": "pending", "active_form": "x"}]
    api.extend(
        tool_turn(("todo_write", {"todos": bad})),
        text_turn("Sorry."),
    )
    session = await new_session(client, root)
    assert (await prompt(client, session, "plan badly"))["stopReason"] == "end_turn"
    assert editor.session_updates(session, "plan") == []
    (call,) = editor.tool_calls(session).values()
    assert call["status"] == "failed"


async def test_loading_the_session_after_a_restart_shows_its_plan(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """`session/load` replays the history and then the plan as it stands (the todo list is
    saved with the session), so the client's plan view is not empty after a restart."""
    root = write_project(tmp_path / "proj", {"a.py": "x = 1\n"})
    api.extend(
        tool_turn(("todo_write", {"todos": FIRST})),
        tool_turn(("todo_write", {"todos": SECOND})),
        text_turn("Planned."),
    )
    session = await new_session(client, root)
    await prompt(client, session, "plan the rename")
    editor = FakeEditor()
    home = Path(client.env["HOME"])
    async with acp_client(client.kind, editor, client.env, home) as restarted:
        await initialize(restarted)
        await restarted.request(
            "session/load", {"sessionId": session, "cwd": str(root), "mcpServers": []}
        )
    plans = editor.session_updates(session, "plan")
    assert [p["entries"] for p in plans] == [expected(SECOND)]
    kinds = [u["sessionUpdate"] for u in editor.session_updates(session)]
    assert kinds[-1] == "plan"  # after the replayed history, as it stands now
    assert "user_message_chunk" in kinds
    assert "tool_call" in kinds
