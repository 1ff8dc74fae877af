"""Per-hunk review over ACP (issue 30): the review tool call shows each hunk with its
number; `/reject N <reason>` and `/accept N` decide hunks; the reason reaches the model
with the session's next prompt. With both official SDK clients."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.acp_support import (
    CLIENTS,
    AnyClient,
    initialized_client,
    new_session,
    prompt,
    write_project,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

ORIGINAL = "".join(f"line{n} = {n}\n" for n in range(1, 13))
CHANGED = ORIGINAL.replace("line2 = 2", "line2 = 'two'").replace("line10 = 10", "renamed = 10")


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


async def test_review_lists_hunks_and_slash_commands_decide_them(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {"b.py": ORIGINAL})
    session = await new_session(client, root)
    api.extend(tool_turn(("write_file", {"path": "b.py", "content": CHANGED})), text_turn("done"))
    client.editor.answers[:] = ["keep"]  # the review question: "Keep staged"
    await prompt(client, session, "rename things")
    review = next(
        c
        for c in client.editor.tool_calls(session).values()
        if str(c.get("title", "")).startswith("Apply the changes")
    )
    assert "/accept N" in review["title"]
    texts = [c["content"]["text"] for c in review["content"] if c["type"] == "content"]
    labels = [text for text in texts if text.startswith("Hunk ")]  # beside the checks' result
    assert labels == ["Hunk 1: b.py (line 2)", "Hunk 2: b.py (line 10)"]
    assert "Checks before review:\nb.py: 0 new errors" in texts  # the file's check
    diffs = [c for c in review["content"] if c["type"] == "diff"]
    assert [(d["oldText"], d["newText"]) for d in diffs] == [
        ("line2 = 2\n", "line2 = 'two'\n"),
        ("line10 = 10\n", "renamed = 10\n"),
    ]
    assert (root / "b.py").read_text() == ORIGINAL

    await prompt(client, session, "/reject 2 keep the name, callers use it")
    assert "Rejected hunk 2 (b.py, line 10)" in client.editor.text(session)
    await prompt(client, session, "/accept 1")
    assert "Accepted hunk 1 (b.py, line 2): wrote 1 file(s)." in client.editor.text(session)
    assert (root / "b.py").read_text() == ORIGINAL.replace("line2 = 2", "line2 = 'two'")
    await prompt(client, session, "/accept 1")
    assert "No edits are staged in this session." in client.editor.text(session)

    api.extend(text_turn("understood"))
    await prompt(client, session, "go on")
    last = json.dumps(api.message_requests[-1].json["messages"][-1])
    assert "The user rejected hunk 2 of b.py (line 10): keep the name, callers use it" in last


async def test_an_unknown_hunk_number_is_said_and_changes_nothing(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {"b.py": ORIGINAL})
    session = await new_session(client, root)
    api.extend(tool_turn(("write_file", {"path": "b.py", "content": CHANGED})), text_turn("done"))
    client.editor.answers[:] = ["keep"]
    await prompt(client, session, "rename things")
    await prompt(client, session, "/reject 9 no")
    assert "no staged hunk 9" in client.editor.text(session)
    await prompt(client, session, "/accept")
    assert (root / "b.py").read_text() == CHANGED


async def test_rewind_slash_command_lists_turns_and_goes_back(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {"b.py": ORIGINAL})
    session = await new_session(client, root)
    client.editor.answers[:] = ["keep"]
    api.extend(
        tool_turn(("write_file", {"path": "one.py", "content": "ONE = 1\n"})), text_turn("1")
    )
    await prompt(client, session, "first: make one.py")
    client.editor.answers[:] = ["keep"]
    api.extend(
        tool_turn(("write_file", {"path": "two.py", "content": "TWO = 2\n"})), text_turn("2")
    )
    await prompt(client, session, "second: make two.py")
    await prompt(client, session, "/rewind")
    shown = client.editor.text(session)
    assert "1. first: make one.py — one.py" in shown
    assert "2. second: make two.py — two.py" in shown
    await prompt(client, session, "/rewind 1")
    assert "Dropped turn 2: second: make two.py" in client.editor.text(session)
    api.extend(text_turn("ok"))
    client.editor.answers[:] = ["keep"]
    await prompt(client, session, "go on")
    sent = json.dumps(api.message_requests[-1].json["messages"])
    assert "first: make one.py" in sent
    assert "second: make two.py" not in sent
    await prompt(client, session, "/accept")
    assert (root / "one.py").exists()
    assert not (root / "two.py").exists()


async def test_auto_mode_with_block_new_errors_keeps_the_file_staged_and_says_why(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """`checks.block: "newErrors"`: the edit that breaks a call is not written; the user
    sees which file was kept staged and why (real basedpyright)."""
    files = {
        "a.py": "def double(n: int) -> int:\n    return n * 2\n",
        "b.py": "from a import double\nvalue = double(2)\n",
    }
    settings = 'mode = "auto"\n\n[checks]\nafterEditSeconds = 60\nblock = "newErrors"\n'
    root = write_project(tmp_path / "proj", files, settings, trusted_by=client)
    session = await new_session(client, root)
    edit = ("edit_file", {"path": "b.py", "old_string": "double(2)", "new_string": 'double("2")'})
    api.extend(tool_turn(edit), text_turn("done"))
    client.editor.answers[:] = ["allow_once"]
    await prompt(client, session, "change b")
    assert (root / "b.py").read_text() == files["b.py"]  # kept staged, never written
    held = next(
        c
        for c in client.editor.tool_calls(session).values()
        if str(c.get("title", "")).startswith("Kept staged by the checks")
    )
    text = held["content"][0]["content"]["text"]
    assert text.startswith("b.py: 1 new error: b.py:2 error: Argument of type"), text
    assert "/accept writes them anyway" in text
    await prompt(client, session, "/reject")
