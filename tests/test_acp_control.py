"""`agentls acp`: MCP servers from `session/new`, cancel, client terminals, `session/load`
after a restart and `session/list` — with both official SDK clients.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.acp_support import (
    CLIENTS,
    AcpError,
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
from tests.mcp_servers.support import SERVER, HttpDemoServer

pytestmark = pytest.mark.asyncio(loop_scope="module")

CANCEL_BOUND = 5.0
"""The prompt must answer long before the 30 s the tool would take (the 0.5 s target is
measured in bench/, not asserted here)."""


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def client(
    request: pytest.FixtureRequest, api: ScriptedMessagesServer, home: Path
) -> AsyncIterator[AnyClient]:
    async with acp_client(
        request.param, FakeEditor(), agent_env(api.base_url, home), home
    ) as found:
        await initialize(found, terminal=True)
        yield found


def demo_server(name: str = "demo") -> dict[str, Any]:
    """ACP's stdio entry for the demo MCP server; `env` is ACP's list of name/value pairs."""
    return {
        "name": name,
        "command": sys.executable,
        "args": [SERVER, "--name", name],
        "env": [{"name": "DEMO_MARKER", "value": "from-the-client"}],
    }


NO_DEFERRAL = '[toolSearch]\nmode = "never"\n'
"""Every MCP tool in the tools array (the demo servers together pass the deferral limit)."""


def project(tmp_path: Path, settings: str = "", trusted_by: AnyClient | None = None) -> Path:
    return write_project(tmp_path / "proj", {"a.py": "x = 1\n"}, settings, trusted_by=trusted_by)


async def test_mcp_servers_from_session_new_start_without_asking_and_serve_tools(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path, NO_DEFERRAL)
    editor = client.editor
    asked = len(editor.permission_requests)
    with HttpDemoServer("web") as web:
        servers = [
            demo_server(),
            {
                "type": "http",
                "name": "web",
                "url": web.url,
                "headers": [{"name": "X", "value": "1"}],
            },
        ]
        session = await new_session(client, root, servers)
        stdio_id, http_id = f"toolu_echo_stdio_{client.kind}", f"toolu_echo_http_{client.kind}"
        api.extend(
            tool_turn(
                ("mcp__demo__echo", {"text": "hi", "times": 2}, stdio_id),
                ("mcp__web__echo", {"text": "yo"}, http_id),
            ),
            text_turn("echoed"),
        )
        result = await prompt(client, session, "echo")
    assert result["stopReason"] == "end_turn"
    assert request_with_tool_result(api, stdio_id)["content"] == "hihi"
    assert request_with_tool_result(api, http_id)["content"] == "yo"
    assert len(editor.permission_requests) == asked  # the user configured them: no prompt
    calls = editor.tool_calls(session)
    assert calls[stdio_id]["status"] == "completed"
    assert calls[stdio_id]["kind"] == "read"


async def test_cancel_mid_tool_answers_the_prompt_and_every_tool_use(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path, NO_DEFERRAL)
    editor = client.editor
    session = await new_session(client, root, [demo_server()])
    nap = f"toolu_nap_{client.kind}"
    api.extend(tool_turn(("mcp__demo__nap", {"seconds": 30}, nap)))
    running = asyncio.ensure_future(prompt(client, session, "take a nap"))
    await wait_until(lambda: editor.tool_calls(session).get(nap, {}).get("status") == "in_progress")
    await asyncio.sleep(0.5)  # the server is napping
    started = time.monotonic()
    await client.notify("session/cancel", {"sessionId": session})
    result = await asyncio.wait_for(running, CANCEL_BOUND)
    assert time.monotonic() - started < CANCEL_BOUND
    assert result["stopReason"] == "cancelled"
    assert editor.tool_calls(session)[nap]["status"] == "failed"
    # the session goes on, and the model got a result for the cancelled tool_use
    api.extend(text_turn("awake"))
    assert (await prompt(client, session, "again"))["stopReason"] == "end_turn"
    answered = request_with_tool_result(api, nap)
    assert answered["is_error"] is True
    assert "cancel" in str(answered["content"]).lower()


async def test_cancel_while_a_permission_request_is_open_runs_nothing(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path, 'mode = "auto"\n', trusted_by=client)
    editor = client.editor
    session = await new_session(client, root)
    write = f"toolu_write_{client.kind}"
    api.extend(tool_turn(("write_file", {"path": "late.txt", "content": "no\n"}, write)))
    asked = len(editor.permission_requests)
    editor.permission_gate = asyncio.Event()
    try:
        running = asyncio.ensure_future(prompt(client, session, "write it"))
        await wait_until(lambda: len(editor.permission_requests) > asked)
        await client.notify("session/cancel", {"sessionId": session})
        result = await asyncio.wait_for(running, CANCEL_BOUND)
        assert result["stopReason"] == "cancelled"  # with the question still open
        editor.answers[:] = ["allow_once"]  # a late "allow" …
    finally:
        editor.permission_gate.set()
        editor.permission_gate = None
    await asyncio.sleep(0.5)
    assert not (root / "late.txt").exists()  # … runs nothing
    api.extend(text_turn("ok"))
    await prompt(client, session, "go on")
    assert request_with_tool_result(api, write)["is_error"] is True


async def test_cancel_while_the_review_question_is_open_writes_nothing(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """Review delivery asks once, after the model is done: a cancel then must still end the
    prompt at once, and a late "Apply" must write nothing (the edits stay staged)."""
    root = project(tmp_path)
    editor = client.editor
    session = await new_session(client, root)
    api.extend(
        tool_turn(("write_file", {"path": "late.txt", "content": "no\n"})), text_turn("staged")
    )
    asked = len(editor.permission_requests)
    editor.permission_gate = asyncio.Event()
    try:
        running = asyncio.ensure_future(prompt(client, session, "write it"))
        await wait_until(lambda: len(editor.permission_requests) > asked)
        (review,) = editor.permission_requests[asked:]
        assert review["toolCall"]["title"].startswith("Apply the changes")
        await client.notify("session/cancel", {"sessionId": session})
        result = await asyncio.wait_for(running, CANCEL_BOUND)
        assert result["stopReason"] == "cancelled"  # with the question still open
        editor.answers[:] = ["apply"]  # a late "Apply" …
    finally:
        editor.permission_gate.set()
        editor.permission_gate = None
    await asyncio.sleep(0.5)
    assert not (root / "late.txt").exists()  # … writes nothing
    await prompt(client, session, "/reject")
    assert "Discarded the staged edits to 1 file(s)." in editor.text(session)


async def test_commands_in_the_real_tree_run_in_the_client_terminal(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path, '[runCommand]\nwhere = "workspace"\n', trusted_by=client)
    editor = client.editor
    session = await new_session(client, root)
    run = f"toolu_terminal_{client.kind}"
    api.extend(
        tool_turn(("run_command", {"command": "echo hello-$((6*7)); pwd"}, run)),
        text_turn("ran"),
    )
    editor.answers[:] = ["allow_once"]  # the real tree: every command asks
    created = len([m for m, _ in editor.terminal_requests if m == "terminal/create"])
    await prompt(client, session, "run it")
    creates = [p for m, p in editor.terminal_requests if m == "terminal/create"][created:]
    (create,) = creates
    assert create["command"].endswith(("bash", "sh"))
    assert create["args"] == ["-c", "echo hello-$((6*7)); pwd"]
    assert create["cwd"] == str(root)
    call = editor.tool_calls(session)[run]
    assert any(c["type"] == "terminal" for c in call["content"])
    assert call["status"] == "completed"
    output = str(request_with_tool_result(api, run)["content"])
    assert "hello-42" in output
    assert str(root) in output
    assert "editor's terminal" in output
    released = [p for m, p in editor.terminal_requests if m == "terminal/release"]
    assert any(p["terminalId"] for p in released)


async def test_sandboxed_commands_never_run_in_the_client_terminal(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """The client's terminal is outside the sandbox: a command that should run sandboxed
    (the default) must not end up there, even when the client offers terminals."""
    root = project(tmp_path)
    editor = client.editor
    session = await new_session(client, root)
    api.extend(tool_turn(("run_command", {"command": "echo boxed"})), text_turn("ran"))
    editor.answers[:] = ["allow_once"]
    before = len(editor.terminal_requests)
    await prompt(client, session, "run it")
    assert editor.terminal_requests[before:] == []


async def test_session_list_names_saved_sessions_of_a_folder(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    session = await new_session(client, root)
    api.extend(text_turn("hello"))
    await prompt(client, session, "say hello to the list")
    listed = await client.request("session/list", {"cwd": str(root)})
    (entry,) = listed["sessions"]
    assert entry["sessionId"] == session
    assert entry["cwd"] == str(root)
    assert entry["title"] == "say hello to the list"


@pytest.mark.parametrize("kind", CLIENTS)
async def test_load_session_after_a_restart_replays_its_history(
    kind: str, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    home = tmp_path / "home"
    env = agent_env(api.base_url, home)
    read = f"toolu_replay_{kind}"
    api.extend(tool_turn(("read_file", {"path": "a.py"}, read)), text_turn("x is one"))
    async with acp_client(kind, FakeEditor(), env, root) as first:
        await initialize(first)
        session = await new_session(first, root)
        await prompt(first, session, "what is x?")
    editor = FakeEditor()
    async with acp_client(kind, editor, env, root) as second:  # a new agent process
        await initialize(second)
        other = write_project(tmp_path / "other", {})
        with pytest.raises(AcpError) as elsewhere:
            await second.request(
                "session/load", {"sessionId": session, "cwd": str(other), "mcpServers": []}
            )
        assert elsewhere.value.code == -32602
        assert str(root) in elsewhere.value.message
        loaded = await second.request(
            "session/load", {"sessionId": session, "cwd": str(root), "mcpServers": []}
        )
        assert loaded["modes"]["currentModeId"] == "default"
        assert editor.text(session, "user_message_chunk") == "what is x?"
        assert editor.text(session) == "x is one"
        call = editor.tool_calls(session)[read]
        assert call["kind"] == "read"
        assert call["title"] == "Reading a.py"
        assert call["locations"][0]["path"] == str(root / "a.py")
        assert call["status"] == "completed"
        # and it continues with its history
        api.extend(text_turn("still one"))
        before = len(api.message_requests)
        await prompt(second, session, "and now?")
        sent = api.message_requests[before].messages
        assert "what is x?" in str(sent[0])
        assert "x is one" in str(sent)


async def test_without_client_fs_edits_go_to_disk_and_accept_edits_skips_the_review(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    editor = FakeEditor()
    editor.buffers[str(root / "a.py")] = "never asked for\n"
    env = agent_env(api.base_url, tmp_path / "home")
    async with acp_client("python", editor, env, root) as client:
        await initialize(client, fs=False)
        session = await new_session(client, root)
        await client.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})
        api.extend(
            tool_turn(("read_file", {"path": "a.py"})),
            tool_turn(
                ("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})
            ),
            text_turn("done"),
        )
        result = await prompt(client, session, "bump x")
    assert result["stopReason"] == "end_turn"
    assert (root / "a.py").read_text() == "x = 2\n"  # written to disk …
    assert editor.reads == []
    assert editor.writes == []  # … without the client's fs
    assert editor.permission_requests == []  # acceptEdits: no review question


async def test_files_changed_on_disk_reach_the_symbol_index(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """ACP clients report no disk changes: the host polls (AGENTLS_DISK_POLL_SECONDS)."""
    root = project(tmp_path)
    env = agent_env(api.base_url, tmp_path / "home", AGENTLS_DISK_POLL_SECONDS="0.2")
    async with acp_client("python", FakeEditor(), env, root) as client:
        await initialize(client)
        session = await new_session(client, root)
        first, second = "toolu_index_before", "toolu_index_after"
        api.extend(tool_turn(("search_symbols", {"query": "zebra_unique"}, first)), text_turn("-"))
        await prompt(client, session, "find it")
        assert "late.py" not in str(request_with_tool_result(api, first)["content"])
        (root / "late.py").write_text("def zebra_unique():\n    pass\n")  # a git checkout, say
        await asyncio.sleep(1.5)
        api.extend(tool_turn(("search_symbols", {"query": "zebra_unique"}, second)), text_turn("+"))
        await prompt(client, session, "find it now")
    assert "late.py" in str(request_with_tool_result(api, second)["content"])


async def test_refused_commands_never_reach_the_client_terminal(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """The client's terminal runs outside our sandbox, so the same permission rules must
    hold before it is used: a command the user rejects and one a deny rule names are never
    created there, and one that names a secret file is asked about first (an allow rule
    cannot skip that question)."""
    rules = json.dumps(
        {"permissions": {"deny": ["run_command(curl:*)"], "allow": ["run_command(cat:*)"]}}
    )
    root = write_project(
        tmp_path / "proj",
        {".env": "TOKEN=secret\n", ".claude/settings.json": rules},
        '[runCommand]\nwhere = "workspace"\n',
        trusted_by=client,
    )
    editor = client.editor
    session = await new_session(client, root)
    ids = [f"toolu_refused_cmd_{n}_{client.kind}" for n in range(3)]
    api.extend(
        tool_turn(("run_command", {"command": "touch rejected.txt"}, ids[0])),
        tool_turn(("run_command", {"command": "curl http://127.0.0.1:9/"}, ids[1])),
        tool_turn(("run_command", {"command": "cat .env"}, ids[2])),
        text_turn("done"),
    )
    editor.answers[:] = ["reject_once", "reject_once"]
    before, asked = len(editor.terminal_requests), len(editor.permission_requests)
    await prompt(client, session, "run them")
    assert editor.terminal_requests[before:] == []
    questions = [q["toolCall"] for q in editor.permission_requests[asked:]]
    assert [q["toolCallId"] for q in questions] == [ids[0], ids[2]]  # the deny rule: no question
    assert ".env" in questions[1]["title"]
    assert not (root / "rejected.txt").exists()
    for tool_use_id in ids:
        result = request_with_tool_result(api, tool_use_id)
        assert result["is_error"] is True
        assert "TOKEN" not in str(result["content"])
