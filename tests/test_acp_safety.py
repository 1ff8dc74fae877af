"""`agentls acp` at its boundaries, tested as an attacker (or an unlucky user) would:

- a refused call never makes the agent read its file through the client (secret files,
  paths outside the workspace);
- the user's unsaved text is never overwritten: an edit that touches lines the user changed
  meanwhile stays staged; one that does not is merged;
- the project's rules, hooks and `.mcp.json` apply as in the LSP host (the `.mcp.json`
  servers start only once the user allows them);
- "for this session" answers are remembered, in both directions;
- a permission question shows the call's diff and path, and only an option it offered
  counts (a made-up answer, or "allow always" where an ask rule allows once at most,
  allows nothing);
- paths stay confined to the session's folder even when the user allows everything: `..`,
  absolute paths and symbolic links that leave it reach neither the client nor the disk;
- sessions are isolated from each other: answers, staged edits, folders and updates of one
  session never apply to (or show up in) another, even in the same folder; cancelling one
  leaves the other running.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.acp_support import (
    AnyClient,
    FakeEditor,
    acp_client,
    agent_env,
    initialize,
    new_session,
    prompt,
    request_with_tool_result,
    wait_until,
    write_project,
)
from tests.mcp_servers.support import SERVER

pytestmark = pytest.mark.asyncio(loop_scope="module")

A_PY = "def alpha():\n    return 1\n\n\ndef gamma():\n    return 3\n"


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(
    api: ScriptedMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[AnyClient]:
    home = tmp_path_factory.mktemp("home")
    async with acp_client("python", FakeEditor(), agent_env(api.base_url, home), home) as found:
        await initialize(found)
        yield found


async def test_refused_calls_never_read_their_file_through_the_client(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {".env": "TOKEN=on-disk\n", "ok.txt": "fine\n"})
    outside = write_project(tmp_path / "outside", {"secret.txt": "not yours\n"})
    editor = client.editor
    editor.buffers[str(root / ".env")] = "TOKEN=unsaved-secret\n"
    editor.buffers[str(outside / "secret.txt")] = "unsaved, not yours\n"
    session = await new_session(client, root)
    ids = [f"toolu_refused_{n}" for n in range(3)]
    api.extend(
        tool_turn(
            ("read_file", {"path": ".env"}, ids[0]),
            ("read_file", {"path": str(outside / "secret.txt")}, ids[1]),
            ("read_file", {"path": "../outside/secret.txt"}, ids[2]),
        ),
        tool_turn(("read_file", {"path": "ok.txt"})),
        text_turn("done"),
    )
    reads_before = len(editor.reads)
    await prompt(client, session, "read them")
    asked = editor.reads[reads_before:]
    assert asked == [str(root / "ok.txt")]  # only the call that was allowed
    for tool_use_id in ids:
        result = request_with_tool_result(api, tool_use_id)
        assert result["is_error"] is True
        assert "unsaved" not in str(result["content"])
        assert "not yours" not in str(result["content"])


async def test_an_edit_never_overwrites_lines_the_user_changed_meanwhile(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {"a.py": A_PY})
    path = str(root / "a.py")
    editor = client.editor
    session = await new_session(client, root)
    api.extend(
        tool_turn(
            ("edit_file", {"path": "a.py", "old_string": "return 1", "new_string": "return 10"})
        ),
        text_turn("edited"),
    )
    editor.permission_gate = asyncio.Event()
    asked = len(editor.permission_requests)
    try:
        running = asyncio.ensure_future(prompt(client, session, "ten"))
        await wait_until(lambda: len(editor.permission_requests) > asked)  # the review question
        user_text = A_PY.replace("return 1", "return 'mine'")  # the same line, unsaved
        editor.buffers[path] = user_text
        editor.answers[:] = ["apply"]
    finally:
        editor.permission_gate.set()
        editor.permission_gate = None
    await running
    assert editor.buffers[path] == user_text  # the user's text stands
    assert (root / "a.py").read_text() == A_PY
    assert all(written != path for written, _ in editor.writes)
    review = editor.tool_calls(session)[editor.permission_requests[-1]["toolCall"]["toolCallId"]]
    assert review["status"] == "failed"
    # still staged: /accept tries again and says why it cannot
    texts_before = len(editor.session_updates(session, "agent_message_chunk"))
    await prompt(client, session, "/accept")
    said = editor.session_updates(session, "agent_message_chunk")[texts_before:]
    assert "changed since the agent read it" in "".join(u["content"]["text"] for u in said)
    assert editor.buffers[path] == user_text
    # the user's change elsewhere in the file: the agent's edit is merged in
    editor.buffers[path] = A_PY.replace("return 3", "return 30")
    await prompt(client, session, "/accept")
    assert editor.buffers[path] == A_PY.replace("return 3", "return 30").replace(
        "return 1", "return 10"
    )


async def test_project_rules_and_hooks_apply(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    code = "import sys; print('no reading notes', file=sys.stderr); sys.exit(2)"
    hook = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    claude = {
        "permissions": {"deny": ["delete_file"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "read_file", "hooks": [{"type": "command", "command": hook}]}
            ]
        },
    }
    root = write_project(
        tmp_path / "proj",
        {"notes.md": "n\n", ".claude/settings.json": json.dumps(claude)},
        trusted_by=client,  # the hook is a program the repository ships
    )
    session = await new_session(client, root)
    blocked = "toolu_hook_blocked"
    api.extend(tool_turn(("read_file", {"path": "notes.md"}, blocked)), text_turn("ok"))
    before = len(api.message_requests)
    await prompt(client, session, "read the notes")
    assert "delete_file" not in api.message_requests[before].tool_names  # a tool-wide deny
    result = request_with_tool_result(api, blocked)
    assert result["is_error"] is True
    assert "no reading notes" in str(result["content"])


async def test_project_mcp_json_servers_start_only_once_the_user_allows_them(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    mcp = {"mcpServers": {"proj": {"command": sys.executable, "args": [SERVER, "--name", "proj"]}}}
    root = write_project(
        tmp_path / "proj", {".mcp.json": json.dumps(mcp)}, '[toolSearch]\nmode = "never"\n'
    )
    editor = client.editor
    session = await new_session(client, root)
    editor.answers[:] = ["deny"]
    asked = len(editor.permission_requests)
    api.extend(text_turn("no servers"))
    before = len(api.message_requests)
    await prompt(client, session, "what tools?")
    (question,) = editor.permission_requests[asked:]
    assert question["toolCall"]["title"] == "Start the MCP servers of .mcp.json?"
    assert str(root / ".mcp.json") in question["toolCall"]["locations"][0]["path"]
    assert not any(n.startswith("mcp__proj__") for n in api.message_requests[before].tool_names)


async def test_answers_for_this_session_are_remembered_both_ways(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {"a.txt": "a\n"}, 'mode = "auto"\n', trusted_by=client)
    editor = client.editor
    session = await new_session(client, root)
    editor.answers[:] = ["allow_always", "reject_always"]
    asked = len(editor.permission_requests)
    api.extend(
        tool_turn(("write_file", {"path": "one.txt", "content": "1\n"})),
        tool_turn(("write_file", {"path": "one.txt", "content": "2\n"})),  # remembered: no ask
        tool_turn(("write_file", {"path": "two.txt", "content": "x\n"})),  # asked: rejected always
        tool_turn(("write_file", {"path": "two.txt", "content": "y\n"})),  # remembered: denied
        text_turn("done"),
    )
    await prompt(client, session, "write")
    assert len(editor.permission_requests) - asked == 2
    assert (root / "one.txt").read_text() == "2\n"
    assert not (root / "two.txt").exists()


async def test_paths_outside_the_session_folder_are_refused_even_when_the_user_allows_all(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    outside = write_project(tmp_path / "outside", {"secret.txt": "not yours\n"})
    root = write_project(tmp_path / "proj", {"a.txt": "a\n"}, 'mode = "auto"\n', trusted_by=client)
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "file-link.txt").symlink_to(outside / "secret.txt")
    editor = client.editor
    secret = str(outside / "secret.txt")
    editor.buffers[secret] = "unsaved, not yours\n"
    session = await new_session(client, root)
    editor.answers[:] = ["allow_once"] * 20  # the user would allow anything asked
    calls = [
        ("write_file", {"path": "../outside/new.txt", "content": "x\n"}),
        ("write_file", {"path": str(outside / "abs.txt"), "content": "x\n"}),
        ("write_file", {"path": "link/through-link.txt", "content": "x\n"}),
        ("write_file", {"path": "file-link.txt", "content": "overwritten\n"}),
        ("edit_file", {"path": "link/secret.txt", "old_string": "not", "new_string": "now"}),
        ("delete_file", {"path": "link/secret.txt"}),
        ("rename_file", {"path": "a.txt", "new_path": "../outside/moved.txt"}),
        ("rename_file", {"path": "link/secret.txt", "new_path": "stolen.txt"}),
        ("read_file", {"path": "link/secret.txt"}),
        ("read_file", {"path": "file-link.txt"}),
    ]
    ids = [f"toolu_confined_{n}" for n in range(len(calls))]
    api.extend(
        tool_turn(*[(name, args, id_) for (name, args), id_ in zip(calls, ids, strict=True)]),
        text_turn("done"),
    )
    reads, writes = len(editor.reads), len(editor.writes)
    await prompt(client, session, "escape")
    assert editor.reads[reads:] == []
    assert editor.writes[writes:] == []
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "not yours\n"
    assert (root / "a.txt").read_text() == "a\n"
    assert not (root / "stolen.txt").exists()
    for tool_use_id in ids:
        result = request_with_tool_result(api, tool_use_id)
        assert result["is_error"] is True, (tool_use_id, result)
        assert "not yours" not in str(result["content"]), (tool_use_id, result)
    calls_seen = editor.tool_calls(session)
    assert all(calls_seen[i]["status"] == "failed" for i in ids)


async def test_sessions_never_share_answers_staged_edits_folders_or_updates(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    auto = write_project(tmp_path / "auto", {}, 'mode = "auto"\n', trusted_by=client)
    review = write_project(tmp_path / "review", {"a.py": A_PY})
    editor = client.editor
    first, second = await new_session(client, auto), await new_session(client, auto)
    assert first != second
    # "for this session" answers in the first session ...
    editor.answers[:] = ["allow_always", "reject_always"]
    api.extend(
        tool_turn(("write_file", {"path": "one.txt", "content": "1\n"}, "toolu_iso_1")),
        tool_turn(("write_file", {"path": "two.txt", "content": "1\n"}, "toolu_iso_2")),
        text_turn("first done"),
    )
    await prompt(client, first, "write")
    assert (auto / "one.txt").read_text() == "1\n"
    assert not (auto / "two.txt").exists()
    # ... are asked again in the second one, in the same folder, for the same calls
    asked = len(editor.permission_requests)
    editor.answers[:] = ["reject_once", "allow_once"]
    api.extend(
        tool_turn(("write_file", {"path": "one.txt", "content": "2\n"}, "toolu_iso_3")),
        tool_turn(("write_file", {"path": "two.txt", "content": "2\n"}, "toolu_iso_4")),
        text_turn("second done"),
    )
    await prompt(client, second, "write")
    questions = editor.permission_requests[asked:]
    assert [q["sessionId"] for q in questions] == [second, second]
    assert (auto / "one.txt").read_text() == "1\n"  # the first session's allow did not apply
    assert (auto / "two.txt").read_text() == "2\n"  # nor did its reject
    # each session's stream carries its own calls and text only
    assert set(editor.tool_calls(first)) >= {"toolu_iso_1", "toolu_iso_2"}
    assert not set(editor.tool_calls(first)) & {"toolu_iso_3", "toolu_iso_4"}
    assert not set(editor.tool_calls(second)) & {"toolu_iso_1", "toolu_iso_2"}
    assert "second done" not in editor.text(first)
    assert "first done" not in editor.text(second)

    # a session sees its own folder only, even though another session has the other one open
    owner = await new_session(client, review)
    editor.answers[:] = ["allow_once"] * 3
    reads = len(editor.reads)
    api.extend(
        tool_turn(("read_file", {"path": str(review / "a.py")}, "toolu_iso_cross")),
        text_turn("no"),
    )
    await prompt(client, second, "read the other project")
    editor.answers[:] = []
    assert editor.reads[reads:] == []
    crossed = request_with_tool_result(api, "toolu_iso_cross")
    assert crossed["is_error"] is True
    assert "return 1" not in str(crossed["content"])

    # staged edits belong to their session: another session can neither apply nor drop them
    other = await new_session(client, review)
    editor.answers[:] = ["keep"]
    api.extend(
        tool_turn(
            ("edit_file", {"path": "a.py", "old_string": "return 1", "new_string": "return 10"})
        ),
        text_turn("staged"),
    )
    await prompt(client, owner, "ten")
    for command in ("/accept", "/reject"):
        await prompt(client, other, command)
    assert editor.text(other).count("No edits are staged in this session.") == 2
    assert (review / "a.py").read_text() == A_PY
    await prompt(client, owner, "/accept")
    assert (review / "a.py").read_text() == A_PY.replace("return 1", "return 10")


async def test_a_question_shows_what_would_be_written_and_only_offered_answers_count(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    ask = json.dumps({"permissions": {"ask": ["write_file"]}})  # allowed once at most
    root = write_project(
        tmp_path / "proj",
        {"a.txt": "a\n", ".claude/settings.json": ask},
        'mode = "auto"\n',
        trusted_by=client,
    )
    editor = client.editor
    session = await new_session(client, root)
    ids = [f"toolu_offered_{n}" for n in range(3)]
    api.extend(
        *[
            tool_turn(("write_file", {"path": "a.txt", "content": f"{n}\n"}, id_))
            for n, id_ in enumerate(ids)
        ],
        text_turn("done"),
    )
    # an option this question did not offer, one of another question, then a real one
    editor.answers[:] = ["allow_always", "apply", "allow_once"]
    asked = len(editor.permission_requests)
    await prompt(client, session, "write")
    offered = [[o["optionId"] for o in q["options"]] for q in editor.permission_requests[asked:]]
    assert offered == [["allow_once", "reject_once"]] * 3  # nothing remembered in between
    questions = [q["toolCall"] for q in editor.permission_requests[asked:]]
    first = questions[0]
    assert first["toolCallId"] == ids[0]
    assert first["rawInput"]["content"] == "0\n"
    assert first["locations"][0]["path"] == str(root / "a.txt")
    (diff,) = [c for c in first["content"] if c["type"] == "diff"]
    assert (diff["path"], diff["oldText"], diff["newText"]) == (str(root / "a.txt"), "a\n", "0\n")
    for refused in ids[:2]:
        assert request_with_tool_result(api, refused)["is_error"] is True
    assert request_with_tool_result(api, ids[2]).get("is_error") is not True
    assert (root / "a.txt").read_text() == "2\n"
    written = [content for path, content in editor.writes if path == str(root / "a.txt")]
    assert written == ["2\n"]


async def test_cancelling_one_session_leaves_another_running_in_the_same_folder(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = write_project(tmp_path / "proj", {}, 'mode = "auto"\n', trusted_by=client)
    editor = client.editor
    kept, cancelled = await new_session(client, root), await new_session(client, root)
    api.extend(
        tool_turn(("write_file", {"path": "kept.txt", "content": "k\n"}, "toolu_kept")),
        tool_turn(("write_file", {"path": "dropped.txt", "content": "d\n"}, "toolu_dropped")),
        text_turn("kept done"),
    )
    asked = len(editor.permission_requests)
    editor.permission_gate = asyncio.Event()
    try:
        first = asyncio.ensure_future(prompt(client, kept, "write kept"))
        await wait_until(lambda: len(editor.permission_requests) > asked)
        second = asyncio.ensure_future(prompt(client, cancelled, "write dropped"))
        await wait_until(lambda: len(editor.permission_requests) > asked + 1)
        await client.notify("session/cancel", {"sessionId": cancelled})
        assert (await asyncio.wait_for(second, 5))["stopReason"] == "cancelled"
        assert not first.done()  # the other session's question is still open
        editor.answers[:] = ["allow_once", "allow_once"]
    finally:
        editor.permission_gate.set()
        editor.permission_gate = None
    assert (await asyncio.wait_for(first, 60))["stopReason"] == "end_turn"
    assert [q["sessionId"] for q in editor.permission_requests[asked:]] == [kept, cancelled]
    assert (root / "kept.txt").read_text() == "k\n"
    assert not (root / "dropped.txt").exists()
    assert "kept done" in editor.text(kept)
