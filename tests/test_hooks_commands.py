"""Hook commands in Claude Code's format: allow, block, rewrite, crash, hang, and the
prompt-level UserPromptSubmit and Stop hooks through the real loop."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.hooks.commands import CommandHooks, HookConfig
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.safety import load_safety
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.workspace import ChangeSet, Workspace
from tests.agent_support import ProbeRead, ProbeWrite, close_at_loop_end

PY = shlex.quote(sys.executable)


class EditProbe(ProbeWrite):
    name = "edit_file"


def _python(code: str) -> str:
    """A hook command that runs Python code (stdin is the hook input)."""
    return f"{PY} -c {shlex.quote(code)}"


def _hooks(event: str, command: str, matcher: str = "", timeout: float = 10) -> HookConfig:
    config = HookConfig.parse(
        {
            event: [
                {
                    "matcher": matcher,
                    "hooks": [{"type": "command", "command": command, "timeout": timeout}],
                }
            ]
        },
        "test",
    )
    assert not config.problems
    return config


def _ctx(root: Path) -> ToolContext:
    return ToolContext(session_id="sess", workspace=Workspace([root]), changes=ChangeSet())


async def _call(
    root: Path,
    hooks: CommandHooks,
    name: str = "probe_write",
    policy: RulePolicy | None = None,
    **input: Any,
) -> ToolCallResult:
    pipeline = Pipeline(
        ToolPool([ProbeRead(), ProbeWrite(), EditProbe()]),
        permissions=policy or RulePolicy(mode="acceptEdits", approver=_Yes()),
        hooks=hooks,
    )
    return await pipeline.execute(ToolCall("tu1", name, input or {"label": "x"}), _ctx(root))


class _Yes:
    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self.asked.append(request)
        return "allow_once"


async def test_a_passing_hook_sees_the_call_and_lets_it_run(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    hooks = CommandHooks(
        _hooks("PreToolUse", f"cat > {shlex.quote(str(seen))}"), transcript_dir=tmp_path / "t"
    )
    result = await _call(tmp_path, hooks, "edit_file", label="a", delay=0)
    assert not result.is_error
    assert result.content == "wrote:a"
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "Edit"
    assert payload["agentls_tool_name"] == "edit_file"
    assert payload["tool_input"] == {"label": "a", "delay": 0}
    assert payload["agentls_tool_input"] == {"label": "a", "delay": 0}
    assert payload["session_id"] == "sess"
    assert payload["tool_use_id"] == "tu1"
    assert payload["cwd"] == str(tmp_path)
    # Claude Code's transcript format, beside ours
    # (`agentls.agent.persistence.transcript.ClaudeTranscript`)
    assert payload["transcript_path"] == str(tmp_path / "t" / "claude-code" / "sess.jsonl")
    assert os.path.isfile(payload["transcript_path"])  # noqa: ASYNC240 - a hook can open it


async def test_exit_2_blocks_with_stderr_as_the_reason(tmp_path: Path) -> None:
    hooks = CommandHooks(_hooks("PreToolUse", "echo 'generated files are read-only' >&2; exit 2"))
    result = await _call(tmp_path, hooks)
    assert result.is_error
    assert "generated files are read-only" in str(result.content)
    assert "wrote" not in str(result.content)


async def test_json_decision_block_and_permission_deny(tmp_path: Path) -> None:
    block = CommandHooks(
        _hooks("PreToolUse", 'echo \'{"decision": "block", "reason": "not today"}\'')
    )
    deny = CommandHooks(
        _hooks(
            "PreToolUse",
            'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
            '"permissionDecision": "deny", "permissionDecisionReason": "policy says no"}}\'',
        )
    )
    first, second = await _call(tmp_path, block), await _call(tmp_path, deny)
    assert first.is_error
    assert "not today" in str(first.content)
    assert second.is_error
    assert "policy says no" in str(second.content)


async def test_a_hook_rewrites_the_input(tmp_path: Path) -> None:
    code = (
        "import json, sys; data = json.load(sys.stdin); "
        "label = data['tool_input']['label'].upper(); "
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', "
        "'updatedInput': {'label': label}}}))"
    )
    result = await _call(tmp_path, CommandHooks(_hooks("PreToolUse", _python(code))), label="abc")
    assert result.content == "wrote:ABC"


async def test_a_crashing_hook_is_reported_and_the_call_proceeds(tmp_path: Path) -> None:
    problems: list[str] = []
    hooks = CommandHooks(
        _hooks("PreToolUse", "echo boom >&2; kill -SEGV $$"), on_problem=problems.append
    )
    result = await _call(tmp_path, hooks)
    assert not result.is_error
    assert result.content == "wrote:x"
    assert problems
    assert "failed with exit status" in problems[0]


async def test_a_hanging_hook_that_ignores_sigterm_times_out_and_is_killed(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "child.pid"
    problems: list[str] = []
    command = f"trap '' TERM; sleep 60 & echo $! > {shlex.quote(str(marker))}; wait"
    hooks = CommandHooks(_hooks("PreToolUse", command, timeout=0.5), on_problem=problems.append)
    started = time.monotonic()
    result = await _call(tmp_path, hooks)
    assert time.monotonic() - started < 10  # the children sleep 60 s: not waited for
    assert not result.is_error
    assert problems
    assert "timed out" in problems[0]
    from tests.shadow_support import process_gone

    assert process_gone(int(marker.read_text()))


async def test_matchers_accept_regexes_and_claude_code_names(tmp_path: Path) -> None:
    config = _hooks("PreToolUse", "exit 2", matcher="Edit|Write")
    assert config.commands("PreToolUse", "edit_file")
    assert config.commands("PreToolUse", "write_file")
    assert not config.commands("PreToolUse", "read_file")
    assert not config.commands("PreToolUse", "probe_edit_file")  # full match only
    assert _hooks("PreToolUse", "true", matcher="mcp__.*").commands("PreToolUse", "mcp__a__b")
    assert _hooks("PreToolUse", "true").commands("PreToolUse", "anything")
    blocked = await _call(tmp_path, CommandHooks(config), "edit_file")
    passed = await _call(tmp_path, CommandHooks(config), "probe_read")
    assert blocked.is_error
    assert not passed.is_error


def test_bad_hook_settings_are_reported() -> None:
    config = HookConfig.parse(
        {
            "PreToolUse": [
                {"matcher": "(", "hooks": [{"type": "command", "command": "x"}]},
                {"hooks": [{"type": "prompt"}]},
                {"hooks": [{"type": "command", "command": "ok", "timeout": -1}]},
            ],
            "SessionStart": [],
            "Nonsense": [],
        },
        "f",
    )
    text = "\n".join(config.problems)
    assert "not a valid regex" in text
    assert "timeout" in text
    assert "a prompt hook needs a non-empty `prompt`" in text
    # the settings model's message, as for hooks in the editor's settings
    assert "`hooks.Nonsense` = [] is invalid (Input should be 'PreToolUse'" in text
    assert "`hooks.SessionStart`" not in text
    assert [c.command for c in config.commands("PreToolUse", "x")] == ["ok"]


async def test_hook_permission_decisions_reach_the_policy(tmp_path: Path) -> None:
    def decision(kind: str) -> str:
        body = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": kind}}
        return f"echo {shlex.quote(json.dumps(body))}"

    approver = _Yes()
    policy = RulePolicy(approver=approver)
    # "ask" makes a call that would be allowed (a read) go to the user
    asks = CommandHooks(_hooks("PreToolUse", decision("ask")))
    result = await _call(tmp_path, asks, "probe_read", policy)
    assert not result.is_error
    assert len(approver.asked) == 1
    # "allow" skips the prompt for a call that would ask
    allows = CommandHooks(_hooks("PreToolUse", decision("allow")))
    result = await _call(tmp_path, allows, "probe_write", policy)
    assert not result.is_error
    assert len(approver.asked) == 1


async def test_post_hooks_see_the_response_and_can_block_or_add_context(tmp_path: Path) -> None:
    seen = tmp_path / "post.json"
    context = CommandHooks(
        _hooks(
            "PostToolUse",
            f"tee {shlex.quote(str(seen))} > /dev/null; echo "
            + shlex.quote(
                json.dumps(
                    {
                        "hookSpecificOutput": {
                            "hookEventName": "PostToolUse",
                            "additionalContext": "lint ok",
                        }
                    }
                )
            ),
        )
    )
    result = await _call(tmp_path, context, label="p")
    assert not result.is_error
    assert "wrote:p" in str(result.content)
    assert "lint ok" in str(result.content)
    assert json.loads(seen.read_text())["tool_response"] == {
        "content": "wrote:p",
        "is_error": False,
        "success": True,
    }
    blocking = CommandHooks(_hooks("PostToolUse", "echo 'formatter failed' >&2; exit 2"))
    result = await _call(tmp_path, blocking)
    assert result.is_error
    assert "formatter failed" in str(result.content)


async def test_hooks_run_without_the_agent_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-hook-test-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("SOME_COPY", key)
    out = tmp_path / "env.txt"
    await _call(tmp_path, CommandHooks(_hooks("PreToolUse", f"env > {shlex.quote(str(out))}")))
    text = out.read_text()
    assert key not in text
    assert "CLAUDE_PROJECT_DIR=" in text


def _session(api: ScriptedMessagesServer, root: Path, hooks: dict[str, Any]) -> AgentSession:
    safety = load_safety([root], home=root / "home", section={"hooks": hooks})
    assert not safety.problems
    settings = AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "sk-hooks-loop-test", "ANTHROPIC_BASE_URL": api.base_url},
        retry_base_delay=0.01,
    )
    config = SessionConfig(
        settings=settings,
        workspace=Workspace([root]),
        tools=[ProbeRead()],
        permissions=safety.policy(),
        hooks=safety.hooks(),
        transcript_dir=root / "transcripts",
    )
    return close_at_loop_end(AgentSession(AnthropicModelClient(settings), config))


def _group(command: str) -> list[dict[str, Any]]:
    return [{"hooks": [{"type": "command", "command": command}]}]


async def test_user_prompt_submit_adds_context_or_blocks(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("fine"))
    adds = _session(api, tmp_path, {"UserPromptSubmit": _group("echo 'Current branch: main'")})
    result = await adds.run("hello")
    assert result.status == "completed"
    assert "Current branch: main" in api.message_requests[0].user_text()
    blocks = _session(
        api,
        tmp_path,
        {
            "UserPromptSubmit": _group(
                "grep -q password && { echo 'no passwords' >&2; exit 2; }; true"
            )
        },
    )
    before = len(api.message_requests)
    blocked = await blocks.run("my password is hunter2")
    assert blocked.status == "failed"
    assert "no passwords" in (blocked.error or "")
    assert len(api.message_requests) == before  # nothing was sent
    assert not blocks.messages


async def test_a_stop_hook_can_keep_the_agent_going_once(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    script = (
        "import json, sys; data = json.load(sys.stdin)\n"
        "if not data['stop_hook_active']:\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'run the probe first'}))"
    )
    api.extend(
        text_turn("done early"),
        tool_turn(("probe_read", {"label": "checked"})),
        text_turn("really done"),
    )
    session = _session(api, tmp_path, {"Stop": _group(_python(script))})
    result = await session.run("work")
    assert result.status == "completed"
    assert result.text == "really done"
    assert "Stop hook feedback: run the probe first" in api.message_requests[1].user_text()
    assert len(api.message_requests) == 3
