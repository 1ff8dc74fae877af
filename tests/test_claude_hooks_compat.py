"""Hook scripts written for Claude Code, run by agentls: its tool names and fields, its
documented example, `if` rules, the lifecycle events, `systemMessage`/`suppressOutput`,
and the handler types agentls does not run (reported, never silently dropped)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.hooks.commands import CommandHooks, HookConfig, NotifyingApprover
from agentls.agent.hooks.runner import subagent_hooks
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.persistence.transcript import read_records
from agentls.agent.protocol.events import AgentEvent, Notice
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.safety import load_safety
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer, text_turn
from agentls.tools import builtin_tools
from agentls.workspace import ChangeSet, Workspace
from tests.agent_support import ProbeRead, close_at_loop_end
from tests.shadow_support import unsandboxed

PY = shlex.quote(sys.executable)
VALIDATOR = Path(__file__).parent / "fixtures" / "hooks" / "bash_command_validator.py"
RECORD = (
    "import json, os, sys; data = json.load(sys.stdin); "
    "open(os.environ['HOOK_OUT'], 'a').write(json.dumps(data) + '\\n')"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("x = 1\n")
    (folder / "notes.md").write_text("one\ntwo\n")
    return folder


def _config(hooks: dict[str, Any], source: str = "user settings") -> HookConfig:
    config = HookConfig.parse(hooks, source)
    assert not config.problems, config.problems
    return config


def _recorder(event: str, out: Path, matcher: str = "", **extra: Any) -> dict[str, Any]:
    command = f"HOOK_OUT={shlex.quote(str(out))} {PY} -c {shlex.quote(RECORD)}"
    return {event: [{"matcher": matcher, "hooks": [{"command": command, **extra}]}]}


def _seen(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


class _Events:
    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def notices(self) -> list[str]:
        return [e.message for e in self.events if isinstance(e, Notice)]


async def _call(
    root: Path,
    hooks: CommandHooks,
    name: str,
    events: _Events | None = None,
    **input: Any,
) -> ToolCallResult:
    services = unsandboxed(Workspace([root]))
    pipeline = Pipeline(
        ToolPool(builtin_tools()),
        permissions=RulePolicy(mode="acceptEdits", approver=_Answer("allow_once")),
        hooks=hooks,
        events=events or _Events(),
    )
    ctx = ToolContext(
        session_id="sess", workspace=services.workspace, changes=ChangeSet(), services=services
    )
    return await pipeline.execute(ToolCall("toolu_1", name, input), ctx)


class _Answer:
    def __init__(self, choice: ApprovalChoice) -> None:
        self.choice = choice
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self.asked.append(request)
        return self.choice


# -- Claude Code's documented example -------------------------------------------------------


async def test_claude_codes_documented_bash_validator_blocks_grep_as_documented(
    root: Path, tmp_path: Path
) -> None:
    """The example checks `tool_name == "Bash"` and `tool_input.command`: with agentls's
    own names it never fired; now it blocks what it was written to block."""
    settings = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": f"{PY} {VALIDATOR}"}]}
        ]
    }
    hooks = CommandHooks(_config(settings), transcript_dir=tmp_path / "t")
    blocked = await _call(root, hooks, "run_command", command="grep -r TODO src")
    assert blocked.is_error
    assert "Blocked by hook" in str(blocked.content)
    assert "• Use 'rg' (ripgrep) instead of 'grep'" in str(blocked.content)
    find = await _call(root, hooks, "run_command", command="find src -name '*.py'")
    assert find.is_error
    assert "instead of 'find -name'" in str(find.content)
    fine = await _call(root, hooks, "run_command", command="echo fine")
    assert not fine.is_error
    assert "fine" in str(fine.content)
    piped = await _call(root, hooks, "run_command", command="grep x notes.md | wc -l")
    assert not piped.is_error  # the documented exception: grep in a pipeline


async def test_the_payload_uses_claude_codes_names_and_fields(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "seen.jsonl"
    hooks = CommandHooks(_config(_recorder("PreToolUse", out)), transcript_dir=tmp_path / "t")
    await _call(root, hooks, "run_command", command="echo hi", timeout=5, description="Say hi")
    await _call(root, hooks, "read_file", path="notes.md", offset=1, limit=1)
    await _call(root, hooks, "edit_file", path="notes.md", old_string="one", new_string="1")
    await _call(root, hooks, "write_file", path="new.txt", content="hello\n")
    await _call(root, hooks, "grep", pattern="two", output="files", ignore_case=True)
    await _call(root, hooks, "list_files", pattern="**/*.py")
    await _call(root, hooks, "list_files", path="src")
    await _call(root, hooks, "rename_file", path="notes.md", new_path="n.md")
    seen = {(e["tool_name"], e["agentls_tool_name"]): e["tool_input"] for e in _seen(out)}
    notes = str(root / "notes.md")
    assert seen[("Bash", "run_command")] == {
        "command": "echo hi",
        "timeout": 5000,  # milliseconds, as Claude Code's Bash tool
        "description": "Say hi",
    }
    assert seen[("Read", "read_file")] == {"file_path": notes, "offset": 1, "limit": 1}
    assert seen[("Edit", "edit_file")] == {
        "file_path": notes,
        "old_string": "one",
        "new_string": "1",
    }
    assert seen[("Write", "write_file")] == {
        "file_path": str(root / "new.txt"),
        "content": "hello\n",
    }
    grep = seen[("Grep", "grep")]
    assert grep["output_mode"] == "files_with_matches"
    assert grep["-i"] is True
    assert grep["pattern"] == "two"
    assert seen[("Glob", "list_files")] == {"pattern": "**/*.py", "path": str(root)}
    assert seen[("LS", "list_files")] == {"path": str(root / "src")}
    # a tool Claude Code does not have keeps its name, and gets `file_path` too
    assert seen[("rename_file", "rename_file")]["file_path"] == notes


async def test_matchers_accept_claude_codes_names_for_every_mapped_tool() -> None:
    config = _config(
        {
            "PreToolUse": [
                {"matcher": "Glob|LS|Edit|MultiEdit|Task|TodoWrite", "hooks": [{"command": "true"}]}
            ]
        }
    )
    for ours in ("list_files", "edit_file", "task", "todo_write"):
        assert config.commands("PreToolUse", ours), ours
    assert not config.commands("PreToolUse", "run_command")


async def test_updated_input_in_claude_codes_words_is_mapped_back(
    root: Path, tmp_path: Path
) -> None:
    code = (
        "import json, sys; data = json.load(sys.stdin); "
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', "
        "'updatedInput': {'command': data['tool_input']['command'] + ' world', "
        "'timeout': 7000}}}))"
    )
    hooks = CommandHooks(
        _config(
            {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"command": f"{PY} -c {shlex.quote(code)}"}]}
                ]
            }
        ),
        transcript_dir=tmp_path / "t",
    )
    result = await _call(root, hooks, "run_command", command="echo hello")
    assert not result.is_error
    assert "hello world" in str(result.content)
    moved = (
        "import json, sys; data = json.load(sys.stdin); "
        f"print(json.dumps({{'hookSpecificOutput': {{'updatedInput': "
        f"{{'file_path': {str(root / 'src' / 'app.py')!r}}}}}}}))"
    )
    reader = CommandHooks(
        _config(
            {
                "PreToolUse": [
                    {"matcher": "Read", "hooks": [{"command": f"{PY} -c {shlex.quote(moved)}"}]}
                ]
            }
        ),
        transcript_dir=tmp_path / "t",
    )
    read = await _call(root, reader, "read_file", path="notes.md")
    assert "x = 1" in str(read.content)  # the hook's `file_path` replaced our `path`


async def test_post_tool_use_gets_claude_codes_tool_response(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "post.jsonl"
    hooks = CommandHooks(_config(_recorder("PostToolUse", out)), transcript_dir=tmp_path / "t")
    await _call(root, hooks, "run_command", command="echo out; echo err >&2; exit 3")
    await _call(root, hooks, "read_file", path="notes.md")
    await _call(root, hooks, "write_file", path="new.txt", content="hello\n")
    await _call(root, hooks, "edit_file", path="notes.md", old_string="one", new_string="1")
    responses = {e["tool_name"]: e["tool_response"] for e in _seen(out)}
    bash = responses["Bash"]
    assert bash["stdout"] == "out"
    assert bash["stderr"] == "err"
    assert bash["exitCode"] == 3
    assert bash["interrupted"] is False
    assert bash["success"] is False
    read = responses["Read"]["file"]
    assert read == {
        "filePath": str(root / "notes.md"),
        "content": "one\ntwo",
        "numLines": 2,
        "startLine": 1,
        "totalLines": 2,
    }
    assert responses["Write"]["type"] == "create"
    assert responses["Write"]["filePath"] == str(root / "new.txt")
    assert responses["Edit"]["oldString"] == "one"
    assert responses["Edit"]["newString"] == "1"
    assert all("content" in r and "success" in r for r in responses.values())


# -- `if` ------------------------------------------------------------------------------------


async def test_an_if_rule_decides_per_call_and_part_by_part(root: Path, tmp_path: Path) -> None:
    guard = {"command": "echo 'no rm here' >&2; exit 2", "if": "Bash(rm *)"}
    hooks = CommandHooks(
        _config({"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]}),
        transcript_dir=tmp_path / "t",
    )
    listing = await _call(root, hooks, "run_command", command="ls")
    assert not listing.is_error  # before: the hook ran, and blocked, every command
    hidden = await _call(root, hooks, "run_command", command="ls && rm -rf src")
    assert hidden.is_error
    assert "no rm here" in str(hidden.content)
    assert (root / "src").is_dir()
    wrapped = await _call(root, hooks, "run_command", command="timeout 5 rm -rf src")
    assert wrapped.is_error
    assert (root / "src").is_dir()


async def test_an_if_rule_on_paths_and_bad_if_rules(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "seen.jsonl"
    config = HookConfig.parse(
        _recorder("PreToolUse", out, **{"if": "Edit(src/**)"}), "u", root=root
    )
    hooks = CommandHooks(config, transcript_dir=tmp_path / "t")
    await _call(root, hooks, "edit_file", path="notes.md", old_string="one", new_string="1")
    await _call(root, hooks, "edit_file", path="src/app.py", old_string="x = 1", new_string="x = 2")
    assert [e["tool_input"]["file_path"] for e in _seen(out)] == [str(root / "src" / "app.py")]
    bad = HookConfig.parse(
        {
            "PreToolUse": [{"hooks": [{"command": "true", "if": "Bash(("}]}],
            "Stop": [{"hooks": [{"command": "true", "if": "Bash(rm *)"}]}],
        },
        "f",
    )
    text = "\n".join(bad.problems)
    assert "the hook is skipped" in text
    assert "`if` applies to PreToolUse and PostToolUse hooks only" in text
    assert not bad.commands("PreToolUse", "run_command")  # a bad `if` never runs broadly


# -- handler types and settings --------------------------------------------------------------


def test_prompt_agent_and_http_hooks_load_beside_command_hooks(tmp_path: Path) -> None:
    claude = tmp_path / "home" / ".claude"
    claude.mkdir(parents=True)
    (claude / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {
                            "hooks": [
                                {"type": "prompt", "prompt": "Are all tasks done?"},
                                {"type": "http", "url": "https://hooks.example/stop"},
                                {"type": "agent", "prompt": "verify"},
                                {"type": "command", "command": "true"},
                            ]
                        }
                    ]
                }
            }
        )
    )
    safety = load_safety([tmp_path], home=tmp_path / "home")
    assert safety.problems == []
    found = [(c.kind, c.command) for c in safety.hook_config.commands("Stop")]
    assert found == [
        ("prompt", "Are all tasks done?"),
        ("http", "https://hooks.example/stop"),
        ("agent", "verify"),
        ("command", "true"),
    ]


# -- lifecycle events ------------------------------------------------------------------------


def _session(
    api: ScriptedMessagesServer, root: Path, hooks: dict[str, Any], **settings: Any
) -> AgentSession:
    safety = load_safety([root], home=root / "home", section={"hooks": hooks})
    assert not safety.problems, safety.problems
    agent = AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "sk-hooks-events", "ANTHROPIC_BASE_URL": api.base_url},
        retry_base_delay=0.01,
        **settings,
    )
    config = SessionConfig(
        settings=agent,
        workspace=Workspace([root]),
        tools=[ProbeRead()],
        permissions=safety.policy(),
        hooks=safety.hooks(transcript_dir=root / "transcripts"),
        transcript_dir=root / "transcripts",
    )
    return close_at_loop_end(AgentSession(AnthropicModelClient(agent), config))


def _append(out: Path) -> str:
    """A hook command that appends its input, one JSON object per line, to `out`."""
    return f"{{ cat; echo; }} >> {shlex.quote(str(out))}"


def _group(command: str, matcher: str = "") -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]


async def test_session_start_runs_once_and_its_context_reaches_the_model(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    context = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": "Branch: main",
            }
        }
    )
    hooks = {
        "SessionStart": _group(f"{_append(out)}; echo {shlex.quote(context)}", "startup"),
        "SessionEnd": _group(_append(out)),
    }
    api.extend(text_turn("one"), text_turn("two"))
    session = _session(api, root, hooks)
    await session.run("first")
    await session.run("second")
    assert "Branch: main" in api.message_requests[0].user_text()
    assert "Branch: main" not in api.message_requests[1].user_text().split("first")[-1]
    await session.end("other")
    seen = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["hook_event_name"] for e in seen] == ["SessionStart", "SessionEnd"]
    assert seen[0]["source"] == "startup"
    assert seen[1]["reason"] == "other"
    assert os.path.isfile(seen[0]["transcript_path"])  # noqa: ASYNC240


async def test_pre_compact_then_session_start_compact(
    api: ScriptedMessagesServer, root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "events.jsonl"
    record = f"{_append(out)}; echo"
    hooks = {
        "PreCompact": _group(record, "manual"),
        "SessionStart": _group(f"{record} 'Re-read CONTRIBUTING.md'", "compact"),
    }
    api.extend(text_turn("a"), text_turn("b"), text_turn("summary of it all"), text_turn("c"))
    session = _session(api, root, hooks, compact_keep_turns=1)
    await session.run("one")
    await session.run("two")
    await session.compact()
    await session.run("three")
    seen = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["hook_event_name"], e.get("trigger") or e.get("source")) for e in seen] == [
        ("PreCompact", "manual"),
        ("SessionStart", "compact"),
    ]
    assert "Re-read CONTRIBUTING.md" in api.message_requests[-1].user_text()


async def test_notification_hooks_hear_of_permission_prompts(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    config = _config(_recorder("Notification", out, matcher="permission_prompt"))
    hooks = CommandHooks(config, transcript_dir=tmp_path / "t", cwd=root)
    answer = _Answer("deny")
    policy = RulePolicy(approver=NotifyingApprover(answer, hooks))
    services = unsandboxed(Workspace([root]))
    pipeline = Pipeline(ToolPool(builtin_tools()), permissions=policy)
    ctx = ToolContext(
        session_id="sess", workspace=services.workspace, changes=ChangeSet(), services=services
    )
    result = await pipeline.execute(ToolCall("t1", "run_command", {"command": "touch x"}), ctx)
    assert result.is_error
    assert len(answer.asked) == 1
    for task in list(hooks._background):
        await task
    [seen] = _seen(out)
    assert seen["hook_event_name"] == "Notification"
    assert seen["notification_type"] == "permission_prompt"
    assert "permission to use run_command" in seen["message"]


async def test_subagent_stop_can_keep_a_sub_agent_going(root: Path, tmp_path: Path) -> None:
    script = (
        "import json, sys; data = json.load(sys.stdin)\n"
        "if not data['stop_hook_active'] and data['agent_type'] == 'explore':\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'list the tests too'}))"
    )
    hooks = CommandHooks(
        _config({"SubagentStop": _group(f"{PY} -c {shlex.quote(script)}", "explore")}),
        transcript_dir=tmp_path / "t",
    )
    runner = subagent_hooks(hooks)
    assert runner is not None  # the `task` tool finds the method this way
    ctx = ToolContext(session_id="sub-1", workspace=Workspace([root]), changes=ChangeSet())
    first = await runner.subagent_stop(ctx, agent_type="explore", stop_hook_active=False)
    assert first.block
    assert first.message == "list the tests too"
    again = await runner.subagent_stop(ctx, agent_type="explore", stop_hook_active=True)
    other = await runner.subagent_stop(ctx, agent_type="general-purpose", stop_hook_active=False)
    assert not again.block
    assert not other.block


# -- outputs ---------------------------------------------------------------------------------


async def test_system_message_reaches_the_user_and_suppress_output_the_transcript(
    root: Path, tmp_path: Path
) -> None:
    loud = json.dumps({"systemMessage": "formatter rewrote 2 files"})
    quiet = json.dumps({"suppressOutput": True, "systemMessage": "quiet one"})
    config = _config(
        {
            "PostToolUse": [
                {"matcher": "Write", "hooks": [{"command": f"echo {shlex.quote(loud)}"}]},
                {"matcher": "Edit", "hooks": [{"command": f"echo {shlex.quote(quiet)}"}]},
            ]
        }
    )
    events = _Events()
    transcripts = tmp_path / "t"
    hooks = CommandHooks(config, transcript_dir=transcripts)
    await _call(root, hooks, "write_file", events, path="new.txt", content="a\n")
    await _call(root, hooks, "edit_file", events, path="notes.md", old_string="one", new_string="1")
    assert events.notices() == ["formatter rewrote 2 files", "quiet one"]
    records = [r for r in read_records(transcripts / "sess.jsonl") if r["type"] == "hook"]
    assert [r["event"] for r in records] == ["PostToolUse", "PostToolUse"]
    assert "formatter rewrote" in str(records[0]["stdout"])
    assert "stdout" not in records[1]
    assert records[1]["stdout_suppressed"] is True


async def test_async_hooks_do_not_hold_the_call(root: Path, tmp_path: Path) -> None:
    go, done = tmp_path / "go", tmp_path / "done"
    waits = f"while [ ! -f {go} ]; do sleep 0.05; done; touch {done}; exit 2"
    hooks = CommandHooks(
        _config({"PreToolUse": [{"hooks": [{"command": waits, "async": True}]}]}),
        transcript_dir=tmp_path / "t",
    )
    # the hook waits for `go`, which exists only once the call is over: a hook that held
    # the call would never finish (and its exit 2 would have blocked it)
    result = await _call(root, hooks, "read_file", path="notes.md")
    assert not result.is_error
    assert "one" in str(result.content)
    go.touch()
    for task in list(hooks._background):
        await task
    assert done.exists()
