"""`CheckCommand`: one linter or test runner, resolved for one project folder.

Both detection and the `lint`/`tests` settings produce these; the runner executes them and
the tools explain them (`why`). The argv is a template: `{paths}` (the files to lint; a
command without it checks the whole project), `{target}` (what to test), `{report}` (a file
the command writes its report to), `{root}` (the project folder), `{python}` (the project's
interpreter).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

__all__ = ["CheckCommand", "Kind", "Lookup", "TargetStyle"]

Kind = Literal["lint", "tests"]
Lookup = Literal["node", "venv", "path", "project"]
"""Where the program is looked for: `node_modules/.bin` of the project and its parents, the
project's virtualenv, PATH, or a path relative to the project folder."""
TargetStyle = Literal[
    "pytest", "unittest", "vitest", "jest", "mocha", "go", "cargo", "rspec", "script", "raw"
]
"""How `run_tests`' `target` becomes arguments for this runner (see `targets.py`)."""


@dataclass(frozen=True, eq=False)
class CheckCommand:
    """Compared by identity: the planner hands out one object per command and project."""

    kind: Kind
    tool: str
    """The name shown in results (`eslint`, `tsc`, `pytest`, or the setting's `name`)."""
    argv: tuple[str, ...]
    format: str
    project: Path
    """The workspace folder it runs in (the copy of it in the shadow, at run time)."""
    languages: frozenset[str] = frozenset()
    globs: tuple[str, ...] = ()
    why: str = ""
    """Why this command was chosen, for the model and `agentls doctor`."""
    install: str | None = None
    """What makes the program available when it is missing (`npm ci`, `pip install mypy`)."""
    lookup: tuple[Lookup, ...] = ("path",)
    requires: tuple[str, ...] = ()
    """Programs that must be on PATH besides it (`node` for the scripts in node_modules)."""
    module: str | None = None
    """A Python module that provides the program (`python -m ruff`) when it is not found."""
    targets: TargetStyle = "raw"
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    origin: str = "detected"
    """`detected`, or the setting it comes from (`lint[0]`)."""
    fallback: CheckCommand | None = None
    """Run instead when `probe` fails (clippy missing → `cargo check`)."""
    probe: tuple[str, ...] = ()
    probe_note: str = ""

    @property
    def program(self) -> str:
        return self.argv[0]

    @property
    def per_file(self) -> bool:
        """Whether it takes the files to check (`{paths}`) or checks the whole project."""
        return any("{paths}" in a or "{files}" in a for a in self.argv)

    @property
    def configured(self) -> bool:
        return self.origin != "detected"

    def covers(self, language: str | None, relative: str) -> bool:
        """Whether this command checks a file (its language, or a root-relative path glob);
        a command that names neither covers every file."""
        from agentls.workspace.globs import PathGlob

        if not self.languages and not self.globs:
            return True
        if language is not None and language in self.languages:
            return True
        return any(PathGlob.compile(g, rg_style=True).matches(relative) for g in self.globs)

    def with_fallback(self) -> CheckCommand:
        """The fallback, explained by why the first choice could not run."""
        assert self.fallback is not None
        return replace(self.fallback, why=f"{self.fallback.why}; {self.probe_note}".strip("; "))
