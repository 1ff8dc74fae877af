"""Changes on disk (a `git checkout`, a formatter, another editor) reach the workspace.

Where the client can watch files, one `workspace/didChangeWatchedFiles` watcher is
registered dynamically and each reported change goes to `Workspace.notify_disk_change`,
which re-indexes that file only. Where it cannot (Helix, some Emacs set-ups), a background
poll compares modification times and sizes every `POLL_SECONDS` and reports the differences
the same way. `didSave` is reported too, for clients that save without watching.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types

from agentls.lsp.contract import Connection
from agentls.lsp.uris import uri_to_path
from agentls.workspace.disk_poll import POLL_SECONDS, poll_disk

log = logging.getLogger(__name__)


def setup(server: Connection) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: Connection, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            _notify(ls, change.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Connection, params: types.DidSaveTextDocumentParams) -> None:
        _notify(ls, params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)  # advertised: `NOTEBOOK_SYNC.save`
    def notebook_did_save(ls: Connection, params: types.DidSaveNotebookDocumentParams) -> None:
        _notify(ls, params.notebook_document.uri)


def _notify(ls: Connection, uri: str) -> None:
    path = uri_to_path(uri)
    if path is None or not ls.has_workspace:
        return
    try:
        ls.agent_workspace.notify_disk_change(path)
    except Exception:
        log.debug("disk change of %s not tracked", path, exc_info=True)


async def start_watching(ls: Connection) -> None:
    """Register the client-side watcher, or fall back to polling the disk."""
    if ls.features.watch_files:
        registration = types.Registration(
            id=f"agentls-watch-{uuid.uuid4().hex[:8]}",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
            ),
        )
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
            return
        except Exception:
            log.warning("the client refused the file watcher; polling the disk instead")
    ls.watch_task = asyncio.get_running_loop().create_task(_poll(ls), name="agentls-poll-disk")


async def _poll(ls: Connection) -> None:
    """The fallback: a cheap stat walk (ignore rules applied) in a thread, forever."""
    await poll_disk(ls.agent_workspace, _poll_seconds())


def _poll_seconds() -> float:
    """`AGENTLS_DISK_POLL_SECONDS` (an invalid value was reported at start-up)."""
    from agentls.config.environment import environment

    return environment()[0].disk_poll_seconds or POLL_SECONDS
