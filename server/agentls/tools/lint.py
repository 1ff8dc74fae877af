"""The `lint` tool: the project's own linters and type checkers, on the session's view.

Why in the shadow: the agent's staged edits and the user's unsaved buffers are what need
checking, and linters write caches; both point to the private copy. Why the project's own
tools and configuration (detected from its files, or named in the `lint` setting): a
diagnostic the user's CI would not raise is noise to the model. Every linter's findings
come back in one shape, and every file is either checked or listed with the reason it
was not.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, Required, TypedDict

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import NO_RISK, CallRisk, Tool, ToolError, ToolInput, ToolOutput
from agentls.tools._execution import confinement_for, execution_risk, plan_execution
from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.findings import Finding, map_finding, shown_command
from agentls.tools.checks.parsing import LintFormatError, parse_findings
from agentls.tools.checks.plan import LintPlan, Planner
from agentls.tools.checks.programs import workspace_programs
from agentls.tools.checks.projects import ProjectIndex
from agentls.tools.checks.runner import CheckRun, CheckRunner, Limits, Missing, strip_ansi
from agentls.tools.checks.settings import LintEntry
from agentls.workspace.shadow import ShadowRegistry, ShadowWorkspace, shadow_for

log = logging.getLogger(__name__)

__all__ = ["LintConfig", "LintFindings", "LintInput", "LintTool"]

_CHUNK_FILES = 200  # files per linter invocation: keeps argv far below ARG_MAX
_MAX_ELSEWHERE = 20
_RAW_TAIL = 3000
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class LintConfig:
    """The lint tool's settings: the `lint` setting's entries (built by the host from the
    editor settings and the project file) and its limits."""

    entries: tuple[LintEntry, ...] = ()
    syntax_check: bool = True
    timeout: float = 120.0
    max_diagnostics: int = 200
    max_output_bytes: int = 8 * 1024 * 1024
    """Per stream: eslint's JSON carries the source of each file with findings."""


class LintInput(ToolInput):
    paths: list[str] | None = Field(
        default=None,
        description=(
            "Files or folders to lint, workspace-relative or absolute. "
            "Default: the files changed in this session, else the files open in the editor."
        ),
    )


class LintCheck(TypedDict):
    """One linter that ran, under `checks` in `lint`'s result."""

    tool: str
    why: str
    command: str
    note: NotRequired[str]


class RawOutput(TypedDict):
    """A linter with plain-text output (format `raw`), under `raw_output`."""

    tool: str
    exit_code: int | None
    note: str
    output: str


class Unchecked(TypedDict):
    """Files of a kind no linter is configured for, under `not_configured`."""

    type: str
    reason: str
    paths: list[str]
    more: NotRequired[int]


class LintResult(TypedDict, total=False):
    """`lint`'s result (before the execution fields every checking tool adds)."""

    summary: Required[str]
    diagnostics: Required[list[dict[str, object]]]
    truncated: int
    other_files: list[dict[str, object]]
    other_files_more: int
    checks: list[LintCheck]
    problems: list[dict[str, str]]
    raw_output: list[RawOutput]


@dataclass
class LintFindings:
    diagnostics: list[Finding] = field(default_factory=list)
    elsewhere: list[Finding] = field(default_factory=list)
    checks: list[LintCheck] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)
    raw: list[RawOutput] = field(default_factory=list)
    linted: set[Path] = field(default_factory=set)
    """Files a linter read successfully: its parser is authoritative for them."""
    seen: set[tuple[object, ...]] = field(default_factory=set)
    """Findings already listed (cargo reports a library's findings once per target)."""

    def add(self, finding: Finding, in_targets: bool) -> None:
        key = (finding.file, finding.line, finding.column, finding.code, finding.message)
        if key in self.seen:
            return
        self.seen.add(key)
        (self.diagnostics if in_targets else self.elsewhere).append(finding)


SyntaxChecker = Callable[[Path, str], Iterable[Any]]


class LintTool(Tool[LintInput]):
    name = "lint"
    usage = """\
Lint files with the project's own linters and type checkers and return structured
diagnostics: file, line, column, severity, code, message, source (the tool).

The tools are detected from the project's files: eslint or biome and tsc for
JavaScript/TypeScript (from node_modules/.bin), ruff plus mypy/pyright/pylint when
configured for Python, go vet and gofmt for Go, cargo clippy (or cargo check) for Rust,
rubocop for Ruby; the `lint` setting adds or overrides them. `checks` says which ran and
why. Use it after editing files to catch mistakes before running tests or finishing. It
checks what you see: your staged edits and the user's unsaved editor buffers. It runs on a
private copy of the workspace, never changes files, and applies no fixes.
Without `paths` it lints the files changed in this session, or else the open files.
Whole-project checkers (tsc, go vet, cargo) also report problems in other files
(`other_files`): a change can break its callers. Files no linter covers are listed under
`not_configured` with the reason. A linter that is missing or fails is an error naming
the fix (e.g. "run npm ci").
Limits: at most ~200 diagnostics are listed (errors first); a linter times out after 2 min.
Example: {"paths": ["<path>", "<folder>/"]}"""
    input_model = LintInput
    search_hint = "ruff eslint tsc mypy clippy go vet diagnostics type errors check code style"

    def __init__(
        self,
        config: LintConfig | None = None,
        *,
        shadows: ShadowRegistry | None = None,
        syntax_checker: SyntaxChecker | None = None,
    ) -> None:
        self.config = config or LintConfig()
        self._shadows = shadows
        self._syntax_checker = syntax_checker

    def is_read_only(self, input: LintInput | None = None) -> bool:
        return True

    async def assess(self, input: LintInput, ctx: ToolContext) -> CallRisk:
        """Read-only only inside the sandbox: see `agentls.tools._execution`."""
        try:
            files = await _targets(input.paths, ctx)
        except ToolError:
            return NO_RISK  # the call itself reports the bad path
        return execution_risk(self.name, ctx, executables=lambda: self._programs(files, ctx))

    def _programs(self, files: list[Path], ctx: ToolContext) -> list[str]:
        """The linters' programs as found in the user's workspace (repository executables
        are code the repository ships: see `agentls.tools._execution`)."""
        roots = list(ctx.workspace.roots)
        index = ProjectIndex(roots, ctx.workspace.file_strs())
        return workspace_programs(Planner(index, lint=self.config.entries).lint(files).runs, roots)

    def summary(self, input: LintInput) -> str:
        if not input.paths:
            return "Linting changed files"
        if len(input.paths) == 1:
            return f"Linting {input.paths[0]}"
        return f"Linting {len(input.paths)} paths"

    async def call(self, input: LintInput, ctx: ToolContext) -> ToolOutput:
        files = await _targets(input.paths, ctx)
        if not files:
            raise ToolError(
                "Nothing to lint: no files changed in this session and none open in the editor. "
                "Pass `paths`."
            )
        with shadow_for(ctx, self._shadows).in_use() as shadow:
            await shadow.sync(ctx.changes)
            return await self._lint(files, shadow, ctx)

    async def _lint(
        self, files: list[Path], shadow: ShadowWorkspace, ctx: ToolContext
    ) -> ToolOutput:
        plan = await asyncio.to_thread(self._plan, files, shadow)
        found = await self.findings(files, shadow, ctx, plan)
        result: dict[str, object] = dict(self._result(files, found))
        if plan.unchecked:
            result["not_configured"] = [
                _unchecked(kind, reason, [ctx.workspace.display(p) for p in paths])
                for kind, (reason, paths) in plan.unchecked.items()
            ]
        if plan.notes:
            result["notes"] = plan.notes
        execution = plan_execution(self.name, ctx, executables=lambda: self._programs(files, ctx))
        result.update(execution.result_fields())
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        return ToolOutput(text, is_error=bool(found.problems))

    async def findings(
        self,
        files: list[Path],
        shadow: ShadowWorkspace,
        ctx: ToolContext,
        plan: LintPlan | None = None,
    ) -> LintFindings:
        """The linters' findings for `files` in a synced shadow, not shaped into a tool
        result: agentls's own checks of staged edits compare them with a baseline
        (`agentls.tools.auto_checks`)."""
        if plan is None:
            plan = await asyncio.to_thread(self._plan, files, shadow)
        found = LintFindings()
        runner = CheckRunner(shadow, lambda cwd: confinement_for(self.name, ctx, shadow, cwd))
        targets = set(files)
        jobs = [
            self._run_linter(runner, command, paths, targets, found)
            for command, paths in plan.runs.items()
        ]
        await asyncio.gather(*jobs)
        if self.config.syntax_check:
            self._check_syntax(files, shadow, found)
        return found

    def _plan(self, files: list[Path], shadow: ShadowWorkspace) -> LintPlan:
        """Which linter checks which file (reads project files: off the event loop)."""
        roots = list(shadow.workspace.roots)
        index = ProjectIndex(roots, shadow.file_strs(), base_of=shadow.to_shadow)
        return Planner(index, lint=self.config.entries).lint(files)

    async def _run_linter(
        self,
        runner: CheckRunner,
        command: CheckCommand,
        paths: list[Path],
        targets: set[Path],
        found: LintFindings,
    ) -> None:
        limits = Limits(command.timeout or self.config.timeout, self.config.max_output_bytes)
        chunks = (
            [paths[i : i + _CHUNK_FILES] for i in range(0, len(paths), _CHUNK_FILES)]
            if command.per_file
            else [paths]
        )
        for chunk in chunks:
            try:
                run = await runner.run(command, limits, paths=chunk if command.per_file else ())
            except Missing as exc:
                found.problems.append(_missing(command, exc))
                return
            if self._read(run, targets, runner.shadow, found):
                found.linted.update(chunk)

    def _read(
        self,
        run: CheckRun,
        targets: set[Path],
        shadow: ShadowWorkspace,
        found: LintFindings,
    ) -> bool:
        """Parse one run into findings; False (with a `problems` entry) when it failed."""
        command, result = run.command, run.result
        tool = command.tool
        entry: LintCheck = {
            "tool": tool,
            "why": command.why,
            "command": shown_command(run, shadow),
        }
        if run.notes:
            entry["note"] = "; ".join(run.notes)
        found.checks.append(entry)
        if result.timed_out:
            found.problems.append(
                {
                    "tool": tool,
                    "message": f"timed out after {result.duration:.0f} s and was stopped",
                }
            )
            return False
        if result.stdout_dropped and command.format != "raw":
            why = f"its output was over {self.config.max_output_bytes} bytes; lint fewer files"
            found.problems.append(_failed(run, shadow, why))
            return False
        stdout, stderr = strip_ansi(result.stdout), strip_ansi(result.stderr)
        try:
            raw = parse_findings(command.format, stdout, stderr)
        except LintFormatError as exc:
            found.problems.append(
                _failed(run, shadow, f"its output is not {command.format}: {exc}")
            )
            return False
        if command.format == "raw":
            if result.exit_code or stdout.strip() or stderr.strip():
                found.raw.append(_raw(run, shadow))
            return True
        if not raw and result.exit_code not in (0, None):
            found.problems.append(_failed(run, shadow, f"exit code {result.exit_code}"))
            return False
        for diag in raw:
            mapped = map_finding(diag, run.cwd, shadow, tool)
            if mapped is None:
                continue
            if mapped.path in targets or not command.per_file:
                found.add(mapped, in_targets=mapped.path in targets)
        return True

    def _check_syntax(
        self, files: list[Path], shadow: ShadowWorkspace, found: LintFindings
    ) -> None:
        checker = self._syntax_checker or _index_syntax_checker()
        if checker is None:
            return
        # Only files no linter parsed: a linter's parser knows its language's newest syntax
        # and words its errors better; tree-sitter would repeat or, worse, contradict it.
        for path in files:
            if path in found.linted:
                continue
            shown = shadow.workspace.display(path)
            try:
                text = shadow.to_shadow(path).read_text(encoding="utf-8")
                errors = list(checker(path, text))
            except Exception:  # a checker failure must not cost the linters' results
                log.debug("syntax check failed for %s", path, exc_info=True)
                continue
            for error in errors:
                diag = _syntax_finding(error, path, shown)
                if diag is not None:
                    found.diagnostics.append(diag)

    def _result(self, files: list[Path], found: LintFindings) -> LintResult:
        diags = sorted(found.diagnostics, key=_order)
        errors = sum(1 for d in diags if d.severity == "error")
        summary = (
            f"{len(diags)} diagnostics ({errors} errors) in {len(files)} files"
            if diags
            else f"No problems found in {len(files)} files"
        )
        if found.problems:
            summary += f"; {len(found.problems)} linter(s) could not run (see `problems`)"
        result: LintResult = {
            "summary": summary,
            "diagnostics": [d.as_dict() for d in diags[: self.config.max_diagnostics]],
        }
        if len(diags) > self.config.max_diagnostics:
            result["truncated"] = len(diags) - self.config.max_diagnostics
        if found.elsewhere:
            others = sorted(found.elsewhere, key=_order)
            result["other_files"] = [d.as_dict() for d in others[:_MAX_ELSEWHERE]]
            if len(others) > _MAX_ELSEWHERE:
                result["other_files_more"] = len(others) - _MAX_ELSEWHERE
        result["checks"] = found.checks
        if found.problems:
            result["problems"] = found.problems
        if found.raw:
            result["raw_output"] = found.raw
        while len(json.dumps(result)) > self.max_result_chars - 500 and result["diagnostics"]:
            keep = len(result["diagnostics"]) * 3 // 4
            result["truncated"] = result.get("truncated", 0) + len(result["diagnostics"]) - keep
            result["diagnostics"] = result["diagnostics"][:keep]
        return result


def _order(finding: Finding) -> tuple[int, str, int, int]:
    return (_SEVERITY_ORDER.get(finding.severity, 3), finding.file, finding.line, finding.column)


def _unchecked(kind: str, reason: str, paths: list[str]) -> Unchecked:
    entry: Unchecked = {"type": kind, "reason": reason, "paths": paths[:5]}
    if len(paths) > 5:
        entry["more"] = len(paths) - 5
    return entry


def _missing(command: CheckCommand, exc: Missing) -> dict[str, str]:
    entry = {"tool": command.tool, "message": f"{exc.message}; its files were not checked"}
    if exc.install:
        entry["install"] = exc.install
        entry["message"] += f". Install it: {exc.install}"
    entry["why"] = command.why
    return entry


def _failed(run: CheckRun, shadow: ShadowWorkspace, why: str) -> dict[str, str]:
    output = shadow.map_output(strip_ansi(run.result.stderr or run.result.stdout)).strip()
    return {
        "tool": run.command.tool,
        "message": f"{run.command.tool} failed ({why}); no findings could be read",
        "output": output[-1500:],
    }


def _raw(run: CheckRun, shadow: ShadowWorkspace) -> RawOutput:
    text = shadow.map_output(strip_ansi(run.result.stdout + run.result.stderr)).strip()
    if len(text) > _RAW_TAIL:
        text = f"[... {len(text) - _RAW_TAIL} chars trimmed ...]\n{text[-_RAW_TAIL:]}"
    return {
        "tool": run.command.tool,
        "exit_code": run.result.exit_code,
        "note": "this linter's output is plain text (format `raw`): nothing structured could "
        "be read from it",
        "output": text,
    }


def _index_syntax_checker() -> SyntaxChecker | None:
    """`agentls.index.syntax_errors` when the index module exists."""
    try:
        module = importlib.import_module("agentls.index")
    except ImportError:
        return None
    checker = getattr(module, "syntax_errors", None)
    return checker if callable(checker) else None


def _syntax_finding(error: Any, path: Path, shown: str) -> Finding | None:
    """One syntax error from the index, duck-typed.

    The index's `SyntaxProblem` (`line`, `col`, `message`) counts from 0; a mapping or
    object with `line`/`column` is taken as 1-based, like every other diagnostic here.
    """
    if isinstance(error, Mapping):
        line, column, message = error.get("line"), error.get("column"), error.get("message")
    elif hasattr(error, "col"):
        line, column = getattr(error, "line", None), getattr(error, "col", None)
        message = getattr(error, "message", None)
        if isinstance(line, int) and isinstance(column, int):
            line, column = line + 1, column + 1
    else:
        line, column = getattr(error, "line", None), getattr(error, "column", None)
        message = getattr(error, "message", None)
    if not isinstance(line, int):
        return None
    return Finding(
        path=path,
        file=shown,
        line=line,
        column=column if isinstance(column, int) else 1,
        severity="error",
        code="syntax",
        message=str(message or "syntax error"),
        source="tree-sitter",
    )


async def _targets(raw_paths: list[str] | None, ctx: ToolContext) -> list[Path]:
    """Files to lint as absolute workspace paths, in the session's layered view."""
    ws = ctx.workspace
    view = ws.view(ctx.changes)
    if not raw_paths:
        staged = [p for p in ctx.changes.changed_paths() if view.is_file(p)]
        chosen = staged or [p for p in ws.open_paths() if ws.contains(p)]
        return list(dict.fromkeys(chosen))
    files: list[Path] = []
    for raw in raw_paths:
        path = ws.resolve(raw)
        if view.is_file(path):
            files.append(path)
        elif view.is_dir(path):
            files.extend(await asyncio.to_thread(view.files, path))
        else:
            raise ws.missing_error(path, ctx.changes)
    return list(dict.fromkeys(files))
