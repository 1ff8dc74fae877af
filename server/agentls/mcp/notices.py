"""What the MCP manager tells the user, and how it says each thing only once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Notice:
    """Something the user should see now (the host shows it where they look)."""

    level: Literal["info", "warning"]
    text: str


Notifier = Callable[[Notice], None]


def log_notice(notice: Notice) -> None:
    log.info("%s", notice.text)


@dataclass
class Seen:
    """Notices already given, so each is said once (until a reload or restart)."""

    keys: set[tuple[str, ...]] = field(default_factory=set)

    def first(self, *key: str) -> bool:
        if key in self.keys:
            return False
        self.keys.add(key)
        return True

    def forget(self, name: str) -> None:
        """Notices about one server may be given again (it was restarted)."""
        self.keys = {k for k in self.keys if name not in k[1:]}
