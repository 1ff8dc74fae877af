"""The smaller holes of issue 27 (items 3 and 6), attacked as a hostile repository or model.

Each test fails without its fix:
- a trusted repository's `defaultMode: bypassPermissions` failed the whole run with
  "internal error: ConfigError";
"""

from __future__ import annotations

import json
from pathlib import Path

from agentls.agent.settings_files import load_safety
from agentls.testing import ScriptedMessagesServer, text_turn
from tests.cli_support import cli_env, run_cli


def _bypass_repo(root: Path) -> Path:
    (root / ".claude").mkdir(parents=True)
    (root / "a.py").write_text("X = 1\n")
    settings = {"permissions": {"defaultMode": "bypassPermissions", "allow": ["read_file"]}}
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))
    return root


def test_a_projects_bypass_mode_is_refused_by_name_and_the_rest_applies(tmp_path: Path) -> None:
    root = _bypass_repo(tmp_path / "ws")
    safety = load_safety([root], home=tmp_path / "home", project_trusted=True)
    assert safety.check_mode() == "default"
    refused = [p for p in safety.problems if "bypassPermissions" in p]
    assert refused, safety.problems
    assert "a project may not set" in refused[0]
    assert ".claude/settings.json" in refused[0]


def test_a_trusted_repository_with_bypass_mode_still_runs(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    root = _bypass_repo(tmp_path / "ws")
    env = cli_env(api.base_url, tmp_path / "state")
    api.extend(text_turn("done"))
    result = run_cli("run", "hi", "-w", str(root), "--json", "--trust", env=env)
    assert result.code == 0, result.stderr
    assert "internal error" not in result.stdout + result.stderr
    assert "a project may not set" in result.stderr + result.stdout
    assert api.remaining == 0


def test_explore_gets_no_tool_that_executes_or_reaches_the_network() -> None:
    from agentls.agent.registry import PoolFilter
    from agentls.agent.subagent_run import _pool_filter
    from agentls.agent.subagents import EXPLORE, GENERAL_PURPOSE
    from agentls.tools import builtin_tools

    given = {t.name for t in EXPLORE.select_tools(builtin_tools())}
    assert {"read_file", "grep", "list_files", "search_symbols"} <= given
    assert given.isdisjoint({"run_command", "run_tests", "lint", "web_fetch", "web_search"})
    later = _pool_filter(EXPLORE, PoolFilter())  # tools it could discover during the run
    assert later.denied("mcp__docs__fetch")
    assert later.denied("web_fetch")
    assert not later.denied("read_file")
    assert "run_tests" in {t.name for t in GENERAL_PURPOSE.select_tools(builtin_tools())}
