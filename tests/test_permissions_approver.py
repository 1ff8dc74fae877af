""" "ask" decisions through a fake approver: allow once, allow for the session, deny."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.workspace import ChangeSet, Workspace
from tests.agent_support import ProbeRead, ProbeWrite, close_at_loop_end


class FakeApprover:
    """Answers with scripted choices and records every request."""

    def __init__(self, *choices: ApprovalChoice) -> None:
        self.choices = list(choices)
        self.requests: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self.requests.append(request)
        return self.choices.pop(0) if self.choices else "deny"


class CommandInput(ToolInput):
    command: str


class FakeShell(Tool[CommandInput]):
    """Named like the real shell tool so command rules apply; runs nothing."""

    name = "run_command"
    usage = "Pretends to run a command. For tests."
    input_model = CommandInput

    async def call(self, input: CommandInput, ctx: ToolContext) -> str:
        return f"ran:{input.command}"


def _ctx(root: Path, session: str = "s1") -> ToolContext:
    return ToolContext(session_id=session, workspace=Workspace([root]), changes=ChangeSet())


def _pipeline(policy: RulePolicy) -> Pipeline:
    return Pipeline(ToolPool([ProbeRead(), ProbeWrite(), FakeShell()]), permissions=policy)


async def _run(pipeline: Pipeline, ctx: ToolContext, name: str, **input: Any) -> Any:
    return await pipeline.execute(ToolCall(f"id-{name}-{len(input)}", name, input), ctx)


async def test_allow_once_allows_only_that_call(tmp_path: Path) -> None:
    approver = FakeApprover("allow_once", "deny")
    pipeline = _pipeline(RulePolicy(approver=approver))
    first = await _run(pipeline, _ctx(tmp_path), "probe_write", label="a")
    second = await _run(pipeline, _ctx(tmp_path), "probe_write", label="a")
    assert not first.is_error
    assert first.content == "wrote:a"
    assert second.is_error
    assert len(approver.requests) == 2


async def test_allow_for_session_is_remembered_for_that_session_only(tmp_path: Path) -> None:
    approver = FakeApprover("allow_session", "deny")
    policy = RulePolicy(approver=approver)
    pipeline = _pipeline(policy)
    assert not (await _run(pipeline, _ctx(tmp_path, "s1"), "run_command", command="make")).is_error
    again = await _run(pipeline, _ctx(tmp_path, "s1"), "run_command", command="make")
    assert not again.is_error
    assert len(approver.requests) == 1  # not asked again
    assert policy.remembered("s1") == ["run_command(make)"]
    # a different command in the same session asks again (and is denied here)
    other = await _run(pipeline, _ctx(tmp_path, "s1"), "run_command", command="make clean")
    assert other.is_error
    assert len(approver.requests) == 2
    # another session does not inherit the approval
    elsewhere = await _run(pipeline, _ctx(tmp_path, "s2"), "run_command", command="make")
    assert elsewhere.is_error
    assert len(approver.requests) == 3


async def test_a_remembered_command_does_not_cover_a_compound_extension(tmp_path: Path) -> None:
    approver = FakeApprover("allow_session", "deny")
    pipeline = _pipeline(RulePolicy(approver=approver))
    await _run(pipeline, _ctx(tmp_path), "run_command", command="npm test")
    sneaky = await _run(pipeline, _ctx(tmp_path), "run_command", command="npm test; rm -rf ~")
    assert sneaky.is_error
    assert len(approver.requests) == 2


async def test_deny_tells_the_model_not_to_retry(tmp_path: Path) -> None:
    approver = FakeApprover("deny")
    result = await _run(
        _pipeline(RulePolicy(approver=approver)), _ctx(tmp_path), "run_command", command="ls"
    )
    assert result.is_error
    assert "denied" in str(result.content)
    assert "Do not retry" in str(result.content)
    request = approver.requests[0]
    assert request.tool == "run_command"
    assert request.input == {"command": "ls"}
    assert request.remember == ("run_command(ls)",)
    assert request.session_id == "s1"


async def test_the_prompt_shows_the_real_command_not_just_the_models_description(
    tmp_path: Path,
) -> None:
    from agentls.tools.run_command import RunCommand

    approver = FakeApprover("deny")
    pipeline = Pipeline(ToolPool([RunCommand()]), permissions=RulePolicy(approver=approver))
    await pipeline.execute(
        ToolCall("1", "run_command", {"command": "rm -rf ~", "description": "Run the tests"}),
        _ctx(tmp_path),
    )
    assert approver.requests[0].summary == "Running: Run the tests: rm -rf ~"


async def test_without_an_approver_ask_fails_closed_with_a_hint(tmp_path: Path) -> None:
    result = await _run(_pipeline(RulePolicy()), _ctx(tmp_path), "run_command", command="ls")
    assert result.is_error
    assert "allow rule" in str(result.content)
    assert "run_command(ls)" in str(result.content)


async def test_an_ask_rule_cannot_be_remembered_and_beats_allow(tmp_path: Path) -> None:
    rules, _ = parse_rules(
        {"allow": ["run_command"], "ask": ["run_command(git push:*)"]}, "t", root=tmp_path
    )
    approver = FakeApprover("allow_session", "deny")
    pipeline = _pipeline(RulePolicy(RuleSet(rules), approver=approver))
    assert not (await _run(pipeline, _ctx(tmp_path), "run_command", command="git status")).is_error
    assert not approver.requests  # allowed by the rule
    first = await _run(pipeline, _ctx(tmp_path), "run_command", command="git push origin")
    second = await _run(pipeline, _ctx(tmp_path), "run_command", command="git push origin")
    assert not first.is_error
    assert second.is_error  # asked both times
    assert approver.requests[0].remember == ()
    assert not approver.requests[0].can_remember
    assert "git push" in approver.requests[0].reason


async def test_a_failing_approver_denies(tmp_path: Path) -> None:
    class Broken:
        async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
            raise ConnectionError("editor went away")

    result = await _run(
        _pipeline(RulePolicy(approver=Broken())), _ctx(tmp_path), "probe_write", label="x"
    )
    assert result.is_error
    assert "editor went away" in str(result.content)


def _session(
    api: ScriptedMessagesServer, root: Path, policy: RulePolicy, tools: Sequence[Tool[Any]]
) -> AgentSession:
    settings = AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "sk-test-approver-key", "ANTHROPIC_BASE_URL": api.base_url},
        retry_base_delay=0.01,
    )
    config = SessionConfig(
        settings=settings,
        workspace=Workspace([root]),
        tools=tools,
        permissions=policy,
        transcript_dir=root / "transcripts",
    )
    return close_at_loop_end(AgentSession(AnthropicModelClient(settings), config))


async def test_through_the_loop_session_approval_then_denial(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    approver = FakeApprover("allow_session", "deny")
    api.extend(
        tool_turn(("run_command", {"command": "make"})),
        tool_turn(("run_command", {"command": "make"}), ("run_command", {"command": "rm -rf x"})),
        text_turn("done"),
    )
    session = _session(api, tmp_path, RulePolicy(approver=approver), [FakeShell()])
    result = await session.run("build it")
    assert result.status == "completed"
    first = api.message_requests[1].tool_results()
    second = api.message_requests[2].tool_results()
    assert first[0]["content"] == "ran:make"
    assert not first[0]["is_error"]
    assert second[0]["content"].startswith("ran:make")  # + the loop guard's same-result note
    assert second[1]["is_error"]
    assert "Do not retry" in str(second[1]["content"])
    assert [r.input["command"] for r in approver.requests] == ["make", "rm -rf x"]


class StubbornApprover:
    """A prompt that cannot be withdrawn: it ignores the cancellation of its task (like a
    terminal prompt blocked in a thread) and answers "allow for this session" when the
    user finally clicks."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self.requests.append(request)
        self.asked.set()
        while not self.answer.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await self.answer.wait()
        return "allow_session"


async def test_cancel_does_not_wait_for_an_open_prompt_and_a_late_allow_runs_nothing(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    ran: list[str] = []

    class RecordingShell(FakeShell):
        async def call(self, input: CommandInput, ctx: ToolContext) -> str:
            ran.append(input.command)
            return f"ran:{input.command}"

    approver = StubbornApprover()
    policy = RulePolicy(approver=approver)
    api.extend(
        tool_turn(("run_command", {"command": "make"}), ("run_command", {"command": "make"})),
        text_turn("understood"),
    )
    session = _session(api, tmp_path, policy, [RecordingShell()])
    run = asyncio.ensure_future(session.run("build it"))
    await asyncio.wait_for(approver.asked.wait(), 30)
    session.cancel()
    result = await asyncio.wait_for(run, 5)  # the prompt is still open
    assert result.status == "cancelled"
    assert not approver.answer.is_set()
    approver.answer.set()  # the user clicks "Allow for this session" afterwards
    await asyncio.sleep(0.1)
    assert ran == []
    assert policy.remembered(session.id) == []
    # one tool_result per tool_use: the session continues
    follow = await session.run("never mind")
    assert follow.status == "completed"
    results = api.message_requests[-1].tool_results()
    assert len(results) == 2
    assert all(r["is_error"] for r in results)
    assert ran == []
    assert len(approver.requests) == 1
