"""One run's UI: `$/progress` on a cancellable token, log lines, `agentls/event`.

The token is created by the server (`window/workDoneProgress/create`) so every client that
supports work-done progress shows it, and a cancel of that token cancels the run exactly as
`agentls.cancel` would. Everything here is best-effort: a client that fails a progress
request or a notification never breaks the run.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from agentls.agent.framework.todos import progress_count, progress_line, todo_payloads
from agentls.agent.protocol.events import (
    AgentEvent,
    Notice,
    Retrying,
    RunStarted,
    TextDelta,
    Todos,
    ToolFinished,
    ToolOutputReady,
    ToolProgress,
    ToolStarted,
    TurnUsage,
    event_to_dict,
)

if TYPE_CHECKING:
    from agentls.agent.protocol.results import RunPayload
    from agentls.host import RunHandle
    from agentls.lsp.contract import Connection

log = logging.getLogger(__name__)

EVENT_METHOD = "agentls/event"
CREATE_TIMEOUT = 5.0
TEXT_FLUSH_SECONDS = 0.05
"""Streamed text is sent at most this often: the model streams a few characters per event,
and one JSON-RPC notification per event would keep the editor busy for nothing."""


class LspRunReporter:
    def __init__(self, ls: Connection, run: RunHandle) -> None:
        self.ls = ls
        self.run = run
        self.token: str | None = None
        self._text: list[str] = []
        self._text_timer: asyncio.TimerHandle | None = None
        self._todos = ""
        """"3/7" of the todo list, in front of each step's progress message."""

    async def begin(self) -> None:
        self.ls.log_line(f"[{self.run.session_id}] run started ({self.run.mode}): {self.run.title}")
        self._todos = self._session_todo_count()
        if not self.ls.features.work_done_progress:
            return
        token = f"agentls-{uuid.uuid4()}"
        try:
            await asyncio.wait_for(
                self.ls.work_done_progress.create_async(token), timeout=CREATE_TIMEOUT
            )
        except Exception as exc:
            log.info("no progress for run %s: %s", self.run.session_id, exc)
            return
        self.token = token
        self.ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=f"agentls: {self.run.title}",
                cancellable=True,
                message=f"session {self.run.session_id}",
            ),
        )
        future = self.ls.work_done_progress.tokens.get(token)
        if future is not None:
            loop = asyncio.get_running_loop()
            future.add_done_callback(lambda f: self._on_token_done(f, loop))

    def _session_todo_count(self) -> str:
        """A follow-up run starts with the session's list as it stands ("3/7")."""
        session = self.ls.host.sessions.get(self.run.session_id) if self.ls.has_host else None
        if session is None:
            return ""
        return progress_count(todo_payloads(session.todos))

    def _on_token_done(self, future: Future[Any], loop: asyncio.AbstractEventLoop) -> None:
        if future.cancelled():
            loop.call_soon_threadsafe(self._cancel_from_client)

    def _cancel_from_client(self) -> None:
        log.info("client cancelled the progress of session %s", self.run.session_id)
        self.ls.log_line(f"[{self.run.session_id}] cancelled from the editor")
        self.ls.host.cancel(self.run.session_id)

    def on_event(self, event: AgentEvent) -> None:
        if isinstance(event, ToolOutputReady):
            return  # not forwarded: `agentls.toolResult` fetches an output on demand
        if isinstance(event, TextDelta):
            self._queue_text(event.text)
            return
        self._flush_text()  # text streamed before this event goes first
        self._notify(event)
        line = _log_line(event)
        if line:
            self.ls.log_line(f"[{self.run.session_id}] {line}")
        if isinstance(event, Todos):
            self._todos = progress_count(event.todos)
            self._report(progress_line(event.todos))
        elif isinstance(event, ToolStarted):
            step = f"{self._todos} · {event.summary}" if self._todos else event.summary
            self._report(step)
        elif isinstance(event, ToolProgress):
            self._report(event.message)

    def _report(self, message: str) -> None:
        if self.token and message:
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message)
            )

    def _queue_text(self, text: str) -> None:
        """Collect streamed text; one `text_delta` carries all of it every TEXT_FLUSH_SECONDS."""
        self._text.append(text)
        if self._text_timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the server's loop: no timer to wait for
            self._flush_text()
            return
        self._text_timer = loop.call_later(TEXT_FLUSH_SECONDS, self._flush_text)

    def _flush_text(self) -> None:
        if self._text_timer is not None:
            self._text_timer.cancel()
            self._text_timer = None
        if self._text:
            text = "".join(self._text)
            self._text.clear()
            self._notify(TextDelta(self.run.session_id, text))

    def _notify_result(self, result: RunPayload, outcome: str) -> None:
        """The run's result as one last `agentls/event` (`run_finished` comes from the loop,
        before the edits are delivered): what was applied, staged or left out, and why."""
        event: dict[str, object] = {k: v for k, v in result.items() if k not in ("session", "text")}
        event.update(type="run_result", session_id=self.run.session_id, outcome=outcome)
        try:
            self.ls.protocol.notify(EVENT_METHOD, event)
        except Exception:
            log.exception("cannot send the run result")

    def _notify(self, event: AgentEvent) -> None:
        try:
            self.ls.protocol.notify(EVENT_METHOD, event_to_dict(event))
        except Exception:
            log.exception("cannot send %s", EVENT_METHOD)

    async def end(self, result: RunPayload) -> None:
        self._flush_text()
        outcome = outcome_line(result)
        self.ls.log_line(f"[{self.run.session_id}] {outcome}")
        if self.token is not None:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=outcome))
            self.ls.work_done_progress.tokens.pop(self.token, None)
        self._notify_result(result, outcome)
        if result.get("status") == "failed" and not self.ls.features.shows_outcomes:
            self.ls.message(
                types.MessageType.Error,
                f"agentls run failed: {result.get('error') or 'unknown error'}",
            )


def outcome_line(result: RunPayload) -> str:
    """One line for the progress end and the log: status, edits, tokens and cost."""
    parts = [result["status"]]
    edit = result.get("edit")
    if edit and edit["files"]:
        state = {True: "applied", False: "not applied", None: "staged for review"}[edit["applied"]]
        parts.append(f"{len(edit['files'])} file(s) {state}")
        if edit.get("reason"):
            parts.append(edit["reason"])
    usage = result.get("usage") or {}
    tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    if tokens:
        cost = usage.get("cost_usd", 0)
        shown = f"${cost:.4f}" if isinstance(cost, int | float) else "cost n/a"
        parts.append(f"{tokens} tokens, {shown}")
    if result.get("error"):
        parts.append(str(result.get("error")))
    return " — ".join(parts)


def _log_line(event: AgentEvent) -> str | None:
    if isinstance(event, RunStarted):
        return None
    if isinstance(event, ToolStarted):
        return f"→ {event.summary}"
    if isinstance(event, ToolFinished):
        mark = "✗" if event.is_error else "✓"
        return f"{mark} {event.name} ({event.duration_ms:.0f} ms)"
    if isinstance(event, TurnUsage):
        u = event.usage
        return (
            f"turn {event.turn}: in={u.get('input_tokens')} out={u.get('output_tokens')} "
            f"cache_read={u.get('cache_read_input_tokens')} stop={event.stop_reason}"
        )
    if isinstance(event, Retrying):
        return (
            f"model request failed ({event.error}); retry {event.attempt} in {event.delay_s:.1f}s"
        )
    if isinstance(event, Notice):
        return event.message
    if isinstance(event, Todos):
        return f"todos {progress_line(event.todos) or '(cleared)'}"
    return None
