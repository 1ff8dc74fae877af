"""`SessionStore`: a JSON state file per session, next to its transcript.

`<transcript_dir>/<id>.state.json` holds what a resumed session needs (history, usage,
cost, discovered deferred tools, stub boundary, token calibration, the staged changeset)
plus what a session list shows (dates, workspace, first prompt, status). The layout is the
`SessionState` model (`agentls.agent.persistence.state`). A file is rewritten atomically
(temp file + `os.replace`) at every status change, after every run, after each compaction
and when the user accepts or rejects staged edits, so a crash leaves the previous complete
state; the turns of a run in flight are journaled in the transcript
(`agentls.agent.persistence.journal`).
Credentials are never written. State files are private like transcripts: 0600 in a 0700
folder (`agentls.privatefiles`); the atomic replace never follows a symlink planted at the
state file's name.

The staged changeset is saved with its base texts, so its edits can still be delivered
after a restart (`staged_changes`). Delivery checks each base against the file as it is
then and rebases or reports a conflict: a stale edit never overwrites the user's work.

This module knows state files only: it imports neither the session nor the loop.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from agentls.agent.persistence import staged
from agentls.agent.persistence.state import STATE_VERSION, SessionState
from agentls.agent.persistence.transcript import transcript_dir
from agentls.agent.protocol.usage import Usage
from agentls.workspace import ChangeSet

if TYPE_CHECKING:
    from agentls.agent.protocol.results import SessionSummaryPayload

__all__ = [
    "STATE_SUFFIX",
    "STATE_VERSION",
    "SessionState",
    "SessionStateError",
    "SessionStore",
]

log = logging.getLogger(__name__)

STATE_SUFFIX = ".state.json"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class SessionStateError(Exception):
    """A session's state is missing, unreadable or not a state file; the message says which."""


class SessionStore:
    """State files in one folder (the transcript folder by default)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or transcript_dir()

    def path(self, session_id: str) -> Path:
        if not _ID.match(session_id):
            raise SessionStateError(f"{session_id!r} is not a valid session id")
        return self.folder / f"{session_id}{STATE_SUFFIX}"

    def exists(self, session_id: str) -> bool:
        try:
            return self.path(session_id).is_file()
        except SessionStateError:
            return False

    def save(self, state: SessionState) -> Path:
        """Write atomically: readers see the old or the new file, never half of one."""
        from agentls.privatefiles import FILE_MODE, private_dir

        target = self.path(state.id)
        private_dir(target.parent)
        data = state.model_dump_json()
        fd, tmp = tempfile.mkstemp(prefix=f".{state.id}.", suffix=".tmp", dir=target.parent)
        try:
            os.fchmod(fd, FILE_MODE)  # mkstemp's 0600 today; said explicitly, not assumed
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return target

    def load(self, session_id: str) -> SessionState:
        """The state of a session; `SessionStateError` (never a traceback) when unusable."""
        path = self.path(session_id)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SessionStateError(
                f"no saved session {session_id!r} (no {path.name} in {self.folder})"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise SessionStateError(f"cannot read session state {path}: {exc}") from None
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SessionStateError(
                f"session state {path} is corrupt (invalid JSON at line {exc.lineno}, column "
                f"{exc.colno}); its transcript {session_id}.jsonl still has the history"
            ) from None
        state = _validate(data, path)
        if state.id != session_id:
            raise SessionStateError(f"{path} belongs to session {state.id!r}, not {session_id!r}")
        return state

    def staged_changes(self, session_id: str) -> ChangeSet:
        """The staged edits saved with a session, ready to deliver (`SessionStateError` if
        the session is unknown or saved none). Check `staged.stale_changes` first to tell
        the user which files changed since."""
        state = self.load(session_id)
        if state.staged is None:
            raise SessionStateError(
                f"session {session_id!r} was saved without its staged edits (an older agentls)"
                + (f"; it had staged {', '.join(state.staged_paths)}" if state.staged_paths else "")
            )
        return staged.restore(state.staged)

    def list(self, workspace: Path | None = None) -> list[SessionSummaryPayload]:
        """Saved sessions, newest first; with `workspace`, those with a root that is it, holds
        it or lies inside it. Unreadable state files are skipped (and logged)."""
        if not self.folder.is_dir():
            return []
        wanted = workspace.expanduser().resolve() if workspace is not None else None
        found: list[SessionSummaryPayload] = []
        for path in self.folder.glob(f"*{STATE_SUFFIX}"):
            session_id = path.name[: -len(STATE_SUFFIX)]
            try:
                state = self.load(session_id)
            except SessionStateError as exc:
                log.warning("skipping session state: %s", exc)
                continue
            if wanted is not None and not any(
                _same_or_inside(Path(root), wanted) for root in state.workspace
            ):
                continue
            found.append(_summary(state, path))
        found.sort(key=lambda s: s["updated"], reverse=True)
        return found

    def delete(self, session_id: str) -> bool:
        try:
            self.path(session_id).unlink()
        except FileNotFoundError:
            return False
        return True


def _validate(data: object, source: Path) -> SessionState:
    if not isinstance(data, dict):
        raise SessionStateError(f"{source} is not a session state file (not a JSON object)")
    version = data.get("version")
    if version != STATE_VERSION:
        raise SessionStateError(
            f"{source} has state version {version!r}; this agentls reads version {STATE_VERSION}"
        )
    try:
        return SessionState.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(file)'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:3]
        )
        raise SessionStateError(f"{source} is not a valid session state: {problems}") from None


def _summary(state: SessionState, path: Path) -> SessionSummaryPayload:
    """One session as `agentls.sessions` answers it: the wire shape is the only shape."""
    changes = staged.restore(state.staged) if state.staged else None
    return {
        "id": state.id,
        "created": state.created,
        "updated": state.updated,
        "workspace": state.workspace,
        "model": state.model,
        "first_prompt": state.first_prompt,
        "status": state.status,
        "runs": state.runs,
        "turns": state.turns,
        "tokens": Usage.from_dict(state.usage).total,
        "cost_usd": state.cost_usd,
        "state_file": str(path),
        "staged": [c.path for c in state.staged] if state.staged else list(state.staged_paths),
        "hunks": staged.hunk_payloads(changes) if changes is not None else [],
    }


def _same_or_inside(root: Path, wanted: Path) -> bool:
    try:
        resolved = root.resolve()
    except OSError:
        resolved = root
    return resolved == wanted or resolved in wanted.parents or wanted in resolved.parents
