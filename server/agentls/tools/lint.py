"""The `lint` tool: the project's own linters, run on the session's view of the files.

Why in the shadow: the agent's staged edits and the user's unsaved buffers are what need
checking, and linters write caches; both point to the private copy. Why the project's
own configuration: a diagnostic the user's CI would not raise is noise to the model.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from agentls.agent.context import ToolContext
from agentls.agent.tool import CallRisk, Tool, ToolError, ToolInput
from agentls.tools._execution import confinement_for, execution_risk, plan_execution
from agentls.workspace.lint_formats import (
    DEFAULT_LINE_PATTERN,
    LintFormatError,
    RawDiagnostic,
    parse_json_diagnostics,
    parse_line_diagnostics,
)
from agentls.workspace.process import Confinement, ProcessStartError
from agentls.workspace.process_guard import run_guarded
from agentls.workspace.shadow import ShadowRegistry, ShadowWorkspace, shadow_for
from agentls.workspace.toolchain import find_executable, venv_env

log = logging.getLogger(__name__)

__all__ = ["RUFF", "LintConfig", "LintInput", "LintTool", "LinterSpec"]

_CHUNK_FILES = 200  # files per linter invocation: keeps argv far below ARG_MAX


@dataclass(frozen=True)
class LinterSpec:
    """How to run one linter.

    `command` is an argv template: `{files}` expands to the files (paths relative to the
    shadow root), `{root}` to the shadow root. `format` is `json` (ruff- or eslint-style)
    or `regex` with `pattern` (named groups `path`, `line`, `message`; optional `column`,
    `code`, `severity`). `module` is a Python module to run with `python -m` when the
    executable is not found. Exit codes outside `ok_exit_codes` mean the linter failed.
    """

    name: str
    command: tuple[str, ...]
    format: Literal["json", "regex"] = "json"
    pattern: str = DEFAULT_LINE_PATTERN
    module: str | None = None
    ok_exit_codes: tuple[int, ...] = (0, 1)


RUFF = LinterSpec(
    name="ruff",
    command=("ruff", "check", "--output-format", "json", "--force-exclude", "--no-fix", "{files}"),
    module="ruff",
)


@dataclass(frozen=True)
class LintConfig:
    """Which linter runs for which file extension; filled by the config loader later."""

    linters: Mapping[str, LinterSpec] = field(default_factory=lambda: {".py": RUFF, ".pyi": RUFF})
    syntax_check: bool = True
    timeout: float = 120.0
    max_diagnostics: int = 200
    max_output_bytes: int = 1024 * 1024

    def linter_for(self, path: Path) -> LinterSpec | None:
        return self.linters.get(path.suffix.lower())


class LintInput(ToolInput):
    paths: list[str] | None = Field(
        default=None,
        description=(
            "Files or folders to lint, workspace-relative or absolute. "
            "Default: the files changed in this session, else the files open in the editor."
        ),
    )


@dataclass
class _Findings:
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    not_configured: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)
    linted: set[Path] = field(default_factory=set)
    """Files a linter parsed successfully: its parser is authoritative for them."""


SyntaxChecker = Callable[[Path, str], Iterable[Any]]


class LintTool(Tool[LintInput]):
    name = "lint"
    usage = """\
Lint files with the project's own linters (ruff for Python by default, configured linters
for other languages) plus a syntax check, and return structured diagnostics:
path, line, column, code, severity, message, fixable.

Use it after editing files to catch mistakes before running tests or finishing. It checks
what you see: your staged edits and the user's unsaved editor buffers, not just disk. It
runs on a private copy of the workspace, never changes files, and applies no fixes (fix
diagnostics with your edit tools).
Without `paths` it lints the files changed in this session, or else the open files.
File types without a configured linter are listed under `not_configured`.
Limits: at most ~200 diagnostics are listed (errors first); one run times out after 2 minutes.
Example: {"paths": ["src/app/models.py", "tests/"]}"""
    input_model = LintInput
    search_hint = "ruff eslint diagnostics syntax errors check code style"

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
        return execution_risk(self.name, ctx, executables=self._executables(ctx))

    def _executables(self, ctx: ToolContext) -> list[str]:
        roots = list(ctx.workspace.roots)
        found = (_executable(spec, roots) for spec in set(self.config.linters.values()))
        return [argv[0] for argv in found if argv]

    def summary(self, input: LintInput) -> str:
        if not input.paths:
            return "Linting changed files"
        if len(input.paths) == 1:
            return f"Linting {input.paths[0]}"
        return f"Linting {len(input.paths)} paths"

    async def call(self, input: LintInput, ctx: ToolContext) -> dict[str, Any]:
        files = await _targets(input.paths, ctx)
        if not files:
            raise ToolError(
                "Nothing to lint: no files changed in this session and none open in the editor. "
                "Pass `paths`."
            )
        with shadow_for(ctx, self._shadows).in_use() as shadow:
            return await self._lint(files, shadow, ctx)

    async def _lint(
        self, files: list[Path], shadow: ShadowWorkspace, ctx: ToolContext
    ) -> dict[str, Any]:
        await shadow.sync(ctx.changes)
        found = _Findings()
        by_linter: dict[LinterSpec, list[Path]] = {}
        unlinted: dict[str, list[str]] = {}
        for path in files:
            spec = self.config.linter_for(path)
            if spec is None:
                unlinted.setdefault(path.suffix.lower(), []).append(ctx.workspace.display(path))
            else:
                by_linter.setdefault(spec, []).append(path)
        found.not_configured = [_not_configured(ext, paths) for ext, paths in unlinted.items()]
        for spec, paths in by_linter.items():
            await self._run_linter(spec, paths, shadow, ctx, found)
        if self.config.syntax_check:
            self._check_syntax(files, shadow, found)
        plan = plan_execution(self.name, ctx, executables=self._executables(ctx))
        return {**self._result(files, found), **plan.result_fields()}

    async def _run_linter(
        self,
        spec: LinterSpec,
        files: list[Path],
        shadow: ShadowWorkspace,
        ctx: ToolContext,
        found: _Findings,
    ) -> None:
        by_root: dict[Path, list[Path]] = {}
        for path in files:
            by_root.setdefault(shadow.root_for(path), []).append(path)
        roots = list(ctx.workspace.roots)
        argv0 = _executable(spec, roots)
        if argv0 is None:
            found.problems.append(
                {
                    "linter": spec.name,
                    "message": f"{spec.name} is not installed (looked in the project's venv, "
                    "node_modules/.bin and PATH); its files were not linted.",
                }
            )
            return
        for root, paths in by_root.items():
            cwd = shadow.shadow_root(root)
            for start in range(0, len(paths), _CHUNK_FILES):
                chunk = paths[start : start + _CHUNK_FILES]
                names = [str(p.relative_to(root)) for p in chunk]
                argv = [*argv0, *_expand(spec.command[1:], names, cwd)]
                box = confinement_for(self.name, ctx, shadow, cwd)
                if await self._run_one(spec, argv, root, shadow, roots, found, box):
                    found.linted.update(chunk)

    async def _run_one(
        self,
        spec: LinterSpec,
        argv: list[str],
        root: Path,
        shadow: ShadowWorkspace,
        roots: Sequence[Path],
        found: _Findings,
        box: Confinement | None = None,
    ) -> bool:
        """Run one linter invocation; False (with a `problems` entry) when it failed."""
        cwd = shadow.shadow_root(root)
        env = {**venv_env(roots), **shadow.python_env(root)}
        try:
            result = await run_guarded(
                argv,
                cwd=cwd,
                env=env,
                timeout=self.config.timeout,
                max_output_bytes=self.config.max_output_bytes,
                confinement=box,
            )
        except ProcessStartError as exc:
            found.problems.append({"linter": spec.name, "message": str(exc)})
            return False
        if result.timed_out:
            found.problems.append(
                {"linter": spec.name, "message": f"timed out after {self.config.timeout:g} s"}
            )
            return False
        if result.exit_code not in spec.ok_exit_codes or result.stdout_dropped:
            detail = shadow.map_output(result.stderr or result.stdout).strip()[-1500:]
            why = "output too large" if result.stdout_dropped else f"exit {result.exit_code}"
            found.problems.append({"linter": spec.name, "message": f"failed ({why}): {detail}"})
            return False
        try:
            raw = (
                parse_json_diagnostics(result.stdout)
                if spec.format == "json"
                else parse_line_diagnostics(result.stdout + result.stderr, spec.pattern)
            )
        except LintFormatError as exc:
            found.problems.append({"linter": spec.name, "message": f"unreadable output: {exc}"})
            return False
        for diag in raw:
            mapped = shadow.to_workspace(cwd / diag.file)
            if mapped is not None:
                found.diagnostics.append(
                    _as_dict(diag, shadow.workspace.display(mapped), spec.name)
                )
        return True

    def _check_syntax(self, files: list[Path], shadow: ShadowWorkspace, found: _Findings) -> None:
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
                diag = _syntax_diagnostic(error, shown)
                if diag is not None:
                    found.diagnostics.append(diag)

    def _result(self, files: list[Path], found: _Findings) -> dict[str, Any]:
        order = {"error": 0, "warning": 1, "info": 2}
        diags = sorted(
            found.diagnostics,
            key=lambda d: (order.get(d["severity"], 3), d["path"], d["line"], d["column"]),
        )
        errors = sum(1 for d in diags if d["severity"] == "error")
        result: dict[str, Any] = {
            "summary": f"{len(diags)} diagnostics ({errors} errors) in {len(files)} files"
            if diags
            else f"No problems found in {len(files)} files",
            "diagnostics": diags[: self.config.max_diagnostics],
        }
        if len(diags) > self.config.max_diagnostics:
            result["truncated"] = len(diags) - self.config.max_diagnostics
        if found.not_configured:
            result["not_configured"] = found.not_configured
        if found.problems:
            result["problems"] = found.problems
        while len(json.dumps(result)) > self.max_result_chars - 500 and result["diagnostics"]:
            keep = len(result["diagnostics"]) * 3 // 4
            result["truncated"] = result.get("truncated", 0) + len(result["diagnostics"]) - keep
            result["diagnostics"] = result["diagnostics"][:keep]
        return result


def _not_configured(extension: str, paths: list[str]) -> dict[str, Any]:
    kind = f"{extension} files" if extension else "files without an extension"
    entry: dict[str, Any] = {"type": extension, "reason": f"no linter configured for {kind}"}
    entry["paths"] = paths[:5]
    if len(paths) > 5:
        entry["more"] = len(paths) - 5
    return entry


def _expand(template: Sequence[str], files: list[str], cwd: Path) -> list[str]:
    argv: list[str] = []
    for part in template:
        if part == "{files}":
            argv.extend(files)
        else:
            argv.append(part.replace("{root}", str(cwd)))
    return argv


def _executable(spec: LinterSpec, roots: Sequence[Path]) -> list[str] | None:
    """The project's copy first, then PATH, then `python -m module` for Python linters."""
    name = spec.command[0]
    if os.path.isabs(name):
        return [name] if os.access(name, os.X_OK) else None
    found = find_executable(name, roots)
    if found is not None:
        return [found]
    if spec.module and find_spec(spec.module) is not None:
        return [sys.executable, "-m", spec.module]
    return None


def _as_dict(diag: RawDiagnostic, path: str, source: str) -> dict[str, Any]:
    return {
        "path": path,
        "line": diag.line,
        "column": diag.column,
        "code": diag.code,
        "severity": diag.severity,
        "message": diag.message,
        "fixable": diag.fixable,
        "source": source,
    }


def _index_syntax_checker() -> SyntaxChecker | None:
    """`agentls.index.syntax_errors` when the index module exists (built elsewhere)."""
    try:
        module = importlib.import_module("agentls.index")
    except ImportError:
        return None
    checker = getattr(module, "syntax_errors", None)
    return checker if callable(checker) else None


def _syntax_diagnostic(error: Any, path: str) -> dict[str, Any] | None:
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
    return {
        "path": path,
        "line": line,
        "column": column if isinstance(column, int) else 1,
        "code": "syntax",
        "severity": "error",
        "message": str(message or "syntax error"),
        "fixable": False,
        "source": "tree-sitter",
    }


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
