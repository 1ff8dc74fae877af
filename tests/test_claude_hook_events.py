"""Claude Code's newer hook events and inputs: PostToolUseFailure, PermissionRequest,
SubagentStart; SessionStart once per run even with a sub-agent; `agent_id` / `agent_type`
on a sub-agent's tool calls."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from agentls.agent.claude.subagents import AgentCatalog
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.run.conversation import SessionConfig
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.session import AgentSession
from agentls.agent.safety import load_safety, notifying
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.tools import builtin_tools
from agentls.workspace import Workspace
from tests.agent_support import close_at_loop_end
from tests.subagent_support import Roles


def _append(out: Path, then: str = "") -> list[dict[str, Any]]:
    command = f"{{ cat; echo; }} >> {shlex.quote(str(out))}"
    if then:
        command += f"; echo {shlex.quote(then)}"
    return [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]


def _seen(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


class _Asked:
    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self.asked.append(request)
        return "deny"


def _session(
    api: ScriptedMessagesServer, root: Path, hooks: dict[str, Any]
) -> tuple[AgentSession, _Asked]:
    safety = load_safety([root], home=root / "home", section={"hooks": hooks})
    assert safety.problems == []
    agent = AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "sk-hook-events", "ANTHROPIC_BASE_URL": api.base_url},
        retry_base_delay=0.01,
    )
    asked = _Asked()
    approver = notifying(asked, safety)
    config = SessionConfig(
        settings=agent,
        workspace=Workspace([root]),
        tools=builtin_tools(agents=AgentCatalog([root], home=root / "home")),
        permissions=safety.policy(approver),
        hooks=safety.hooks(transcript_dir=root / "transcripts"),
        transcript_dir=root / "transcripts",
    )
    return close_at_loop_end(AgentSession(AnthropicModelClient(agent), config)), asked


async def test_a_sub_agent_run_fires_session_start_once_and_names_itself(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.md").write_text("one\n")
    out = tmp_path / "events.jsonl"
    context = {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "X1"}}
    hooks = {
        "SessionStart": _append(out),
        "SubagentStart": _append(out, json.dumps(context)),
        "PreToolUse": _append(out),
    }
    task = ("task", {"description": "look", "prompt": "Find [E]", "subagent_type": "explore"})
    Roles(
        session=[tool_turn(task), text_turn("done")],
        subagents={"[E]": [tool_turn(("read_file", {"path": "notes.md"})), text_turn("one")]},
    ).play(api)
    session, _ = _session(api, root, hooks)
    result = await session.run("go")
    assert result.status == "completed"
    seen = _seen(out)
    events = [e["hook_event_name"] for e in seen]
    assert events.count("SessionStart") == 1
    [start] = [e for e in seen if e["hook_event_name"] == "SubagentStart"]
    assert start["agent_type"] == "explore"
    [read] = [e for e in seen if e.get("tool_name") == "Read"]
    assert read["agent_type"] == "explore"
    assert read["agent_id"] == start["agent_id"]
    [task_call] = [e for e in seen if e.get("tool_name") == "Task"]
    assert "agent_id" not in task_call  # the main agent's own call
    child = [r for r in api.message_requests if "Find [E]" in r.user_text()]
    assert "X1" in child[0].user_text()  # SubagentStart's context reached the sub-agent


async def test_post_tool_use_failure_and_permission_request(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    out = tmp_path / "events.jsonl"
    allow = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }
    failure = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUseFailure",
            "additionalContext": "Check the path first.",
        }
    }
    hooks = {
        "PostToolUseFailure": _append(out, json.dumps(failure)),
        "PermissionRequest": [
            {
                "matcher": "Write",
                "hooks": [{"type": "command", "command": f"echo {shlex.quote(json.dumps(allow))}"}],
            }
        ],
    }
    api.extend(
        tool_turn(("read_file", {"path": "missing.txt"})),
        tool_turn(("write_file", {"path": "made.txt", "content": "x\n"})),
        tool_turn(("run_command", {"command": "touch other.txt"})),
        text_turn("done"),
    )
    session, asked = _session(api, root, hooks)
    await session.run("go")
    [failed] = _seen(out)
    assert failed["hook_event_name"] == "PostToolUseFailure"
    assert failed["tool_name"] == "Read"
    assert "missing.txt" in failed["error"]
    result = api.message_requests[1].tool_results()[0]
    assert "Check the path first." in str(result["content"])
    assert not api.message_requests[2].tool_results()[0]["is_error"]  # the hook allowed it
    assert [r.tool for r in asked.asked] == ["run_command"]  # only the other one was asked
