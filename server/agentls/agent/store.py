"""`SessionStore`: a JSON state file per session, next to its transcript.

`<transcript_dir>/<id>.state.json` holds what a resumed session needs (history, usage,
cost, discovered deferred tools, stub boundary, token calibration) plus what a session list
shows (dates, workspace, first prompt, status). It is rewritten atomically (temp file +
`os.replace`) at every status change, after every run and after each compaction, so a crash
leaves the previous complete state. Credentials are never written: settings are not stored,
only the model name.

The staged `ChangeSet` is not restored: it holds original texts and buffer versions that a
restart makes stale (the user may have edited or saved the files meanwhile), and replaying
it could clobber their work. The state keeps the staged paths; a resumed session tells the
model that those edits were not delivered, so it can redo them if they are still wanted.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.agent.transcript import transcript_dir

if TYPE_CHECKING:
    from agentls.agent.model_client import ModelClient
    from agentls.agent.session import AgentSession, SessionConfig

log = logging.getLogger(__name__)

STATE_VERSION = 1
STATE_SUFFIX = ".state.json"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class SessionStateError(Exception):
    """A session's state is missing, unreadable or not a state file; the message says which."""


@dataclass
class SessionState:
    """A session's persisted state (see the module doc)."""

    id: str
    created: float
    updated: float
    workspace: list[str]
    model: str
    first_prompt: str
    status: str
    runs: int
    turns: int
    usage: dict[str, int]
    cost_usd: float | None
    cost_note: str | None
    messages: list[dict[str, Any]]
    discovered_tools: list[str] = field(default_factory=list)
    staged_paths: list[str] = field(default_factory=list)
    compactions: int = 0
    stub_boundary: int = 0
    token_ratio: float = 1.0
    last_input_tokens: int | None = None
    transcript: str = ""
    last_prompt: str = ""
    version: int = STATE_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "id": self.id,
            "created": self.created,
            "updated": self.updated,
            "workspace": self.workspace,
            "model": self.model,
            "first_prompt": self.first_prompt,
            "last_prompt": self.last_prompt,
            "status": self.status,
            "runs": self.runs,
            "turns": self.turns,
            "usage": self.usage,
            "cost_usd": self.cost_usd,
            "cost_note": self.cost_note,
            "discovered_tools": self.discovered_tools,
            "staged_paths": self.staged_paths,
            "compactions": self.compactions,
            "stub_boundary": self.stub_boundary,
            "token_ratio": self.token_ratio,
            "last_input_tokens": self.last_input_tokens,
            "transcript": self.transcript,
            "messages": self.messages,
        }

    @classmethod
    def from_json(cls, data: Any, source: Path) -> SessionState:
        if not isinstance(data, dict):
            raise SessionStateError(f"{source} is not a session state file (not a JSON object)")
        version = data.get("version")
        if version != STATE_VERSION:
            raise SessionStateError(
                f"{source} has state version {version!r}; this agentls reads version "
                f"{STATE_VERSION}"
            )
        try:
            usage = {str(k): int(v) for k, v in dict(data.get("usage") or {}).items()}
            messages = data["messages"]
            if not isinstance(messages, list) or not all(
                isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in messages
            ):
                raise ValueError("`messages` must be a list of user/assistant messages")
            cost = data.get("cost_usd")
            return cls(
                id=str(data["id"]),
                created=float(data["created"]),
                updated=float(data["updated"]),
                workspace=[str(p) for p in data.get("workspace") or []],
                model=str(data.get("model") or ""),
                first_prompt=str(data.get("first_prompt") or ""),
                last_prompt=str(data.get("last_prompt") or ""),
                status=str(data.get("status") or "idle"),
                runs=int(data.get("runs") or 0),
                turns=int(data.get("turns") or 0),
                usage=usage,
                cost_usd=float(cost) if isinstance(cost, int | float) else None,
                cost_note=data.get("cost_note") if isinstance(data.get("cost_note"), str) else None,
                messages=messages,
                discovered_tools=[str(n) for n in data.get("discovered_tools") or []],
                staged_paths=[str(p) for p in data.get("staged_paths") or []],
                compactions=int(data.get("compactions") or 0),
                stub_boundary=int(data.get("stub_boundary") or 0),
                token_ratio=float(data.get("token_ratio") or 1.0),
                last_input_tokens=_int_or_none(data.get("last_input_tokens")),
                transcript=str(data.get("transcript") or ""),
            )
        except (KeyError, TypeError, ValueError) as exc:
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise SessionStateError(f"{source} is not a valid session state: {detail}") from None


@dataclass(frozen=True)
class SessionSummary:
    """One line of `agentls sessions`."""

    id: str
    created: float
    updated: float
    workspace: list[str]
    model: str
    first_prompt: str
    status: str
    runs: int
    turns: int
    tokens: int
    cost_usd: float | None
    state_file: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "updated": self.updated,
            "workspace": self.workspace,
            "model": self.model,
            "first_prompt": self.first_prompt,
            "status": self.status,
            "runs": self.runs,
            "turns": self.turns,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "state_file": self.state_file,
        }


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
        target = self.path(state.id)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(state.to_json(), ensure_ascii=False, default=str)
        fd, tmp = tempfile.mkstemp(prefix=f".{state.id}.", suffix=".tmp", dir=target.parent)
        try:
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
        state = SessionState.from_json(data, path)
        if state.id != session_id:
            raise SessionStateError(f"{path} belongs to session {state.id!r}, not {session_id!r}")
        return state

    def resume(self, session_id: str, client: ModelClient, config: SessionConfig) -> AgentSession:
        """A live session continuing a saved one (same id, history, tools discovered)."""
        from agentls.agent.session import AgentSession

        return AgentSession.restore(client, config, self.load(session_id))

    def list(self, workspace: Path | None = None) -> list[SessionSummary]:
        """Saved sessions, newest first; with `workspace`, those with a root that is it, holds
        it or lies inside it. Unreadable state files are skipped (and logged)."""
        if not self.folder.is_dir():
            return []
        wanted = workspace.expanduser().resolve() if workspace is not None else None
        found: list[SessionSummary] = []
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
        found.sort(key=lambda s: s.updated, reverse=True)
        return found

    def delete(self, session_id: str) -> bool:
        try:
            self.path(session_id).unlink()
        except FileNotFoundError:
            return False
        return True


def _summary(state: SessionState, path: Path) -> SessionSummary:
    usage = state.usage
    tokens = sum(
        usage.get(k, 0)
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    )
    return SessionSummary(
        id=state.id,
        created=state.created,
        updated=state.updated,
        workspace=state.workspace,
        model=state.model,
        first_prompt=state.first_prompt,
        status=state.status,
        runs=state.runs,
        turns=state.turns,
        tokens=tokens,
        cost_usd=state.cost_usd,
        state_file=str(path),
    )


def _same_or_inside(root: Path, wanted: Path) -> bool:
    try:
        resolved = root.resolve()
    except OSError:
        resolved = root
    return resolved == wanted or resolved in wanted.parents or wanted in resolved.parents


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
