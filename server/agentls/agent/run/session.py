"""`AgentSession`: a conversation that runs, compacts and saves itself.

The parts it ties together, each in its own module: the state (`Conversation`), the
loop that runs it (`AgentLoop`), context management (`Compactor`), tokens and cost
(`Accounting`), and persistence (`SessionStore` for the state file, the turn journal in
the transcript). Only this module imports them all; none of them imports it back.

Persistence: with `SessionConfig.persist` (the default) the state file is written at every
status change, after every run and compaction, and when staged edits are accepted or
rejected; each complete turn of a run is journaled in the transcript. `AgentSession.resume`
continues a saved session after a restart, staged edits included; a session the server
did not survive mid-run comes back as `interrupted`, with its history up to the last
complete turn and a note to the model about what happened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from agentls.agent.claude.prompt_commands import CommandRun
from agentls.agent.framework.context import RunMode
from agentls.agent.framework.todos import parse_todos
from agentls.agent.hooks.runner import compaction_hooks, session_hooks
from agentls.agent.persistence import journal, staged
from agentls.agent.persistence.state import SessionState
from agentls.agent.persistence.store import SessionStateError, SessionStore
from agentls.agent.protocol.events import EventSink, ignore_event
from agentls.agent.protocol.messages import ContentBlockParam, text_block
from agentls.agent.protocol.results import RunResult, SessionStatusPayload
from agentls.agent.run.compaction import CompactionResult
from agentls.agent.run.context_window import Compactor, Summarizer
from agentls.agent.run.conversation import Conversation, SessionConfig
from agentls.agent.run.loop import AgentLoop
from agentls.agent.run.model_client import ModelClient
from agentls.errors import SessionBusy
from agentls.workspace.changes import ChangeEvent

__all__ = ["AgentSession", "RunResult", "SessionBusy", "SessionConfig", "Summarizer"]

log = logging.getLogger(__name__)

INTERRUPTED_STATUSES = ("running", "compacting")
"""Saved statuses that mean the server stopped while the session was busy."""


class AgentSession(Conversation):
    """One conversation with the model, continued by follow-up prompts; one run at a time."""

    def __init__(
        self,
        client: ModelClient,
        config: SessionConfig,
        session_id: str | None = None,
        *,
        _state: SessionState | None = None,
    ):
        super().__init__(client, config, _state.id if _state else session_id)
        self.store = SessionStore(config.transcript_dir) if config.persist else None
        self.compactor = Compactor(self)
        self._save_pending = False
        recovery = self._take_over(_state) if _state is not None else None
        self.on_change = self._changed
        self.on_staging = self._staging_changed
        if _state is None:
            self.transcript.write(
                "session",
                session_id=self.id,
                model=self.settings.model,
                workspace=[str(r) for r in config.workspace.roots],
                tools=self.pool("review").names,
            )
            return
        self._record_resume(_state, recovery)
        if recovery is not None:
            self.persist()  # the recovered state, so a second restart does not replay again

    @classmethod
    def restore(
        cls, client: ModelClient, config: SessionConfig, state: SessionState
    ) -> AgentSession:
        """Continue a saved session (`SessionStore.load`) with this host's tools and client.

        History, usage, cost, staged edits, discovered deferred tools and context
        bookkeeping come back. A session saved while a run was in flight is recovered from
        its turn journal and marked `interrupted`.
        """
        return cls(client, config, _state=state)

    @classmethod
    def resume(
        cls,
        session_id: str,
        client: ModelClient,
        config: SessionConfig,
        store: SessionStore | None = None,
    ) -> AgentSession:
        """A live session continuing a saved one (`SessionStateError` when there is none)."""
        store = store or SessionStore(config.transcript_dir)
        return cls.restore(client, config, store.load(session_id))

    def _take_over(self, state: SessionState) -> journal.Recovery | None:
        self.load(state)
        if state.status not in INTERRUPTED_STATUSES:
            return None
        recovery = journal.recover(
            self.transcript.path, state.runs, state.messages, state.compactions
        )
        if recovery.found:
            self.messages = recovery.messages
            if recovery.turns is not None:
                self.turns = recovery.turns
            if recovery.tally is not None:
                self.accounting.session = recovery.tally
            if recovery.changes is not None:
                self.changes.discard()
                staged.restore(recovery.changes, into=self.changes)
            if recovery.todos is not None:
                self.todos = parse_todos(recovery.todos)
        self.reminders.append(text_block(journal.interruption_note(recovery, self.staged_paths())))
        self.status = "interrupted"
        self.changes_dirty = False
        return recovery

    def _record_resume(self, state: SessionState, recovery: journal.Recovery | None) -> None:
        self.transcript.write(
            "resume",
            session_id=self.id,
            model=self.settings.model,
            previous_model=state.model,
            workspace=[str(r) for r in self.config.workspace.roots],
            previous_workspace=state.workspace,
            messages=len(self.messages),
            discovered_tools=sorted(self.discovered),
            staged=self.staged_paths(),
            lost_staged=[] if state.staged is not None else state.staged_paths,
            interrupted=recovery is not None,
            recovered_turns=recovery.run_turns if recovery is not None else None,
            tools=self.pool("review").names,
        )

    # --- running ------------------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        *,
        events: EventSink = ignore_event,
        mode: RunMode = "review",
        attachments: Sequence[ContentBlockParam] = (),
        command: CommandRun | None = None,
        title: str = "",
    ) -> RunResult:
        """Run the agent on a prompt (a follow-up if the session already has history);
        `attachments` go with the prompt's text (e.g. images); `title`: the prompt as the
        user typed it (what rewind lists), when the host added context to `prompt`."""
        cancel = self.begin_run(prompt, title)
        status = "failed"
        try:
            await self.load_tool_sources()
            loop = AgentLoop(self, events, mode, cancel, command=command)
            result = await loop.run(prompt, attachments)
            status = result.status
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        finally:
            self.end_run(status)
        return result

    async def compact(
        self,
        reason: str = "manual",
        *,
        summarize: Summarizer | None = None,
        mode: RunMode = "review",
        tokens_before: int | None = None,
    ) -> CompactionResult:
        """Summarise older turns now (see `Compactor.compact`); `SessionBusy` while a run
        is going. A manual compaction runs PreCompact hooks first and SessionStart hooks
        ("compact") after, whose context reaches the model with the next prompt."""
        hooks = self.config.hooks
        ctx = self.tool_context(mode, asyncio.Event())
        manual = reason == "manual" and not self.running
        if manual and (before := compaction_hooks(hooks)) is not None:
            await before.pre_compact(ctx, trigger="manual")
        result = await self.compactor.compact(
            reason, summarize=summarize, mode=mode, tokens_before=tokens_before
        )
        if manual and (after := session_hooks(hooks)) is not None:
            outcome = await after.session_start(ctx, source="compact")
            if outcome.additional_context:
                self.reminders.append(text_block(outcome.additional_context))
        return result

    async def end(self, reason: str = "other") -> None:
        """SessionEnd hooks, for a session whose SessionStart hooks ran (never raises)."""
        hooks = session_hooks(self.config.hooks)
        if hooks is None or not self.session_started:
            return
        try:
            await hooks.session_end(self.tool_context("review", asyncio.Event()), reason=reason)
        except Exception:
            log.exception("SessionEnd hooks of session %s failed", self.id)

    # --- saving ---------------------------------------------------------------------------

    def persist(self) -> Path | None:
        """Write the state file now; a failure is logged (the transcript still has it all)."""
        self._save_pending = False
        if self.store is None:
            return None
        try:
            return self.store.save(self.snapshot())
        except (OSError, SessionStateError, TypeError, ValueError):
            log.exception("cannot save the state of session %s", self.id)
            return None

    def _changed(self) -> None:
        self.persist()

    def _staging_changed(self, event: ChangeEvent) -> None:
        """Staged edits accepted or rejected between runs are saved (once per batch); during
        a run the turn journal records them."""
        if self.running or self._save_pending or self.store is None:
            return
        self._save_pending = True
        try:
            asyncio.get_running_loop().call_soon(self._save_if_pending)
        except RuntimeError:  # no event loop (a script): save now
            self.persist()

    def _save_if_pending(self) -> None:
        if self._save_pending:
            self.persist()

    def status_dict(self) -> SessionStatusPayload:
        status = super().status_dict()
        status["state_file"] = self.store.path(self.id).as_uri() if self.store else None
        return status
