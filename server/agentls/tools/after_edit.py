"""Problems an edit introduced, told in the write tool's result (`checks.afterEdit`).

After a write tool staged a change, the file is checked as staged and compared with a
baseline: the same file as it was before the session first changed it (kept per session,
so a second edit is compared with the first one's starting point, not with the first
edit). Only new problems are listed, with file:line and message; those that went away are
counted. Problems are matched by severity, message and code, not by line, so an edit that
moves lines does not report the old ones as new.

Sources, in order: the editor's language servers (editor bridge), agentls's own headless
language servers (both through `CodeIntel`, which asks the first that covers the file),
else the index's syntax check. Each check is bounded (`checks.afterEditSeconds`): a source
that is not ready in time is named, its answer is left for the next edit (a cold server
keeps starting), and the edit itself was staged before any of this started.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from agentls.agent.context import ToolContext
from agentls.agent.results import FileCheckPayload
from agentls.codeintel.model import Answer, Diagnostic, Document, Overlay
from agentls.codeintel.service import NoSource, code_intel_for
from agentls.codeintel.views import document_of, overlay_of
from agentls.config.checks import ChecksSettings
from agentls.errors import ToolError, WorkspaceError
from agentls.workspace.changes import ChangeSet
from agentls.workspace.core import Attachment, Workspace

_CHECKS = Attachment[ChecksSettings]("checks settings")


def set_checks(workspace: Workspace, settings: ChecksSettings) -> None:
    """The host's `checks` settings, read by write tools at each call."""
    workspace.attach(_CHECKS, settings)


def checks_of(workspace: Workspace) -> ChecksSettings:
    return workspace.attached(_CHECKS, ChecksSettings)


REPORTED = ("error", "warning")
"""Severities an after-edit report lists (hints and information would drown them)."""
MAX_LISTED = 10

Key = tuple[str, str, str]


@dataclass
class _Baselines:
    """Per session: each file's problems before the session first changed it."""

    keys: dict[tuple[Path, str | None], Counter[Key]]


_BASELINES: weakref.WeakKeyDictionary[ChangeSet, _Baselines] = weakref.WeakKeyDictionary()


def _key(diagnostic: Diagnostic) -> Key:
    return (diagnostic.severity, diagnostic.message, diagnostic.code)


@dataclass(frozen=True)
class FileProblems:
    """One staged file checked against its baseline."""

    path: Path
    new: list[Diagnostic]
    resolved: int
    source: str
    unchecked: str = ""
    """Why it could not be checked ("not ready in time", a failure); "" when checked."""


async def file_problems(
    workspace: Workspace, changes: ChangeSet, path: Path, seconds: float
) -> FileProblems | None:
    """The problems the staged change to `path` introduced; None when there is nothing to
    check (not staged, deleted, not text, no source covers it)."""
    change = next((c for c in changes.entries() if c.path == path), None)
    if change is None or change.kind == "delete":
        return None
    try:
        after = document_of(workspace, path, changes)
    except (WorkspaceError, ToolError):
        return None
    overlay = overlay_of(workspace, changes)
    base = change.original_text if change.kind != "create" else None
    baseline = await _baseline(workspace, changes, after, base, overlay, seconds)
    if isinstance(baseline, str):
        return FileProblems(path, [], 0, "", baseline) if baseline else None
    found = await _check(workspace, changes, after, overlay, seconds)
    if isinstance(found, str):
        return FileProblems(path, [], 0, "", found) if found else None
    return _compare(path, found, baseline)


async def problems_note(ctx: ToolContext, path: Path) -> str:
    """The lines to add to a write tool's result: new problems, resolved count, or which
    source was not ready in time; "" when the edit introduced nothing (or checks are off)."""
    settings = checks_of(ctx.workspace)
    if settings.after_edit == "off":
        return ""
    found = await file_problems(ctx.workspace, ctx.changes, path, settings.after_edit_seconds)
    if found is None:
        return ""
    if found.unchecked:
        return found.unchecked
    return _report(ctx.workspace, found)


async def _baseline(
    workspace: Workspace,
    changes: ChangeSet,
    after: Document,
    base: str | None,
    overlay: Overlay,
    seconds: float,
) -> Counter[Key] | str:
    """The file's problems before the session changed it (`base`: its text then; None: it
    did not exist), checked once per session and base text."""
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
    found = await _check(workspace, changes, doc, then, seconds)
    if isinstance(found, str):
        return found
    known[key] = Counter(_key(d) for d in found.value if d.severity in REPORTED)
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
    workspace: Workspace, changes: ChangeSet, doc: Document, overlay: Overlay, seconds: float
) -> Answer[list[Diagnostic]] | str:
    """One file's diagnostics from the first source that covers it, within `seconds`."""
    intel = code_intel_for(workspace)
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
        return ""
    except Exception as exc:  # a source failing must never fail the edit
        return f"Problems check failed: {exc}"
    if not isinstance(checked, list) or not checked:
        return ""
    return checked[0].answer  # type: ignore[no-any-return]


def _compare(path: Path, answer: Answer[list[Diagnostic]], baseline: Counter[Key]) -> FileProblems:
    left = Counter(baseline)
    new: list[Diagnostic] = []
    for diagnostic in sorted(answer.value, key=lambda d: d.span.start):
        if diagnostic.severity not in REPORTED:
            continue
        key = _key(diagnostic)
        if left[key] > 0:
            left[key] -= 1
        else:
            new.append(diagnostic)
    return FileProblems(path, new, sum(left.values()), answer.source)


def _report(workspace: Workspace, found: FileProblems) -> str:
    new, resolved = found.new, found.resolved
    if not new and not resolved:
        return ""
    lines = []
    if new:
        count = f"{len(new)} new problem{'s' if len(new) != 1 else ''}"
        listed = [_line(workspace, d) for d in new[:MAX_LISTED]]
        more = [f"… and {len(new) - MAX_LISTED} more"] if len(new) > MAX_LISTED else []
        if len(listed) == 1:
            lines.append(f"{count}: {listed[0]}")
        else:
            lines += [f"{count}:", *(f"- {item}" for item in listed + more)]
    if resolved:
        lines.append(f"{resolved} problem{'s' if resolved != 1 else ''} resolved.")
    lines.append(f"(checked by {found.source})")
    return "\n".join(lines)


def _line(workspace: Workspace, diagnostic: Diagnostic) -> str:
    where = f"{workspace.display(diagnostic.path)}:{diagnostic.span.start.line + 1}"
    code = f" ({diagnostic.code})" if diagnostic.code else ""
    message = " ".join(diagnostic.message.split())
    return f"{where} {diagnostic.severity}: {message}{code}"


async def changeset_checks(workspace: Workspace, changes: ChangeSet) -> list[FileCheckPayload]:
    """Each staged file checked against its baseline (`checks.beforeReview`), in staging
    order; files no source covers are left out."""
    settings = checks_of(workspace)
    if not settings.before_review:
        return []
    results: list[FileCheckPayload] = []
    for path in changes.changed_paths():
        found = await file_problems(workspace, changes, path, settings.before_review_seconds)
        if found is not None:
            results.append(_payload(workspace, found))
    return results


def _payload(workspace: Workspace, found: FileProblems) -> FileCheckPayload:
    errors = [d for d in found.new if d.severity == "error"]
    warnings = [d for d in found.new if d.severity == "warning"]
    problems = [_line(workspace, d) for d in found.new]
    if found.unchecked:
        summary = found.unchecked
    elif errors:
        first = _line(workspace, errors[0])
        summary = f"{len(errors)} new error{'s' if len(errors) != 1 else ''}: {first}"
    else:
        summary = "0 new errors" + (f", {len(warnings)} new warning(s)" if warnings else "")
    return {
        "path": str(found.path),
        "checked": not found.unchecked,
        "new_errors": len(errors),
        "new_warnings": len(warnings),
        "resolved": found.resolved,
        "problems": problems,
        "summary": summary,
        "source": found.source,
    }
