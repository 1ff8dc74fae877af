"""Agent runs through `agentls serve` over stdio, as VS Code would drive them.

One server per module (start-up dominates test time); each test uses its own files and
queues its own scripted model turns. The test client is a fake editor that really applies
`workspace/applyEdit` to its buffers and reports them back with didOpen/didChange.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

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


@pytest.fixture(autouse=True)
def _script_fully_played(api: ScriptedMessagesServer) -> Iterator[None]:
    yield
    assert api.remaining == 0, "the test left scripted turns unplayed"


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


async def test_review_run_reads_edits_two_files_and_creates_one_in_one_versioned_edit(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    app = write(root, "review/app.py", "import os\n\n\ndef main():\n    return 1\n")
    util = write(root, "review/util.py", "def helper():\n    pass\n")
    uri = editor.open(app)
    # unsaved work the agent must see and build on
    editor.type(uri, (0, 0), (0, 0), "# unsaved header\n")
    api.extend(
        tool_turn(("read_file", {"path": "review/app.py"})),
        tool_turn(
            (
                "edit_file",
                {"path": "review/app.py", "old_string": "return 1", "new_string": "return 2"},
            ),
            (
                "edit_file",
                {"path": "review/util.py", "old_string": "pass", "new_string": "return 42"},
            ),
            ("write_file", {"path": "review/new_mod.py", "content": "VALUE = 'ü'\n"}),
        ),
        text_turn("Changed main, helper and added new_mod."),
    )
    editor.edits.clear()
    result = await command(
        editor, "agentls.run", {"prompt": "Make main return 2 and more", "wait": True}
    )

    assert result["status"] == "completed"
    assert "unsaved header" in str(api.message_requests[-2].tool_results())
    edit = result["edit"]
    assert edit["applied"] is True
    assert sorted(Path(u).name for u in edit["files"]) == ["app.py", "new_mod.py", "util.py"]
    assert len(editor.edits) == 1, "review mode sends exactly one WorkspaceEdit"
    sent = editor.edits[0]
    assert sent.changes is None
    assert sent.document_changes
    ops = {type(op).__name__ for op in sent.document_changes}
    assert ops == {"TextDocumentEdit", "CreateFile"}
    versions = {
        Path(op.text_document.uri).name: op.text_document.version
        for op in sent.document_changes
        if isinstance(op, types.TextDocumentEdit)
    }
    assert versions["app.py"] == 2  # the buffer version the agent read
    assert versions["util.py"] is None  # read from disk: no buffer version
    annotations = sent.change_annotations or {}
    assert annotations
    assert all(a.needs_confirmation for a in annotations.values())
    assert all(a.label.startswith("agentls: ") for a in annotations.values())
    # line-granular: every edit replaces whole lines
    for op in sent.document_changes:
        if isinstance(op, types.TextDocumentEdit):
            for e in op.edits:
                assert e.range.start.character == 0
                assert e.range.end.character == 0 or e.new_text == ""
    assert editor.text(app) == "# unsaved header\nimport os\n\n\ndef main():\n    return 2\n"
    assert editor.text(util) == "def helper():\n    return 42\n"
    assert editor.text(root / "review/new_mod.py") == "VALUE = 'ü'\n"
    assert util.read_text() == "def helper():\n    pass\n", "the disk file is the editor's job"
    status = await command(editor, "agentls.status")
    session = next(s for s in status["sessions"] if s["id"] == result["session"])
    assert session["turns"] == 3
    assert session["status"] == "completed"


async def test_progress_log_and_events_follow_the_run(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    write(root, "progress/notes.txt", "hello\n")
    api.extend(
        tool_turn(("read_file", {"path": "progress/notes.txt"})),
        text_turn("It says hello."),
    )
    before = set(editor.client.progress_reports)
    events: list[dict[str, Any]] = editor.events
    events.clear()
    result = await command(
        editor, "agentls.run", {"prompt": "Summarise the notes file for me please", "wait": True}
    )
    assert result["status"] == "completed"
    assert result["edit"] is None
    tokens = [t for t in editor.client.progress_reports if t not in before]
    assert len(tokens) == 1
    reports = editor.client.progress_reports[tokens[0]]
    begin, *middle, end = reports
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.cancellable
    assert begin.title.startswith("agentls: Summarise the notes file")
    assert [r.message for r in middle] == ["Reading progress/notes.txt"]
    assert isinstance(end, types.WorkDoneProgressEnd)
    assert end.message.startswith("completed")
    # the run's token count and its cost: n/a, as the scripted endpoint has no known price
    assert "tokens, cost n/a" in end.message
    kinds = [e["type"] for e in events if e.get("session_id") == result["session"]]
    assert kinds[0] == "run_started"
    assert kinds[-2:] == ["run_finished", "run_result"]
    assert {"tool_started", "tool_finished", "text_delta", "turn_usage"} <= set(kinds)
    logs = [m.message for m in editor.client.log_messages if result["session"] in m.message]
    assert any("→ Reading progress/notes.txt" in line for line in logs)


async def test_auto_mode_asks_then_applies_each_edit_as_it_happens(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    first = write(root, "auto/a.py", "X = 1\nY = 1\n")
    second = write(root, "auto/b.py", "B = 1\n")
    api.extend(
        tool_turn(edit_call("auto/a.py", "X = 1", "X = 2")),
        tool_turn(edit_call("auto/a.py", "Y = 1", "Y = 2")),
        tool_turn(edit_call("auto/b.py", "B = 1", "B = 2")),
        text_turn("done"),
    )
    editor.edits.clear()
    editor.prompts.clear()
    editor.choices[:] = ["Allow for this session", "Allow once"]
    result = await command(editor, "agentls.run", {"prompt": "bump", "mode": "auto", "wait": True})
    assert result["status"] == "completed"
    # a.py allowed for the session (its second edit is not asked about), b.py once
    assert [p.message.split("? ")[1].split(" (")[0] for p in editor.prompts] == [
        "Editing auto/a.py",
        "Editing auto/b.py",
    ]
    assert [a.title for a in editor.prompts[0].actions or []] == [
        "Allow once",
        "Allow for this session",
        "Deny",
    ]
    assert len(editor.edits) == 3, "one applyEdit per write, as it happens"
    assert all(not e.change_annotations for e in editor.edits), "auto mode does not preview"
    assert editor.text(first) == "X = 2\nY = 2\n"
    assert editor.text(second) == "B = 2\n"
    # the model heard that the editor applied its change
    assert "The editor applied this change." in str(api.message_requests[-1].tool_results())
    assert result["edit"] is None  # nothing left staged at the end


async def test_plan_mode_offers_no_write_tools(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    target = write(root, "plan/p.py", "P = 1\n")
    api.extend(
        tool_turn(("write_file", {"path": "plan/p.py", "content": "P = 2\n"})),
        text_turn("I would change P."),
    )
    editor.edits.clear()
    result = await command(
        editor, "agentls.run", {"prompt": "plan it", "mode": "plan", "wait": True}
    )
    assert result["status"] == "completed"
    assert result["edit"] is None
    request = api.message_requests[-2]
    assert "write_file" not in request.tool_names
    assert "read_file" in request.tool_names
    assert request.tool_names == sorted(request.tool_names)
    assert api.message_requests[-1].tool_results()[0]["is_error"] is True
    assert editor.edits == []
    assert editor.text(target) == "P = 1\n"


async def test_refused_preview_is_reported_with_the_reason_and_stays_staged(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    target = write(root, "refuse/r.py", "R = 1\n")
    api.extend(
        tool_turn(
            ("edit_file", {"path": "refuse/r.py", "old_string": "R = 1", "new_string": "R = 2"})
        ),
        text_turn("done"),
    )
    editor.answer_edit = lambda edit: "the user cancelled the refactor preview"
    try:
        result = await command(editor, "agentls.run", {"prompt": "change r", "wait": True})
    finally:
        editor.answer_edit = None
    assert result["edit"]["applied"] is False
    assert result["edit"]["reason"] == "the user cancelled the refactor preview"
    assert editor.text(target) == "R = 1\n"
    # still staged: accepting later applies it (no confirmation needed any more)
    accepted = await command(editor, "agentls.accept", {"session": result["session"]})
    assert accepted["applied"] is True
    assert editor.text(target) == "R = 2\n"
    again = await command(editor, "agentls.accept", {"session": result["session"]})
    assert again["files"] == []
    assert again["reason"] == "nothing staged"


async def test_cancel_by_command_stops_a_hanging_run(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    api.extend(text_turn("never finishes", hang=True))
    started = await command(editor, "agentls.run", {"prompt": "hang please"})
    session = started["session"]
    waiter = asyncio.ensure_future(
        command(editor, "agentls.run", {"prompt": "follow-up", "session": session, "wait": True})
    )
    with pytest.raises(Exception, match="already running"):
        await waiter
    await wait_for(lambda: api.remaining == 0)  # the model request is in flight
    # the editor stays responsive while the run hangs
    status = await command(editor, "agentls.status")
    assert any(s["id"] == session and s["running"] for s in status["sessions"])
    cancelled = await command(editor, "agentls.cancel", {"session": session})
    assert cancelled == {"cancelled": [session]}
    await wait_for_status(editor, session, "cancelled")


async def test_cancel_from_the_progress_token(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    api.extend(text_turn("never finishes", hang=True))
    before = set(editor.client.progress_reports)
    result_future = asyncio.ensure_future(
        command(editor, "agentls.run", {"prompt": "hang again", "wait": True})
    )
    await wait_for(lambda: len(set(editor.client.progress_reports) - before) == 1)
    (token,) = set(editor.client.progress_reports) - before
    await wait_for(lambda: api.remaining == 0)  # the model request is in flight
    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(result_future, 10)
    assert result["status"] == "cancelled"
    assert isinstance(editor.client.progress_reports[token][-1], types.WorkDoneProgressEnd)


async def wait_for_status(editor: FakeEditor, session: str, wanted: str) -> None:
    for _ in range(200):
        status = await command(editor, "agentls.status")
        if any(s["id"] == session and s["status"] == wanted for s in status["sessions"]):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"session {session} never became {wanted}")


async def test_renames_and_deletes_become_resource_operations(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    old = write(root, "ops/old_name.py", "NAME = 'old'\n")
    doomed = write(root, "ops/doomed.py", "GONE = True\n")
    api.extend(
        tool_turn(("rename_file", {"path": "ops/old_name.py", "new_path": "ops/new_name.py"})),
        tool_turn(
            edit_call("ops/new_name.py", "NAME = 'old'", "NAME = 'new'"),
            ("delete_file", {"path": "ops/doomed.py"}),
        ),
        text_turn("Renamed, edited and deleted."),
    )
    editor.edits.clear()
    result = await command(editor, "agentls.run", {"prompt": "tidy up", "wait": True})
    assert result["edit"]["applied"] is True, result
    ops = [type(op).__name__ for op in editor.edits[0].document_changes or []]
    assert ops == ["RenameFile", "TextDocumentEdit", "DeleteFile"]
    new = root / "ops/new_name.py"
    assert not old.exists()
    assert not doomed.exists()
    assert editor.text(new) == "NAME = 'new'\n"


def edit_call(path: str, old: str, new: str) -> tuple[str, dict[str, str]]:
    return ("edit_file", {"path": path, "old_string": old, "new_string": new})


async def test_files_unchecked_in_the_preview_stay_staged(
    editor: FakeEditor, api: ScriptedMessagesServer, root: Path
) -> None:
    kept = write(root, "uncheck/kept.py", "K = 1\n")
    skipped = write(root, "uncheck/skipped.py", "S = 1\n")
    editor.open(kept)
    skipped_uri = editor.open(skipped)
    api.extend(
        tool_turn(
            edit_call("uncheck/kept.py", "K = 1", "K = 2"),
            edit_call("uncheck/skipped.py", "S = 1", "S = 2"),
        ),
        text_turn("done"),
    )
    editor.unchecked = {skipped_uri}
    try:
        result = await command(editor, "agentls.run", {"prompt": "both", "wait": True})
    finally:
        editor.unchecked = set()
    edit = result["edit"]
    assert edit["applied"] is True
    assert edit["files"] == [kept.as_uri()]
    assert "did not change" in edit["reason"]
    assert skipped_uri in edit["reason"]
    assert editor.text(kept) == "K = 2\n"
    assert editor.text(skipped) == "S = 1\n"
    accepted = await command(editor, "agentls.accept", {"session": result["session"]})
    assert accepted["files"] == [skipped_uri]
    assert accepted["applied"] is True
    assert editor.text(skipped) == "S = 2\n"


async def test_cancel_without_a_session_cancels_every_run(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    api.extend(text_turn("hang one", hang=True), text_turn("hang two", hang=True))
    one = await command(editor, "agentls.run", {"prompt": "first"})
    two = await command(editor, "agentls.run", {"prompt": "second"})
    await wait_for(lambda: api.remaining == 0)  # both requests are in flight
    cancelled = await command(editor, "agentls.cancel", {})
    assert sorted(cancelled["cancelled"]) == sorted([one["session"], two["session"]])
    await wait_for_status(editor, one["session"], "cancelled")
    await wait_for_status(editor, two["session"], "cancelled")


async def test_a_run_cancelled_before_it_reaches_the_model_sends_nothing(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    before = len(api.message_requests)
    editor.progress_gate = asyncio.Event()  # the run waits for its progress token
    try:
        started = await command(editor, "agentls.run", {"prompt": "never mind"})
        cancelled = await command(editor, "agentls.cancel", {"session": started["session"]})
    finally:
        editor.progress_gate.set()
        editor.progress_gate = None
    assert cancelled == {"cancelled": [started["session"]]}
    await wait_for_status(editor, started["session"], "cancelled")
    assert len(api.message_requests) == before
