"""Background commands (`run_command` with `run_in_background`, `bash_output`,
`kill_shell`): through the pipeline, in the sandbox, killed with their process group."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from agentls.agent.context import ToolContext
from agentls.agent.permissions import ApprovalChoice, ApprovalRequest
from agentls.agent.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.agent.policy import RulePolicy
from agentls.agent.registry import ToolPool
from agentls.tools import builtin_tools
from agentls.tools.background import close_jobs, jobs_of
from agentls.workspace import ChangeSet, Workspace
from tests.sandbox_support import marked, sandboxed


class _Allow:
    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        return "allow_once"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.txt").write_text("hello\n")
    return sandboxed(Workspace([root]), enabled=True)


async def _call(ws: Workspace, name: str, **input: object) -> ToolCallResult:
    pipeline = Pipeline(
        ToolPool(builtin_tools()), permissions=RulePolicy(mode="default", approver=_Allow())
    )
    ctx = ToolContext(session_id="s", workspace=ws, changes=ChangeSet())
    return await pipeline.execute(ToolCall(f"t-{uuid.uuid4().hex[:6]}", name, input), ctx)


async def test_a_background_command_runs_in_the_sandbox_and_reports_when_done(
    ws: Workspace,
) -> None:
    started = await _call(
        ws, "run_command", command="cat app.txt; echo x > ~/.outside", run_in_background=True
    )
    assert not started.is_error
    assert "Started in the background as bash_1" in str(started.content)
    job = jobs_of(ws).jobs["bash_1"]
    await asyncio.wait([job.task], timeout=60)
    done = await _call(ws, "bash_output", bash_id="bash_1")
    assert "bash_1 has ended" in str(done.content)
    assert "hello" in str(done.content)
    assert not (Path.home() / ".outside").exists()  # the sandbox's home, not the user's
    await close_jobs(ws)


async def test_kill_shell_stops_a_long_command_and_its_children(ws: Workspace) -> None:
    token = f"bg-{uuid.uuid4().hex[:8]}"
    command = f"sh -c 'sleep 300; echo {token}' & sleep 300 # {token}"
    started = await _call(ws, "run_command", command=command, run_in_background=True)
    assert not started.is_error
    for _ in range(100):
        if marked(token):
            break
        await asyncio.sleep(0.1)
    running = await _call(ws, "bash_output", bash_id="bash_1")
    assert "still running" in str(running.content)
    stopped = await _call(ws, "kill_shell", shell_id="bash_1")
    assert "bash_1 is stopped" in str(stopped.content)
    for _ in range(50):
        if not marked(token):
            break
        await asyncio.sleep(0.1)
    assert marked(token) == []
    unknown = await _call(ws, "bash_output", bash_id="bash_9")
    assert unknown.is_error
    assert "No background command 'bash_9'" in str(unknown.content)
    await close_jobs(ws)


async def test_a_denied_background_command_never_starts(ws: Workspace) -> None:
    from agentls.agent.rules import RuleSet, parse_rules

    rules, _ = parse_rules({"deny": ["Bash(rm:*)"]}, "user", root=ws.roots[0])
    pipeline = Pipeline(
        ToolPool(builtin_tools()), permissions=RulePolicy(RuleSet(rules), approver=_Allow())
    )
    ctx = ToolContext(session_id="s", workspace=ws, changes=ChangeSet())
    call = ToolCall("t1", "run_command", {"command": "rm -rf x", "run_in_background": True})
    result = await pipeline.execute(call, ctx)
    assert result.is_error
    assert jobs_of(ws).jobs == {}
