"""Approval of a workspace's `.mcp.json`, asked once and remembered.

A project file can start arbitrary programs on the user's machine as soon as a workspace is
opened, so its servers only start after the user said yes to *that content*: the decision is
stored with the file's SHA-256, and a changed file (a pull that adds a server) is asked
about again. Decisions live in `platformdirs.user_config_dir("agentls")/mcp-approvals.json`,
keyed by the file's absolute path. Asking is the host's business (an LSP
`window/showMessageRequest`, a CLI flag), so it is injected as a `ProjectFileApprover`.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

log = logging.getLogger(__name__)

APPROVALS_FILE = "mcp-approvals.json"


@dataclass(frozen=True)
class ProjectFileRequest:
    """What the user is asked to approve: the file and what it would start."""

    path: Path
    sha256: str
    servers: tuple[tuple[str, str], ...]
    """(name, what it runs: `command args…` or `http URL`) per server in the file."""

    def message(self) -> str:
        listing = "; ".join(f"{name}: {what}" for name, what in self.servers)
        return (
            f"{self.path} defines MCP servers that agentls would start: {listing}. "
            "Allow them for this workspace?"
        )


ProjectFileApprover = Callable[[ProjectFileRequest], Awaitable[bool | None]]
"""Returns True (approve), False (deny, remembered) or None (no answer: ask again later)."""


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ApprovalStore:
    """Remembered yes/no per project file and content hash; a small JSON file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Path(platformdirs.user_config_dir("agentls")) / APPROVALS_FILE

    def decision(self, project_file: Path, sha256: str) -> bool | None:
        """The answer about the whole file at this content, if any."""
        entry = self._entry(project_file, sha256)
        approved = entry.get("approved") if entry else None
        return approved if isinstance(approved, bool) else None

    def approved_servers(self, project_file: Path, sha256: str) -> frozenset[str]:
        """Servers approved one by one (the `agentls.mcp` command) at this content."""
        entry = self._entry(project_file, sha256)
        names = entry.get("approved_servers") if entry else None
        if not isinstance(names, list):
            return frozenset()
        return frozenset(n for n in names if isinstance(n, str))

    def _entry(self, project_file: Path, sha256: str) -> dict[str, object] | None:
        entry = self._load().get(str(project_file.resolve()))
        if not isinstance(entry, dict) or entry.get("sha256") != sha256:
            return None  # another version of the file: asked again
        return entry

    def record(
        self, request: ProjectFileRequest, approved: bool, server: str | None = None
    ) -> None:
        """Remember the answer about the file, or (with `server`) approve one of its servers;
        a store that cannot be written only costs a repeated question."""
        data = self._load()
        key = str(request.path.resolve())
        entry: dict[str, object] = {"sha256": request.sha256}
        previous = self._entry(request.path, request.sha256)
        if server is not None:
            entry = dict(previous or entry)
            names = set(self.approved_servers(request.path, request.sha256)) | {server}
            entry["approved_servers"] = sorted(names)
        else:
            entry["approved"] = approved
            entry["servers"] = [name for name, _ in request.servers]
            if previous and "approved_servers" in previous:
                entry["approved_servers"] = previous["approved_servers"]
        entry["decided_at"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        data[key] = entry
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-approvals-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": 1, "projects": data}, handle, indent=2, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("could not save the MCP approval to %s: %s", self.path, exc)
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)

    def _load(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return dict(projects) if isinstance(projects, dict) else {}
