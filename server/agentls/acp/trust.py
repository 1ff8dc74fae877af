"""Workspace trust in the ACP host: the same gate as the LSP's, asked in the agent panel.

The decision, its storage and the gate are shared (`agentls.agent.claude.trust`,
`agentls.runtime.trust_gate`). A workspace is assessed when it is created and again at every
`session/new` and `session/load` (the project file is re-read, so a pull that changed the
settings is noticed and asked about again). While the answer is pending, a new session's
settings are not built yet: its first prompt asks — once per workspace and settings —
with `session/request_permission`. ACP has no question without a tool call, so the
question is a tool call of its own, "Trust this workspace's settings?", listing what is
held back, with "Trust workspace" (`allow_always`) and "Don't trust" (`reject_always`).
Every prompt of the workspace waits for the answer (a `session/cancel` stops waiting); the
session then starts on it. A client that cannot or does not answer leaves the settings
held back, and the prompt's answer says what is held back and how to trust the workspace
(`agentls trust` in a terminal).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Literal, Protocol

from acp.schema import (
    PermissionOption,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from agentls.acp.approvals import ask_client, text_content
from agentls.runtime.trust_gate import TrustGate

if TYPE_CHECKING:
    from pathlib import Path

    from agentls.acp.client import ClientLink
    from agentls.agent.claude.trust import WorkspaceTrust
    from agentls.runtime.config_state import ConfigState

log = logging.getLogger(__name__)


class TrustSession(Protocol):
    """What the trust question needs of an ACP session (`agentls.acp.workspace.AcpSession`)."""

    @property
    def id(self) -> str: ...
    @property
    def cancelled(self) -> asyncio.Event: ...

    trust_noted: bool


class TrustFolder(Protocol):
    """What the trust gate needs of its session folder (`agentls.acp.workspace.AcpWorkspace`,
    which imports this module to make its gate: naming it here would close an import
    cycle)."""

    @property
    def root(self) -> Path: ...
    @property
    def config(self) -> ConfigState: ...
    @property
    def link(self) -> ClientLink: ...

    problems: list[str]

    def settings_changed(self) -> None: ...


TITLE = "Trust this workspace's settings?"
TRUST_OPTIONS = [
    PermissionOption(option_id="trust", name="Trust workspace", kind="allow_always"),
    PermissionOption(option_id="dont_trust", name="Don't trust", kind="reject_always"),
]


class AcpTrust:
    """The trust gate of one ACP workspace."""

    def __init__(self, workspace: TrustFolder) -> None:
        self.workspace = workspace
        self.gate = TrustGate()

    @property
    def current(self) -> WorkspaceTrust | None:
        return self.gate.trust

    @property
    def pending(self) -> bool:
        return self.gate.pending

    def refresh(self) -> bool:
        """Assess the workspace (again) and apply it to the settings; whether anything the
        sessions use changed (the caller then reloads the safety settings)."""
        workspace = self.workspace
        before = self.gate.trust
        trust = self.gate.refresh(
            workspace.config, [workspace.root], reload_project=before is not None
        )
        if not trust.trusted:
            held = "; ".join(h.describe() for h in trust.held_back)
            log.info("project settings held back (%s): %s", trust.state, held)
        return before is None or (before.digest, before.state) != (trust.digest, trust.state)

    async def settle(self, session: TrustSession) -> bool:
        """Ask when the answer is due, and wait for it; False when the session's prompt was
        cancelled while waiting."""
        if self.gate.should_ask():
            self.gate.start(lambda trust: self._ask(session.id, trust))
        if not self.gate.asking:
            return True
        waiting = asyncio.ensure_future(self.gate.wait())
        cancelled = asyncio.ensure_future(session.cancelled.wait())
        try:
            await asyncio.wait({waiting, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (waiting, cancelled):
                task.cancel()  # `wait` shields the question itself
        return not session.cancelled.is_set()

    def note(self, session: TrustSession) -> str | None:
        """Once per session, while the project's loosening settings are held back because
        nobody trusted the workspace: what is held back and how to trust it."""
        trust = self.gate.trust
        if session.trust_noted or trust is None or trust.state not in ("pending", "untrusted"):
            return None
        session.trust_noted = True
        root = self.workspace.root
        how = (
            f"to trust it, run `agentls trust -w {root}` in a terminal, then start a new session"
            if trust.state == "pending"
            else f"`agentls trust -w {root}` trusts it after all (for new sessions)"
        )
        return f"agentls: {trust.summary()}. {how}.\n\n"

    async def _ask(self, session_id: str, trust: WorkspaceTrust) -> None:
        link = self.workspace.link
        call_id = f"trust-{uuid.uuid4().hex[:12]}"
        listing = "\n".join(f"- {h.describe()}" for h in trust.held_back)
        body = f"{trust.question()}\n\n{listing}"
        locations = [ToolCallLocation(path=str(trust.roots[0] / s)) for s in _files(trust)]
        link.send(
            session_id,
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=call_id,
                title=TITLE,
                kind="other",
                status="pending",
                content=[text_content(body)],
                locations=locations or None,
            ),
        )
        request = ToolCallUpdate(
            tool_call_id=call_id,
            title=TITLE,
            kind="other",
            status="pending",
            content=[text_content(body)],
            locations=locations or None,
        )
        try:
            chosen = await ask_client(link, session_id, request, TRUST_OPTIONS)
        except Exception as exc:  # a client that cannot ask: held back, said in the answer
            log.info("the trust question failed: %s", exc)
            chosen = None
        status: Literal["completed", "failed"] = "completed" if chosen == "trust" else "failed"
        if chosen is not None:
            self.workspace.problems += self.gate.record(trust, chosen == "trust")
            self.refresh()  # from disk: the answer holds for the settings asked about
            self.workspace.settings_changed()
        done = ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id, status=status
        )
        link.send(session_id, done)


def _files(trust: WorkspaceTrust) -> list[str]:
    """The settings files the question is about (those that name a file of the root)."""
    found = []
    for source in trust.sources:
        name = source.split(" ", 1)[0]
        if (trust.roots[0] / name).is_file() and name not in found:
            found.append(name)
    return found
