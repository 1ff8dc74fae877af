"""What lint and run_tests would use in a workspace, for `agentls doctor`: every configured
and detected command, why it was chosen, and whether its program is installed (else the
install command)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.config.languages import ECOSYSTEM_OF
from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.plan import Planner
from agentls.tools.checks.programs import Missing, Programs
from agentls.tools.checks.projects import ProjectIndex
from agentls.tools.checks.settings import LintEntry, TestEntry

__all__ = ["OverviewRow", "overview"]


@dataclass(frozen=True)
class OverviewRow:
    kind: Literal["lint", "tests"]
    name: str
    status: Literal["ok", "warn", "info"]
    detail: str


def overview(
    roots: Sequence[Path],
    files: Sequence[Path],
    lint: Sequence[LintEntry] = (),
    tests: Sequence[TestEntry] = (),
) -> list[OverviewRow]:
    """One row per command lint/run_tests would use (per project), plus the notes on the
    candidates detection passed over."""
    index = ProjectIndex(roots, files)
    planner = Planner(index, lint, tests)
    programs = Programs(lambda p: p, index.root_of)
    rows: list[OverviewRow] = []
    notes: list[str] = []
    commands: list[CheckCommand] = []
    for root in roots:
        commands += planner.configured("lint", root)
        for ecosystem in dict.fromkeys(ECOSYSTEM_OF.values()):
            for project in planner.projects(ecosystem, root):
                detection = planner.detection(ecosystem, project)
                commands += detection.lint
                notes += [f"{project.where()}: {n}" for n in detection.notes]
                if not detection.lint and detection.nothing_found:
                    name = f"{ecosystem} ({project.relative})"
                    rows.append(OverviewRow("lint", name, "info", detection.nothing_found))
    commands += planner.tests(None)
    rows += [_row(c, programs, index.root_of(c.project)) for c in commands]
    rows += [OverviewRow("lint", "note", "info", n) for n in dict.fromkeys(notes)]
    return rows


def _row(command: CheckCommand, programs: Programs, root: Path) -> OverviewRow:
    where = command.project.relative_to(root).as_posix()
    name = f"{command.tool} ({where})" if where != "." else command.tool
    why = command.why
    if command.fallback is not None:
        why += f" ({command.fallback.tool} where {command.probe[1]} is not installed)"
    try:
        program = programs.program(command)
    except Missing as exc:
        install = f"; install it: {exc.install}" if exc.install else ""
        return OverviewRow(
            command.kind, name, "warn", f"{why}. Not installed: {exc.message}{install}"
        )
    shown = " ".join([*program, *command.argv[1:]])
    return OverviewRow(command.kind, name, "ok", f"{why}. Runs: {shown}")
