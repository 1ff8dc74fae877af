"""One-off parses that do not touch the index: an outline of unsaved/staged text, and
syntax errors for the lint tool. Both refuse huge or generated files like the index does.
"""

from __future__ import annotations

from pathlib import Path

from agentls.index.extract import extract_rows, skip_reason
from agentls.index.extract import syntax_problems as _syntax_problems
from agentls.index.languages import language_for
from agentls.index.model import Symbol, SyntaxProblem
from agentls.index.records import FileRecord, pack


def syntax_errors(path: Path | str, text: str | bytes) -> list[SyntaxProblem]:
    """Parse errors in `text` (ERROR/MISSING nodes), capped; [] for unknown or huge files."""
    spec = language_for(path)
    if spec is None:
        return []
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    if skip_reason(data):
        return []
    return _syntax_problems(spec, data)


def outline(path: Path, text: str | bytes) -> list[Symbol] | None:
    """Parse `text` as the file at `path` and return its outline, without indexing it.

    For views the index does not hold (a session's staged edits). None when there is no
    grammar for the file or it is too large/generated to parse.
    """
    spec = language_for(path)
    if spec is None:
        return None
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    if skip_reason(data):
        return None
    return FileRecord(path, -1, len(data), pack(extract_rows(spec, data))).outline()
