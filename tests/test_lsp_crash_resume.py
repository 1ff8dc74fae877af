"""A server killed mid-run loses nothing that was complete; staged edits outlive restarts.

Real `agentls serve` processes over stdio: the first is killed with SIGKILL while the model
(scripted) is answering its third turn; a second server resumes the session. Then: staged
edits saved with a session are delivered by a later server, and a stale one is rebased or
reported, never forced.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from agentls.agent.persistence.transcript import read_records
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import (
    HELIX_LIKE,
    capabilities,
    command,
    editor_session,
    server_env,
    wait_for,
)

PROMPT = "Rewrite app.py to print new, then check it."


@asynccontextmanager
async def killable_server(root: Path, env: dict[str, str]) -> AsyncIterator[tuple[Any, int]]:
    """`agentls serve` whose pid we know: a shell writes its own pid, then execs the server."""
    pidfile = root.parent / "serve.pid"
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, dict(DEFAULT_CLIENT_FEATURES))
    script = 'echo $$ > "$1"; shift; exec "$@"'
    await client.start_io(
        "/bin/sh", "-c", script, "sh", str(pidfile), sys.executable, "-m", "agentls", "serve",
        env=env,
    )  # fmt: skip
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(HELIX_LIKE),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )
    await wait_for(lambda: pidfile.is_file() and pidfile.read_text().strip() != "")
    try:
        yield client, int(pidfile.read_text())
    finally:
        await client.stop()


async def test_a_run_killed_with_sigkill_resumes_from_its_last_complete_turn(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('old')\n")
    transcripts = tmp_path / "transcripts"
    env = server_env(api.base_url, transcripts)
    api.extend(
        tool_turn(("write_file", {"path": "app.py", "content": "print('new')\n"})),
        tool_turn(("read_file", {"path": "app.py"})),
        text_turn("never sent", hang=True),  # the third turn never completes
    )
    async with killable_server(root, env) as (client, pid):
        started = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="agentls.run", arguments=[{"prompt": PROMPT}])
        )
        session = started["session"] if isinstance(started, dict) else started.session
        # the hanging third request is in flight: two turns are complete
        await wait_for(lambda: len(api.message_requests) >= 3, 30)
        await asyncio.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        await wait_for(lambda: not _alive(pid))
    state_file = transcripts / f"{session}.state.json"
    assert json.loads(state_file.read_text())["status"] == "running"  # as the crash left it

    api.extend(text_turn("Picking up where we stopped."))
    async with editor_session(HELIX_LIKE, root, env) as editor:
        result = await command(
            editor, "agentls.run", {"prompt": "carry on", "session": session, "wait": True}
        )
        status = await command(editor, "agentls.status", {})
        accepted = await command(editor, "agentls.accept", {"session": session})

    assert result["status"] == "completed", result
    sent = api.message_requests[-1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert PROMPT in json.dumps(sent[0])  # the killed run's prompt is kept
    assert [_tool_names(m) for m in sent[1::2]] == [["write_file"], ["read_file"]]
    results = [b for m in sent[2::2] for b in m["content"] if b.get("type") == "tool_result"]
    assert len(results) == 2
    assert "print('new')" in json.dumps(results[1])
    last = json.dumps(sent[-1])
    assert "interrupted" in last
    assert str(root / "app.py") in last  # the model is told
    assert sent[-1]["content"][-1] == {"type": "text", "text": "carry on", **_cached(sent)}

    (entry,) = [s for s in status["sessions"] if s["id"] == session]
    assert entry["turns"] == 3
    assert entry["runs"] == 2
    assert accepted["applied"] is True
    assert accepted["files"] == [(root / "app.py").as_uri()]
    assert editor.text(root / "app.py") == "print('new')\n"  # the staged edit survived
    records = list(read_records(transcripts / f"{session}.jsonl"))
    resume = next(r for r in records if r["type"] == "resume")
    assert resume["interrupted"]
    assert resume["recovered_turns"] == 2
    assert resume["staged"] == [str(root / "app.py")]


async def test_staged_edits_saved_with_a_session_are_delivered_after_a_restart(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("one\ntwo\nthree\nfour\nfive\n")
    (root / "b.py").write_text("alpha\n")
    env = server_env(api.base_url, tmp_path / "transcripts")
    api.extend(
        tool_turn(
            ("edit_file", {"path": "a.py", "old_string": "one\n", "new_string": "ONE\n"}),
            ("edit_file", {"path": "b.py", "old_string": "alpha", "new_string": "ALPHA"}),
            ("write_file", {"path": "new.py", "content": "created\n"}),
        ),
        text_turn("Staged three changes."),
    )
    async with editor_session(HELIX_LIKE, root, env) as editor:  # no preview: edits stay staged
        first = await command(editor, "agentls.run", {"prompt": "change them", "wait": True})
    assert first["edit"]["applied"] is None
    assert len(first["edit"]["files"]) == 3
    session = first["session"]

    # the user edits a.py on a line the agent did not touch, and b.py on the agent's line
    (root / "a.py").write_text("one\ntwo\nthree\nfour\nFIVE\n")
    (root / "b.py").write_text("beta\n")
    async with editor_session(HELIX_LIKE, root, env) as editor:  # a new server process
        listed = await command(editor, "agentls.sessions", {})
        accepted = await command(editor, "agentls.accept", {"session": session})
        status = await command(editor, "agentls.status", {})

    (saved,) = listed["sessions"]
    assert sorted(Path(p).name for p in saved["staged"]) == ["a.py", "b.py", "new.py"]
    assert accepted["applied"] is True
    assert editor.text(root / "a.py") == "ONE\ntwo\nthree\nfour\nFIVE\n"  # rebased
    assert accepted["conflicts"] == [(root / "b.py").as_uri()]  # never forced
    assert (root / "b.py").read_text() == "beta\n"
    assert not (root / "new.py").exists()  # this client cannot create files: it stays staged
    (entry,) = [s for s in status["sessions"] if s["id"] == session]
    assert sorted(Path(p).name for p in entry["staged"]) == ["b.py", "new.py"]


def _cached(sent: list[dict[str, Any]]) -> dict[str, Any]:
    return {"cache_control": sent[-1]["content"][-1]["cache_control"]}


def _tool_names(message: dict[str, Any]) -> list[str]:
    return [b["name"] for b in message["content"] if b.get("type") == "tool_use"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (killed, not yet reaped) counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
