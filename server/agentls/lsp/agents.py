"""Sub-agent types in the language server: skipped agent files are shown to the user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection


def watch_agent_files(ls: Connection) -> None:
    """Tell the user about sub-agent files that were skipped (now, and when an edited file
    is read again), where they look: a warning message, not only a log line."""
    catalog = ls.runtime.services.agents  # the runtime's: the one `task` offers

    def show(problems: list[str]) -> None:
        ls.message(types.MessageType.Warning, "agentls: " + "; ".join(problems))

    catalog.on_problems = show
    catalog.types()  # read them now, so a broken file is reported at start-up
