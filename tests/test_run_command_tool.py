"""`run_command`: shadow by default, gated, capped, and nothing it starts outlives it."""

from __future__ import annotations

import asyncio
import shlex
import time
import tracemalloc
from pathlib import Path

import pytest

from agentls.agent.framework.registry import ToolPool
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.tools.run_command import RunCommand, RunCommandConfig, RunCommandInput
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry
from tests.shadow_support import make_ctx, process_gone, stage, unsandboxed


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("on disk\n")
    return folder


def _tool(tmp_path: Path, **config: object) -> RunCommand:
    return RunCommand(
        RunCommandConfig(kill_grace=0.3, **config),  # type: ignore[arg-type]
        shadows=ShadowRegistry(base_dir=tmp_path / "shadows"),
    )


async def test_runs_in_the_shadow_with_staged_edits_and_never_touches_the_tree(
    tmp_path: Path, root: Path
) -> None:
    changes = ChangeSet()
    stage(changes, root / "a.txt", "staged\n")
    tool = _tool(tmp_path)
    command = "cat a.txt; echo made > created.txt; rm a.txt; pwd"
    output = await tool.call(RunCommandInput(command=command), make_ctx(Workspace([root]), changes))
    text = str(output.content)
    assert not output.is_error
    assert "Exit code: 0" in text
    assert "staged" in text
    assert str(tmp_path / "shadows") not in text  # shadow paths are mapped back
    assert not (root / "created.txt").exists()
    assert (root / "a.txt").read_text() == "on disk\n"


async def test_failure_returns_the_exit_code_and_stderr(tmp_path: Path, root: Path) -> None:
    output = await _tool(tmp_path).call(
        RunCommandInput(command="echo oops >&2; exit 3"), make_ctx(Workspace([root]))
    )
    assert output.is_error
    assert "Exit code: 3" in str(output.content)
    assert "stderr:\noops" in str(output.content)


def _spawner(pidfile: Path) -> str:
    """A shell that ignores SIGTERM and starts a grandchild that ignores it too."""
    return (
        "trap '' TERM; "
        f"sh -c \"trap '' TERM; sleep 60\" & echo $! > {shlex.quote(str(pidfile))}; "
        "sleep 60"
    )


async def test_timeout_kills_grandchildren_that_ignore_sigterm(tmp_path: Path, root: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    started = time.monotonic()
    output = await _tool(tmp_path).call(
        RunCommandInput(command=_spawner(pidfile), timeout=0.5),
        make_ctx(unsandboxed(Workspace([root]))),
    )
    assert time.monotonic() - started < 10  # the children sleep 60 s: not waited for
    assert output.is_error
    assert "Timed out after 0.5s" in str(output.content)
    assert process_gone(int(pidfile.read_text()))


async def test_cancel_kills_the_whole_group_within_a_second(tmp_path: Path, root: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    tool = _tool(tmp_path)
    task = asyncio.ensure_future(
        tool.call(
            RunCommandInput(command=_spawner(pidfile)), make_ctx(unsandboxed(Workspace([root])))
        )
    )
    for _ in range(1000):  # the shadow copy is made first; slow on a loaded machine
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.02)
    grandchild = int(pidfile.read_text())
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):  # ProcessCancelled once the runner had it
        await task
    # SIGTERM, a 0.3 s grace, SIGKILL: well under a second; the bound leaves room for a
    # loaded CI machine without letting a runner that waits for the timeout pass.
    assert time.monotonic() - started < 3
    assert process_gone(grandchild)


async def test_an_output_flood_is_capped_without_memory_growth(tmp_path: Path, root: Path) -> None:
    tool = _tool(tmp_path, max_output_bytes=32 * 1024)
    command = "head -c 40000000 /dev/zero | tr '\\0' x; echo; echo THE-END"
    tracemalloc.start()
    try:
        output = await tool.call(RunCommandInput(command=command), make_ctx(Workspace([root])))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    text = str(output.content)
    assert "bytes of output dropped" in text
    assert text.rstrip().endswith("THE-END")
    assert len(text) < 40_000
    assert peak < 8 * 1024 * 1024  # 40 MB went through; a few hundred KB stayed


def test_summary_and_traits() -> None:
    tool = RunCommand()
    assert tool.summary(RunCommandInput(command="npm ci", description="Install")) == (
        "Running: Install"
    )
    assert tool.summary(RunCommandInput(command="npm   ci")) == "Running: npm ci"
    parsed = RunCommandInput(command="ls")
    assert not tool.is_read_only(parsed)
    assert not tool.is_concurrency_safe(parsed)


async def test_asks_by_default_and_runs_when_an_allow_rule_matches(
    tmp_path: Path, root: Path
) -> None:
    tool = _tool(tmp_path)
    rules, _ = parse_rules({"allow": ["Bash(cat:*)"]}, "t", root=root)
    pipeline = Pipeline(ToolPool([tool]), permissions=RulePolicy(RuleSet(rules)))
    ctx = make_ctx(Workspace([root]))
    allowed = await pipeline.execute(ToolCall("1", "run_command", {"command": "cat a.txt"}), ctx)
    asked = await pipeline.execute(ToolCall("2", "run_command", {"command": "touch b"}), ctx)
    assert not allowed.is_error
    assert "on disk" in str(allowed.content)
    assert asked.is_error
    assert "Permission denied" in str(asked.content)


async def test_the_real_tree_honours_allow_rules_and_asks_otherwise(
    tmp_path: Path, root: Path
) -> None:
    tool = _tool(tmp_path, where="workspace")
    ctx = make_ctx(Workspace([root]))
    touch, listing = RunCommandInput(command="touch b"), RunCommandInput(command="ls")
    rules, _ = parse_rules({"allow": ["Bash(touch:*)"]}, "t", root=root)
    policy = RulePolicy(RuleSet(rules))
    allowed = policy.evaluate(tool, touch, ctx, risk=await tool.assess(touch, ctx))
    assert allowed.behavior == "allow"
    # no rule: asked, read-only or not (the real tree is not sandboxed)
    asked = policy.evaluate(tool, listing, ctx, risk=await tool.assess(listing, ctx))
    assert asked.behavior == "ask"
    assert "real workspace" in asked.reason
    assert [r.text for r in asked.remember] == ["run_command(ls)"]
    output = await tool.call(touch, ctx)
    assert not output.is_error
    assert (root / "b").exists()


def test_settings_choose_where_and_how_long(tmp_path: Path, root: Path) -> None:
    from agentls.agent.safety import load_safety

    safety = load_safety(
        [root],
        home=tmp_path / "home",
        section={"runCommand": {"where": "workspace", "timeout": 5}},
        project_section={"runCommand": {"where": "everywhere"}},
    )
    tool = RunCommand.from_settings(safety.run_command, safety.redactor)
    assert isinstance(tool, RunCommand)
    assert tool.config.where == "workspace"
    assert tool.config.timeout == 5
    assert any("runCommand.where" in p for p in safety.problems)
    default = load_safety([root], home=tmp_path / "home")
    assert RunCommand.from_settings(default.run_command, default.redactor).config.where == "shadow"


async def test_a_descendant_that_left_the_process_group_is_killed_too(
    tmp_path: Path, root: Path
) -> None:
    pidfile = tmp_path / "escapee.pid"
    command = f"setsid sleep 60 > /dev/null 2>&1 & echo $! > {shlex.quote(str(pidfile))}"
    output = await _tool(tmp_path).call(
        RunCommandInput(command=command), make_ctx(unsandboxed(Workspace([root])))
    )
    assert not output.is_error
    escapee = int(pidfile.read_text())
    for _ in range(100):
        if process_gone(escapee):
            break
        await asyncio.sleep(0.02)
    assert process_gone(escapee)
