"""`ChangeSet`: a session's staged edits, layered over disk and editor buffers."""

from __future__ import annotations


class ChangeSet:
    """Edits one session has staged but not yet delivered to the editor."""
