"""ACP session lifecycle, config options and session updates, with both SDK clients.

What the reference adapter offers and Zed users expect: a session saved at `session/new`
(a client may prompt it from another process), `session/list` with titles, `resume`
without replay, `fork`, `close`, `delete`, all advertised; the model and the permission
mode as config options; `usage_update` during a run, `session_info_update`, custom commands
and skills in `available_commands_update`; an `authMethods` entry and `auth_required` when
no key is set.
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
    AcpError,
    AnyClient,
    FakeEditor,
    acp_client,
    agent_env,
    initialize,
    initialized_client,
    new_session,
    prompt,
    write_project,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODELS = ["claude-endpoint-large", "claude-endpoint-small"]


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([], models=MODELS) as server:
        yield server


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def client(
    request: pytest.FixtureRequest, api: ScriptedMessagesServer, home: Path
) -> AsyncIterator[AnyClient]:
    async with initialized_client(request.param, api.base_url, home) as found:
        yield found


def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "proj", {"a.py": "x = 1\n"})


def lifecycle(root: Path, session: str) -> dict[str, Any]:
    return {"sessionId": session, "cwd": str(root), "mcpServers": []}


async def test_initialize_advertises_the_session_methods_and_an_auth_method(
    client: AnyClient,
) -> None:
    result = client.initialized  # type: ignore[union-attr]
    caps = result["agentCapabilities"]["sessionCapabilities"]
    assert set(caps) >= {"list", "resume", "fork", "close", "delete"}
    methods = {m["id"]: m for m in result["authMethods"]}
    assert methods["anthropic-api-key"]["vars"][0]["name"] == "ANTHROPIC_API_KEY"
    assert methods["check-credentials"]["args"] == ["acp", "--login"]


@pytest.mark.parametrize("kind", CLIENTS)
async def test_a_new_session_is_saved_and_prompted_from_another_process(
    kind: str, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    env = agent_env(api.base_url, tmp_path / "home")
    async with acp_client(kind, FakeEditor(), env, root) as first:
        await initialize(first)
        session = await new_session(first, root)
    listed_before_a_prompt = None
    editor = FakeEditor()
    async with acp_client(kind, editor, env, root) as second:  # a new agent process
        await initialize(second)
        listed_before_a_prompt = await second.request("session/list", {"cwd": str(root)})
        await second.request("session/resume", lifecycle(root, session))
        api.extend(text_turn("resumed fine"))
        result = await prompt(second, session, "hello from the second process")
    assert [s["sessionId"] for s in listed_before_a_prompt["sessions"]] == [session]
    assert result["stopReason"] == "end_turn"
    assert editor.text(session) == "resumed fine"


async def test_list_resume_fork_close_delete(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    editor = client.editor
    session = await new_session(client, root)
    api.extend(text_turn("one"))
    await prompt(client, session, "remember   the\nnumber one")
    (info,) = editor.session_updates(session, "session_info_update")
    assert info["title"] == "remember the number one"
    listed = await client.request("session/list", {"cwd": str(root)})
    (entry,) = listed["sessions"]
    assert (entry["sessionId"], entry["title"]) == (session, "remember the number one")
    assert entry["updatedAt"]

    # close: out of memory, still saved; prompting it now is an error
    await client.request("session/close", {"sessionId": session})
    with pytest.raises(AcpError) as closed:
        await prompt(client, session, "still there?")
    assert closed.value.code == -32602
    # resume: no history replayed, the conversation continues
    before = len(editor.session_updates(session))
    resumed = await client.request("session/resume", lifecycle(root, session))
    assert resumed["modes"]["currentModeId"] == "default"
    replayed = [u["sessionUpdate"] for u in editor.session_updates(session)[before:]]
    assert "user_message_chunk" not in replayed
    assert "agent_message_chunk" not in replayed
    api.extend(text_turn("it was one"))
    sent_from = len(api.message_requests)
    await prompt(client, session, "which number?")
    assert "remember" in str(api.message_requests[sent_from].messages[0])

    # fork: a new id with the history; the original is unchanged
    forked = await client.request("session/fork", lifecycle(root, session))
    copy = forked["sessionId"]
    assert copy != session
    api.extend(text_turn("forked"))
    sent_from = len(api.message_requests)
    await prompt(client, copy, "in the fork")
    messages = str(api.message_requests[sent_from].messages)
    assert "remember" in messages
    assert "which number?" in messages
    listed = await client.request("session/list", {"cwd": str(root)})
    assert {s["sessionId"] for s in listed["sessions"]} == {session, copy}

    # delete: gone from the list, cannot be resumed
    await client.request("session/delete", {"sessionId": copy})
    listed = await client.request("session/list", {"cwd": str(root)})
    assert [s["sessionId"] for s in listed["sessions"]] == [session]
    with pytest.raises(AcpError) as gone:
        await client.request("session/resume", lifecycle(root, copy))
    assert "no saved session" in gone.value.message
    with pytest.raises(AcpError):
        await client.request("session/delete", {"sessionId": copy})


async def test_config_options_offer_the_endpoints_models_and_apply_to_the_next_turn(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    created = await client.request("session/new", {"cwd": str(root), "mcpServers": []})
    session = created["sessionId"]
    options = {o["id"]: o for o in created["configOptions"]}
    model_ids = [o["value"] for o in options["model"]["options"]]
    assert set(MODELS) <= set(model_ids)
    assert model_ids[0] == options["model"]["currentValue"]  # the configured one first
    assert "dontAsk" in [o["value"] for o in options["mode"]["options"]]
    assert "dontAsk" in [m["id"] for m in created["modes"]["availableModes"]]

    answer = await client.request(
        "session/set_config_option",
        {"sessionId": session, "configId": "model", "value": "claude-endpoint-small"},
    )
    chosen = {o["id"]: o["currentValue"] for o in answer["configOptions"]}
    assert chosen["model"] == "claude-endpoint-small"
    with pytest.raises(AcpError) as unknown:
        await client.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "model", "value": "no-such-model"},
        )
    assert "claude-endpoint-large" in unknown.value.message
    await client.request(
        "session/set_config_option",
        {"sessionId": session, "configId": "mode", "value": "acceptEdits"},
    )
    (mode,) = client.editor.session_updates(session, "current_mode_update")
    assert mode["currentModeId"] == "acceptEdits"

    api.extend(
        tool_turn(("edit_file", {"path": "a.py", "old_string": "1", "new_string": "2"})),
        text_turn("edited"),
    )
    sent_from = len(api.message_requests)
    asked = len(client.editor.permission_requests)
    await prompt(client, session, "edit it")
    assert {r.model for r in api.message_requests[sent_from:]} == {"claude-endpoint-small"}
    assert len(client.editor.permission_requests) == asked  # acceptEdits: nothing asked
    assert (root / "a.py").read_text() == "x = 2\n"


async def test_usage_is_updated_during_the_run(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    session = await new_session(client, root)
    api.extend(
        tool_turn(("read_file", {"path": "a.py"})),
        text_turn("x is one"),
    )
    await prompt(client, session, "what is x?")
    updates = [u["sessionUpdate"] for u in client.editor.session_updates(session)]
    usage = client.editor.session_updates(session, "usage_update")
    assert len(usage) == 2  # one per model response
    assert updates.index("usage_update") < updates.index("tool_call")  # before the run ended
    assert all(u["used"] > 0 and u["size"] >= 100_000 for u in usage)


async def test_custom_commands_and_skills_are_offered_and_run(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    commands = root / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "explain.md").write_text(
        "---\ndescription: Explain a file\nargument-hint: FILE\n---\nExplain $ARGUMENTS simply.\n"
    )
    skill = root / ".claude" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes\n---\nList the changes.\n"
    )
    session = await new_session(client, root)
    api.extend(text_turn("explained"), text_turn("noted"))
    sent_from = len(api.message_requests)
    await prompt(client, session, "/explain a.py")
    (offered,) = client.editor.session_updates(session, "available_commands_update")
    by_name = {c["name"]: c for c in offered["availableCommands"]}
    assert {"accept", "reject", "explain", "release-notes"} <= set(by_name)
    assert by_name["explain"]["input"] == {"hint": "FILE"}
    assert "Explain a.py simply." in str(api.message_requests[sent_from].messages[-1])
    await prompt(client, session, "/release-notes for 1.2")
    last = str(api.message_requests[-1].messages[-1])
    assert "release-notes" in last
    assert "for 1.2" in last


async def test_keep_staged_completes_the_review_and_says_how_to_apply(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    session = await new_session(client, root)
    api.extend(tool_turn(("write_file", {"path": "new.txt", "content": "hi\n"})), text_turn("ok"))
    client.editor.answers[:] = ["keep"]
    reads = len(client.editor.reads)
    await prompt(client, session, "write a new file")
    assert client.editor.reads[reads:] == []  # a file that does not exist is never read
    review = client.editor.permission_requests[-1]["toolCall"]["toolCallId"]
    call = client.editor.tool_calls(session)[review]
    assert call["status"] == "completed"
    said = " ".join(c["content"]["text"] for c in call["content"] if c["type"] == "content")
    assert "/accept" in said
    assert not (root / "new.txt").exists()


@pytest.mark.parametrize("kind", CLIENTS)
async def test_without_a_key_the_prompt_asks_for_authentication(kind: str, tmp_path: Path) -> None:
    root = project(tmp_path)
    env = agent_env(None, tmp_path / "home")
    async with acp_client(kind, FakeEditor(), env, root) as client:
        await initialize(client)
        session = await new_session(client, root)
        with pytest.raises(AcpError) as error:
            await prompt(client, session, "hello")
        assert error.value.code == -32000  # auth_required: the client offers authMethods
        assert "ANTHROPIC_API_KEY" in str(error.value.data)
        with pytest.raises(AcpError) as auth:
            await client.request("authenticate", {"methodId": "anthropic-api-key"})
        assert auth.value.code == -32000
        assert client.agent_alive


async def test_an_approved_plan_ends_plan_mode_with_a_mode_update(
    client: AnyClient, api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    session = await new_session(client, root)
    await client.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
    plan = "## Plan\n1. `a.py`: set x to 2"
    api.extend(
        tool_turn(("exit_plan_mode", {"plan": plan})),
        tool_turn(("edit_file", {"path": "a.py", "old_string": "1", "new_string": "2"})),
        text_turn("done"),
    )
    client.editor.answers[:] = ["auto"]  # approve with auto-accepted edits
    asked = len(client.editor.permission_requests)
    result = await prompt(client, session, "plan, then do it")
    assert result["stopReason"] == "end_turn"
    (question,) = client.editor.permission_requests[asked:]  # the edit asked nothing
    assert [o["optionId"] for o in question["options"]] == ["review", "auto", "keep_planning"]
    assert question["toolCall"]["content"][0]["content"]["text"] == plan
    modes = client.editor.session_updates(session, "current_mode_update")
    assert modes[-1]["currentModeId"] == "acceptEdits"  # plan mode ended
    assert (root / "a.py").read_text() == "x = 2\n"
