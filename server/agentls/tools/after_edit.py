"""Problems an edit introduced, told in the write tool's result (`checks.afterEdit`).

After a write tool staged a change, the file is checked as staged and compared with a
baseline: the same file as it was before the session first changed it (kept per session,
so a second edit is compared with the first one's starting point, not with the first
edit). Only new problems are listed, with file:line and message; those that went away are
counted. Problems are matched by severity, message and code, not by line, so an edit that
moves lines does not report the old ones as new.

Sources, in order: the editor's language servers (editor bridge), agentls's own headless
language servers (both through `CodeIntel`, which asks the first that covers the file),
then the configured linter (`agentls.tools.auto_checks`): with `diagnostics` only when no
language server covers the file, with `lint` as well. Each source is bounded
(`checks.afterEditSeconds`): one that is not ready in time is named, a language server's
answer is left for the next edit (a cold server keeps starting), and the edit itself was
staged before any of this started.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.services import ToolServices
from agentls.codeintel.model import Answer, Diagnostic, Document, Overlay
from agentls.codeintel.service import CodeIntel, NoSource
from agentls.codeintel.views import document_of, overlay_of
from agentls.config.checks import ChecksSettings
from agentls.errors import ToolError, WorkspaceError
from agentls.tools.auto_checks import REPORTED, LintOutcome, Problem, compare, lint_file
from agentls.workspace.changes import Change, ChangeSet
from agentls.workspace.core import Workspace


def checks_settings(workspace: Workspace) -> ChecksSettings:
    """The `checks` settings the runtime set on the workspace (`Workspace.services.checks`),
    or the defaults before it did; read by the write tools at each call."""
    return workspace.services.checks or ChecksSettings()


MAX_LISTED = 10

Key = tuple[str, str, str]


@dataclass
class _Baselines:
    """Per session: each file's problems before the session first changed it."""

    keys: dict[tuple[Path, str | None], Counter[Key]]


_BASELINES: weakref.WeakKeyDictionary[ChangeSet, _Baselines] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class FileProblems:
    """One staged file checked against its baseline, by every source that ran."""

    path: Path
    new: list[Problem]
    resolved: int
    sources: list[str]
    notes: list[str] = field(default_factory=list)
    """Why a source could not check it ("not ready in time", a failure)."""

    @property
    def checked(self) -> bool:
        return bool(self.sources)


async def file_problems(
    services: ToolServices,
    session_id: str,
    changes: ChangeSet,
    path: Path,
    seconds: float,
    *,
    lint: bool,
) -> FileProblems | None:
    """The problems the staged change to `path` introduced; None when there is nothing to
    check (not staged, deleted, not text, no source covers it). `lint`: run the configured
    linter too (else only when no language server covers the file)."""
    found = await _diagnostics_problems(services, changes, path, seconds)
    if found is None:
        return None
    if lint or found is _NO_SERVER:
        linted = await lint_file(services, session_id, changes, path, seconds)
        if linted is not None:
            found = _merge(path, found, linted)
    if found is _NO_SERVER or (not found.sources and not found.notes):
        return None
    return found


_NO_SERVER = FileProblems(Path(), [], 0, [])
"""No language server covers the file (the linter may)."""


def _merge(path: Path, found: FileProblems, linted: LintOutcome) -> FileProblems:
    notes = [*found.notes, *([linted.note] if linted.note else [])]
    return FileProblems(
        path,
        [*found.new, *linted.new],
        found.resolved + linted.resolved,
        [*found.sources, *linted.sources],
        notes,
    )


async def _diagnostics_problems(
    services: ToolServices, changes: ChangeSet, path: Path, seconds: float
) -> FileProblems | None:
    """The language servers' part; `_NO_SERVER` when none covers the file."""
    workspace = services.workspace
    change = next((c for c in changes.entries() if c.path == path), None)
    if change is None or change.kind == "delete":
        return None
    try:
        after = document_of(workspace, path, changes)
    except (WorkspaceError, ToolError):
        return None
    overlay = overlay_of(workspace, changes)
    base = change.original_text if change.kind != "create" else None
    baseline = await _baseline(services.code_intel, changes, after, base, overlay, seconds)
    if baseline is None:
        return _NO_SERVER
    if isinstance(baseline, str):
        return FileProblems(path, [], 0, [], [baseline])
    found = await _check(services.code_intel, changes, after, overlay, seconds)
    if found is None:
        return _NO_SERVER
    if isinstance(found, str):
        return FileProblems(path, [], 0, [], [found])
    problems = [_problem(d) for d in found.value if d.severity in REPORTED]
    new, resolved = compare(problems, baseline)
    return FileProblems(path, new, resolved, [found.source])


def _problem(diagnostic: Diagnostic) -> Problem:
    return Problem(
        diagnostic.path,
        diagnostic.span.start.line + 1,
        diagnostic.severity,
        diagnostic.message,
        diagnostic.code,
        diagnostic.source,
    )


async def problems_note(ctx: ToolContext, path: Path) -> str:
    """The lines to add to a write tool's result: new problems, resolved count, or which
    source was not ready in time; "" when the edit introduced nothing (or checks are off).
    In auto mode with `checks.block: "newErrors"`, a file with new errors is held."""
    settings = checks_settings(ctx.workspace)
    if settings.after_edit == "off":
        return ""
    found = await file_problems(
        ctx.services,
        ctx.session_id,
        ctx.changes,
        path,
        settings.after_edit_seconds,
        lint=settings.after_edit == "lint",
    )
    if found is None:
        return ""
    report = _report(ctx.workspace, found)
    if settings.block == "newErrors" and ctx.mode == "auto":
        errors = [p for p in found.new if p.severity == "error"]
        why = (
            f"{len(errors)} new error(s): {problem_line(ctx.workspace, errors[0])}"
            if errors
            else ""
        )
        set_held(ctx.changes, path, why)
        if why:
            report += (
                f"\nKept staged, not written (checks.block: newErrors): {why}. Fix it and the "
                "file is written with your next edit."
            )
    return report


_HELD: weakref.WeakKeyDictionary[ChangeSet, dict[Path, str]] = weakref.WeakKeyDictionary()


def held(changes: ChangeSet) -> dict[Path, str]:
    """The files auto mode keeps staged (`checks.block: "newErrors"`), with the reason."""
    staged = set(changes.changed_paths())
    return {p: why for p, why in _HELD.get(changes, {}).items() if p in staged}


def split_held(changes: ChangeSet) -> tuple[list[Change], dict[Path, str]]:
    """What an auto-mode delivery writes (every staged change but the held files'), and
    the held files with the reason."""
    kept = held(changes)
    entries = [c for c in changes.entries() if c.path not in kept and c.old_path not in kept]
    return entries, kept


def set_held(changes: ChangeSet, path: Path, why: str) -> None:
    """Hold `path` with the reason (`why` ""): release it."""
    marks = _HELD.setdefault(changes, {})
    if why:
        marks[path] = why
    else:
        marks.pop(path, None)


async def _baseline(
    intel: CodeIntel,
    changes: ChangeSet,
    after: Document,
    base: str | None,
    overlay: Overlay,
    seconds: float,
) -> Counter[Key] | str | None:
    """The file's problems before the session changed it (`base`: its text then; None: it
    did not exist), checked once per session and base text; None: no language server
    covers it."""
    known = _BASELINES.setdefault(changes, _Baselines({})).keys
    key = (after.path, base)
    if key in known:
        return known[key]
    if base is None:
        known[key] = Counter()
        return known[key]
    doc = Document(after.path, base, after.language)
    # Marked staged, like the edited text: the baseline comes from the same source as the
    # check after the edit (agentls's own server, which sees overlays), never from the
    # editor's — two servers' diagnostics compared would report their differences as new.
    then = Overlay(
        {**overlay.texts, after.path: base}, overlay.staged | {after.path}, overlay.deleted
    )
    found = await _check(intel, changes, doc, then, seconds)
    if found is None or isinstance(found, str):
        return found
    known[key] = Counter(_problem(d).key for d in found.value if d.severity in REPORTED)
    return known[key]


_PENDING: weakref.WeakKeyDictionary[ChangeSet, set[asyncio.Future[object]]] = (
    weakref.WeakKeyDictionary()
)
"""Checks that outlived their time bound: kept referenced until they end."""


def _settled(pending: set[asyncio.Future[object]], task: asyncio.Future[object]) -> None:
    pending.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a late failure is not logged as never retrieved


async def _check(
    intel: CodeIntel, changes: ChangeSet, doc: Document, overlay: Overlay, seconds: float
) -> Answer[list[Diagnostic]] | str | None:
    """One file's diagnostics from the first source that covers it, within `seconds`; a
    note when it could not say; None when no language server covers it."""
    task: asyncio.Future[object] = asyncio.ensure_future(intel.diagnostics([doc], overlay))
    try:
        checked = await asyncio.wait_for(asyncio.shield(task), seconds)
    except TimeoutError:
        # let it finish (a cold language server keeps starting for the next edit)
        pending = _PENDING.setdefault(changes, set())
        pending.add(task)
        task.add_done_callback(lambda t: _settled(pending, t))
        return f"Problems check: not ready in time ({seconds:g} s); the edit is staged unchecked."
    except NoSource:
        return None
    except Exception as exc:  # a source failing must never fail the edit
        return f"Problems check failed: {exc}"
    if not isinstance(checked, list) or not checked:
        return None
    return checked[0].answer  # type: ignore[no-any-return]


def _report(workspace: Workspace, found: FileProblems) -> str:
    new, resolved = found.new, found.resolved
    lines = []
    if new:
        count = f"{len(new)} new problem{'s' if len(new) != 1 else ''}"
        listed = [problem_line(workspace, p) for p in new[:MAX_LISTED]]
        more = [f"… and {len(new) - MAX_LISTED} more"] if len(new) > MAX_LISTED else []
        if len(listed) == 1:
            lines.append(f"{count}: {listed[0]}")
        else:
            lines += [f"{count}:", *(f"- {item}" for item in listed + more)]
    if resolved:
        lines.append(f"{resolved} problem{'s' if resolved != 1 else ''} resolved.")
    if lines:
        lines.append(f"(checked by {', '.join(found.sources)})")
    return "\n".join([*lines, *found.notes])


def problem_line(workspace: Workspace, problem: Problem) -> str:
    """`b.py:2 error: message (code)`."""
    where = f"{workspace.display(problem.path)}:{problem.line}"
    code = f" ({problem.code})" if problem.code else ""
    message = " ".join(problem.message.split())
    return f"{where} {problem.severity}: {message}{code}"
