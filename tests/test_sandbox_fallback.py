"""Where no sandbox can run: refuse or ask (never silently unsandboxed), and the
"runs code this session wrote" label, through the real pipeline and permission policy.

bubblewrap's absence is simulated with `AGENTLS_BWRAP` (a missing binary, or a script
that fails the way bwrap does without user namespaces), never by uninstalling it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.framework.services import ToolServices
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.headless.doctor import check_sandbox
from agentls.sandbox import SandboxConfig, SandboxService, SandboxSettings
from agentls.sandbox.availability import reset_probe_cache
from agentls.tools.lint import LintTool
from agentls.tools.run_command import RunCommand
from agentls.tools.run_tests import RunTestsTool
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry
from tests.sandbox_support import require_bwrap
from tests.shadow_support import stage


class Approver:
    def __init__(self, *choices: ApprovalChoice) -> None:
        self.choices = list(choices)
        self.requests: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self.requests.append(request)
        return self.choices.pop(0) if self.choices else "deny"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (folder / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (folder / "ok.py").write_text("X = 1\n")
    return folder


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AGENTLS_BWRAP", str(tmp_path / "not-installed" / "bwrap"))
    reset_probe_cache()
    yield
    reset_probe_cache()


@pytest.fixture
def no_userns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("AGENTLS_BWRAP", str(fake))
    reset_probe_cache()
    yield
    reset_probe_cache()


def _setup(
    tmp_path: Path, root: Path, approver: Approver, **settings: Any
) -> tuple[Pipeline, ToolContext]:
    services = ToolServices(Workspace([root]))
    if settings:
        services.sandbox.config = SandboxConfig(SandboxSettings.model_validate(settings))
    shadows = ShadowRegistry(base_dir=tmp_path / "shadows")
    tools = [RunCommand(shadows=shadows), RunTestsTool(shadows=shadows), LintTool(shadows=shadows)]
    policy = RulePolicy(approver=approver)
    ctx = ToolContext(
        session_id="s", workspace=services.workspace, changes=ChangeSet(), services=services
    )
    return Pipeline(ToolPool(tools), permissions=policy), ctx


async def _call(pipeline: Pipeline, ctx: ToolContext, name: str, **input: Any) -> ToolCallResult:
    return await pipeline.execute(ToolCall(f"id-{name}", name, input), ctx)


async def test_run_command_refuses_without_bubblewrap_and_says_how_to_fix_it(
    tmp_path: Path, root: Path, no_bwrap: None
) -> None:
    approver = Approver("allow_once")
    pipeline, ctx = _setup(tmp_path, root, approver)
    result = await _call(pipeline, ctx, "run_command", command="echo hi")
    assert result.is_error
    text = str(result.content)
    assert "refuses to run without the sandbox" in text
    assert "bubblewrap (bwrap) is not installed" in text
    assert "apt install bubblewrap" in text
    assert 'sandbox.fallback.run_command` to "ask"' in text
    assert approver.requests == []  # refused before anyone was asked


async def test_run_tests_asks_once_then_runs_unsandboxed_and_says_so(
    tmp_path: Path, root: Path, no_bwrap: None
) -> None:
    approver = Approver("allow_session")
    pipeline, ctx = _setup(tmp_path, root, approver)
    first = await _call(pipeline, ctx, "run_tests")
    assert not first.is_error, first.content
    assert '"sandbox":"off: no sandbox can run here' in str(first.content)
    assert len(approver.requests) == 1
    reason = approver.requests[0].reason
    assert "run_tests would run WITHOUT the sandbox" in reason
    assert "apt install bubblewrap" in reason
    again = await _call(pipeline, ctx, "run_tests")
    assert not again.is_error
    assert len(approver.requests) == 1  # once per session


async def test_a_denied_fallback_prompt_runs_nothing(
    tmp_path: Path, root: Path, no_bwrap: None
) -> None:
    pipeline, ctx = _setup(tmp_path, root, Approver("deny"))
    result = await _call(pipeline, ctx, "lint", paths=["ok.py"])
    assert result.is_error
    assert "the user denied this call" in str(result.content)


async def test_fallback_refuse_and_allow_unsandboxed_false_refuse_tests_and_lint(
    tmp_path: Path, root: Path, no_bwrap: None
) -> None:
    approver = Approver("allow_once", "allow_once")
    pipeline, ctx = _setup(tmp_path, root, approver, fallback={"run_tests": "refuse"})
    refused = await _call(pipeline, ctx, "run_tests")
    assert refused.is_error
    assert "run_tests refuses to run without the sandbox" in str(refused.content)
    pipeline, ctx = _setup(tmp_path, root, approver, allowUnsandboxedCommands=False)
    lint = await _call(pipeline, ctx, "lint", paths=["ok.py"])
    assert lint.is_error
    assert "lint refuses to run without the sandbox" in str(lint.content)
    assert approver.requests == []


async def test_no_user_namespaces_is_reported_with_the_kernel_fix(
    tmp_path: Path, root: Path, no_userns: None
) -> None:
    pipeline, ctx = _setup(tmp_path, root, Approver())
    result = await _call(pipeline, ctx, "run_command", command="true")
    text = str(result.content)
    assert result.is_error
    assert "cannot create a sandbox here" in text
    assert "Permission denied" in text
    assert "unprivileged_userns_clone" in text
    [check] = check_sandbox(ctx.services.sandbox)
    assert check.status == "warn"
    assert "unprivileged_userns_clone" in check.detail
    status = ctx.services.sandbox.status()
    assert status["available"] is False
    assert "user namespaces" in status["fix"]


def test_doctor_says_plainly_when_bubblewrap_is_missing(no_bwrap: None) -> None:
    [check] = check_sandbox(SandboxService())
    assert check.status == "warn"
    assert "bubblewrap (bwrap) is not installed" in check.detail
    assert "apt install bubblewrap" in check.detail
    assert "run_command: refuse" in check.detail


async def test_unsandboxed_tests_over_staged_code_ask_with_the_label(
    tmp_path: Path, root: Path
) -> None:
    approver = Approver("allow_once")
    pipeline, ctx = _setup(tmp_path, root, approver, enabled=False)
    stage(ctx.changes, root / "conftest.py", "import os\n")
    result = await _call(pipeline, ctx, "run_tests")
    assert not result.is_error
    [request] = approver.requests
    assert request.reason == "runs code this session wrote: conftest.py"
    assert '"runs_session_code":"runs code this session wrote: conftest.py"' in str(result.content)


async def test_unsandboxed_lint_of_a_repository_executable_asks(tmp_path: Path, root: Path) -> None:
    bin_dir = root / ".venv" / "bin"  # a virtualenv inside the workspace: its ruff is used
    bin_dir.mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    fake = bin_dir / "ruff"
    fake.write_text(f"#!{sys.executable}\nprint('[]')\n")
    fake.chmod(0o755)
    approver = Approver("deny")
    pipeline, ctx = _setup(tmp_path, root, approver, enabled=False)
    result = await _call(pipeline, ctx, "lint", paths=["ok.py"])
    assert result.is_error
    assert "runs executables from the repository: .venv/bin/ruff" in (approver.requests[0].reason)


async def test_sandboxed_tests_over_staged_code_run_without_asking_but_are_labelled(
    tmp_path: Path, root: Path
) -> None:
    require_bwrap()
    approver = Approver()
    pipeline, ctx = _setup(tmp_path, root, approver)
    stage(ctx.changes, root / "conftest.py", "import os\n")
    result = await _call(pipeline, ctx, "run_tests")
    assert not result.is_error, result.content
    assert approver.requests == []
    text = str(result.content)
    assert '"sandbox":"on"' in text
    assert "runs code this session wrote: conftest.py" in text


async def test_excluded_commands_and_the_models_request_run_outside_only_after_asking(
    tmp_path: Path, root: Path
) -> None:
    require_bwrap()
    approver = Approver("allow_once", "allow_once", "allow_once", "allow_once")
    pipeline, ctx = _setup(tmp_path, root, approver, excludedCommands=["echo outside:*"])
    excluded = await _call(pipeline, ctx, "run_command", command="echo outside now")
    assert "Ran WITHOUT the sandbox: the command matches `sandbox.excludedCommands`" in str(
        excluded.content
    )
    inside = await _call(pipeline, ctx, "run_command", command="cat /proc/1/cmdline")
    assert "bwrap" in str(inside.content)
    assert "WITHOUT" not in str(inside.content)
    # A compound command is excluded only when every part is: this one stays sandboxed.
    mixed = await _call(
        pipeline, ctx, "run_command", command="echo outside now && cat /proc/1/cmdline"
    )
    assert "bwrap" in str(mixed.content)
    assert "WITHOUT" not in str(mixed.content)
    outside = await _call(
        pipeline, ctx, "run_command", command="echo x", dangerously_disable_sandbox=True
    )
    assert "Ran WITHOUT the sandbox: running outside the sandbox was requested" in str(
        outside.content
    )
    assert [r.remember for r in approver.requests][-1] == ()  # always asks, never remembered
    pipeline, ctx = _setup(tmp_path, root, Approver("allow_once"), allowUnsandboxedCommands=False)
    refused = await _call(
        pipeline, ctx, "run_command", command="echo x", dangerously_disable_sandbox=True
    )
    assert refused.is_error
    assert "allowUnsandboxedCommands` is false" in str(refused.content)
