"""`Workspace`: the roots the agent may act on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class Workspace:
    """The user's workspace: one or more root folders, shared by all sessions."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots: list[Path] = [Path(r).resolve() for r in roots]
