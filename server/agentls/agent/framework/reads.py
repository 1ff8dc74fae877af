"""What this session has read: the basis of "read it first" for `edit_file`.

Why (as Claude Code does): a model that edits a file it never read invents `old_string`s,
and one that read an old version overwrites what changed since. Each read (and each edit or
write the session made) records a digest of the file's text as the session saw it; an edit
needs a record that matches the text it is about to change.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ReadLog:
    """Path → digest of the text this session last read or wrote there."""

    def __init__(self) -> None:
        self._seen: dict[Path, str] = {}

    def record(self, path: Path, text: str) -> None:
        self._seen[path] = _digest(text)

    def paths(self) -> list[Path]:
        """The files read or written in this session, in the order first seen."""
        return list(self._seen)

    def problem(self, path: Path, text: str, display: str) -> str | None:
        """Why an edit of `path` (now `text`) must wait for a read; None when it may go."""
        seen = self._seen.get(path)
        if seen is None:
            return (
                f"{display} has not been read in this session. Read it first with read_file "
                f'{{"path": "{display}"}}, then copy old_string exactly from what it shows.'
            )
        if seen != _digest(text):
            return (
                f"{display} has changed since you last read it (the user, a formatter or "
                f"another tool changed it). Read it again with read_file before editing."
            )
        return None
