"""The checked changeset before review (`checks.beforeReview`): when a run ends with staged
edits, each staged file is checked against the file before the session changed it (the
language servers and the configured linter), and the relevant tests run once on the whole
changeset, all in the shadow. Every review surface shows the result per file, e.g.
"tests 41/41 ✓ · 0 new errors" or "1 new error: b.py:3 Argument of type…".

With `checks.block: "newErrors"`, an auto-mode run keeps the files that fail (new errors,
or failing tests) staged instead of writing them, with the reason (`held`, `hold_reasons`).
"""

from __future__ import annotations

from pathlib import Path

from agentls.agent.framework.services import ToolServices
from agentls.agent.protocol.results import FileCheckPayload, TestsCheckPayload
from agentls.tools.after_edit import (
    FileProblems,
    checks_settings,
    file_problems,
    held,
    problem_line,
    set_held,
)
from agentls.tools.auto_checks import changeset_tests
from agentls.workspace.changes import ChangeSet
from agentls.workspace.core import Workspace

__all__ = ["changeset_checks", "failing", "hold_failing"]


async def changeset_checks(
    services: ToolServices, session_id: str, changes: ChangeSet
) -> list[FileCheckPayload]:
    """Each staged file checked against its baseline, in staging order, with the relevant
    tests' result; files nothing covers are left out (unless tests ran)."""
    workspace = services.workspace
    settings = checks_settings(workspace)
    if not settings.before_review:
        return []
    seconds = settings.before_review_seconds
    tests = await changeset_tests(services, session_id, changes, settings.tests_seconds)
    results: list[FileCheckPayload] = []
    for path in changes.changed_paths():
        found = await file_problems(services, session_id, changes, path, seconds, lint=True)
        if found is None and tests is None:
            continue
        if found is None and not workspace.view(changes).is_file(path):
            continue
        results.append(_payload(workspace, path, found, tests))
    return results


def _payload(
    workspace: Workspace,
    path: Path,
    found: FileProblems | None,
    tests: TestsCheckPayload | None,
) -> FileCheckPayload:
    new = found.new if found else []
    errors = [p for p in new if p.severity == "error"]
    warnings = [p for p in new if p.severity == "warning"]
    parts = [tests["summary"]] if tests else []
    if found is None:
        pass
    elif errors:
        first = problem_line(workspace, errors[0])
        parts.append(f"{len(errors)} new error{'s' if len(errors) != 1 else ''}: {first}")
    elif found.checked:
        warned = f", {len(warnings)} new warning(s)" if warnings else ""
        parts.append(f"0 new errors{warned}")
    if found is not None and found.notes:
        parts.append(" ".join(found.notes))
    payload: FileCheckPayload = {
        "path": str(path),
        "checked": bool(found and found.checked),
        "new_errors": len(errors),
        "new_warnings": len(warnings),
        "resolved": found.resolved if found else 0,
        "problems": [problem_line(workspace, p) for p in new],
        "summary": " · ".join(parts) or "not checked",
        "source": ", ".join(found.sources) if found else "",
    }
    if tests is not None:
        payload["tests"] = tests
    return payload


def failing(check: FileCheckPayload) -> str:
    """Why `checks.block: "newErrors"` keeps this file staged; "" when it passes."""
    if check["new_errors"]:
        return check["summary"]
    tests = check.get("tests")
    if tests is not None and tests["status"] == "failed":
        return tests["summary"]
    return ""


def hold_failing(changes: ChangeSet, checks: list[FileCheckPayload]) -> dict[Path, str]:
    """Mark the failing files held (`checks.block`; a passing check releases one)."""
    for check in checks:
        path, why = Path(check["path"]), failing(check)
        set_held(changes, path, why)
        if why:
            check["held"] = True
    return held(changes)
