"""Permission modes × tools, bypass opt-in, plan-mode pools, and deny rules in every mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import RunMode, ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.framework.requirement import Requirement
from agentls.agent.framework.tool import Tool, ToolOutput
from agentls.agent.hooks.runner import HookOutcome
from agentls.agent.permissions.approval import PendingCall, PermissionMode
from agentls.agent.permissions.policy import BypassNotAllowed, RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.agent.run.decision import requirement_for
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.agent.safety import load_safety
from agentls.agent.settings import ConfigError
from agentls.tools import builtin_tools
from agentls.tools.run_command import RunCommand
from agentls.workspace import ChangeSet, Workspace
from tests.agent_support import ProbeWrite


class McpLikeWrite(ProbeWrite):
    name = "mcp__tracker__create_issue"


CALLS: dict[str, dict[str, Any]] = {
    "read_file": {"path": "src/app.py"},
    "grep": {"pattern": "TODO"},
    "list_files": {},
    "edit_file": {"path": "src/app.py", "old_string": "a", "new_string": "b"},
    "write_file": {"path": "src/new.py", "content": "x"},
    "delete_file": {"path": "src/app.py"},
    "run_command": {"command": "npm test"},
    "mcp__tracker__create_issue": {"label": "bug"},
}

# (permission mode, edit delivery) → expected behaviour per tool
MATRIX: dict[tuple[PermissionMode, RunMode], dict[str, str]] = {
    ("default", "review"): {
        "read_file": "allow",
        "grep": "allow",
        "list_files": "allow",
        "edit_file": "allow",  # staged for the user's review
        "write_file": "allow",
        "delete_file": "allow",
        "run_command": "ask",
        "mcp__tracker__create_issue": "ask",
    },
    ("default", "auto"): {
        "read_file": "allow",
        "grep": "allow",
        "list_files": "allow",
        "edit_file": "ask",  # applied at once: ask first
        "write_file": "ask",
        "delete_file": "ask",
        "run_command": "ask",
        "mcp__tracker__create_issue": "ask",
    },
    ("acceptEdits", "auto"): {
        "read_file": "allow",
        "grep": "allow",
        "list_files": "allow",
        "edit_file": "allow",
        "write_file": "allow",
        "delete_file": "allow",
        "run_command": "ask",
        "mcp__tracker__create_issue": "ask",
    },
    ("plan", "review"): {
        "read_file": "allow",
        "grep": "allow",
        "list_files": "allow",
        "edit_file": "deny",
        "write_file": "deny",
        "delete_file": "deny",
        "run_command": "deny",
        "mcp__tracker__create_issue": "deny",
    },
    ("default", "plan"): {
        "read_file": "allow",
        "edit_file": "deny",
        "run_command": "deny",
    },
    ("bypassPermissions", "auto"): {
        "read_file": "allow",
        "grep": "allow",
        "list_files": "allow",
        "edit_file": "allow",
        "write_file": "allow",
        "delete_file": "allow",
        "run_command": "allow",
        "mcp__tracker__create_issue": "allow",
    },
}


def _tools() -> dict[str, Tool[Any]]:
    tools: list[Tool[Any]] = [*builtin_tools(), RunCommand(), McpLikeWrite()]
    return {t.name: t for t in tools}


def _ctx(root: Path, mode: RunMode) -> ToolContext:
    return ToolContext(session_id="s", workspace=Workspace([root]), changes=ChangeSet(), mode=mode)


def _policy(mode: PermissionMode, rules: RuleSet | None = None) -> RulePolicy:
    return RulePolicy(rules, mode=mode, bypass_enabled=True)


def _behavior(policy: RulePolicy, tool: Tool[Any], parsed: Any, ctx: ToolContext) -> str:
    """The one permission decision before anyone is asked: its own refusals (secret
    files, plan mode), then the policy's rules."""
    return requirement_for(PendingCall(tool, parsed, ctx), policy).behavior


@pytest.mark.parametrize(
    ("modes", "expected"), list(MATRIX.items()), ids=[f"{m}-{d}" for m, d in MATRIX]
)
def test_modes_times_tools(
    tmp_path: Path, modes: tuple[PermissionMode, RunMode], expected: dict[str, str]
) -> None:
    mode, delivery = modes
    tools = _tools()
    policy = _policy(mode)
    got = {}
    for name in expected:
        tool = tools[name]
        parsed = tool.parse_input(CALLS[name])
        got[name] = _behavior(policy, tool, parsed, _ctx(tmp_path, delivery))
    assert got == expected


def test_deny_rules_hold_in_bypass_mode(tmp_path: Path) -> None:
    rules, _ = parse_rules(
        {"deny": ["run_command(curl:*)", "edit_file(src/**)"]}, "t", root=tmp_path
    )
    policy = _policy("bypassPermissions", RuleSet(rules))
    tools = _tools()
    ctx = _ctx(tmp_path, "auto")
    curl = tools["run_command"].parse_input({"command": "echo hi && curl evil.sh"})
    edit = tools["write_file"].parse_input({"path": "src/x.py", "content": ""})
    assert policy.evaluate(tools["run_command"], curl, ctx).behavior == ("deny")
    assert policy.evaluate(tools["write_file"], edit, ctx).behavior == ("deny")


def test_a_hooks_denial_wins_in_every_mode(tmp_path: Path) -> None:
    tools = _tools()
    denial = Requirement.from_hook("deny", "outside the workspace")
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        call = PendingCall(
            tools["read_file"],
            tools["read_file"].parse_input({"path": "x"}),
            _ctx(tmp_path, "review"),
            denial,
        )
        decided = requirement_for(call, _policy(mode))
        assert decided.behavior == "deny"
        assert "outside" in decided.reason


class _Denies:
    """A PreToolUse hook that denies every call."""

    async def pre_tool(
        self, tool_name: str, input: dict[str, Any], ctx: ToolContext
    ) -> HookOutcome:
        return HookOutcome(permission=Requirement.from_hook("deny", "outside the workspace"))

    async def post_tool(
        self, tool_name: str, input: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        return HookOutcome()


async def test_a_hook_denial_stops_the_call_in_the_pipeline_even_in_bypass(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    pipeline = Pipeline(ToolPool(list(_tools().values())), _policy("bypassPermissions"), _Denies())
    result = await pipeline.execute(
        ToolCall("1", "read_file", {"path": "notes.txt"}), _ctx(tmp_path, "review")
    )
    assert result.is_error
    assert "outside the workspace" in str(result.content)
    assert "hello" not in str(result.content)


async def test_plan_is_decided_once_with_one_message(tmp_path: Path) -> None:
    """The run's plan mode and the permission mode plan give the same refusal."""
    tools = list(_tools().values())
    call = ToolCall("1", "write_file", {"path": "x.py", "content": "x"})
    by_run = await Pipeline(ToolPool(tools), _policy("default")).execute(
        call, _ctx(tmp_path, "plan")
    )
    by_mode = await Pipeline(ToolPool(tools), _policy("plan")).execute(
        call, _ctx(tmp_path, "review")
    )
    assert by_run.is_error
    assert by_mode.is_error
    assert by_run.content == by_mode.content
    assert "plan mode (read-only)" in str(by_run.content)
    assert not (tmp_path / "x.py").exists()


def test_bypass_refuses_to_start_unless_enabled_in_user_settings(tmp_path: Path) -> None:
    with pytest.raises(BypassNotAllowed):
        RulePolicy(mode="bypassPermissions")
    plain = load_safety([tmp_path], home=tmp_path / "home")
    with pytest.raises(BypassNotAllowed):
        plain.policy(mode="bypassPermissions")
    # a project file cannot enable it …
    project = load_safety(
        [tmp_path], home=tmp_path / "home", project_section={"allowBypassPermissions": True}
    )
    with pytest.raises(BypassNotAllowed):
        project.policy(mode="bypassPermissions")
    assert any("allowBypassPermissions" in p for p in project.problems)
    # … nor choose it as the default mode: refused by name, the run goes on
    selected = load_safety(
        [tmp_path],
        home=tmp_path / "home",
        project_section={"permissions": {"defaultMode": "bypassPermissions"}},
    )
    assert selected.policy().mode == "default"
    assert any("a project may not set" in p for p in selected.problems)
    # the user can
    enabled = load_safety(
        [tmp_path], home=tmp_path / "home", section={"allowBypassPermissions": True}
    )
    assert enabled.policy(mode="bypassPermissions").mode == "bypassPermissions"


def test_changing_mode_later_checks_the_opt_in_too() -> None:
    policy = RulePolicy()
    with pytest.raises(BypassNotAllowed):
        policy.mode = "bypassPermissions"
    policy.mode = "acceptEdits"
    assert policy.mode == "acceptEdits"
    with pytest.raises(ConfigError):
        policy.mode = "yolo"  # type: ignore[assignment]


def test_plan_mode_offers_no_write_tools_and_deny_rules_remove_tools(tmp_path: Path) -> None:
    safety = load_safety(
        [tmp_path],
        home=tmp_path / "home",
        section={"permissions": {"deny": ["Bash", "mcp__tracker"]}},
    )
    tools = list(_tools().values())
    plan = ToolPool.assemble(tools, (), safety.pool_filter("plan"))
    normal = ToolPool.assemble(tools, (), safety.pool_filter())
    assert "edit_file" not in plan.names
    assert "write_file" not in plan.names
    assert "read_file" in plan.names
    assert "grep" in plan.names
    assert "edit_file" in normal.names
    assert "run_command" not in normal.names
    assert "mcp__tracker__create_issue" not in normal.names


def test_editing_agent_configuration_always_asks(tmp_path: Path) -> None:
    rules, _ = parse_rules({"allow": ["Edit(**)"]}, "t", root=tmp_path)
    tools = _tools()
    edit = tools["edit_file"]
    parsed = edit.parse_input(
        {"path": ".claude/settings.json", "old_string": "a", "new_string": "b"}
    )
    ctx = _ctx(tmp_path, "auto")
    accept = _policy("acceptEdits", RuleSet(rules)).evaluate(edit, parsed, ctx)
    bypass = _policy("bypassPermissions", RuleSet(rules)).evaluate(edit, parsed, ctx)
    assert accept.behavior == "ask"
    assert not accept.remember
    assert bypass.behavior == "deny"
    other = edit.parse_input({"path": "src/a.py", "old_string": "a", "new_string": "b"})
    assert _policy("default", RuleSet(rules)).evaluate(edit, other, ctx).behavior == "allow"
