"""What a small local model needs from the loop (issue 29): calls written as text are run,
a reply that did nothing fails, repeated failing calls are stopped, edits need a read,
one deny removes one tool, the prompt names only offered tools, the compact profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.registry import PoolFilter, ToolPool
from agentls.agent.framework.tool_profile import COMPACT_TOOLS
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.agent.run.conversation import SessionConfig
from agentls.agent.run.listing_turn import wrote_cleanly
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.pipeline import ToolCall, ToolCallResult
from agentls.agent.run.prompts import build_system_prompt
from agentls.agent.run.session import AgentSession
from agentls.agent.run.text_tool_calls import looks_like_a_call, parse_text_calls
from agentls.agent.settings import AgentSettings
from agentls.config import LoopSettings
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.tools import builtin_tools
from agentls.workspace import Workspace
from tests.agent_support import close_at_loop_end

KNOWN = {"read_file", "edit_file", "list_files"}.__contains__


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```',
        '{"name": "read_file", "arguments": {"path": "a.py"}}',
        'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n'
        "</tool_call>",
        '```\n{"name": "read_file", "input": {"path": "a.py"}}\n```',
        '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": '
        '\\"a.py\\"}"}}',
        'I will read it: {"name": "read_file", "parameters": {"path": "a.py"}} now.',
        # the 1.5B model, asked for file listings (quotes of either kind, in the JSON too)
        '<tools>\n  <function name="read_file" arguments=\'{"path": "a.py"}\'/>\n</tools>',
        "<function name=\"read_file\" arguments=\"{'path': 'a.py'}\"></function>".replace("'", '"'),
    ],
)
def test_the_shapes_small_models_write_are_calls(text: str) -> None:
    parsed = parse_text_calls(text, KNOWN)
    assert [(c.name, c.input) for c in parsed.calls] == [("read_file", {"path": "a.py"})]
    assert "read_file" not in parsed.text


def test_several_calls_and_json_that_is_not_a_call() -> None:
    two = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>\n'
    two += '<tool_call>\n{"name": "list_files", "arguments": {}}\n</tool_call>'
    assert [c.name for c in parse_text_calls(two, KNOWN).calls] == ["read_file", "list_files"]
    data = '```json\n{"name": "Ada", "age": 36}\n```'
    assert parse_text_calls(data, KNOWN).calls == []
    assert not looks_like_a_call('The config is {"debug": true}.')
    assert looks_like_a_call("<tools><function name=\"edit_file\" arguments='{oops'/></tools>")
    assert looks_like_a_call('```json\n{"name": "read_file", "arguments": ')


def _settings(server: ScriptedMessagesServer, **values: Any) -> AgentSettings:
    return AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.base_url},
        retry_base_delay=0.01,
        **values,
    )


def _file_session(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path, **values: Any
) -> AgentSession:
    config = SessionConfig(
        settings=_settings(api, **values),
        workspace=Workspace([root]),
        tools=builtin_tools(),
        transcript_dir=tmp_path / "transcripts",
    )
    return close_at_loop_end(AgentSession(AnthropicModelClient(config.settings), config))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    return folder


async def test_a_call_written_as_text_runs_and_is_answered(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    api.extend(
        text_turn('```json\n{"name": "read_file", "arguments": {"path": "calc.py"}}\n```'),
        text_turn("It subtracts."),
    )
    result = await _file_session(api, root, tmp_path).run("what does add do?")
    assert result.status == "completed", result.error
    second = api.message_requests[1]
    results = second.tool_results()
    assert len(results) == 1
    assert "return a - b" in str(results[0]["content"])
    assistant = second.messages[-2]["content"]
    uses = [b for b in assistant if b["type"] == "tool_use"]
    assert uses[0]["id"] == results[0]["tool_use_id"]


async def test_native_mode_leaves_text_alone_and_the_run_fails(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    api.extend(text_turn('{"name": "read_file", "arguments": {"path": "calc.py"}}'))
    session = _file_session(api, root, tmp_path, tool_calls="native")
    result = await session.run("what does add do?")
    assert result.status == "failed"
    assert "looks like a tool call" in str(result.error)
    assert len(api.message_requests) == 1


async def test_an_empty_reply_is_not_a_success(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    api.extend(text_turn(""))
    result = await _file_session(api, root, tmp_path).run("fix it")
    assert result.status == "failed"
    assert "empty" in str(result.error)


async def test_repeated_failing_calls_are_told_then_stopped(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    wrong = ("read_file", {"path": "missing.py"})
    api.extend(*(tool_turn(wrong) for _ in range(6)), text_turn("never reached"))
    session = _file_session(api, root, tmp_path, loop_guard=3)
    result = await session.run("read it")
    assert result.status == "failed"
    assert "same failing read_file call 3 times" in str(result.error)
    assert len(api.message_requests) == 3
    first = str(api.message_requests[1].tool_results()[0]["content"])
    second = str(api.message_requests[2].tool_results()[0]["content"])
    assert "change the arguments" not in first
    assert "failed 2 times" in second
    assert "change the arguments" in second


async def test_edit_needs_a_read_and_a_fresh_one(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    edit = ("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    api.extend(
        tool_turn(edit),
        tool_turn(("read_file", {"path": "calc.py"})),
        tool_turn(edit),
        text_turn("done"),
    )
    session = _file_session(api, root, tmp_path)
    result = await session.run("fix add")
    assert result.status == "completed", result.error
    refused = api.message_requests[1].tool_results()[0]
    assert refused["is_error"]
    assert "has not been read in this session" in str(refused["content"])
    assert "read_file" in str(refused["content"])
    applied = api.message_requests[3].tool_results()[0]
    assert not applied["is_error"], applied
    # the file changes on disk behind the session's back: the next edit must re-read it
    (root / "calc.py").write_text("def add(a, b):\n    return b + a\n", encoding="utf-8")
    session.changes.discard()
    api.extend(
        tool_turn(("edit_file", {"path": "calc.py", "old_string": "b + a", "new_string": "a+b"})),
        text_turn("ok"),
    )
    await session.run("again")
    stale = api.message_requests[-1].tool_results()[0]
    assert stale["is_error"]
    assert "changed since you last read it" in str(stale["content"])


def test_one_deny_removes_one_tool(tmp_path: Path) -> None:
    rules, problems = parse_rules({"deny": ["notebook_edit"]}, "test", root=tmp_path)
    assert not problems
    pool = ToolPool.assemble(
        builtin_tools(),
        pool_filter=PoolFilter(
            denied=lambda n: any(r.covers_tool(n) and r.tool_wide for r in rules)
        ),
    )
    assert "notebook_edit" not in pool.names
    for name in ("edit_file", "write_file", "delete_file", "rename_file", "rename_symbol"):
        assert name in pool.names
    # a deny on some files still covers the sibling tools (the same files another way)
    path_rules, _ = parse_rules({"deny": ["edit_file(secret/**)"]}, "test", root=tmp_path)
    assert path_rules[0].covers_tool("write_file")


def test_the_prompt_names_only_offered_tools() -> None:
    offered = {"read_file", "edit_file", "list_files"}
    text = build_system_prompt([Path("/w")], offered=offered)[0]["text"]
    for absent in ("search_symbols", "grep", "run_tests"):
        assert absent not in text
    assert "read_file" in text
    # stable parts first: the workspace path and the date come last
    assert text.index("# Environment") > text.index("# Using your tools")


def test_examples_are_placeholders_not_plausible_paths() -> None:
    for tool in builtin_tools():
        text = tool.description() + json.dumps(tool.input_schema())
        for plausible in ("src/", "tests/test_", "models.py", "app.py", "views.py"):
            assert plausible not in text, (tool.name, plausible)


def test_compact_profile_is_small_and_picked_for_small_windows() -> None:
    pool = ToolPool.assemble(builtin_tools(), compact=True)
    assert set(pool.names) == set(COMPACT_TOOLS)
    tools = json.dumps(pool.api_tools())
    system = build_system_prompt([Path("/w")], offered=set(pool.names), listings=True)[0]["text"]
    # ~4 characters a token (measured: 2,079 Qwen2.5 tokens for 7,945 characters)
    assert (len(tools) + len(system)) / 4 <= 3000
    small = LoopSettings.model_validate({"contextWindow": 16384})
    assert small.tools.profile == "auto"


def test_model_settings_as_an_object_or_dotted() -> None:
    nested = LoopSettings.model_validate({"model": {"id": "qwen", "toolCalls": "text"}})
    assert (nested.model, nested.tool_calls) == ("qwen", "text")
    dotted = LoopSettings.model_validate({"model": "q", "model.api": "chat-completions"})
    assert dotted.api == "chat-completions"
    assert LoopSettings.model_validate({"tools": {"profile": "compact"}}).tools.profile == "compact"


def test_the_overview_lists_files_and_ranks_used_definitions(tmp_path: Path) -> None:
    from agentls.agent.run.overview import workspace_overview
    from agentls.workspace import ChangeSet

    (tmp_path / "lookup.py").write_text("def find_user(name):\n    return name\n")
    (tmp_path / "app.py").write_text(
        "from lookup import find_user\n\ndef main():\n    find_user('a')\n"
    )
    (tmp_path / ".env").write_text("TOKEN=abc\n")
    (tmp_path / "keys.py").write_text("def secret_helper():\n    return 'sk-123'\n")
    hidden = {tmp_path / "keys.py"}
    text = workspace_overview(
        Workspace([tmp_path]), ChangeSet(), 4000, lambda p: p not in hidden and p.name != ".env"
    )
    assert "app.py" in text
    assert "lookup.py" in text
    assert text.index("def find_user(name):") < text.index("def main():")  # used elsewhere
    assert ".env" not in text
    assert "keys.py" not in text
    assert "secret_helper" not in text


async def test_the_overview_skips_secret_files_in_a_session(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    (root / ".env").write_text("TOKEN=abc\n")
    (root / "creds.py").write_text("def api_token():\n    return 'sk-1'\n")
    api.extend(text_turn("ok"))
    await _file_session(api, root, tmp_path).run("hi")
    first = json.dumps(api.message_requests[0].messages[0])
    assert "calc.py" in first
    assert "def add(a, b):" in first
    assert ".env" not in first
    off = _file_session(api, root, tmp_path, tools={"overview": False})
    api.extend(text_turn("ok"))
    await off.run("hi")
    assert "calc.py" not in json.dumps(api.message_requests[1].messages[0])


def test_chat_completions_body_pairs_calls_and_results() -> None:
    from agentls.agent.run.chat_completions import endpoint_url, request_body
    from agentls.agent.run.model_client import ModelRequest

    request = ModelRequest(
        model="qwen",
        max_tokens=100,
        system=[{"type": "text", "text": "sys"}],
        tools=[{"name": "read_file", "description": "d", "input_schema": {"type": "object"}}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "reading"},
                    {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "x", "is_error": True}
                ],
            },
        ],
        temperature=0,
    )
    body = request_body(request)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"path": "a"}'
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "t1", "content": "Error: x"}
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert body["temperature"] == 0
    assert endpoint_url("http://h:1") == "http://h:1/v1/chat/completions"
    assert endpoint_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"


def test_named_files_are_whole_names_and_unique_base_names() -> None:
    from agentls.agent.run.mentions import named_files

    files = ["window.py", "test_window.py", "src/app.py", "lib/util.py", "b/util.py"]
    assert named_files("test_window.py fails: fix window.py.", files) == [
        "test_window.py",
        "window.py",
    ]
    assert named_files("see app.py", files) == ["src/app.py"]  # one file has that base name
    assert named_files("see util.py", files) == []  # two do: the path must be written
    assert named_files("see b/util.py", files) == ["b/util.py"]
    assert named_files("window.pyc, mywindow.py, window.py.bak", files) == []


async def test_files_the_prompt_names_are_shown_and_count_as_read(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    (root / ".env").write_text("TOKEN=abc\n")
    edit = ("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    api.extend(tool_turn(edit), text_turn("done"))
    session = _file_session(api, root, tmp_path)
    result = await session.run("Fix add in calc.py (see .env too).")
    assert result.status == "completed", result.error
    first = json.dumps(api.message_requests[0].messages[0])
    assert "Called the read_file tool" in first
    assert "     2\\t    return a - b" in first  # read_file's numbered lines
    assert "TOKEN" not in first  # a secret file is not shown, named or not
    applied = api.message_requests[1].tool_results()[0]
    assert not applied["is_error"], applied  # no "read it first": the model saw the file
    api.extend(text_turn("ok"))
    await _file_session(api, root, tmp_path, tools={"overview": False}).run("Fix calc.py")
    assert "Called the read_file tool" not in json.dumps(api.message_requests[2].messages[0])


async def test_a_compact_session_sends_the_environment_after_the_tools(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """Qwen's chat template renders the system text before the tools: the workspace path
    and the date go to the first message, so the system prompt and tools (the prefix a
    llama.cpp server caches) are the same for every folder and day."""
    api.extend(tool_turn(("read_file", {"path": "calc.py"})), text_turn("ok"))
    session = _file_session(api, root, tmp_path, context_window=8192)
    assert session.compact_tools()
    await session.run("hi")
    first, second = api.message_requests
    assert str(root) not in first.system_text
    head = first.messages[0]["content"][0]["text"]
    assert f"- Workspace root: {root}" in head
    assert second.messages[0]["content"][0]["text"] == head  # byte-stable across turns
    assert len([m for m in session.messages if str(root) in json.dumps(m)]) == 0
    other = tmp_path / "other"
    other.mkdir()
    api.extend(text_turn("ok"))
    await _file_session(api, other, tmp_path, context_window=8192).run("hi")
    assert api.message_requests[2].system_text == first.system_text


async def test_an_edit_of_the_wrong_file_names_the_file_that_has_the_text(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    (root / "test_calc.py").write_text("from calc import add\n", encoding="utf-8")
    wrong = ("edit_file", {"path": "test_calc.py", "old_string": "a - b", "new_string": "a + b"})
    api.extend(
        tool_turn(("read_file", {"path": "calc.py"})),
        tool_turn(("read_file", {"path": "test_calc.py"})),
        tool_turn(wrong),
        text_turn("ok"),
    )
    await _file_session(api, root, tmp_path, tools={"overview": False}).run("fix add")
    refused = api.message_requests[3].tool_results()[0]
    assert refused["is_error"]
    assert 'it is in calc.py. To change that file, call edit_file with path "calc.py"' in str(
        refused["content"]
    )


async def test_an_empty_last_reply_after_failed_calls_is_not_a_success(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """The 1.5B model sent a failing edit twice, then an empty reply: "completed" before."""
    wrong = ("edit_file", {"path": "calc.py", "old_string": "a * b", "new_string": "a + b"})
    api.extend(tool_turn(wrong), text_turn(""))
    result = await _file_session(api, root, tmp_path).run("Fix add in calc.py")
    assert result.status == "failed"
    assert "empty and the run changed nothing" in str(result.error)
    # an edit needs no words: the same empty reply after an applied edit is a success
    right = ("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    api.extend(tool_turn(right), text_turn(""))
    result = await _file_session(api, root, tmp_path).run("Fix add in calc.py")
    assert result.status == "completed", result.error


async def test_nearby_replacements_show_each_line_once(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    (root / "app.py").write_text(
        "from lookup import find_usr\n\n\ndef main(users):\n    return find_usr(users)\n"
    )
    rename = ("edit_file", {"path": "app.py", "old_string": "find_usr",
                            "new_string": "find_user", "replace_all": True})  # fmt: skip
    api.extend(tool_turn(rename), text_turn("done"))
    await _file_session(api, root, tmp_path).run("rename find_usr in app.py")
    shown = str(api.message_requests[1].tool_results()[0]["content"])
    assert "replaced 2 occurrences" in shown
    assert shown.count("def main(users):") == 1


async def test_a_call_repeated_with_the_same_result_is_told_to_act(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """The 1.5B model ran the same lint three times with the same report, then stopped."""
    read = ("read_file", {"path": "calc.py"})
    api.extend(tool_turn(read), tool_turn(read), text_turn("done"))
    result = await _file_session(api, root, tmp_path).run("what does add do")
    assert result.status == "completed", result.error
    first = str(api.message_requests[1].tool_results()[0]["content"])
    second = str(api.message_requests[2].tool_results()[0]["content"])
    assert "same result" not in first
    assert "returned this same result 2 times" in second
    assert "Act on the result" in second


async def test_a_reply_that_echoes_the_reminders_is_not_a_success(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    echo = "<system-reminder>\n# Environment\n</system-reminder>\nThe docstring has been added."
    api.extend(text_turn(echo))
    result = await _file_session(api, root, tmp_path).run("Add a docstring to add in calc.py")
    assert result.status == "failed"
    assert "repeated the context" in str(result.error)


# --- whole-file listings (aider's "whole" format) in the compact profile ---------------------

LISTING = "Here is the fix.\n\ncalc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"


async def test_a_whole_file_listing_is_a_write_file_call(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """The 1.5B model gets aider's whole-file format right where its edit_file and JSON
    write_file calls went wrong: a listing of a file it has read is a write_file call."""
    api.extend(text_turn(LISTING), text_turn("Fixed."))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("Fix add in calc.py: it should add.")
    assert result.status == "completed", result.error
    first = api.message_requests[0]
    assert "file listing" in first.system_text  # the compact prompt asks for the format
    shown = json.dumps(first.messages[0])
    assert "calc.py\\n```\\ndef add(a, b):\\n    return a - b\\n```" in shown  # shown as one
    assistant = session.messages[1]["content"]
    use = next(b for b in assistant if b["type"] == "tool_use")
    assert use["name"] == "write_file"
    assert use["input"] == {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}
    applied = session.messages[2]["content"][0]
    assert applied["type"] == "tool_result"
    assert not applied["is_error"], applied
    assert session.changes.text(root / "calc.py") == "def add(a, b):\n    return a + b\n"
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # staged


async def test_listings_in_an_explanation_are_written(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """The 1.5B model's reply after a failed edit: steps, then "**lookup.py:**" and
    "**app.py:**" each over the whole new file; the one that changes a file is written."""
    (root / "app.py").write_text("from calc import add\n\nX = add(1, 2)\n", encoding="utf-8")
    reply = (
        "To fix it:\n\n1. Change `add`.\n\nHere is the final code:\n\n**calc.py:**\n```python\n"
        "def add(a, b):\n    return a + b\n```\n\n**app.py:**\n```python\nfrom calc import add"
        "\n\nX = add(1, 2)\n```\n\nAfter these steps add adds."
    )
    api.extend(text_turn(reply), text_turn("Done."))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("Fix add in calc.py; app.py uses it.")
    assert result.status == "completed", result.error
    assistant = session.messages[1]["content"]
    uses = [b for b in assistant if b["type"] == "tool_use"]
    assert [u["input"]["path"] for u in uses] == ["calc.py"]  # app.py's listing is unchanged
    assert session.changes.text(root / "calc.py") == "def add(a, b):\n    return a + b\n"


async def test_a_listing_is_text_outside_the_compact_text_mode(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """A full-profile session (a large model) and native tool calls leave a listing as
    the answer it is: no write."""
    for values in ({}, {"context_window": 8192, "tool_calls": "native"}):
        api.extend(text_turn(LISTING))
        session = _file_session(api, root, tmp_path, **values)
        result = await session.run("Fix add in calc.py")
        assert result.status == "completed", result.error
        assert "return a + b" in str(result.text)
        assert session.changes.text(root / "calc.py") is None
        assert "file listing" not in api.message_requests[-1].system_text


async def test_a_listing_needs_a_read_file_and_a_change(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """Only a file the session has seen is rewritten (not one the model invents or never
    read), and a listing equal to the file is a quotation, not a write."""
    (root / "other.py").write_text("X = 1\n", encoding="utf-8")
    quoted = "calc.py\n```\ndef add(a, b):\n    return a - b\n```\nIt subtracts."
    unread = "other.py\n```\nX = 2\n```"
    invented = "new.py\n```\nY = 2\n```"
    for reply in (quoted, unread, invented):
        api.extend(text_turn(reply))
        session = _file_session(api, root, tmp_path, context_window=8192)
        result = await session.run("What does add in calc.py do?")
        assert result.status == "completed", result.error
        assert not session.changes.changed_paths(), reply
        assert (root / "other.py").read_text() == "X = 1\n"


async def test_a_listing_cannot_write_outside_the_workspace_or_a_secret_file(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """Attacker-style: the listing's path is outside the workspace, through a symlink, or a
    secret file the model was shown nothing of; none is written or staged."""
    outside = tmp_path / "outside.py"
    outside.write_text("SAFE = 1\n", encoding="utf-8")
    (root / "link.py").symlink_to(outside)
    (root / ".env").write_text("TOKEN=abc\n", encoding="utf-8")
    replies = [
        "../outside.py\n```\nSAFE = 0\n```",
        f"{outside}\n```\nSAFE = 0\n```",
        "link.py\n```\nSAFE = 0\n```",
        ".env\n```\nTOKEN=stolen\n```",
    ]
    for reply in replies:
        api.extend(text_turn(reply))
        session = _file_session(api, root, tmp_path, context_window=8192)
        await session.run("Fix calc.py, link.py, .env and ../outside.py")
        assert not session.changes.changed_paths(), reply
    assert outside.read_text() == "SAFE = 1\n"
    assert (root / ".env").read_text() == "TOKEN=abc\n"


class _Answer:
    def __init__(self, choice: ApprovalChoice) -> None:
        self.choice = choice
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self.asked.append(request)
        return self.choice


@pytest.mark.parametrize("choice", ["deny", "allow_once"])
async def test_a_listing_asks_for_approval_like_write_file(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path, choice: ApprovalChoice
) -> None:
    """A listing is asked about exactly as a write_file call (an `ask` rule): denied,
    nothing is staged; allowed, the write is staged."""
    api.extend(text_turn(LISTING), text_turn("Done."))
    approver = _Answer(choice)
    rules, problems = parse_rules({"ask": ["write_file"]}, "test", root=root)
    assert not problems
    config = SessionConfig(
        settings=_settings(api, context_window=8192),
        workspace=Workspace([root]),
        tools=builtin_tools(),
        transcript_dir=tmp_path / "transcripts",
        permissions=RulePolicy(RuleSet(rules), approver=approver),
    )
    session = close_at_loop_end(AgentSession(AnthropicModelClient(config.settings), config))
    await session.run("Fix add in calc.py")
    assert [r.tool for r in approver.asked] == ["write_file"]
    result = session.messages[2]["content"][0]
    staged = session.changes.text(root / "calc.py")
    if choice == "deny":
        assert result["is_error"]
        assert staged is None
    else:
        assert not result["is_error"], result
        assert staged == "def add(a, b):\n    return a + b\n"


async def test_a_compact_session_shows_the_files_a_named_file_uses(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """ "Which port does start() in server.py use?" is answered in config.py, which the
    1.5B model never read: the compact profile shows it with server.py (one hop, by module
    name), as a listing; a secret file is not shown even when used."""
    (root / "config.py").write_text("DEFAULT_PORT = 8731\n", encoding="utf-8")
    (root / "server.py").write_text(
        "from config import DEFAULT_PORT\n\nKEY = 'deploy.key'\n\n\ndef start(port=DEFAULT_PORT):\n"
        "    return port\n",
        encoding="utf-8",
    )
    (root / "deploy.key").write_text("PRIVATE-KEY-TEXT\n")
    api.extend(text_turn("8731"))
    session = _file_session(api, root, tmp_path, context_window=8192)
    await session.run("Which port does start() in server.py use by default?")
    first = json.dumps(api.message_requests[0].messages[0])
    assert "config.py\\n```\\nDEFAULT_PORT = 8731\\n```" in first
    assert "calc.py\\n```" not in first  # not used by server.py
    assert "PRIVATE-KEY-TEXT" not in first
    api.extend(text_turn("8731"))
    await _file_session(api, root, tmp_path).run("Which port does start() in server.py use?")
    full = json.dumps(api.message_requests[1].messages[0])
    assert "Called the read_file tool" in full  # the full profile: read_file's form
    assert "config.py\\n```" not in full
    assert '{\\"path\\": \\"config.py\\"}' not in full


async def test_a_whole_file_write_that_drops_a_definition_is_asked_again(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """The 1.5B model, asked to add triple to mathx.py, wrote the file with only triple.
    In the compact profile that write is refused once, naming what it drops; sent again,
    it goes through (a removal can be meant). A full-profile session writes at once."""
    (root / "mathx.py").write_text("def double(x):\n    return 2 * x\n", encoding="utf-8")
    lossy = ("write_file", {"path": "mathx.py", "content": "def triple(x):\n    return 3 * x\n"})
    whole = "def double(x):\n    return 2 * x\n\n\ndef triple(x):\n    return 3 * x\n"
    api.extend(tool_turn(lossy), tool_turn(("write_file", {"path": "mathx.py",
               "content": whole})), text_turn("Added."))  # fmt: skip
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("Add a function triple(x) to mathx.py.")
    assert result.status == "completed", result.error
    refused = api.message_requests[1].tool_results()[0]
    assert refused["is_error"]
    assert "`double`" in str(refused["content"])
    assert not api.message_requests[2].tool_results()[0]["is_error"]
    assert session.changes.text(root / "mathx.py") == whole
    api.extend(tool_turn(lossy), tool_turn(lossy), text_turn("Replaced."))
    session = _file_session(api, root, tmp_path, context_window=8192)
    await session.run("Replace mathx.py by triple only.")
    assert api.message_requests[-2].tool_results()[0]["is_error"]
    assert not api.message_requests[-1].tool_results()[0]["is_error"]
    assert session.changes.text(root / "mathx.py") == "def triple(x):\n    return 3 * x\n"
    api.extend(tool_turn(lossy), text_turn("Replaced."))
    session = _file_session(api, root, tmp_path)
    await session.run("Replace mathx.py by triple only.")
    assert not api.message_requests[-1].tool_results()[0]["is_error"]


async def test_a_listing_in_an_echo_of_the_context_is_not_a_write(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """After its fix, the 1.5B model echoed the first message (reminders and the files as
    shown): a listing in such an echo is the old text, and writing it would undo the fix."""
    fixed = "def add(a, b):\n    return a + b\n"
    echo = "<system-reminder>\n# Environment\n</system-reminder>\n" + LISTING.replace(
        "a + b", "a - b"
    )
    edit = ("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    api.extend(tool_turn(edit), text_turn(echo))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("Fix add in calc.py: it should add.")
    assert session.changes.text(root / "calc.py") == fixed
    assert result.status == "failed"  # an echo is not an answer
    assert len(api.message_requests) == 2


async def test_a_run_that_shows_the_files_starts_with_a_listing_turn_without_tools(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """Measured on the 1.5B model: with tools in the prompt it broke "add a parameter",
    "add triple" and "add a docstring"; with the same files shown and no tools (aider's
    shape) it wrote correct listings. So the first request of a compact run that shows the
    named files has no tools, and a clean listing ends the run in one turn."""
    api.extend(text_turn(LISTING), text_turn("Fixed."))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("Fix add in calc.py: it should add.")
    assert result.status == "completed", result.error
    assert len(api.message_requests) == 1  # one turn, as aider
    first = api.message_requests[0]
    assert first.tools == []
    assert "file listing" in first.system_text
    assert "# Using your tools" not in first.system_text
    assert "Here is the fix." in str(result.text)
    assert session.changes.text(root / "calc.py") == "def add(a, b):\n    return a + b\n"
    api.extend(text_turn("It adds."))  # the session's next run is an ordinary one
    await session.run("And what does add in calc.py do now?")
    assert "read_file" in api.message_requests[-1].tool_names
    assert "# Using your tools" in api.message_requests[-1].system_text


async def test_a_listing_turn_that_does_not_write_cleanly_goes_on_with_the_tools(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """A refused listing (it drops `add`), or a text call, is answered and the run goes
    on with the tools; a plain answer ends it; a prompt that names no file gets the tools
    from its first request."""
    lossy = "calc.py\n```\ndef mul(a, b):\n    return a * b\n```\n"
    api.extend(text_turn(lossy), text_turn("I will leave it."))
    session = _file_session(api, root, tmp_path, context_window=8192)
    await session.run("Rename add in calc.py.")
    first, second = api.message_requests
    assert first.tools == []
    refused = second.tool_results()[0]
    assert refused["is_error"]
    assert "`add`" in str(refused["content"])
    assert "write_file" in second.tool_names
    assert "# Using your tools" in second.system_text
    assert session.changes.text(root / "calc.py") is None
    api.extend(text_turn("It subtracts a and b."))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("What does add in calc.py do?")
    assert result.status == "completed"
    assert "subtracts" in str(result.text)
    assert api.message_requests[-1].tools == []
    api.extend(text_turn("Nothing to do."))
    session = _file_session(api, root, tmp_path, context_window=8192)
    await session.run("Say hello.")
    assert "write_file" in api.message_requests[-1].tool_names


def test_a_listing_turn_ends_on_a_new_warning_but_not_on_a_new_error() -> None:
    """The 1.5B model's correct `greet(name, greeting='Hello')` drew a missing-annotation
    warning, and it spent three more turns re-writing the same file: only a new error (or
    a refused write, or another tool's call) keeps the run going after a listing turn."""
    write = [ToolCall("w", "write_file", {"path": "greet.py", "content": "x"})]
    ok = "Overwrote greet.py (was 2 lines, now 2 lines; staged in this session)."
    warning = ok + "\n\n1 new problem: greet.py:1 warning: Type annotation is missing"
    error = ok + '\n\n1 new problem: greet.py:2 error: "greeting" is not defined'
    errors = ok + "\n\n2 new problems:\n- greet.py:1 warning: a\n- greet.py:2 error: b"
    assert wrote_cleanly(write, [ToolCallResult("w", ok)])
    assert wrote_cleanly(write, [ToolCallResult("w", warning)])
    assert not wrote_cleanly(write, [ToolCallResult("w", error)])
    assert not wrote_cleanly(write, [ToolCallResult("w", errors)])
    assert not wrote_cleanly(write, [ToolCallResult("w", "Not written", is_error=True)])
    assert not wrote_cleanly([ToolCall("r", "read_file", {"path": "a"})], [ToolCallResult("r", "")])
    # app.py listed before lookup.py: its check ran before find_user existed (stale)
    app = ToolCall("a", "write_file", {"path": "app.py", "content": "from lookup import find_user"})
    lookup = ToolCall("l", "write_file", {"path": "lookup.py", "content": "def find_user(u):\n"})
    stale = ok + '\n\n1 new problem: app.py:1 error: "find_user" is unknown import symbol'
    assert wrote_cleanly([app, lookup], [ToolCallResult("a", stale), ToolCallResult("l", ok)])
    assert not wrote_cleanly([lookup, app], [ToolCallResult("l", ok), ToolCallResult("a", stale)])
    other = ok + '\n\n1 new problem: app.py:1 error: "find_usr" is not defined'
    assert not wrote_cleanly([app, lookup], [ToolCallResult("a", other), ToolCallResult("l", ok)])


async def test_a_rename_is_not_a_dropped_definition(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """Asked to rename find_usr, the 1.5B model wrote both files right and lookup.py was
    refused for dropping `find_usr`: the old text with the name replaced is a rename."""
    (root / "lookup.py").write_text("def find_usr(users, name):\n    return users.get(name)\n")
    (root / "app.py").write_text("from lookup import find_usr\n\nX = find_usr({}, 'a')\n")
    reply = (
        "app.py\n```\nfrom lookup import find_user\n\nX = find_user({}, 'a')\n```\n\n"
        "lookup.py\n```\ndef find_user(users, name):\n    return users.get(name)\n```\n"
    )
    api.extend(text_turn(reply), text_turn("Renamed."))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("Rename find_usr to find_user (lookup.py and app.py).")
    assert result.status == "completed", result.error
    assert len(api.message_requests) == 1  # nothing refused: the listing turn ended the run
    assert "find_user(users" in str(session.changes.text(root / "lookup.py"))
    assert "find_user({}" in str(session.changes.text(root / "app.py"))


async def test_a_listing_with_its_path_inside_the_fence_is_written(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """The 1.5B model's other listing form: the path as the block's first line."""
    api.extend(text_turn("```\ncalc.py\ndef add(a, b):\n    return a + b\n```"))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("Fix add in calc.py: it should add.")
    assert result.status == "completed", result.error
    assert session.changes.text(root / "calc.py") == "def add(a, b):\n    return a + b\n"


async def test_a_lone_block_in_a_listing_turn_that_showed_one_file_is_that_file(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    """Shown calc.py and asked to fix it, the 0.5B model answered with the fixed file in
    a fence and no path. With one file shown, that block is a listing of it; a snippet
    that does not define what the file defines, or a second file shown, leaves it text."""
    fixed = "def add(a, b):\n    return a + b\n"
    api.extend(text_turn(f"```\n{fixed}```"))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("Read calc.py, then fix add so that it returns a + b.")
    assert result.status == "completed", result.error
    assert session.changes.text(root / "calc.py") == fixed
    api.extend(text_turn("Use it like this:\n```python\nprint(add(1, 2))\n```"))
    session = _file_session(api, root, tmp_path, context_window=8192)
    result = await session.run("How do I call add in calc.py?")
    assert "print(add(1, 2))" in str(result.text)
    assert session.changes.text(root / "calc.py") is None
    (root / "main.py").write_text("from calc import add\n\nprint(add(1, 2))\n")
    api.extend(text_turn(f"```\n{fixed}```"))
    session = _file_session(api, root, tmp_path, context_window=8192)
    await session.run("Fix add in calc.py; main.py uses it.")
    assert session.changes.text(root / "calc.py") is None  # which file? none is guessed
