"""Editor buffers: the unsaved text the LSP layer feeds in from didOpen/didChange/didClose.

The agent must see what the user sees, so a buffer shadows the file on disk until it is
closed. The buffer version is kept because an edit delivered later must name the version
it was computed against (a versioned `TextDocumentEdit`), so a buffer the user changed in
the meantime is detected instead of clobbered.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

Listener = Callable[[Path], None]
"""Called with the path whose layered content may have changed (buffer or disk)."""


@dataclass(frozen=True)
class Buffer:
    """One open editor document: its full text and the editor's version number."""

    path: Path
    text: str
    version: int | None


class BufferStore:
    """Open buffers by path, plus the listeners told about buffer and disk changes."""

    def __init__(self) -> None:
        self._buffers: dict[Path, Buffer] = {}
        self._listeners: list[Listener] = []

    def set(self, path: Path, text: str, version: int | None) -> Buffer:
        buffer = Buffer(path, text, version)
        self._buffers[path] = buffer
        self.notify(path)
        return buffer

    def close(self, path: Path) -> bool:
        """Forget a buffer (reads fall back to disk); False when it was not open."""
        if self._buffers.pop(path, None) is None:
            return False
        self.notify(path)
        return True

    def get(self, path: Path) -> Buffer | None:
        return self._buffers.get(path)

    def paths(self) -> list[Path]:
        return list(self._buffers)

    def snapshot(self) -> dict[Path, Buffer]:
        """A copy that a worker thread may read while the loop keeps updating buffers."""
        return dict(self._buffers)

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        """Subscribe to changes; returns a function that unsubscribes."""
        self._listeners.append(callback)

        def remove() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return remove

    def notify(self, path: Path) -> None:
        """Tell every listener; one failing listener must not break document sync."""
        for callback in list(self._listeners):
            try:
                callback(path)
            except Exception:
                log.exception("workspace listener failed for %s", path)
