"""`LspPort`: the `EditorPort` the host talks to, implemented with LSP requests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentls.lsp.progress import LspRunReporter

if TYPE_CHECKING:
    from agentls.host import EditOutcome, RunHandle, RunReporter
    from agentls.lsp.contract import Connection
    from agentls.runtime.delivery import Handoff
    from agentls.workspace import ChangeSet


class LspPort:
    def __init__(self, ls: Connection) -> None:
        self.ls = ls

    def reporter(self, run: RunHandle) -> RunReporter:
        return LspRunReporter(self.ls, run)

    async def deliver(
        self,
        session_id: str,
        changes: ChangeSet,
        how: Handoff,
        summary: str,
        *,
        final: bool = False,
    ) -> EditOutcome | None:
        from agentls.lsp.delivery import deliver

        return await deliver(self.ls, session_id, changes, how, summary)
