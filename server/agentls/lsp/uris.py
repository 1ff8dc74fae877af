"""Editor URIs as local paths: a leaf every feature module may import."""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path


def uri_to_path(uri: str) -> Path | None:
    """A local path for a `file:` URI; None for other schemes (untitled:, git:, ...)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None
