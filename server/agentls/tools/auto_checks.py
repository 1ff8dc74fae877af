"""The configured linter and the relevant tests, run by agentls itself on a session's staged
edits (`checks.afterEdit: lint`, and the checks before review).

The model asks for `lint` and `run_tests` when it wants them; these run without a call, so
they follow two rules the tools' permission step would otherwise enforce:

- they run only where the tools would run without asking (inside the sandbox, or allowed
  as read-only there); otherwise the check says it was not run and why, and the model can
  still call the tool and be asked;
- they run in their own shadow copy (`<session>-checks`), one check at a time, so a
  baseline staged there never changes what the agent's own `run_tests` sees.

A file's lint baseline is the linter's findings on the file as it was before the session
changed it (its old text staged in a copy of the changeset), kept per session and base
text, like the language servers' baseline in `agentls.tools.after_edit`.
"""

from __future__ import annotations

import asyncio
import json
import re
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.services import ToolServices
from agentls.agent.protocol.results import TestsCheckPayload
from agentls.errors import ToolError
from agentls.tools._execution import execution_risk
from agentls.tools.checks.findings import Finding
from agentls.tools.checks.ran import tests_ran
from agentls.tools.lint import LintConfig, LintTool
from agentls.tools.run_tests import RunTestsInput, RunTestsResult, RunTestsTool, TestConfig
from agentls.workspace.changes import ChangeSet
from agentls.workspace.core import Workspace
from agentls.workspace.shadow import ShadowWorkspace, shadows_of

__all__ = [
    "LintOutcome",
    "Problem",
    "changeset_tests",
    "compare",
    "detected_tests",
    "lint_file",
]

REPORTED = ("error", "warning")
"""Severities a check lists (hints and information would drown them)."""


@dataclass(frozen=True)
class Problem:
    """One problem as the checks report it, whatever its source."""

    path: Path
    line: int
    """1-based."""
    severity: str
    message: str
    code: str
    source: str

    @property
    def key(self) -> tuple[str, str, str]:
        """What matches it with the baseline: not the line (an edit moves lines)."""
        return (self.severity, self.message, self.code)


@dataclass
class _SessionState:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    baselines: dict[tuple[Path, str | None], Counter[tuple[str, str, str]]] = field(
        default_factory=dict
    )


_STATE: weakref.WeakKeyDictionary[ChangeSet, _SessionState] = weakref.WeakKeyDictionary()


def _state(changes: ChangeSet) -> _SessionState:
    return _STATE.setdefault(changes, _SessionState())


def record_tests_run(changes: ChangeSet, target: str | None) -> None:
    """`run_tests` was called with `target`: the checks before review run it again."""
    ran = tests_ran(changes)
    if target in ran:
        ran.remove(target)
    ran.append(target)


def _not_allowed(tool: str, ctx: ToolContext, programs: Callable[[], Sequence[str]]) -> str:
    """Why `tool` would need the user's approval (or is refused) here; "" when it may run
    without asking."""
    if ctx.services.check_tools.denied(tool):
        return f"a permission rule denies `{tool}`"
    needs = execution_risk(tool, ctx, executables=programs).needs
    if needs.kind == "skip":
        return ""
    return needs.reason or f"`{tool}` would need your approval here"


def _shadow(workspace: Workspace, session_id: str) -> ShadowWorkspace:
    return shadows_of(workspace).get(f"{session_id}-checks", workspace)


@dataclass(frozen=True)
class LintOutcome:
    """One file linted against its baseline; `note` says why it was not (fully) checked."""

    new: list[Problem]
    resolved: int
    sources: list[str]
    note: str = ""


async def lint_file(
    services: ToolServices, session_id: str, changes: ChangeSet, path: Path, seconds: float
) -> LintOutcome | None:
    """The problems the staged change to `path` introduced, by the configured linter;
    None when no linter covers the file. Bounded by `seconds` (a late linter is stopped)."""
    change = next((c for c in changes.entries() if c.path == path), None)
    if change is None or change.kind == "delete":
        return None
    ctx = ToolContext(session_id, services.workspace, changes, services=services)
    tool = LintTool(LintConfig(entries=services.check_tools.lint))
    why = _not_allowed("lint", ctx, lambda: tool._programs([path], ctx))
    if why:
        return LintOutcome([], 0, [], f"Lint: not run ({why}).")
    base = change.original_text if change.kind != "create" else None
    try:
        return await asyncio.wait_for(_lint_compare(tool, ctx, path, base), seconds)
    except TimeoutError:
        return LintOutcome([], 0, [], f"Lint: not ready in time ({seconds:g} s).")
    except (ToolError, OSError) as exc:
        return LintOutcome([], 0, [], f"Lint failed: {exc}")


async def _lint_compare(
    tool: LintTool, ctx: ToolContext, path: Path, base: str | None
) -> LintOutcome | None:
    state = _state(ctx.changes)
    shadow = _shadow(ctx.workspace, ctx.session_id)
    async with state.lock:
        with shadow.in_use():
            baseline = state.baselines.get((path, base))
            if baseline is None:
                baseline = Counter()
                if base is not None:
                    then = ctx.changes.copy()
                    then.discard([path])
                    then.stage_write(path, base, base)
                    await shadow.sync(then)
                    before, _, _ = await _lint_once(tool, ctx, shadow, path)
                    baseline = Counter(p.key for p in before or [])
                state.baselines[(path, base)] = baseline
            await shadow.sync(ctx.changes)
            found, sources, note = await _lint_once(tool, ctx, shadow, path)
    if found is None:
        return LintOutcome([], 0, [], note) if note else None
    new, resolved = compare(found, baseline)
    return LintOutcome(new, resolved, sources, note)


async def _lint_once(
    tool: LintTool, ctx: ToolContext, shadow: ShadowWorkspace, path: Path
) -> tuple[list[Problem] | None, list[str], str]:
    """The linters' problems in `path` as the shadow has it now (None: nothing covers it),
    the linters that ran, and a note naming those that could not."""
    plan = await asyncio.to_thread(tool._plan, [path], shadow)
    found = await tool.findings([path], shadow, ctx, plan)
    note = "; ".join(p["message"] for p in found.problems)
    note = f"Lint: {note}." if note else ""
    ran = [c.tool for c in plan.runs if c.tool not in {p["tool"] for p in found.problems}]
    problems = [_problem(f) for f in found.diagnostics if f.path == path]
    if not ran and not problems:
        return None, [], note
    sources = sorted(set(ran) | {p.source for p in problems})
    return [p for p in problems if p.severity in REPORTED], sources, note


def _problem(finding: Finding) -> Problem:
    return Problem(
        finding.path,
        finding.line,
        finding.severity,
        finding.message,
        finding.code or "",
        finding.source,
    )


def compare(
    found: list[Problem], baseline: Counter[tuple[str, str, str]]
) -> tuple[list[Problem], int]:
    """The problems not in the baseline (in line order), and how many of it went away."""
    left = Counter(baseline)
    new: list[Problem] = []
    for problem in sorted(found, key=lambda p: p.line):
        if left[problem.key] > 0:
            left[problem.key] -= 1
        else:
            new.append(problem)
    return new, sum(left.values())


# -- the relevant tests ------------------------------------------------------------------

_TEST_NAME = re.compile(r"^(test_.+|.+_test|.+[._]spec|.+\.test)$")


def _is_test(name: str) -> bool:
    return bool(_TEST_NAME.match(PurePosixPath(name).stem))


def detected_tests(workspace: Workspace, changes: ChangeSet) -> list[str]:
    """The test files for the changed files, workspace-relative: those changed that are
    tests, and those named after a changed file (`test_b.py`, `b_test.go`, `b.test.ts`,
    `b.spec.ts`, `b_spec.rb`)."""
    view = workspace.view(changes)
    changed = [p for p in changes.changed_paths() if view.is_file(p)]
    found = [p for p in changed if _is_test(p.name)]
    stems = {p.stem for p in changed if not _is_test(p.name)}
    if stems:
        names = {f"test_{s}" for s in stems} | {f"{s}_test" for s in stems}
        names |= {f"{s}.test" for s in stems} | {f"{s}.spec" for s in stems}
        names |= {f"{s}_spec" for s in stems}
        for raw in workspace.file_strs():
            path = Path(raw)
            if PurePosixPath(path.name).stem in names and view.is_file(path):
                found.append(path)
    return list(dict.fromkeys(workspace.display(p) for p in found))


async def changeset_tests(
    services: ToolServices, session_id: str, changes: ChangeSet, seconds: float
) -> TestsCheckPayload | None:
    """The relevant tests run on the staged changeset: those the agent ran, else those
    detected for the changed files; None when there are none. Bounded by `seconds`."""
    workspace = services.workspace
    ran = tests_ran(changes)
    targets: list[str | None] = list(ran[-3:]) if ran else []
    if not targets:
        detected = detected_tests(workspace, changes)
        if not detected:
            return None
        targets = [" ".join(detected)]
    which = "the tests the agent ran" if ran else "the tests for the changed files"
    ctx = ToolContext(session_id, workspace, changes, services=services)
    tool = RunTestsTool(TestConfig(entries=services.check_tools.tests))
    why = _not_allowed("run_tests", ctx, lambda: _test_programs(tool, targets, ctx))
    if why:
        return _tests_payload(which, targets, [], f"tests not run ({why})")
    results: list[RunTestsResult] = []
    state = _state(changes)
    shadow = _shadow(workspace, session_id)
    async with state.lock:
        with shadow.in_use():
            await shadow.sync(changes)
            # the limit is the tests' own: the first target always gets all of it, a
            # later one runs only while a second of it is left
            deadline = asyncio.get_running_loop().time() + seconds
            for target in targets:
                left = deadline - asyncio.get_running_loop().time()
                if results and left <= 1:
                    break
                results.append(await _run_tests(tool, ctx, shadow, target, left))
    return _tests_payload(which, targets, results, "")


def _test_programs(tool: RunTestsTool, targets: list[str | None], ctx: ToolContext) -> list[str]:
    return [p for t in targets for p in tool._programs(RunTestsInput(target=t), ctx)]


async def _run_tests(
    tool: RunTestsTool, ctx: ToolContext, shadow: ShadowWorkspace, target: str | None, left: float
) -> RunTestsResult:
    """The tool's result, read back from the JSON it answers the model with."""
    try:
        output = await tool.run_in(RunTestsInput(target=target, timeout=left), ctx, shadow)
    except ToolError as exc:
        return {"status": "missing", "message": str(exc)}
    text = output.content if isinstance(output.content, str) else ""
    try:
        result: RunTestsResult = json.loads(text)  # run_tests wrote it from this type
    except ValueError:
        return {"status": "error", "message": text[:200]}
    return result


def _tests_payload(
    which: str, targets: list[str | None], results: list[RunTestsResult], why_not: str
) -> TestsCheckPayload:
    counts = {
        "passed": sum(r.get("passed", 0) for r in results),
        "failed": sum(r.get("failed", 0) for r in results),
        "errors": sum(r.get("errors", 0) for r in results),
    }
    failures = [f["test"] for r in results for f in r.get("failures", [])]
    statuses = [r["status"] for r in results]
    total = counts["passed"] + counts["failed"] + counts["errors"]
    if why_not:
        status, summary = "not_run", why_not
    elif not results:
        status, summary = "timeout", "tests: no time left to run them"
    elif "timeout" in statuses:
        status, summary = "timeout", "tests: not done in time"
    elif "missing" in statuses or (not total and "error" in statuses):
        message = next((str(r.get("message", "")) for r in results if r.get("message")), "")
        status, summary = "not_run", f"tests not run: {message}"[:200]
    elif counts["failed"] or counts["errors"] or "failed" in statuses:
        first = f" ({failures[0]})" if failures else ""
        status, summary = "failed", f"tests {counts['passed']}/{total} ✗{first}"
    elif not total:
        status, summary = "no_tests", "no tests ran"
    else:
        status, summary = "passed", f"tests {counts['passed']}/{total} ✓"
    return {
        "status": status,
        "summary": summary,
        "which": which,
        "targets": [t or "(the whole suite)" for t in targets],
        "passed": counts["passed"],
        "failed": counts["failed"] + counts["errors"],
        "total": total,
        "failures": failures[:10],
    }
