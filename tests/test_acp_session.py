"""`agentls acp` end to end, driven by both official SDK clients (Python and TypeScript).

One agent process per client for the whole module (as an editor keeps one), each test in a
folder and session of its own. A scripted model (the real `anthropic` SDK against
`ScriptedMessagesServer`) reads, searches and edits; the tests check what the client sees:
the updates (tool calls with kind, title, absolute locations, raw input; diffs against the
real files), the permission requests and their answers, the files, the stop reasons.
"""

from __future__ import annotations

import base64
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
    initialized_client,
    new_session,
    prompt,
    request_with_tool_result,
    write_project,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

A_PY = "def alpha():\n    return 1\n"
B_PY = "def beta():\n    return 2\n"
WRITE_TOOLS = {"edit_file", "write_file", "rename_file", "delete_file", "run_command"}


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


def project(tmp_path: Path, settings: str = "", trusted_by: AnyClient | None = None) -> Path:
    files = {"a.py": A_PY, "b.py": B_PY}
    return write_project(tmp_path / "proj", files, settings, trusted_by=trusted_by)


def diffs_of(call: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in call.get("content", []) if c["type"] == "diff"]


def texts_of(call: dict[str, Any]) -> str:
    return "\n".join(
        c["content"]["text"] for c in call.get("content", []) if c["type"] == "content"
    )


async def test_initialize_advertises_what_agentls_does(client: AnyClient) -> None:
    result = client.initialized  # type: ignore[union-attr]
    assert result["protocolVersion"] == 1
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    assert caps["mcpCapabilities"]["http"] is True
    assert caps["mcpCapabilities"]["sse"] is True
    assert result["agentInfo"]["name"] == "agentls"


async def test_a_prompt_reads_searches_and_edits_two_files_reviewed_at_the_end(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    editor = client.editor
    api.extend(
        tool_turn(("read_file", {"path": "a.py"}), ("grep", {"pattern": "def "})),
        tool_turn(
            ("edit_file", {"path": "a.py", "old_string": "return 1", "new_string": "return 10"}),
            ("edit_file", {"path": "b.py", "old_string": "return 2", "new_string": "return 20"}),
        ),
        text_turn("Both functions now return ten times more."),
    )
    editor.answers[:] = ["apply"]
    session = await new_session(client, root)
    result = await prompt(client, session, "multiply the results by ten")
    assert result["stopReason"] == "end_turn"
    assert "ten times more" in editor.text(session)
    calls = list(editor.tool_calls(session).values())
    assert [c["kind"] for c in calls[:4]] == ["read", "search", "edit", "edit"]
    read, search, edit_a, edit_b = calls[:4]
    assert read["locations"][0]["path"] == str(root / "a.py")
    assert read["rawInput"] == {"path": "a.py"}
    assert read["title"] == "Reading a.py"
    assert read["status"] == "completed"
    assert "alpha" in texts_of(search)
    assert "beta" in texts_of(search)
    # each edit's diff: the whole file before and after that call
    (diff_a,) = diffs_of(edit_a)
    assert diff_a["path"] == str(root / "a.py")
    assert (diff_a["oldText"], diff_a["newText"]) == (A_PY, A_PY.replace("1", "10"))
    (diff_b,) = diffs_of(edit_b)
    assert (diff_b["oldText"], diff_b["newText"]) == (B_PY, B_PY.replace("2", "20"))
    assert edit_a["locations"] == [{"path": str(root / "a.py"), "line": 2}]
    # review delivery: one question showing both diffs, answered "Apply"
    review = editor.permission_requests[-1]
    assert [o["optionId"] for o in review["options"]] == ["apply", "keep", "discard"]
    review_call = editor.tool_calls(session)[review["toolCall"]["toolCallId"]]
    assert [d["newText"] for d in diffs_of(review_call)] == [diff_a["newText"], diff_b["newText"]]
    # written through the client (fs/write_text_file); the files are what the diffs said
    written = {path for path, _ in editor.writes}
    assert {str(root / "a.py"), str(root / "b.py")} <= written
    assert (root / "a.py").read_text() == diff_a["newText"]
    assert (root / "b.py").read_text() == diff_b["newText"]


async def test_auto_delivery_asks_per_edit_allow_once_writes_reject_does_not(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path, 'mode = "auto"\n', trusted_by=client)
    editor = client.editor
    api.extend(
        tool_turn(("edit_file", {"path": "a.py", "old_string": "1", "new_string": "100"})),
        tool_turn(("edit_file", {"path": "b.py", "old_string": "2", "new_string": "200"})),
        text_turn("done"),
    )
    editor.answers[:] = ["allow_once", "reject_once"]
    asked_before = len(editor.permission_requests)
    session = await new_session(client, root)
    result = await prompt(client, session, "edit both")
    assert result["stopReason"] == "end_turn"
    first, second = editor.permission_requests[asked_before:]
    calls = editor.tool_calls(session)
    ids = list(calls)
    for request, call_id, path in ((first, ids[0], "a.py"), (second, ids[1], "b.py")):
        tool_call = request["toolCall"]
        assert tool_call["toolCallId"] == call_id  # the call the client already shows
        assert tool_call["kind"] == "edit"
        assert tool_call["rawInput"]["path"] == path
        assert tool_call["locations"] == [{"path": str(root / path)}]
        options = {o["optionId"]: o["kind"] for o in request["options"]}
        assert options == {
            "allow_once": "allow_once",
            "allow_always": "allow_always",
            "reject_once": "reject_once",
            "reject_always": "reject_always",
        }
        (preview,) = diffs_of(tool_call)
        assert preview["path"] == str(root / path)
    assert (root / "a.py").read_text() == A_PY.replace("1", "100")
    assert (root / "b.py").read_text() == B_PY  # rejected: untouched
    assert calls[ids[0]]["status"] == "completed"
    assert calls[ids[1]]["status"] == "failed"
    assert "the user denied this call" in texts_of(calls[ids[1]])


async def test_unsaved_text_read_through_the_client_is_what_the_agent_sees(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    editor = client.editor
    unsaved = "def alpha():\n    return 'unsaved'\n"
    editor.buffers[str(root / "a.py")] = unsaved
    api.extend(
        tool_turn(("read_file", {"path": "a.py"}, "toolu_read_unsaved_" + client.kind)),
        tool_turn(
            ("edit_file", {"path": "a.py", "old_string": "'unsaved'", "new_string": "'kept'"})
        ),
        text_turn("read it"),
    )
    editor.answers[:] = ["apply"]
    session = await new_session(client, root)
    await prompt(client, session, "what does alpha return?")
    assert str(root / "a.py") in editor.reads
    result = request_with_tool_result(api, "toolu_read_unsaved_" + client.kind)
    assert "return 'unsaved'" in str(result["content"])
    assert "unsaved editor buffer" in str(result["content"])
    # the edit was made against the unsaved text and written into the buffer
    assert editor.buffers[str(root / "a.py")] == "def alpha():\n    return 'kept'\n"


async def test_set_mode_plan_offers_no_write_tools(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    session = await new_session(client, root)
    api.extend(
        tool_turn(("write_file", {"path": "new.txt", "content": "x"})),
        text_turn("I would create new.txt."),
    )
    await client.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
    before = len(api.message_requests)
    await prompt(client, session, "plan it")
    offered = set(api.message_requests[before].tool_names)
    assert offered
    assert not offered & WRITE_TOOLS
    assert "read_file" in offered
    assert not (root / "new.txt").exists()
    # back to default: the write tools are offered again
    api.extend(text_turn("ok"))
    await client.request("session/set_mode", {"sessionId": session, "modeId": "default"})
    before = len(api.message_requests)
    await prompt(client, session, "now you may")
    assert set(api.message_requests[before].tool_names) >= WRITE_TOOLS


async def test_modes_offered_and_bypass_refused_without_the_users_opt_in(
    client: AnyClient, tmp_path: Path
) -> None:
    root = project(tmp_path)
    result = await client.request("session/new", {"cwd": str(root), "mcpServers": []})
    modes = result["modes"]
    assert modes["currentModeId"] == "default"
    assert [m["id"] for m in modes["availableModes"]] == [
        "default",
        "acceptEdits",
        "plan",
        "dontAsk",
    ]
    with pytest.raises(AcpError) as refused:
        await client.request(
            "session/set_mode", {"sessionId": result["sessionId"], "modeId": "bypassPermissions"}
        )
    assert refused.value.code == -32602
    assert "allowBypassPermissions" in refused.value.message


async def test_images_links_and_embedded_resources_reach_the_model(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    session = await new_session(client, root)
    api.extend(text_turn("seen"))
    pixel = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    before = len(api.message_requests)
    await prompt(
        client,
        session,
        "look at these",
        {"type": "image", "mimeType": "image/png", "data": pixel},
        {"type": "resource_link", "uri": (root / "b.py").as_uri(), "name": "b.py"},
        {
            "type": "resource",
            "resource": {"uri": (root / "notes.md").as_uri(), "text": "remember the milk"},
        },
    )
    (last,) = [m for m in api.message_requests[before].messages if m["role"] == "user"][-1:]
    blocks = last["content"]
    text = "\n".join(b.get("text", "") for b in blocks if b["type"] == "text")
    assert "look at these" in text
    assert str(root / "b.py") in text  # a link is named; the agent reads it with its tools
    assert "remember the milk" in text
    assert (root / "notes.md").as_uri() in text
    (image,) = [b for b in blocks if b["type"] == "image"]
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": pixel}


async def test_stop_reasons(client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path) -> None:
    root = project(tmp_path, "maxTurns = 1\nmaxContinuations = 0\n")
    session = await new_session(client, root)
    api.extend(text_turn("cut", stop_reason="max_tokens"))
    assert (await prompt(client, session, "long"))["stopReason"] == "max_tokens"
    api.extend(text_turn("no", stop_reason="refusal"))
    assert (await prompt(client, session, "bad"))["stopReason"] == "refusal"
    api.extend(tool_turn(("read_file", {"path": "a.py"})))
    assert (await prompt(client, session, "loop"))["stopReason"] == "max_turn_requests"
    api.extend(text_turn("fine"))
    response = await prompt(client, session, "ok")
    assert response["stopReason"] == "end_turn"
    assert response["usage"]["outputTokens"] > 0
