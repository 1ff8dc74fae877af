"""The agent loop: stream a turn, run its tools, send the results back, repeat.

Stops on a turn without tool use (`end_turn`), a refusal, max turns, cancellation or a
persistent API failure. Every `tool_use` that reaches the history gets exactly one
`tool_result`, whatever happens, so a session can always be continued. Each complete turn
is journaled (`Conversation.checkpoint`) so a run the server did not survive can be
resumed from its last complete turn.

The loop runs a `Conversation` (the state); it neither imports the session that owns it
nor the store that saves it. Tokens and cost go through the conversation's `Accounting`,
once per response.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agentls.agent.claude.prompt_commands import CommandRun
from agentls.agent.claude.subagents import SubagentRole as SubagentRole
from agentls.agent.framework.context import RunMode, ToolContext
from agentls.agent.framework.controls import SubagentReport
from agentls.agent.framework.todos import TodoItem, todo_payloads
from agentls.agent.hooks.runner import (
    HookOutcome,
    compaction_hooks,
    lifecycle_hooks,
    session_hooks,
    subagent_hooks,
)
from agentls.agent.permissions.approval import PermissionMode
from agentls.agent.protocol.events import (
    AgentEvent,
    EventSink,
    ModeChanged,
    Notice,
    Retrying,
    RunFinished,
    RunStarted,
    RunStatus,
    TextDelta,
    Todos,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnUsage,
)
from agentls.agent.protocol.messages import ContentBlockParam, text_block, texts_of, tool_uses_of
from agentls.agent.protocol.results import RunResult
from agentls.agent.run.compaction import CompactionError
from agentls.agent.run.context_window import Compactor
from agentls.agent.run.conversation import Conversation
from agentls.agent.run.listing_turn import listing_request, wrote_cleanly
from agentls.agent.run.loop_guard import LoopGuard
from agentls.agent.run.memory import memory_seen, with_nested_memory
from agentls.agent.run.model_client import (
    ModelError,
    ModelRequest,
    ModelResponse,
    ServerToolEvent,
    ServerToolReporter,
    ignore_text,
)
from agentls.agent.run.orchestration import run_tool_calls
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.agent.run.prompts import search_summary
from agentls.agent.run.text_tool_calls import looks_like_a_call, with_text_calls
from agentls.agent.run.whole_writes import defined_names, dropped_names, refusal
from agentls.errors import WorkspaceError

if TYPE_CHECKING:
    from agentls.agent.claude.subagents import AgentType
    from agentls.agent.framework.questions import UserPrompts

log = logging.getLogger(__name__)
T = TypeVar("T")
EventText = Callable[[str], None]

CONTINUE_PROMPT = (
    "Your previous response was cut off at the output token limit. "
    "Continue exactly where you stopped, without repeating yourself."
)
REFUSAL_RESULT = "Not run: the response that requested this call ended in a refusal."
MAX_STOP_CONTINUATIONS = 5
"""Stop hooks that keep blocking are obeyed this often per run, then the run ends."""


class RunCancelled(Exception):
    pass


class AgentLoop:
    """One run of a conversation; `run()` returns the `RunResult` and never raises for API
    errors. The conversation must have been marked running (`Conversation.begin_run`)."""

    def __init__(
        self,
        conversation: Conversation,
        events: EventSink,
        mode: RunMode,
        cancel: asyncio.Event,
        *,
        subagent: SubagentRole | None = None,
        command: CommandRun | None = None,
    ):
        self.conversation = conversation
        self.command = command
        """The custom command this run expands (`/name args`): attachments, model, grants."""
        self.events = events
        self.cancel = cancel
        self.subagent = subagent
        self.compactor = Compactor(conversation)
        self.controls = LoopControls(self)
        self.pending_mode: tuple[RunMode, PermissionMode | None] | None = None
        self.use_mode(mode)
        self.tally = conversation.accounting.run or conversation.accounting.start_run()
        self.turns = 0
        self.text_parts: list[str] = []
        self.notices: list[str] = []
        self.continuations = 0
        self.stop_continuations = 0
        self.compactions = 0
        self.compaction_failed = False
        self.revoke_grants: Callable[[], None] = lambda: None
        self.server_tools: dict[str, float] = {}
        """Server tools (web search) started in the current stream: id → start time."""
        self.guard = LoopGuard(conversation.settings.loop_guard)
        self.lossy_writes_told: set[str] = set()
        """write_file calls refused once for dropping definitions (`_lossy_writes`)."""
        self.failure: str | None = None
        """Why a run that got replies still failed (an empty reply, a stuck loop)."""
        self.calls_made = 0
        self.listing_turn = False
        """This turn's request goes without tools (`agentls.agent.run.listing_turn`)."""
        self.staged_at_start = conversation.staging_count
        """The session's count of staging events when the run began: a run whose final
        reply is empty succeeded only if it changed something since."""

    def _tool_progress(self, tool_use_id: str, message: str) -> None:
        self._emit_safe(ToolProgress(self.conversation.id, tool_use_id, message))

    def use_mode(self, mode: RunMode) -> None:
        """Run in `mode` from now on: its pool (read-only in plan mode), and a tool context
        whose mode the pipeline's plan-mode step reads."""
        conv = self.conversation
        self.mode = mode
        self.pool = conv.pool(mode)
        self.pipeline = Pipeline(
            self.pool, conv.config.permissions, conv.config.hooks, self._emit_safe
        )
        ctx = conv.tool_context(mode, self.cancel)
        session_id = self.subagent.session_id if self.subagent is not None else ctx.session_id
        self.ctx = replace(
            ctx, session_id=session_id, run=self.controls, on_progress=self._tool_progress
        )
        if self.subagent is not None:
            self.ctx = replace(self.ctx, agent_id=conv.id, agent_type=self.subagent.agent.name)

    def _apply_mode_switch(self) -> None:
        """A switch a tool asked for (plan mode entered, or left after approval), applied
        once the turn's calls are done, so the next request offers the new mode's tools."""
        if self.pending_mode is None:
            return
        mode, permission_mode = self.pending_mode
        self.pending_mode = None
        policy = self.conversation.config.permissions
        if permission_mode is not None and permission_mode != policy.mode:
            try:
                cast(Any, policy).mode = permission_mode  # RulePolicy validates it
            except Exception as exc:
                log.warning("cannot switch the permission mode to %s: %s", permission_mode, exc)
                permission_mode = None
        else:
            permission_mode = None
        self.use_mode(mode)
        conv = self.conversation
        conv.transcript.write("mode", mode=mode, permission_mode=permission_mode)
        self._emit_safe(ModeChanged(conv.id, mode, permission_mode))

    def child(
        self,
        conversation: Conversation,
        events: EventSink,
        mode: RunMode,
        role: SubagentRole,
        cancel: asyncio.Event | None = None,
    ) -> AgentLoop:
        """A sub-agent's loop: it shares this run's cancel event (`agent.run.subagent_run`),
        or has `cancel` of its own (a hook's verifier)."""
        return type(self)(conversation, events, mode, cancel or self.cancel, subagent=role)

    def _emit_safe(self, event: AgentEvent) -> None:
        """A host's broken event handler must not break the run."""
        try:
            self.events(event)
        except Exception:
            log.exception("event handler failed for %s", type(event).__name__)

    async def run(self, prompt: str, attachments: Sequence[ContentBlockParam] = ()) -> RunResult:
        conv = self.conversation
        conv.transcript.write("run_start", run=conv.runs, prompt=prompt, mode=self.mode)
        self._emit_safe(RunStarted(conv.id, prompt))
        status: RunStatus
        error: str | None = None
        try:
            blocked = await self._submit_prompt(prompt, attachments)
            if blocked is not None:
                return self._finish("failed", blocked)
            self.listing_turn = conv.files_shown and self.subagent is None and not self.command
            conv.files_shown = False
            conv.checkpoint(0)
            status = await self._turns()
            error = self.failure if status == "failed" else None
        except RunCancelled:
            status = "cancelled"
        except ModelError as exc:
            status, error = "failed", str(exc)
        except asyncio.CancelledError:
            status = "cancelled"
        finally:
            self.revoke_grants()  # a command's allowed-tools end with its run
        return self._finish(status, error)

    async def _turns(self) -> RunStatus:
        while self.turns < self.conversation.settings.max_turns:
            self.turns += 1
            self.conversation.begin_turn()
            response = await self._request()
            status = await self._handle(response)
            self.listing_turn = False
            if status is not None:
                return status
            self.conversation.checkpoint(self.turns)
        self._notice(f"Stopped after the maximum of {self.conversation.settings.max_turns} turns.")
        return "max_turns"

    async def _request(self) -> ModelResponse:
        conv = self.conversation
        request = conv.build_request(self.pool)
        if self.listing_turn:
            request = listing_request(request, conv.listing_system)
        if self.command is not None and self.command.model:
            request = dataclasses.replace(request, model=self.command.model)
        if conv.settings.auto_compact:
            request = await self._compact_if_needed(request)
        conv.record_request(request)
        response = await self._stream_with_retries(request)
        conv.accounting.charge(response.model or request.model, response.usage)
        self.compactor.observe_input_tokens(request, response.usage)
        conv.transcript.write(
            "usage",
            turn=self.turns,
            usage=response.usage.to_dict(),
            stop_reason=response.stop_reason,
        )
        self._emit_safe(
            TurnUsage(conv.id, self.turns, response.usage.to_dict(), response.stop_reason)
        )
        return response

    async def _compact_if_needed(self, request: ModelRequest) -> ModelRequest:
        """Compact before sending a request that would not fit under the threshold."""
        over, tokens = await self._until_cancelled(self.compactor.needs_compaction(request))
        if not over:
            return request
        await self._pre_compact("auto")
        try:
            result = await self.compactor.compact(
                "auto", summarize=self._summarize, mode=self.mode, tokens_before=tokens
            )
        except CompactionError as exc:
            if self.compaction_failed:
                return request  # told once per run
            self.compaction_failed = True
            self._notice(
                f"The context is at about {tokens:,} tokens (limit "
                f"{self.conversation.compaction_limit():,}) but could not be compacted: {exc}"
            )
            return request
        self.compactions += 1
        self._notice(
            f"Context compacted ({result.reason}): about {result.before_tokens:,} → "
            f"{result.after_tokens:,} tokens; {result.summarized_messages} messages summarised, "
            f"last {result.kept_turns} turns kept."
        )
        context = await self._session_start("compact")
        if context:
            self.conversation.add_user_content(context)
        return self.conversation.build_request(self.pool)

    async def _summarize(self, request: ModelRequest) -> ModelResponse:
        """The compaction's summary request: retried like a turn, streamed silently (the
        compactor charges its tokens)."""
        return await self._stream_with_retries(request, quiet=True)

    def reads_text_calls(self) -> bool:
        """`model.toolCalls`: `text`, or `auto` on an endpoint that is not Anthropic's."""
        return self.conversation.reads_text_calls()

    def _content_of(self, response: ModelResponse) -> list[ContentBlockParam]:
        """The reply as it goes into the history: calls written as text become `tool_use`
        blocks (see `agentls.agent.run.text_tool_calls`) when this endpoint's replies are read
        for them."""
        if not self.reads_text_calls():
            return response.content
        listings = self._reads_listings(response)
        converted = with_text_calls(
            response.content,
            lambda name: self.pool.find(name) is not None,
            self._listing_target if listings else None,
            self._bare_listing_target if listings and self.listing_turn else None,
        )
        if converted is None:
            return response.content
        self.conversation.transcript.write("text_tool_calls", count=len(tool_uses_of(converted)))
        return converted

    def _reads_listings(self, response: ModelResponse) -> bool:
        """Whole-file listings are calls in the compact profile, when write_file is offered
        (`agentls.agent.run.file_listings`) — except in a reply that echoes the context
        (`<system-reminder>` blocks): the 1.5B model echoed the files as first shown after
        fixing one, and writing that old text back would undo the fix."""
        if "<system-reminder>" in "".join(texts_of(response.content)):
            return False
        return self.conversation.compact_tools() and self.pool.find("write_file") is not None

    def _listing_target(self, written: str, content: str) -> str | None:
        """The workspace path a listing headed `written` rewrites: a file inside the
        workspace that this session has read or written, whose text the listing changes;
        None otherwise (the listing stays text). The pipeline still checks the call."""
        conv = self.conversation
        workspace = conv.config.workspace
        try:
            path = workspace.resolve(written)
        except WorkspaceError:
            return None
        if path not in conv.reads.paths():
            return None
        try:
            current = workspace.load(path, conv.changes).text
        except WorkspaceError:
            return None
        if current == content or not content.strip():
            return None
        return workspace.display(path)

    def _bare_listing_target(self, content: str) -> str | None:
        """A listing turn that showed one file: a lone fenced block without a path is that
        file, if it changes it and still defines every name the file defines (a usage
        snippet or a part of the file is not a rewrite of it)."""
        conv = self.conversation
        shown = conv.reads.paths()
        if len(shown) != 1:
            return None
        path = self._listing_target(conv.config.workspace.display(shown[0]), content)
        if path is None:
            return None
        current = conv.config.workspace.load(shown[0], conv.changes).text
        return path if set(defined_names(current)) <= set(defined_names(content)) else None

    async def _handle(self, response: ModelResponse) -> RunStatus | None:
        """Apply one response to the history; a status means the run is over."""
        content = self._content_of(response)
        self.conversation.add_assistant(content)
        calls = [
            ToolCall(block["id"], block["name"], _input_of(block["input"]))
            for block in tool_uses_of(content)
        ]
        texts = texts_of(content)
        if response.stop_reason == "refusal":
            self._add_results([ToolCallResult(c.id, REFUSAL_RESULT, True) for c in calls])
            self.text_parts = texts
            return "refused"
        if calls:
            return await self._run_calls(calls, texts)
        self.text_parts.extend(texts)
        if response.stop_reason == "pause_turn":
            return None
        if response.stop_reason == "max_tokens":
            return self._continue_after_max_tokens()
        if await self._stop_hook_continues():
            return None
        return self._final_status()

    async def _run_calls(self, calls: list[ToolCall], texts: list[str]) -> RunStatus | None:
        self.text_parts = texts
        self.calls_made += len(calls)
        refused = self._lossy_writes(calls)
        ran = await run_tool_calls(
            [c for c in calls if c.id not in refused], self.pipeline, self.ctx
        )
        by_id = {r.tool_use_id: r for r in ran}
        results = [by_id.get(c.id) or ToolCallResult(c.id, refused[c.id], True) for c in calls]
        self._add_results(self._with_memory(calls, self.guard.check(calls, results)))
        if self.cancel.is_set():
            raise RunCancelled
        if self.guard.stuck is not None:
            self.failure = self.guard.stuck
            self._notice(f"Stopped: {self.guard.stuck}.")
            return "failed"
        if self.listing_turn and wrote_cleanly(calls, results):
            return self._final_status()
        self._apply_mode_switch()
        return None

    def _lossy_writes(self, calls: list[ToolCall]) -> dict[str, str]:
        """Compact profile: write_file calls that would drop definitions of the file they
        overwrite, refused once (`agentls.agent.run.whole_writes`); id → the error."""
        if not self.conversation.compact_tools():
            return {}
        refused: dict[str, str] = {}
        for call in calls:
            content = call.input.get("content")
            if call.name != "write_file" or not isinstance(content, str):
                continue
            key = json.dumps(call.input, sort_keys=True)
            if key in self.lossy_writes_told:
                continue
            problem = self._lossy_write(str(call.input.get("path", "")), content)
            if problem is not None:
                self.lossy_writes_told.add(key)
                refused[call.id] = problem
        return refused

    def _lossy_write(self, written: str, content: str) -> str | None:
        conv = self.conversation
        workspace = conv.config.workspace
        try:
            path = workspace.resolve(written)
            current = workspace.load(path, conv.changes).text
        except WorkspaceError:
            return None  # a new file, or one the pipeline refuses with its own reason
        names = dropped_names(current, content)
        return refusal(workspace.display(path), names) if names else None

    def _final_status(self) -> RunStatus:
        """No hollow success: a run whose last reply is empty (and that changed nothing:
        an edit needs no words, an answer does), echoes the reminders agentls sent (the
        1.5B model copied them and wrote "the docstring has been added" without an edit),
        or is a tool call that could not be read, failed."""
        text = "".join(self.text_parts).strip()
        changed = self.conversation.staging_count != self.staged_at_start
        if not text and not self.calls_made:
            self.failure = "the model's reply was empty: nothing was done"
        elif not text and not changed:
            self.failure = (
                "the model's final reply was empty and the run changed nothing (its calls "
                "only read, or failed)"
            )
        elif "<system-reminder>" in text:
            self.failure = (
                "the model's reply repeated the context it was given (<system-reminder> "
                "blocks) instead of answering or acting"
            )
        elif text and looks_like_a_call(text):
            self.failure = (
                "the model's last reply looks like a tool call that could not be read (an "
                "unknown tool or malformed JSON); nothing was run"
            )
            if not self.reads_text_calls():
                self.failure += " (setting model.toolCalls is `native`: try `text`)"
        if self.failure is None:
            return "completed"
        self._notice(f"The run failed: {self.failure}.")
        return "failed"

    async def _submit_prompt(
        self, prompt: str, attachments: Sequence[ContentBlockParam] = ()
    ) -> str | None:
        """Add the prompt, after UserPromptSubmit hooks; returns why a hook blocked it."""
        if self.command is not None:
            self._grant(self.command)
            prompt = await self._run_shell_lines(self.command, prompt)
        blocks: list[ContentBlockParam] = [text_block(prompt), *attachments]
        blocks += await self._session_start()
        hooks = lifecycle_hooks(self.conversation.config.hooks)
        if hooks is not None and self.subagent is None:  # a sub-agent's prompt is the model's
            outcome = await self._hook(hooks.user_prompt_submit(prompt, self.ctx))
            if outcome.block:
                reason = outcome.message or "a UserPromptSubmit hook blocked the prompt"
                self._notice(f"Prompt blocked by hook: {reason}")
                return f"prompt blocked by a UserPromptSubmit hook: {reason}"
            if outcome.additional_context:
                blocks.append(text_block(outcome.additional_context))
        if self.command is not None:
            blocks.extend(await self._start_command(self.command))
        self.conversation.add_user_content([*self.conversation.initial_context(prompt), *blocks])
        return None

    async def _session_start(self, source: str | None = None) -> list[ContentBlockParam]:
        """SessionStart hooks, once per session object ("startup", or "resume" for a saved
        one) and after each compaction ("compact"); their context goes to the model."""
        conv = self.conversation
        if self.subagent is not None:
            return []  # once per run: a sub-agent is not a new session (Claude Code)
        hooks = session_hooks(conv.config.hooks)
        if source is None:
            if conv.session_started:
                return []
            conv.session_started = True
            source = "resume" if conv.messages else "startup"
        if hooks is None:
            return []
        outcome = await self._hook(hooks.session_start(self.ctx, source=source))
        return [text_block(outcome.additional_context)] if outcome.additional_context else []

    async def _pre_compact(self, trigger: str) -> None:
        hooks = compaction_hooks(self.conversation.config.hooks)
        if hooks is not None:
            await self._hook(hooks.pre_compact(self.ctx, trigger=trigger))

    def _grant(self, command: CommandRun) -> None:
        """A custom command's notes, and its grants for this run (before its `!` lines)."""
        for note in command.notes:
            self._notice(note)
        grant = getattr(self.conversation.config.permissions, "grant", None)
        if command.grants and callable(grant):
            self.revoke_grants = grant(self.conversation.id, command.grants)

    async def _run_shell_lines(self, command: CommandRun, prompt: str) -> str:
        """Claude Code's `!`cmd`` lines: each runs as a `run_command` call through the
        pipeline (rules, hooks, sandbox) and its output replaces it; a refused one is
        replaced by the reason and announced."""
        for index, (text, line) in enumerate(command.shell):
            call = ToolCall(f"shell_{index}", "run_command", {"command": line})
            result = await self.pipeline.execute(call, self.ctx)
            content = result.content if isinstance(result.content, str) else str(result.content)
            if result.is_error:
                self._notice(f"/{command.name}: !`{line}` was not run: {content}")
                content = f"[!`{line}` was not run: {content}]"
            prompt = prompt.replace(text, content, 1)
        return prompt

    async def _start_command(self, command: CommandRun) -> list[ContentBlockParam]:
        """A custom command's `@file` attachments, each read through the pipeline like any
        read_file call (secret files, rules, hooks apply)."""
        attached: list[ContentBlockParam] = []
        for index, path in enumerate(command.files):
            call = ToolCall(f"attach_{index}", "read_file", {"path": path})
            result = await self.pipeline.execute(call, self.ctx)
            content = result.content if isinstance(result.content, str) else str(result.content)
            if result.is_error:
                self._notice(f"/{command.name}: @{path} was not attached: {content}")
                attached.append(text_block(f"[@{path} was not attached: {content}]"))
            else:
                attached.append(
                    text_block(f'<attached-file path="{path}">\n{content}\n</attached-file>')
                )
        return attached

    async def _stop_hook_continues(self) -> bool:
        """Stop hooks may keep the agent going; their reason becomes the next user message.
        A sub-agent has the SubagentStop hook instead, when the hook runner has one."""
        if self.stop_continuations >= MAX_STOP_CONTINUATIONS:
            return False
        active = self.stop_continuations > 0
        if self.subagent is not None:
            stop = subagent_hooks(self.conversation.config.hooks)
            if stop is None:
                return False
            call = stop.subagent_stop(
                self.ctx,
                agent_type=self.subagent.agent.name,
                stop_hook_active=active,
                agent_id=self.conversation.id,
                transcript_path=str(self.conversation.transcript.path or ""),
                last_message="\n".join(self.text_parts),
            )
        else:
            hooks = lifecycle_hooks(self.conversation.config.hooks)
            if hooks is None:
                return False
            call = hooks.stop(self.ctx, stop_hook_active=active)
        outcome = await self._hook(call)
        if not outcome.block:
            return False
        self.stop_continuations += 1
        self.text_parts = []  # the answer is what comes after the hook's feedback
        reason = outcome.message or "A Stop hook asked you to continue."
        self._notice(f"A Stop hook asked the agent to continue: {reason}")
        self.conversation.add_user_content([text_block(f"Stop hook feedback: {reason}")])
        return True

    async def _hook(self, call: Awaitable[HookOutcome]) -> HookOutcome:
        """Run a prompt-level hook; a failing hook runner is reported, never fatal."""
        try:
            outcome = await self._until_cancelled(call)
        except (RunCancelled, asyncio.CancelledError):
            raise
        except Exception as exc:
            log.exception("prompt-level hook failed")
            self._notice(f"A hook failed and was skipped: {type(exc).__name__}: {exc}")
            return HookOutcome()
        if outcome.system_message:
            self._notice(outcome.system_message)
        return outcome

    def _continue_after_max_tokens(self) -> RunStatus | None:
        if self.continuations >= self.conversation.settings.max_continuations:
            self._notice("The answer hit the output token limit and may be incomplete.")
            return "completed"
        self.continuations += 1
        self._notice("The answer hit the output token limit; asking the model to continue.")
        self.conversation.add_user_content([text_block(CONTINUE_PROMPT)])
        return None

    def _with_memory(
        self, calls: list[ToolCall], results: list[ToolCallResult]
    ) -> list[ToolCallResult]:
        """Results with the memory the files they touched bring in (`agent.run.memory`)."""
        conversation = self.conversation
        roots = conversation.config.workspace.roots
        if not conversation.config.pin_instruction_files or not roots:
            return results
        if conversation.memory_seen is None:
            conversation.memory_seen = memory_seen(roots)
        return with_nested_memory(calls, results, roots, conversation.memory_seen)

    def _add_results(self, results: list[ToolCallResult]) -> None:
        if not results:
            return
        for result in results:
            self.conversation.transcript.write(
                "tool_result",
                tool_use_id=result.tool_use_id,
                is_error=result.is_error,
                duration_ms=round(result.duration_ms, 2),
                content=result.content,
            )
        self.conversation.add_user_content([r.to_block() for r in results])

    async def _stream_with_retries(
        self, request: ModelRequest, *, quiet: bool = False
    ) -> ModelResponse:
        """One model request with retries, all within `request_deadline` seconds."""
        settings = self.conversation.settings
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settings.request_deadline
        on_text = ignore_text if quiet else self._on_text
        attempt = 0
        while True:
            try:
                return await self._attempt(request, on_text, deadline)
            except ModelError as exc:
                if not exc.transient or attempt >= settings.max_retries:
                    raise
                attempt += 1
                delay = backoff_delay(
                    attempt, settings.retry_base_delay, settings.retry_max_delay, exc.retry_after
                )
                if loop.time() + delay >= deadline:
                    raise _deadline_error(settings.request_deadline, exc) from exc
                log.warning("model request failed (%s); retry %d in %.2fs", exc, attempt, delay)
                self.conversation.transcript.write(
                    "retry", attempt=attempt, delay_s=round(delay, 3), error=str(exc)
                )
                self._emit_safe(Retrying(self.conversation.id, attempt, delay, str(exc)))
                await self._until_cancelled(asyncio.sleep(delay))

    async def _attempt(
        self, request: ModelRequest, on_text: EventText, deadline: float
    ) -> ModelResponse:
        settings = self.conversation.settings
        client = self.conversation.client
        streaming = (
            client.stream_reporting(request, on_text, self._on_server_tool)
            if isinstance(client, ServerToolReporter) and on_text is not ignore_text
            else client.stream(request, on_text)
        )
        try:
            async with asyncio.timeout_at(deadline):
                return await self._until_cancelled(streaming)
        except TimeoutError:
            raise _deadline_error(settings.request_deadline, None) from None

    def _on_server_tool(self, event: ServerToolEvent) -> None:
        """A search the API runs inside the turn: shown like a tool call (started, then
        finished), so editors and the CLI show it in progress."""
        session = self.conversation.id
        if not event.finished:
            self.server_tools[event.tool_use_id] = time.time()
            summary = search_summary(event.input.get("query"))
            self._emit_safe(
                ToolStarted(
                    session, event.tool_use_id, event.name, summary, event.input, time.time()
                )
            )
            return
        started = self.server_tools.pop(event.tool_use_id, time.time())
        now = time.time()
        self._emit_safe(
            ToolFinished(
                session,
                event.tool_use_id,
                event.name,
                event.is_error,
                (now - started) * 1000,
                started,
                now,
            )
        )

    def _on_text(self, text: str) -> None:
        self._emit_safe(TextDelta(self.conversation.id, text))

    async def _until_cancelled(self, awaitable: Awaitable[T]) -> T:
        """Await something, abandoning it promptly if the run is cancelled."""
        if self.cancel.is_set():
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise RunCancelled
        task = asyncio.ensure_future(awaitable)
        waiter = asyncio.ensure_future(self.cancel.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the run's task itself (a deadline, a shutdown)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            raise
        finally:
            waiter.cancel()
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise RunCancelled

    def _notice(self, message: str) -> None:
        self.notices.append(message)
        self.conversation.transcript.write("notice", message=message)
        self._emit_safe(Notice(self.conversation.id, message))

    def _finish(self, status: RunStatus, error: str | None) -> RunResult:
        conv = self.conversation
        tally = self.tally
        text = "".join(self.text_parts).strip()
        conv.transcript.write(
            "run_end",
            status=status,
            turns=self.turns,
            usage=tally.usage.to_dict(),
            cost_usd=tally.cost_usd,
            session_cost_usd=conv.cost_usd,
            error=error,
        )
        result = RunResult(
            conv.id,
            status,
            text,
            tally,
            self.turns,
            conv.transcript.path,
            error,
            tuple(self.notices),
            compactions=self.compactions,
            mode=self.mode,
        )
        self._emit_safe(
            RunFinished(
                conv.id,
                status,
                text,
                tally.usage.to_dict(),
                self.turns,
                error,
                str(result.transcript),
                extra={
                    "cost_usd": tally.cost_usd,
                    "session_cost_usd": conv.cost_usd,
                    "compactions": self.compactions,
                },
            )
        )
        return result


def _deadline_error(seconds: float, last: ModelError | None) -> ModelError:
    detail = f"; last error: {last}" if last is not None else ""
    return ModelError(
        f"the model request did not complete within {seconds:g} s (the request deadline: "
        f"setting requestDeadline, AGENTLS_REQUEST_DEADLINE){detail}",
        transient=False,
    )


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None) -> float:
    """Exponential backoff with jitter; a server's retry-after is honoured but capped."""
    delay = min(cap, base * 2.0 ** (attempt - 1)) * random.uniform(0.8, 1.2)
    if retry_after is not None:
        delay = max(delay, min(retry_after, cap))
    return min(delay, cap)


def _input_of(value: object) -> dict[str, object]:
    return dict(value) if isinstance(value, dict) else {}


class LoopControls:
    """The `RunControls` of one loop (see `agentls.agent.framework.controls`)."""

    def __init__(self, loop: AgentLoop) -> None:
        self.loop = loop

    in_run = True

    @property
    def mode(self) -> RunMode:
        pending = self.loop.pending_mode
        return pending[0] if pending is not None else self.loop.mode

    @property
    def permission_mode(self) -> PermissionMode:
        pending = self.loop.pending_mode
        if pending is not None and pending[1] is not None:
            return pending[1]
        return self.loop.conversation.config.permissions.mode

    @property
    def subagent(self) -> str | None:
        role = self.loop.subagent
        return role.agent.name if role is not None else None

    @property
    def prompts(self) -> UserPrompts | None:
        return None if self.loop.subagent is not None else self.loop.conversation.config.prompts

    def todos(self) -> list[TodoItem]:
        return list(self.loop.conversation.todos)

    def set_todos(self, todos: Sequence[TodoItem]) -> None:
        """The session's list, shown to the user; a sub-agent's list is its own (kept for
        its run, neither shown nor saved)."""
        conv = self.loop.conversation
        conv.set_todos(todos)
        if self.loop.subagent is None:
            self.loop._emit_safe(Todos(conv.id, todo_payloads(conv.todos)))

    def switch_mode(self, mode: RunMode, permission_mode: PermissionMode | None = None) -> None:
        self.loop.pending_mode = (mode, permission_mode)

    async def run_subagent(
        self,
        agent: AgentType,
        description: str,
        prompt: str,
        ctx: ToolContext,
        cancel: asyncio.Event | None = None,
    ) -> SubagentReport:
        from agentls.agent.run.subagent_run import run_subagent

        return await run_subagent(self.loop, agent, description, prompt, ctx, cancel)
