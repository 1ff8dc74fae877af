"""Which texts a language server has open, kept equal to what the agent sees.

Before each query the server is shown the query's file and every file the agent sees
differently from disk (editor buffers, the session's staged edits) with `didOpen` /
`didChange`; a file it had open that the agent now sees as on disk is changed back to the
disk text (or closed when it is gone). The user's files are never written: the server
analyses the staged text as if it were there. Files opened only for a query are closed
again, least recently used first, beyond `MAX_OPEN`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

log = logging.getLogger(__name__)

MAX_OPEN = 64
"""Documents kept open besides those the current query needs."""

Notify = Callable[[str, object], None]


@dataclass
class OpenDoc:
    uri: str
    language_id: str
    version: int
    text: str
    disk_mtime: int | None
    """The disk file's mtime when `text` was read from disk (None: from the overlay)."""
    used: float


class Documents:
    """The documents one server has open."""

    def __init__(self, notify: Notify) -> None:
        self._notify = notify
        self.open: dict[Path, OpenDoc] = {}

    def sync(
        self,
        desired: Mapping[Path, str],
        language_id: Callable[[Path], str],
        extra: Mapping[Path, str] | None = None,
    ) -> bool:
        """Open/change the documents so the server sees `desired` (overlay texts, the
        query's file) and `extra` (files opened from disk for this query). Returns whether
        anything was sent."""
        sent = False
        now = time.monotonic()
        wanted = {**(extra or {}), **desired}
        for path, text in wanted.items():
            from_disk = path not in desired
            sent |= self._show(path, text, language_id(path), now, from_disk)
        for path in [p for p in self.open if p not in wanted]:
            sent |= self._revert_to_disk(path)
        self._trim(set(wanted))
        return sent

    def version_of(self, path: Path) -> int | None:
        doc = self.open.get(path)
        return doc.version if doc is not None else None

    def _show(self, path: Path, text: str, language_id: str, now: float, from_disk: bool) -> bool:
        mtime = _mtime(path) if from_disk else None
        doc = self.open.get(path)
        if doc is None:
            uri = path.as_uri()
            self.open[path] = OpenDoc(uri, language_id, 1, text, mtime, now)
            item = types.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)
            self._notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(item))
            return True
        doc.used = now
        doc.disk_mtime = mtime
        if doc.text == text:
            return False
        self._change(doc, text)
        return True

    def _revert_to_disk(self, path: Path) -> bool:
        """The agent sees this file as on disk again: show the server the disk text."""
        doc = self.open[path]
        mtime = _mtime(path)
        if mtime is None:
            self._close(path)
            return True
        if doc.disk_mtime == mtime:
            return False
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            self._close(path)
            return True
        doc.disk_mtime = mtime
        if text == doc.text:
            return False
        self._change(doc, text)
        return True

    def _change(self, doc: OpenDoc, text: str) -> None:
        doc.version += 1
        doc.text = text
        self._notify(
            types.TEXT_DOCUMENT_DID_CHANGE,
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=doc.uri, version=doc.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            ),
        )

    def _close(self, path: Path) -> None:
        doc = self.open.pop(path)
        self._notify(
            types.TEXT_DOCUMENT_DID_CLOSE,
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=doc.uri)),
        )

    def _trim(self, keep: set[Path]) -> None:
        spare = [p for p in self.open if p not in keep]
        if len(spare) <= MAX_OPEN:
            return
        spare.sort(key=lambda p: self.open[p].used)
        for path in spare[: len(spare) - MAX_OPEN]:
            self._close(path)


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
