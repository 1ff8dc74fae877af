"""The `run_tests` tool: the project's tests, run in the session's shadow copy.

Why the shadow: tests must see the agent's staged edits and the user's unsaved buffers,
and they write (bytecode, caches, fixtures, reports) — never into the user's tree. Why
JUnit XML: it is the one structured result format nearly every runner can emit, so the
model gets counts and failures instead of a console dump.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.agent.context import ToolContext
from agentls.agent.tool import CallRisk, Tool, ToolError, ToolInput
from agentls.tools._execution import confinement_for, execution_risk, plan_execution
from agentls.workspace.junit import JUnitError, JUnitReport, TestCaseResult, parse_junit
from agentls.workspace.process import ProcessResult, ProcessStartError
from agentls.workspace.process_guard import run_guarded
from agentls.workspace.shadow import ShadowRegistry, ShadowWorkspace, shadow_for
from agentls.workspace.toolchain import project_python, venv_env

__all__ = ["PYTEST_COMMAND", "RunTestsInput", "RunTestsTool", "TestConfig"]

PYTEST_COMMAND: tuple[str, ...] = (
    "{python}",
    "-m",
    "pytest",
    "-p",
    "no:cacheprovider",  # no .pytest_cache, even in the shadow
    "-q",
    "--tb=short",
    "-o",
    "junit_family=xunit1",  # adds file/line → real node ids
    "-o",
    "junit_logging=all",
    "--junitxml={junitxml}",
    "{target}",
)
"""`{python}` project interpreter, `{junitxml}` result file, `{target}` the input target(s)."""

_PYTHON_MARKERS = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "pytest.ini",
    "tox.ini",
    "conftest.py",
)
_MAX_FAILURES = 20
_FAILURE_CHARS = 2000
_FAILURES_BUDGET = 18_000  # all failure outputs together, so the result fits max_result_chars
_TAIL_CHARS = 4000


@dataclass(frozen=True)
class TestConfig:
    """How tests run; the defaults run pytest. A later config loader fills this in.

    `command` is an argv template with `{target}` (dropped when no target is given),
    `{junitxml}` (a result file outside the tree) and `{python}`. Results are read from
    the JUnit file when the command writes one, else from the exit code and output tail.
    """

    __test__ = False  # not a pytest test class, despite the name

    command: tuple[str, ...] | None = None
    timeout: float = 300.0
    max_output_bytes: int = 512 * 1024
    interrupt_grace: float = 3.0


class RunTestsInput(ToolInput):
    target: str | None = Field(
        default=None,
        description=(
            "What to run: a test file or folder ('tests/test_api.py'), a node id "
            "('tests/test_api.py::TestLogin::test_ok'), or a name filter ('login and not slow'). "
            "Default: the whole suite."
        ),
    )
    timeout: float | None = Field(
        default=None, gt=0, le=3600, description="Seconds before the run is killed (default 300)."
    )


class RunTestsTool(Tool[RunTestsInput]):
    name = "run_tests"
    usage = """\
Run the project's tests (pytest for Python projects, or the configured test command) and
return structured results: status, passed/failed/errors/skipped counts, duration, and for
each failure the test id, message, location (file:line) and trimmed output.

Use it to check a change: run the narrowest target first (one file or one test), then
wider. Tests see your staged edits and the user's unsaved buffers. They run in a private
copy of the workspace, so they never modify the user's files.
Limits: the run is killed after `timeout` seconds (default 300) and reported as a timeout
with its partial output; at most 20 failures are detailed. Do not use it to run arbitrary
commands.
Example: {"target": "tests/test_parser.py::test_empty_input"}"""
    input_model = RunTestsInput
    search_hint = "pytest unit tests junit failures verify"
    max_result_chars = 30_000

    def __init__(self, config: TestConfig | None = None, *, shadows: ShadowRegistry | None = None):
        self.config = config or TestConfig()
        self._shadows = shadows

    def is_read_only(self, input: RunTestsInput | None = None) -> bool:
        return True

    def summary(self, input: RunTestsInput) -> str:
        return f"Running tests: {input.target}" if input.target else "Running tests"

    async def assess(self, input: RunTestsInput, ctx: ToolContext) -> CallRisk:
        """Read-only only inside the sandbox: see `agentls.tools._execution`."""
        return execution_risk(self.name, ctx, executables=self._executables(ctx))

    def _executables(self, ctx: ToolContext) -> list[str]:
        first = (self.config.command or PYTEST_COMMAND)[0]
        return [project_python(list(ctx.workspace.roots)) if first == "{python}" else first]

    async def call(self, input: RunTestsInput, ctx: ToolContext) -> dict[str, Any]:
        with shadow_for(ctx, self._shadows).in_use() as shadow:
            return await self._run(input, ctx, shadow)

    async def _run(
        self, input: RunTestsInput, ctx: ToolContext, shadow: ShadowWorkspace
    ) -> dict[str, Any]:
        await shadow.sync(ctx.changes)
        roots = list(ctx.workspace.roots)
        root = _root_of(input.target, ctx, shadow)
        cwd = shadow.shadow_root(root)
        pytest = self.config.command is None
        if pytest and not _looks_like_python(cwd, shadow.files(root)):
            raise ToolError(
                "No test command is configured and this does not look like a Python project "
                "(no pyproject.toml, setup.py, pytest.ini, conftest.py or test_*.py files). "
                "Ask the user how tests are run here."
            )
        junit = shadow.reports_dir / f"junit-{uuid.uuid4().hex}.xml"
        targets = _pytest_targets(input.target, ctx, root, cwd) if pytest else _raw(input.target)
        argv = _expand(
            self.config.command or PYTEST_COMMAND,
            targets,
            {"{python}": project_python(roots), "{junitxml}": str(junit)},
        )
        timeout = input.timeout or self.config.timeout
        env = {**venv_env(roots), **shadow.python_env(root), "PYTHONUNBUFFERED": "1"}
        box = confinement_for(self.name, ctx, shadow, cwd)
        try:
            result = await run_guarded(
                argv,
                cwd=cwd,
                env=env,
                timeout=timeout,
                max_output_bytes=self.config.max_output_bytes,
                # SIGINT first: pytest then reports where it hung and writes its JUnit file.
                stop_signals=(signal.SIGINT, signal.SIGTERM) if pytest else (signal.SIGTERM,),
                kill_grace=self.config.interrupt_grace,
                confinement=box,
            )
        except ProcessStartError as exc:
            raise ToolError(f"{exc} Check the configured test command.") from exc
        finally:
            report = _read_report(junit)
        out = _result(result, report, shadow, timeout, pytest, argv)
        plan = plan_execution(self.name, ctx, executables=self._executables(ctx))
        return {**out, **plan.result_fields()}


def _raw(target: str | None) -> list[str]:
    return [target] if target else []


def _expand(template: Sequence[str], targets: list[str], values: dict[str, str]) -> list[str]:
    """`{target}` alone expands to the target args; inside a word (`--filter={target}`) it is
    replaced, and the word dropped when there is no target."""
    argv: list[str] = []
    for part in template:
        if part == "{target}":
            argv.extend(targets)
            continue
        if "{target}" in part:
            if not targets:
                continue
            part = part.replace("{target}", " ".join(targets))
        for key, value in values.items():
            part = part.replace(key, value)
        argv.append(part)
    return argv


def _root_of(target: str | None, ctx: ToolContext, shadow: ShadowWorkspace) -> Path:
    """The root a path-like target lies in (tests run from there); else the first root."""
    if target and len(ctx.workspace.roots) > 1:
        with contextlib.suppress(ToolError):
            return shadow.root_for(ctx.workspace.resolve(target.split("::")[0]))
    return ctx.workspace.roots[0]


def _looks_like_python(cwd: Path, files: list[Path]) -> bool:
    if any((cwd / name).is_file() for name in _PYTHON_MARKERS):
        return True
    return any(p.suffix == ".py" and p.name.startswith("test_") for p in files) or any(
        p.name.endswith("_test.py") for p in files
    )


def _pytest_targets(target: str | None, ctx: ToolContext, root: Path, cwd: Path) -> list[str]:
    """Paths and node ids become root-relative pytest args; anything else is a `-k` filter."""
    if not target:
        return []
    tokens = target.split()
    paths = [_as_test_path(token, ctx, root, cwd) for token in tokens]
    if all(p is not None for p in paths):
        return [p for p in paths if p is not None]
    if "::" in target or (len(tokens) == 1 and target.endswith(".py")):
        raise ToolError(
            f"No test file {target.split('::')[0]} in the workspace (nor staged in this session)."
        )
    return ["-k", target]


def _as_test_path(token: str, ctx: ToolContext, root: Path, cwd: Path) -> str | None:
    path_part, sep, rest = token.partition("::")
    try:
        absolute = ctx.workspace.resolve(path_part)
    except ToolError:
        return None
    if not absolute.is_relative_to(root):
        return None
    relative = absolute.relative_to(root)
    if not (cwd / relative).exists():  # the synced copy: staged new test files count
        return None
    return f"{relative.as_posix()}{sep}{rest}"


def _read_report(path: Path) -> JUnitReport | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    finally:
        path.unlink(missing_ok=True)
    try:
        return parse_junit(text)
    except JUnitError:
        return None


def _status(result: ProcessResult, report: JUnitReport | None, pytest: bool) -> str:
    if result.timed_out:
        return "timeout"
    if report is not None and (report.failed or report.errors):
        return "failed"
    if result.exit_code == 0:
        return "passed"
    if pytest and result.exit_code == 5:
        return "no_tests"
    return "failed" if report is None and result.exit_code == 1 else "error"


def _result(
    result: ProcessResult,
    report: JUnitReport | None,
    shadow: ShadowWorkspace,
    timeout: float,
    pytest: bool,
    argv: list[str],
) -> dict[str, Any]:
    status = _status(result, report, pytest)
    out: dict[str, Any] = {"status": status}
    if report is not None:
        out.update(
            passed=report.passed,
            failed=report.failed,
            errors=report.errors,
            skipped=report.skipped,
        )
    out["duration"] = round(result.duration, 2)
    out["exit_code"] = result.exit_code
    out["command"] = shadow.map_output(shlex.join(_shown_argv(argv)))
    if report is not None and report.problems:
        shown = report.problems[:_MAX_FAILURES]
        budget = max(300, min(_FAILURE_CHARS, _FAILURES_BUDGET // len(shown)))
        out["failures"] = [_failure(case, shadow, budget) for case in shown]
        if len(report.problems) > _MAX_FAILURES:
            out["more_failures"] = len(report.problems) - _MAX_FAILURES
    if status == "timeout":
        out["message"] = (
            f"The tests did not finish within {timeout:g} s; the run and all its processes were "
            "stopped. The output tail shows where it was. Run a narrower target, fix the hang, "
            "or pass a larger timeout."
        )
    if status in ("timeout", "error", "no_tests") or report is None:
        out["output_tail"] = _tail(
            _without_plumbing(shadow.map_output(result.stdout + result.stderr))
        )
        if pytest and "No module named pytest" in result.stderr:
            out["message"] = (
                f"pytest is not installed for {argv[0]}; ask the user to install it in the "
                "project's environment."
            )
    return out


def _without_plumbing(text: str) -> str:
    """Drop pytest's line about our result file: an internal path the model cannot use."""
    return "\n".join(line for line in text.splitlines() if "generated xml file:" not in line)


def _shown_argv(argv: list[str]) -> list[str]:
    """The command minus our reporting plumbing, which is noise to the model."""
    shown = [a for a in argv if not a.startswith("--junitxml=")]
    for flag in ("junit_family=xunit1", "junit_logging=all"):
        if flag in shown:
            index = shown.index(flag)
            del shown[index - 1 : index + 1]
    return shown


def _failure(case: TestCaseResult, shadow: ShadowWorkspace, budget: int) -> dict[str, Any]:
    details = shadow.map_output(case.details)
    location = _location(details) or (f"{case.file}:{case.line}" if case.file else None)
    text = details
    if case.output:
        text += "\n" + shadow.map_output(case.output)
    entry: dict[str, Any] = {
        "test": case.test_id,
        "outcome": case.outcome,
        "message": shadow.map_output(case.message)[:500],
    }
    if location:
        entry["location"] = location
    entry["output"] = _trim(text.strip(), budget)
    return entry


def _location(details: str) -> str | None:
    """The deepest `path:line:` frame in the traceback that lies in the project.

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
