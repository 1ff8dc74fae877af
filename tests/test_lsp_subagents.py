"""Sub-agents over real stdio: what the editor sees of them.

A general-purpose sub-agent's edit arrives in the session's one WorkspaceEdit; its steps
show in `$/progress` and `agentls/event` ("explore: Reading app.py"), their output can be
fetched with `agentls.toolResult`; its approval prompts reach the user like the session's;
`agentls.status` lists the types (and a malformed agent file, which the user was also told
about at start-up); `agentls transcript` shows the sub-agent under its call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, run_cli
from tests.lsp_support import FakeEditor, command, editor_session, server_env
from tests.subagent_support import Roles, requests_of

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("transcripts")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    api: ScriptedMessagesServer, transcripts: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    root = tmp_path_factory.mktemp("ws")
    (root / "app.py").write_text("def main():\n    return 1\n")
    agents = root / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews changes.\ntools: Read, Grep\n---\nReview.\n"
    )
    (agents / "broken.md").write_text("---\nname: Broken Name\ndescription: x\n---\n")
    async with editor_session(
        "visual-studio-code", root, server_env(api.base_url, transcripts)
    ) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _script_fully_played(api: ScriptedMessagesServer) -> Iterator[None]:
    yield
    assert api.remaining == 0, "the test left scripted turns unplayed"


def task(marker: str, kind: str | None) -> tuple[str, dict[str, Any]]:
    args: dict[str, Any] = {"description": f"work {marker}", "prompt": f"Do it {marker}"}
    if kind:
        args["subagent_type"] = kind
    return ("task", args)


async def test_a_broken_agent_file_is_shown_to_the_user_and_listed_in_status(
    editor: FakeEditor,
) -> None:
    status = await command(editor, "agentls.status")  # answered once the host is up
    warnings = [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]
    assert any("broken.md was skipped" in w and "`name` 'Broken Name'" in w for w in warnings)
    agents = status["agents"]
    assert [t["name"] for t in agents["types"]] == ["general-purpose", "explore", "reviewer"]
    assert agents["types"][2]["tools"] == ["Read", "Grep"]
    assert len(agents["problems"]) == 1
    assert "broken.md" in agents["problems"][0]


async def test_subagent_steps_show_in_progress_and_events_and_their_output_can_be_fetched(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor.events.clear()
    Roles(
        session=[tool_turn(task("[E]", "explore")), text_turn("main is in app.py")],
        subagents={
            "[E]": [tool_turn(("read_file", {"path": "app.py"})), text_turn("app.py:1 main()")]
        },
    ).play(api)
    result = await command(editor, "agentls.run", {"prompt": "find main", "wait": True})
    assert result["status"] == "completed"
    reports = [
        r.message
        for values in editor.client.progress_reports.values()
        for r in values
        if isinstance(r, types.WorkDoneProgressReport)
    ]
    assert "explore: work [E]" in reports
    assert "explore: Reading app.py" in reports
    started = [e for e in editor.events if e["type"] == "tool_started"]
    (step,) = [e for e in started if e["name"] == "read_file"]
    (call,) = [e for e in started if e["name"] == "task"]
    assert step["summary"] == "explore: Reading app.py"
    assert step["parent_tool_use_id"] == call["tool_use_id"]
    assert call["parent_tool_use_id"] is None
    assert step["session_id"] == result["session"]
    output = await command(
        editor,
        "agentls.toolResult",
        {"session": result["session"], "tool_use_id": step["tool_use_id"]},
    )
    assert "def main():" in output["content"]
    assert not output["is_error"]


async def test_a_general_purpose_edit_arrives_in_the_sessions_workspace_edit(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor.edits.clear()
    edit = {"path": "app.py", "old_string": "return 1", "new_string": "return 2"}
    Roles(
        session=[
            tool_turn(task("[W]", None), ("write_file", {"path": "notes.txt", "content": "n\n"})),
            text_turn("done"),
        ],
        subagents={"[W]": [tool_turn(("edit_file", edit)), text_turn("changed app.py")]},
    ).play(api)
    result = await command(editor, "agentls.run", {"prompt": "bump", "wait": True})
    assert result["status"] == "completed"
    (workspace_edit,) = editor.edits  # one WorkspaceEdit for the session and its sub-agent
    uris = {
        getattr(op, "uri", None) or op.text_document.uri
        for op in workspace_edit.document_changes or []
    }
    assert uris == {(editor.root / "app.py").as_uri(), (editor.root / "notes.txt").as_uri()}
    assert editor.text(editor.root / "app.py") == "def main():\n    return 2\n"
    assert len(result["edit"]["files"]) == 2


async def test_a_subagents_approval_prompt_reaches_the_user(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor.prompts.clear()
    editor.edits.clear()
    edit = {"path": "app.py", "old_string": "return 2", "new_string": "return 3"}
    Roles(
        session=[tool_turn(task("[P]", None)), text_turn("done")],
        subagents={"[P]": [tool_turn(("edit_file", edit)), text_turn("tried")]},
    ).play(api)
    editor.choices[:] = ["Deny"]
    result = await command(
        editor, "agentls.run", {"prompt": "bump again", "wait": True, "mode": "auto"}
    )
    assert result["status"] == "completed"
    (prompt,) = editor.prompts
    assert prompt.message.startswith("agentls: allow edit_file? Editing app.py")
    (denied,) = requests_of(api, "[P]")[-1].tool_results()
    assert denied["is_error"]
    assert "the user denied this call" in denied["content"]
    assert editor.edits == []
    assert editor.text(editor.root / "app.py") == "def main():\n    return 2\n"


async def test_agentls_transcript_shows_the_subagent_under_its_call(
    editor: FakeEditor, api: ScriptedMessagesServer, transcripts: Path, tmp_path: Path
) -> None:
    Roles(
        session=[tool_turn(task("[T]", "reviewer")), text_turn("reviewed")],
        subagents={"[T]": [tool_turn(("grep", {"pattern": "main"})), text_turn("looks fine")]},
    ).play(api)
    result = await command(editor, "agentls.run", {"prompt": "review", "wait": True})
    env = cli_env(None, transcripts)
    done = run_cli("transcript", result["session"], env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "▶ sub-agent reviewer" in line)
    end = next(i for i, line in enumerate(lines) if "◀ sub-agent reviewer" in line)
    nested = lines[end + 1 :]
    assert start < end
    assert any(line.startswith("│  │  │     ") and "├─ grep " in line for line in nested)
    assert any("completed after 2 turns" in line for line in nested)
