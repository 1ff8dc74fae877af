"""Background commands (`run_command` with `run_in_background`, `bash_output`,
`kill_shell`): through the pipeline, in the sandbox, killed with their process group."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.framework.services import ToolServices
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.tools import builtin_tools
from agentls.tools.background import close_jobs, jobs_of
from agentls.workspace import ChangeSet, Workspace
from tests.sandbox_support import marked, sandboxed


class _Allow:
    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        return "allow_once"


@pytest.fixture
def services(tmp_path: Path) -> ToolServices:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.txt").write_text("hello\n")
    return sandboxed(Workspace([root]), enabled=True)


@pytest.fixture
def ws(services: ToolServices) -> Workspace:
    return services.workspace


async def _call(services: ToolServices, name: str, **input: object) -> ToolCallResult:
    pipeline = Pipeline(
        ToolPool(builtin_tools()), permissions=RulePolicy(mode="default", approver=_Allow())
    )
    ctx = ToolContext(
        session_id="s", workspace=services.workspace, changes=ChangeSet(), services=services
    )
    return await pipeline.execute(ToolCall(f"t-{uuid.uuid4().hex[:6]}", name, input), ctx)


async def test_a_background_command_runs_in_the_sandbox_and_reports_when_done(
    ws: Workspace,
    services: ToolServices,
) -> None:
    started = await _call(
        services, "run_command", command="cat app.txt; echo x > ~/.outside", run_in_background=True
    )
    assert not started.is_error
    assert "Started in the background as bash_1" in str(started.content)
    job = jobs_of(ws).jobs["bash_1"]
    await asyncio.wait([job.task], timeout=60)
    done = await _call(services, "bash_output", bash_id="bash_1")
    assert "bash_1 has ended" in str(done.content)
    assert "hello" in str(done.content)
    assert not (Path.home() / ".outside").exists()  # the sandbox's home, not the user's
    await close_jobs(ws)


async def test_kill_shell_stops_a_long_command_and_its_children(
    ws: Workspace, services: ToolServices
) -> None:
    token = f"bg-{uuid.uuid4().hex[:8]}"
    command = f"sh -c 'sleep 300; echo {token}' & sleep 300 # {token}"
    started = await _call(services, "run_command", command=command, run_in_background=True)
    assert not started.is_error
    for _ in range(100):
        if marked(token):
            break
        await asyncio.sleep(0.1)
    running = await _call(services, "bash_output", bash_id="bash_1")
    assert "still running" in str(running.content)
    stopped = await _call(services, "kill_shell", shell_id="bash_1")
    assert "bash_1 is stopped" in str(stopped.content)
    for _ in range(50):
        if not marked(token):
            break
        await asyncio.sleep(0.1)
    assert marked(token) == []
    unknown = await _call(services, "bash_output", bash_id="bash_9")
    assert unknown.is_error
    assert "No background command 'bash_9'" in str(unknown.content)
    await close_jobs(ws)


async def test_a_denied_background_command_never_starts(
    ws: Workspace, services: ToolServices
) -> None:
    from agentls.agent.rules.rule import RuleSet, parse_rules

    rules, _ = parse_rules({"deny": ["Bash(rm:*)"]}, "user", root=ws.roots[0])
    pipeline = Pipeline(
        ToolPool(builtin_tools()), permissions=RulePolicy(RuleSet(rules), approver=_Allow())
    )
    ctx = ToolContext(session_id="s", workspace=ws, changes=ChangeSet(), services=services)
    call = ToolCall("t1", "run_command", {"command": "rm -rf x", "run_in_background": True})
    result = await pipeline.execute(call, ctx)
    assert result.is_error
    assert jobs_of(ws).jobs == {}


async def _until(check: object, seconds: float = 30.0) -> None:
    for _ in range(int(seconds * 10)):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.1)
    raise AssertionError("timed out waiting")


def _unread(ws: Workspace, job_id: str) -> bytes:
    live = jobs_of(ws).jobs[job_id].live
    assert live is not None
    return bytes(live.streams["stdout"].unread)


async def test_bash_output_returns_only_new_output_while_the_command_runs(
    ws: Workspace, services: ToolServices
) -> None:
    token = f"bg-{uuid.uuid4().hex[:8]}"
    command = f"echo first; printf partial; sleep 1; echo ' line'; echo second; sleep 300 # {token}"
    await _call(services, "run_command", command=command, run_in_background=True)
    await _until(lambda: b"first" in _unread(ws, "bash_1"))
    one = str((await _call(services, "bash_output", bash_id="bash_1")).content)
    assert "bash_1 is still running" in one
    assert "stdout (new):\nfirst" in one
    assert "partial" not in one.split("stdout (new):")[1]  # an unfinished line waits
    await _until(lambda: b"second" in _unread(ws, "bash_1"))
    two = str((await _call(services, "bash_output", bash_id="bash_1")).content)
    out = two.split("stdout (new):")[1]
    assert "first" not in out  # read once
    assert "partial line\nsecond" in out
    three = str((await _call(services, "bash_output", bash_id="bash_1")).content)
    assert "(no new output)" in three
    await _call(services, "kill_shell", shell_id="bash_1")
    await _until(lambda: marked(token) == [])


async def test_bash_output_filter_is_a_regex_and_consumes_what_it_hides(
    ws: Workspace, services: ToolServices
) -> None:
    command = "printf 'ok 1\\nerror: a\\nok 2\\nERROR b\\n'; echo 'warning: x' >&2; exit 3"
    await _call(services, "run_command", command=command, run_in_background=True)
    await asyncio.wait([jobs_of(ws).jobs["bash_1"].task], timeout=60)
    bad = await _call(services, "bash_output", bash_id="bash_1", filter="(")
    assert bad.is_error
    assert "not a valid regular expression" in str(bad.content)
    found = await _call(services, "bash_output", bash_id="bash_1", filter="(?i)^error|warning")
    text = str(found.content)
    assert "has ended" in text
    assert "Exit code: 3" in text
    assert found.is_error  # it failed
    out = text.split("Exit code: 3")[1]
    assert "stdout (new):\nerror: a\nERROR b\nstderr (new):\nwarning: x" in out
    assert "ok 1" not in out
    again = str((await _call(services, "bash_output", bash_id="bash_1")).content)
    assert "ok 2" not in again.split("\n", 2)[-1]  # the filter consumed what it hid
    assert "(no new output)" in again
    await close_jobs(ws)


async def test_attacker_background_command_cannot_write_the_real_workspace(
    ws: Workspace, services: ToolServices, tmp_path: Path
) -> None:
    real = ws.roots[0]
    command = f"echo pwned > {real}/app.txt; echo pwned > {real}/planted.sh; echo done"
    await _call(services, "run_command", command=command, run_in_background=True)
    await asyncio.wait([jobs_of(ws).jobs["bash_1"].task], timeout=60)
    await _call(services, "bash_output", bash_id="bash_1")
    assert (real / "app.txt").read_text() == "hello\n"
    assert not (real / "planted.sh").exists()
    await close_jobs(ws)


async def test_close_jobs_of_one_session_leaves_the_others(
    ws: Workspace, services: ToolServices
) -> None:
    tokens = [f"bg-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for session, token in zip(("a", "b"), tokens, strict=True):
        pipeline = Pipeline(
            ToolPool(builtin_tools()), permissions=RulePolicy(mode="default", approver=_Allow())
        )
        ctx = ToolContext(session_id=session, workspace=ws, changes=ChangeSet(), services=services)
        call = ToolCall("t", "run_command", {"command": f"sleep 300 # {token}"})
        call.input["run_in_background"] = True
        await pipeline.execute(call, ctx)
    await _until(lambda: all(marked(t) for t in tokens))
    await close_jobs(ws, "a")
    await _until(lambda: marked(tokens[0]) == [])
    assert marked(tokens[1])
    await close_jobs(ws)
    await _until(lambda: marked(tokens[1]) == [])
