"""Which commands check which files (lint) or run which tests: the settings first, then
what detection found for the nearest project of each file's ecosystem.

A file covered by a `lint` entry (its language or a glob) is linted only by the configured
commands: the setting overrides detection for it. Anything else goes to the tools detected
for its project. Every choice carries its reason, and files nothing covers are listed with
the reason, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls.config.languages import ECOSYSTEM_OF, language_of
from agentls.tools.checks.commands import CheckCommand, Kind
from agentls.tools.checks.detect import Detection, detect
from agentls.tools.checks.projects import MARKERS, ProjectDir, ProjectIndex
from agentls.tools.checks.settings import CheckEntry

__all__ = ["LintPlan", "Planner", "configured_command"]


def configured_command(entry: CheckEntry, kind: Kind, index: int, root: Path) -> CheckCommand:
    """A `lint`/`tests` setting as a command for one workspace root."""
    return CheckCommand(
        kind=kind,
        tool=entry.label,
        argv=entry.command,
        format=entry.format,
        project=root / entry.cwd if entry.cwd else root,
        languages=frozenset(entry.languages),
        globs=entry.globs,
        why=f"configured in the `{kind}` setting (entry {index})",
        install=entry.install,
        lookup=("project", "venv", "node", "path"),
        targets="raw",
        timeout=entry.timeout,
        origin=f"{kind}[{index}]",
    )


@dataclass
class LintPlan:
    runs: dict[CheckCommand, list[Path]] = field(default_factory=dict)
    unchecked: dict[str, tuple[str, list[Path]]] = field(default_factory=dict)
    """Files no linter covers, by extension (or name), with the reason."""
    notes: list[str] = field(default_factory=list)


class Planner:
    """Plans over one view of the workspace (the shadow copy in the tools)."""

    def __init__(
        self,
        index: ProjectIndex,
        lint: Sequence[CheckEntry] = (),
        tests: Sequence[CheckEntry] = (),
    ) -> None:
        self.index = index
        self._entries: dict[Kind, Sequence[CheckEntry]] = {"lint": lint, "tests": tests}
        self._detections: dict[tuple[str, Path], Detection] = {}
        self._configured: dict[tuple[Kind, Path], list[CheckCommand]] = {}

    def detection(self, ecosystem: str, project: ProjectDir) -> Detection:
        key = (ecosystem, project.path)
        if key not in self._detections:
            self._detections[key] = detect(ecosystem, project)
        return self._detections[key]

    def configured(self, kind: Kind, root: Path) -> list[CheckCommand]:
        return [
            configured_command(entry, kind, i, root) for i, entry in enumerate(self._entries[kind])
        ]

    # -- lint -----------------------------------------------------------------------------

    def lint(self, files: Sequence[Path]) -> LintPlan:
        plan = LintPlan()
        for path in files:
            commands, reason = self._linters_for(path)
            if commands:
                for command in commands:
                    plan.runs.setdefault(command, []).append(path)
            else:
                key = path.suffix.lower() or path.name
                entry = plan.unchecked.setdefault(key, (reason, []))
                entry[1].append(path)
        plan.notes = self.notes()
        return plan

    def notes(self) -> list[str]:
        """Detection's notes on the candidates it passed over, for the projects planned."""
        found: list[str] = []
        for detection in self._detections.values():
            found += [note for note in detection.notes if note not in found]
        return found

    def _linters_for(self, path: Path) -> tuple[list[CheckCommand], str]:
        root = self.index.root_of(path)
        language = language_of(path)
        relative = path.relative_to(root).as_posix()
        configured = [c for c in self.configured("lint", root) if c.covers(language, relative)]
        if configured:
            return configured, ""
        ecosystem = ECOSYSTEM_OF.get(language or "")
        kind = f"{language} files" if language else f"{path.suffix or path.name} files"
        if ecosystem is None:
            return [], (f"agentls detects no linter for {kind}; add a `lint` setting to check them")
        project = self.index.nearest(ecosystem, path)
        if project is None:
            markers = " or ".join(MARKERS[ecosystem])
            return [], f"no {markers} in its folder or above it, so no linter was detected"
        detection = self.detection(ecosystem, project)
        commands = [c for c in detection.lint if language in c.languages]
        return commands, detection.nothing_found or f"no linter detected for {kind}"

    # -- tests ----------------------------------------------------------------------------

    def tests(self, target: Path | None) -> list[CheckCommand]:
        """The test commands for a target path (the projects holding it), or for the whole
        workspace (every separate project) when there is none."""
        if target is not None:
            return self._tests_for(target)
        suites: list[CheckCommand] = []
        for root in self.index.roots[::-1]:
            configured = self.configured("tests", root)
            suites += configured
            if any(not c.languages and not c.globs for c in configured):
                continue  # a catch-all test command replaces detection
            covered = {lang for c in configured for lang in c.languages}
            for ecosystem, projects in self._ecosystem_projects(root).items():
                if covered & {lang for lang, eco in ECOSYSTEM_OF.items() if eco == ecosystem}:
                    continue
                for project in projects:
                    suites += self.detection(ecosystem, project).tests
        return suites

    def _tests_for(self, target: Path) -> list[CheckCommand]:
        root = self.index.root_of(target)
        language = language_of(target) if not target.is_dir() else None
        relative = target.relative_to(root).as_posix()
        configured = [c for c in self.configured("tests", root) if c.covers(language, relative)]
        if configured:
            return configured
        suites: list[CheckCommand] = []
        for ecosystem in dict.fromkeys(ECOSYSTEM_OF.values()):
            if language is not None and ECOSYSTEM_OF.get(language) != ecosystem:
                continue
            probe = target if language is not None else target / "_"
            holder = self.index.nearest(ecosystem, probe)
            if holder is not None and ecosystem == "python" and holder.path == root:
                # Python's root default holds a folder only when Python files are in it.
                folder = target if language is None else root
                holder = holder if self.index.has_language(folder, "python") else None
            projects = [holder] if holder else self.index.top_level(ecosystem, under=target)
            for project in projects:
                suites += self.detection(ecosystem, project).tests
        return suites

    def projects(self, ecosystem: str, root: Path) -> list[ProjectDir]:
        """The separate projects of `ecosystem` in `root` (the root itself for Python files
        outside any Python project)."""
        projects = [p for p in self.index.top_level(ecosystem) if p.root == root]
        if not projects and ecosystem == "python" and self.index.has_language(root, "python"):
            projects = [self.index.project(root)]
        return projects

    def _ecosystem_projects(self, root: Path) -> dict[str, list[ProjectDir]]:
        found: dict[str, list[ProjectDir]] = {}
        for ecosystem in dict.fromkeys(ECOSYSTEM_OF.values()):
            projects = self.projects(ecosystem, root)
            if projects:
                found[ecosystem] = projects
        return found
