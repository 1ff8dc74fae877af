"""One diagnostic in the shape every linter's result takes, with its path mapped from the
shadow copy back to the workspace."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.workspace.lint_formats import RawDiagnostic

if TYPE_CHECKING:
    from agentls.tools.checks.runner import CheckRun
    from agentls.workspace.shadow import ShadowWorkspace

__all__ = ["Finding", "map_finding", "resolve_output_path", "shown_command"]

_SHOWN_FILES = 3


@dataclass(frozen=True)
class Finding:
    path: Path
    """The workspace path (for filtering); `file` is how the model sees it."""
    file: str
    line: int
    column: int
    severity: str
    code: str | None
    message: str
    source: str
    fixable: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "source": self.source,
            "fixable": self.fixable,
        }


def resolve_output_path(printed: str, cwd: Path, shadow: ShadowWorkspace) -> Path | None:
    """The workspace path of a file a tool printed: absolute, or relative to where it ran,
    or (cargo prints paths relative to its workspace of crates) to a folder above it."""
    candidate = Path(printed)
    if not candidate.is_absolute():
        candidate = cwd / printed
        mirrored = shadow.to_workspace(cwd)
        top = shadow.shadow_root(mirrored) if mirrored is not None else cwd
        folder = cwd
        while not candidate.exists() and folder != top and folder.parent != folder:
            folder = folder.parent
            if (folder / printed).exists():
                candidate = folder / printed
    return shadow.to_workspace(os.path.normpath(candidate))


def map_finding(
    diag: RawDiagnostic, cwd: Path, shadow: ShadowWorkspace, tool: str
) -> Finding | None:
    """The finding in workspace terms; None for files outside the workspace (a library's
    type stubs, the standard library)."""
    path = resolve_output_path(diag.file, cwd, shadow)
    if path is None:
        return None
    return Finding(
        path=path,
        file=shadow.workspace.display(path),
        line=diag.line,
        column=diag.column,
        severity=diag.severity,
        code=diag.code,
        message=shadow.map_output(diag.message),
        source=diag.tool or tool,
        fixable=diag.fixable,
    )


def display_command(words: list[str], shadow: ShadowWorkspace) -> str:
    """A command line as the user would read it: shadow paths as workspace paths
    (`node_modules/.bin/tsc`), a program found on PATH by its name, others in full (which
    interpreter ran matters)."""
    import shlex
    import shutil

    if words and os.path.isabs(words[0]) and shutil.which(os.path.basename(words[0])) == words[0]:
        words = [os.path.basename(words[0]), *words[1:]]
    return shadow.map_output(shlex.join(words))


def shown_command(run: CheckRun, shadow: ShadowWorkspace) -> str:
    """The command line as run, a long file list shortened to its count."""
    if len(run.files) <= _SHOWN_FILES:
        return display_command(run.argv, shadow)
    names = set(run.files)
    words = [w for w in run.argv if w not in names]
    return f"{display_command(words, shadow)} <{len(run.files)} files>"
