"""The `run_tests` tool: the project's tests, run in the session's shadow copy.

Why the shadow: tests must see the agent's staged edits and the user's unsaved buffers,
and they write (bytecode, caches, fixtures, reports) — never into the user's tree. Why
each runner's machine-readable report (JUnit XML, jest/vitest/mocha/rspec JSON,
`go test -json`, cargo's per-test lines): the model gets counts and failures instead of a
console dump. Raw output is shown only when no report could be read, and then says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, Required, TypedDict

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import CallRisk, Tool, ToolError, ToolInput, ToolOutput
from agentls.tools._execution import confinement_for, execution_risk, plan_execution
from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.findings import display_command, resolve_output_path
from agentls.tools.checks.parsing import parse_report
from agentls.tools.checks.plan import Planner
from agentls.tools.checks.programs import workspace_programs
from agentls.tools.checks.projects import ProjectIndex
from agentls.tools.checks.ran import record_tests_run
from agentls.tools.checks.runner import CheckRun, CheckRunner, Limits, Missing, strip_ansi
from agentls.tools.checks.settings import TestEntry
from agentls.tools.checks.targets import parse_target, target_args
from agentls.workspace.lint_formats import LintFormatError
from agentls.workspace.shadow import ShadowRegistry, ShadowWorkspace, shadow_for
from agentls.workspace.test_reports import ReportError, TestCaseResult, TestReport

__all__ = ["RunTestsInput", "RunTestsTool", "TestConfig"]

_MAX_FAILURES = 20
_FAILURE_CHARS = 2000
_FAILURES_BUDGET = 18_000  # all failure outputs together, so the result fits max_result_chars
_TAIL_CHARS = 4000
_STATUS_RANK = {"timeout": 0, "error": 1, "failed": 2, "passed": 3, "no_tests": 4}
_NOISE_FRAME = re.compile(
    r"^\s+at .*(?:node_modules[/\\]|node:internal|\(<anonymous>\)|/rustc/[0-9a-f]+/library/).*$"
    r"|^\s+\d+: (?:std|core|alloc|__rustc|test)::.*$"
)


@dataclass(frozen=True)
class TestConfig:
    """The run_tests tool's settings: the `tests` setting's entries (built by the host from
    the editor settings and the project file) and its limits."""

    __test__ = False  # not a pytest test class, despite the name

    entries: tuple[TestEntry, ...] = ()
    timeout: float = 300.0
    max_output_bytes: int = 512 * 1024
    interrupt_grace: float = 3.0


class RunTestsInput(ToolInput):
    target: str | None = Field(
        default=None,
        description=(
            "What to run: a test file or folder ('<test file>', '<folder>/'), a test id as "
            "results show it ('<test file>::<Class>::<test>'), "
            "or a name filter ('login'). Default: the whole suite."
        ),
    )
    timeout: float | None = Field(
        default=None, gt=0, le=3600, description="Seconds before the run is killed (default 300)."
    )


class FailedTest(TypedDict):
    """One failing test in `run_tests`'s result."""

    test: str
    outcome: str
    message: str
    location: NotRequired[str]
    output: str
    runner: NotRequired[str]
    """Set when several suites ran."""


class RunTestsResult(TypedDict, total=False):
    """`run_tests`'s result: one suite's, or several summed (each then under `suites`)."""

    runner: str
    status: Required[str]
    passed: int
    failed: int
    errors: int
    skipped: int
    duration: float
    exit_code: int | None
    command: str
    why: str
    install: str
    note: str
    failures: list[FailedTest]
    more_failures: int
    message: str
    raw: bool
    output_tail: str
    suites: list[RunTestsResult]


@dataclass
class _Suite:
    command: CheckCommand
    status: str
    result: RunTestsResult
    report: TestReport | None


class RunTestsTool(Tool[RunTestsInput]):
    name = "run_tests"
    usage = """\
Run the project's tests and return structured results: status, passed/failed/errors/skipped
counts, duration, and for each failure the test id, message, location (file:line) and
trimmed output.

The runner is detected from the project's files (pytest or unittest; vitest, jest or mocha
from package.json, else its `test` script; go test; cargo test; rspec) or set by the
`tests` setting; `runner` and `why` say which ran and why. Use it to check a change: run
the narrowest target first (one file or one test id from a previous result), then wider.
Tests see your staged edits and the user's unsaved buffers. They run in a private copy of
the workspace, so they never modify the user's files.
Limits: the run is killed after `timeout` seconds (default 300) and reported as a timeout
with its partial output; at most 20 failures are detailed. Do not use it to run arbitrary
commands.
Example: {"target": "<test file>::<test name>"}"""
    input_model = RunTestsInput
    search_hint = "pytest vitest jest go test cargo test unit tests junit failures verify"
    max_result_chars = 30_000

    def __init__(self, config: TestConfig | None = None, *, shadows: ShadowRegistry | None = None):
        self.config = config or TestConfig()
        self._shadows = shadows

    def is_read_only(self, input: RunTestsInput | None = None) -> bool:
        return True

    async def assess(self, input: RunTestsInput, ctx: ToolContext) -> CallRisk:
        """Read-only only inside the sandbox: see `agentls.tools._execution`."""
        return execution_risk(self.name, ctx, executables=lambda: self._programs(input, ctx))

    def _programs(self, input: RunTestsInput, ctx: ToolContext) -> list[str]:
        """The test runners' programs as found in the user's workspace (repository
        executables are code the repository ships: see `agentls.tools._execution`)."""
        roots = list(ctx.workspace.roots)
        index = ProjectIndex(roots, ctx.workspace.file_strs())
        target = _workspace_target(input.target, ctx)
        commands = Planner(index, tests=self.config.entries).tests(target)
        return workspace_programs(commands, roots)

    def summary(self, input: RunTestsInput) -> str:
        return f"Running tests: {input.target}" if input.target else "Running tests"

    async def call(self, input: RunTestsInput, ctx: ToolContext) -> ToolOutput:
        record_tests_run(ctx.changes, input.target)  # the checks before review run them again
        with shadow_for(ctx, self._shadows).in_use() as shadow:
            await shadow.sync(ctx.changes)
            return await self._run(input, ctx, shadow)

    async def run_in(
        self, input: RunTestsInput, ctx: ToolContext, shadow: ShadowWorkspace
    ) -> ToolOutput:
        """The tests in a shadow the caller synced (agentls's own checks before review)."""
        return await self._run(input, ctx, shadow)

    async def _run(
        self, input: RunTestsInput, ctx: ToolContext, shadow: ShadowWorkspace
    ) -> ToolOutput:
        target = _target_path(input.target, ctx, shadow)
        suites, notes = await asyncio.to_thread(self._plan, target, shadow)
        if not suites:
            raise ToolError(
                "No test command is configured and none was detected: no pytest/unittest "
                "project (pyproject.toml, setup.py, conftest.py or Python files), no package.json "
                "with vitest, jest, mocha or a test script, no go.mod, Cargo.toml or rspec spec/. "
                "Ask the user how tests are run here (they can set it with the `tests` setting)."
            )
        timeout = input.timeout or self.config.timeout
        deadline = time.monotonic() + timeout
        runner = CheckRunner(shadow, lambda cwd: confinement_for(self.name, ctx, shadow, cwd))
        done: list[_Suite] = []
        for command in suites:
            remaining = max(deadline - time.monotonic(), 1.0)
            done.append(await self._suite(command, input.target, ctx, runner, remaining, timeout))
        result: dict[str, object] = dict(_combine(done))
        if notes:
            result["notes"] = notes
        execution = plan_execution(self.name, ctx, executables=lambda: self._programs(input, ctx))
        result.update(execution.result_fields())
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        return ToolOutput(text, is_error=any(s.status == "missing" for s in done))

    def _plan(
        self, target: Path | None, shadow: ShadowWorkspace
    ) -> tuple[list[CheckCommand], list[str]]:
        """The test commands for the target, and detection's notes on the runners it passed
        over (reads project files: off the event loop)."""
        roots = list(shadow.workspace.roots)
        index = ProjectIndex(roots, shadow.file_strs(), base_of=shadow.to_shadow)
        planner = Planner(index, tests=self.config.entries)
        return planner.tests(target), planner.notes()

    async def _suite(
        self,
        command: CheckCommand,
        target: str | None,
        ctx: ToolContext,
        runner: CheckRunner,
        budget: float,
        asked: float,
    ) -> _Suite:
        shadow = runner.shadow
        parsed = parse_target(
            target,
            command.project,
            lambda raw: _resolve_quietly(raw, ctx),
            lambda path: shadow.to_shadow(path).exists(),
        )
        pytest = command.targets == "pytest"
        limits = Limits(
            min(command.timeout or budget, budget),
            self.config.max_output_bytes,
            # SIGINT first: pytest then reports where it hung and writes its JUnit file.
            (signal.SIGINT, signal.SIGTERM) if pytest else (signal.SIGTERM,),
            self.config.interrupt_grace,
        )
        try:
            run = await runner.run(command, limits, target=target_args(command, parsed))
        except Missing as exc:
            return _missing_suite(command, exc)
        return _read_suite(run, shadow, asked)


def _resolve_quietly(raw: str, ctx: ToolContext) -> Path | None:
    with contextlib.suppress(ToolError):
        return ctx.workspace.resolve(raw)
    return None


def _workspace_target(target: str | None, ctx: ToolContext) -> Path | None:
    """The workspace path a path-like target names (`tests/x.py::test_a:12`), else None."""
    if not target or not target.split():
        return None
    head = target.split()[0].partition("::")[0]
    return _resolve_quietly(re.sub(r":\d+$", "", head), ctx)


def _target_path(target: str | None, ctx: ToolContext, shadow: ShadowWorkspace) -> Path | None:
    """The file or folder a path-like target names (in the session's view), else None."""
    path = _workspace_target(target, ctx)
    if path is None:
        return None
    with contextlib.suppress(Exception):
        if shadow.to_shadow(path).exists():
            return path
    return None


def _missing_suite(command: CheckCommand, exc: Missing) -> _Suite:
    message = f"{command.tool} cannot run: {exc.message}."
    if exc.install:
        message += f" Install it: {exc.install}"
    result: RunTestsResult = {
        "runner": command.tool,
        "status": "missing",
        "message": message,
        "why": command.why,
    }
    if exc.install:
        result["install"] = exc.install
    return _Suite(command, "missing", result, None)


def _report_of(run: CheckRun, shadow: ShadowWorkspace) -> tuple[TestReport | None, str]:
    """The runner's report, or None with the reason nothing structured could be read."""
    command = run.command
    text = run.report_text if run.report_text is not None else strip_ansi(run.result.stdout)
    module = None
    if command.format == "go-json":
        from agentls.tools.checks.detect.go import go_module
        from agentls.tools.checks.projects import ProjectDir

        project = ProjectDir(command.project, run.cwd, command.project, run.cwd)
        module = go_module(project)
    try:
        report = parse_report(command.format, text, strip_ansi(run.result.stderr), go_module=module)
    except (ReportError, LintFormatError) as exc:
        return None, f"{command.tool}'s report could not be read ({exc})"
    if report is None:
        return None, f"{command.tool}'s output is plain text (format `raw`)"
    return report, ""


def _read_suite(run: CheckRun, shadow: ShadowWorkspace, timeout: float) -> _Suite:
    result_ = run.result
    report, unreadable = _report_of(run, shadow)
    status = _status(run, report)
    out: RunTestsResult = {"runner": run.command.tool, "status": status}
    if report is not None:
        out["passed"], out["failed"] = report.passed, report.failed
        out["errors"], out["skipped"] = report.errors, report.skipped
    out["duration"] = round(result_.duration, 2)
    out["exit_code"] = result_.exit_code
    out["command"] = display_command(_without_reports(run, str(shadow.reports_dir)), shadow)
    out["why"] = run.command.why
    if run.notes:
        out["note"] = "; ".join(run.notes)
    if report is not None and report.problems:
        out["failures"] = _failures(report.problems, run, shadow)
    if status == "timeout":
        out["message"] = (
            f"The tests did not finish within {timeout:g} s; the run and all its processes were "
            "stopped. The output tail shows where it was. Run a narrower target, fix the hang, "
            "or pass a larger timeout."
        )
    if report is None:
        out["raw"] = True
        raw_note = (
            f"No structured results could be read: {unreadable}. The status comes from the exit "
            "code; the end of the output follows."
        )
        out["message"] = f"{out['message']} {raw_note}" if "message" in out else raw_note
    if report is None or status in ("timeout", "error", "no_tests"):
        text = shadow.map_output(strip_ansi(result_.stdout + result_.stderr))
        out["output_tail"] = _tail(_without_plumbing(text))
        if "No module named pytest" in result_.stderr:
            out["message"] = f"pytest is not installed for {run.argv[0]}; {run.command.install}"
    return _Suite(run.command, status, out, report)


def _status(run: CheckRun, report: TestReport | None) -> str:
    result = run.result
    if result.timed_out:
        return "timeout"
    if report is not None and (report.failed or report.errors):
        return "failed"
    if report is not None and not report.tests:
        return "no_tests"  # pytest exits 5, vitest and jest 1, go test 0
    if result.exit_code == 0:
        return "passed"
    return "failed" if report is None else "error"


def _without_reports(run: CheckRun, reports: str) -> list[str]:
    """The command minus our reporting plumbing (report files, pytest's junit options)."""
    words: list[str] = []
    for word in run.argv:
        if reports in word:
            if words and words[-1].startswith("-") and "=" not in words[-1]:
                words.pop()  # `--out /path`: the flag goes with its value
            continue
        words.append(word)
    for flag in ("junit_family=xunit1", "junit_logging=all"):
        if flag in words:
            index = words.index(flag)
            del words[index - 1 : index + 1]
    return words


def _without_plumbing(text: str) -> str:
    """Drop the runners' lines about our report file: an internal path the model cannot use."""
    noise = ("generated xml file:", "JSON report written to")
    return "\n".join(line for line in text.splitlines() if not any(n in line for n in noise))


def _failures(
    problems: list[TestCaseResult], run: CheckRun, shadow: ShadowWorkspace
) -> list[FailedTest]:
    shown = problems[:_MAX_FAILURES]
    budget = max(300, min(_FAILURE_CHARS, _FAILURES_BUDGET // len(shown)))
    return [_failure(case, run, shadow, budget) for case in shown]


def _failure(
    case: TestCaseResult, run: CheckRun, shadow: ShadowWorkspace, budget: int
) -> FailedTest:
    details = shadow.map_output(case.details)
    location = _location(details) if run.command.format == "junit-xml" else None
    if location is None and case.file:
        mapped = resolve_output_path(case.file, run.cwd, shadow)
        shown = shadow.workspace.display(mapped) if mapped is not None else case.file
        location = f"{shown}:{case.line}" if case.line else shown
    text = _relevant(details)
    if case.output:
        text += "\n" + shadow.map_output(case.output)
    test_id = shadow.map_output(case.test_id)
    message = shadow.map_output(case.message)[:500]
    output = _trim(text.strip(), budget)
    if location:  # the keys in this order: the model reads where before what
        return {
            "test": test_id,
            "outcome": case.outcome,
            "message": message,
            "location": location,
            "output": output,
        }
    return {"test": test_id, "outcome": case.outcome, "message": message, "output": output}


def _relevant(text: str) -> str:
    """The failure text without stack frames of the runner and libraries."""
    return "\n".join(line for line in text.splitlines() if not _NOISE_FRAME.match(line))


def _location(details: str) -> str | None:
    """The deepest `path:line:` frame in a pytest traceback that lies in the project.

    Frames outside the workspace are shown as absolute paths (site-packages); relative
    ones are ours, and the deepest of them is where the failure happened.
    """
    found = None
    for line in details.splitlines():
        head, sep, _ = line.partition(": ")
        if not sep:
            continue
        path, colon, number = head.rpartition(":")
        if colon and number.isdigit() and path and not path.startswith(("/", "<")):
            found = f"{path}:{number}"
    return found


def _combine(suites: list[_Suite]) -> RunTestsResult:
    """One suite's result as is; several summed, each listed under `suites`."""
    if len(suites) == 1:
        single = suites[0].result.copy()
        if "failures" in single:
            _cap(single)
        return single
    ran = [s for s in suites if s.status != "missing"]
    status = min((s.status for s in ran), key=lambda s: _STATUS_RANK.get(s, 9), default="missing")
    results = [s.result for s in suites]
    out: RunTestsResult = {"status": status}
    out["passed"] = sum(r.get("passed", 0) for r in results)
    out["failed"] = sum(r.get("failed", 0) for r in results)
    out["errors"] = sum(r.get("errors", 0) for r in results)
    out["skipped"] = sum(r.get("skipped", 0) for r in results)
    out["duration"] = round(sum(r.get("duration", 0.0) for r in results), 2)
    failures: list[FailedTest] = [
        {**f, "runner": s.command.tool} for s in suites for f in s.result.get("failures", [])
    ]
    if failures:
        out["failures"] = failures
        _cap(out)
    out["suites"] = [_without_failures(r) for r in results]
    return out


def _without_failures(result: RunTestsResult) -> RunTestsResult:
    """A suite's entry under `suites`: its failures are listed once, at the top."""
    entry = result.copy()
    entry.pop("failures", None)
    return entry


def _cap(result: RunTestsResult) -> None:
    failures = result.get("failures", [])
    if len(failures) > _MAX_FAILURES:
        result["more_failures"] = len(failures) - _MAX_FAILURES
        result["failures"] = failures[:_MAX_FAILURES]


def _trim(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit // 4
    return f"{text[:head]}\n[... {len(text) - limit} chars trimmed ...]\n{text[-(limit - head) :]}"


def _tail(text: str) -> str:
    text = text.strip()
    if len(text) <= _TAIL_CHARS:
        return text
    return f"[... {len(text) - _TAIL_CHARS} chars trimmed ...]\n{text[-_TAIL_CHARS:]}"
