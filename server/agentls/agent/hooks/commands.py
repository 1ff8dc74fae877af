"""User-configured hook commands, in Claude Code's format and with its protocol.

Why Claude Code's format: users already have hooks in `.claude/settings.json`, and they
should keep working here (`agentls.agent.hooks.config` parses them). Every event of Claude
Code's that means something here runs: PreToolUse, PostToolUse, UserPromptSubmit, Stop,
SubagentStop, SessionStart, SessionEnd, PreCompact and Notification.

Protocol per hook: a JSON object on stdin with session_id, transcript_path (a file that
exists), cwd, hook_event_name and permission_mode, plus per event: tool_name / tool_input /
tool_use_id (Claude Code's names and fields, our own in `agentls_tool_name` /
`agentls_tool_input`; see `agentls.agent.hooks.payload`) and tool_response (PostToolUse);
prompt (UserPromptSubmit); stop_hook_active (Stop, SubagentStop, which also gets
agent_type, agent_id and agent_transcript_path); source (SessionStart); reason
(SessionEnd); trigger and custom_instructions (PreCompact); message, title and
notification_type (Notification).

- exit 0 proceeds; a JSON object on stdout may say `decision: "block" | "approve"`,
  `continue: false` (+ `stopReason`), `reason`, `systemMessage` (shown to the user),
  `suppressOutput` (keep the hook's stdout out of the transcript), or
  `hookSpecificOutput` with `permissionDecision` ("allow" | "deny" | "ask"),
  `permissionDecisionReason`, `updatedInput` (PreToolUse) and `additionalContext`.
  Plain stdout of a UserPromptSubmit or SessionStart hook is added as context.
- exit 2 blocks where the event can be blocked; stderr is the reason the model (or, for a
  prompt, the user) sees. Where it cannot (SessionStart, SessionEnd, PreCompact,
  Notification) stderr is shown to the user.
- any other exit, a crash, or a timeout (default 60 s) is reported through `on_problem`
  and the log, and the call proceeds: a broken hook must not wedge the agent.
- `"async": true` hooks are started and not waited for; their output is not read.

Claude Code's other handler types run too, their answers read as a command's stdout: an
`http` hook POSTs the same JSON to its URL (`agentls.agent.hooks.http`: 2xx JSON is the
hook's output, any other status a non-blocking error; private addresses and secrets held
back), a `prompt` or `agent` hook asks a model (`agentls.agent.hooks.model`: `{"ok": false,
"reason": …}` blocks).

Every run is recorded in the session's transcript (a `hook` record: event, command, exit
status, stderr and — unless `suppressOutput` — stdout).

Hooks run through the shared process runner (own process group, the whole group killed on
timeout or cancel, capped output, scrubbed environment plus the settings' `env`), guarded
by `process_guard` so descendants that left the group die too. What reaches a hook command
(its JSON input, its environment) never carries the agent's credentials.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from agentls import credentials
from agentls.agent.framework.requirement import Requirement
from agentls.agent.hooks.config import (
    DEFAULT_HOOK_TIMEOUT,
    HOOK_EVENTS,
    HookCommand,
    HookConfig,
    HookGroup,
    SubjectFactory,
)
from agentls.agent.hooks.payload import claude_call, input_from_hook, tool_response
from agentls.agent.hooks.runner import HookOutcome, HookPermission
from agentls.agent.protocol.messages import JsonObject
from agentls.workspace.process import ProcessStartError, scrub_env
from agentls.workspace.process_guard import run_guarded
from agentls.workspace.secrets import Redactor

if TYPE_CHECKING:
    from agentls.agent.framework.context import ToolContext
    from agentls.agent.framework.tool import ToolOutput
    from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest, Approver

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "HOOK_EVENTS",
    "CommandHooks",
    "HookCommand",
    "HookConfig",
    "HookGroup",
    "HookRun",
    "NotifyingApprover",
]

log = logging.getLogger(__name__)

MAX_HOOK_OUTPUT_BYTES = 64 * 1024
RECORDED_CHARS = 4000
"""Characters of a hook's stdout and stderr kept in its transcript record."""
_KILL_GRACE = 1.0
_SHELL = "/bin/sh"
_UNBLOCKABLE = frozenset(
    {"SessionStart", "SessionEnd", "PreCompact", "Notification", "SubagentStart", "Setup"}
    | {"PostToolUseFailure"}
)
_PLAIN_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})


@dataclass(frozen=True)
class HookRun:
    """How one hook command ended."""

    command: HookCommand
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """Crashed, timed out, could not start, or exited with neither 0 nor 2."""
        return self.error is not None or self.timed_out or self.exit_code not in (0, 2)

    def json(self) -> JsonObject | None:
        text = self.stdout.strip()
        if self.exit_code != 0 or not text.startswith("{"):
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


class HookRecord(TypedDict):
    """A `hook` line in the session's transcript: one hook command's run."""

    type: Literal["hook"]
    ts: float
    event: str
    hook_type: str
    command: str
    source: str
    exit_code: int | None
    timed_out: bool
    duration_ms: float
    stderr: str
    error: NotRequired[str]
    stdout: NotRequired[str]
    stdout_suppressed: NotRequired[bool]


@dataclass
class _Combined:
    block: bool = False
    reasons: list[str] = field(default_factory=list)
    permission: HookPermission | None = None
    permission_reason: str = ""
    updated: JsonObject | None = None
    context: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    """`systemMessage`s, and stderr of exit 2 where the event cannot block."""


class CommandHooks:
    """Runs configured hook commands: a `HookRunner`, `LifecycleHooks`, `SessionHooks`,
    `CompactionHooks`, `SubagentHooks` and `NotificationHooks`.

    `on_problem` receives a line for each crashing, hanging or unparsable hook (the host
    shows it to the user); `permission_mode` reports the current mode in the hook input;
    `extra_env` is the settings' `env`; `cwd` is where hooks run when no call says (the
    first workspace root).
    """

    def __init__(
        self,
        config: HookConfig | None = None,
        *,
        redactor: Redactor | None = None,
        on_problem: Callable[[str], None] | None = None,
        transcript_dir: Path | None = None,
        permission_mode: Callable[[], str] = lambda: "default",
        env: Mapping[str, str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        private_addresses: Sequence[str] = (),
    ) -> None:
        self.config = config or HookConfig()
        self.redactor = redactor if redactor is not None else Redactor.from_env()
        self.on_problem = on_problem
        self.transcript_dir = transcript_dir
        self.permission_mode = permission_mode
        self.env = env
        self.extra_env = dict(extra_env or {})
        self.cwd = cwd
        self.private_addresses = tuple(private_addresses)
        """`webFetch.allowedPrivateAddresses`: what http hooks may reach besides the
        public internet."""
        self.reports: list[str] = []
        self._background: set[asyncio.Task[Any]] = set()

    # -- HookRunner ------------------------------------------------------------------------

    async def pre_tool(self, tool_name: str, input: JsonObject, ctx: ToolContext) -> HookOutcome:
        commands = self._for_tool("PreToolUse", tool_name, input, ctx)
        if not commands:
            return HookOutcome()
        call = claude_call(tool_name, input, _cwd(ctx))
        payload = self._tool_payload(ctx, "PreToolUse", tool_name, input)
        combined = await self._run_all(
            commands, payload, ctx.session_id, _cwd(ctx), "PreToolUse", ctx
        )
        message = self._messages(combined)
        if combined.block:
            reason = self._reason(combined, "PreToolUse")
            return HookOutcome(block=True, message=reason, system_message=message)
        decision = None
        if combined.permission is not None:
            reason = self.redactor.redact(combined.permission_reason)
            decision = Requirement.from_hook(combined.permission, reason)
        if decision is not None and decision.behavior == "deny":
            return HookOutcome(permission=decision, system_message=message)
        updated = None
        if combined.updated is not None:
            updated = input_from_hook(tool_name, input, call.input, combined.updated)
        return HookOutcome(
            updated_input=updated,
            additional_context="\n".join(combined.context),
            permission=decision,
            system_message=message,
        )

    async def post_tool(
        self, tool_name: str, input: JsonObject, output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        commands = self._for_tool("PostToolUse", tool_name, input, ctx)
        if not commands:
            return HookOutcome()
        payload = self._tool_payload(ctx, "PostToolUse", tool_name, input)
        call = claude_call(tool_name, input, _cwd(ctx))
        text = _output_text(output)
        payload["tool_response"] = tool_response(tool_name, input, call, text, output.is_error)
        combined = await self._run_all(
            commands, payload, ctx.session_id, _cwd(ctx), "PostToolUse", ctx
        )
        message = self._messages(combined)
        if combined.block:
            reason = self._reason(combined, "PostToolUse")
            return HookOutcome(block=True, message=reason, system_message=message)
        return HookOutcome(additional_context="\n".join(combined.context), system_message=message)

    async def post_tool_failure(
        self, tool_name: str, input: JsonObject, output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        """PostToolUseFailure: a call that ended in an error (`error` is what the model
        saw). Its context goes to the model with the result."""
        commands = self._for_tool("PostToolUseFailure", tool_name, input, ctx)
        if not commands:
            return HookOutcome()
        payload = self._tool_payload(ctx, "PostToolUseFailure", tool_name, input)
        payload.update(error=_output_text(output), is_interrupt=ctx.cancelled.is_set())
        cwd = _cwd(ctx)
        combined = await self._run_all(
            commands, payload, ctx.session_id, cwd, "PostToolUseFailure", ctx
        )
        return HookOutcome(
            additional_context="\n".join(combined.context),
            system_message=self._messages(combined),
        )

    async def permission_request(self, request: ApprovalRequest, cwd: Path) -> HookOutcome:
        """PermissionRequest: before a permission prompt opens. A hook's
        `decision.behavior` "allow" or "deny" answers for the user; anything else asks."""
        commands = self.config.commands("PermissionRequest", request.tool)
        if not commands:
            return HookOutcome()
        call = claude_call(request.tool, request.input, cwd)
        payload = self._base(request.session_id, cwd, "PermissionRequest")
        payload.update(
            tool_name=call.name,
            tool_input=call.input,
            tool_use_id=request.tool_use_id,
            agentls_tool_name=request.tool,
            agentls_tool_input=request.input,
            permission_suggestions=[],
        )
        combined = await self._run_all(
            commands, payload, request.session_id, cwd, "PermissionRequest"
        )
        decision = None
        if combined.permission is not None:
            decision = Requirement.from_hook(combined.permission, combined.permission_reason)
        return HookOutcome(permission=decision, system_message=self._messages(combined))

    async def subagent_start(
        self, ctx: ToolContext, *, agent_type: str, agent_id: str
    ) -> HookOutcome:
        """SubagentStart: a sub-agent begins; its context goes to the sub-agent."""
        fields = {"agent_type": agent_type, "agent_id": agent_id}
        return await self._event(ctx, "SubagentStart", agent_type, fields)

    def _for_tool(
        self, event: str, tool: str, input: Mapping[str, object], ctx: ToolContext
    ) -> list[HookCommand]:
        """The event's commands for this tool whose `if` rule (if any) matches the call."""
        found = self.config.commands(event, tool)
        if not any(c.condition for c in found):
            return found
        subject = SubjectFactory(input, list(ctx.workspace.roots))
        return [c for c in found if c.applies(tool, subject, _cwd(ctx))]

    def _tool_payload(
        self, ctx: ToolContext, event: str, tool: str, input: JsonObject
    ) -> JsonObject:
        call = claude_call(tool, input, _cwd(ctx))
        payload = self._base(ctx.session_id, _cwd(ctx), event)
        payload.update(
            tool_name=call.name,
            tool_input=call.input,
            tool_use_id=ctx.tool_use_id,
            agentls_tool_name=tool,
            agentls_tool_input=input,
        )
        if ctx.agent_id:  # a sub-agent's call (Claude Code sets both)
            payload.update(agent_id=ctx.agent_id, agent_type=ctx.agent_type)
        return payload

    # -- LifecycleHooks --------------------------------------------------------------------

    async def user_prompt_submit(self, prompt: str, ctx: ToolContext) -> HookOutcome:
        return await self._event(ctx, "UserPromptSubmit", None, {"prompt": prompt})

    async def stop(self, ctx: ToolContext, *, stop_hook_active: bool) -> HookOutcome:
        outcome = await self._event(ctx, "Stop", None, {"stop_hook_active": stop_hook_active})
        return HookOutcome(outcome.block, outcome.message, system_message=outcome.system_message)

    # -- SessionHooks, CompactionHooks, SubagentHooks ----------------------------------------

    async def session_start(self, ctx: ToolContext, *, source: str) -> HookOutcome:
        return await self._event(ctx, "SessionStart", source, {"source": source})

    async def session_end(self, ctx: ToolContext, *, reason: str) -> HookOutcome:
        return await self._event(ctx, "SessionEnd", reason, {"reason": reason})

    async def pre_compact(
        self, ctx: ToolContext, *, trigger: str, custom_instructions: str = ""
    ) -> HookOutcome:
        fields = {"trigger": trigger, "custom_instructions": custom_instructions}
        return await self._event(ctx, "PreCompact", trigger, fields)

    async def subagent_stop(
        self,
        ctx: ToolContext,
        *,
        agent_type: str,
        stop_hook_active: bool,
        agent_id: str = "",
        transcript_path: str = "",
        last_message: str = "",
    ) -> HookOutcome:
        fields = {
            "stop_hook_active": stop_hook_active,
            "agent_type": agent_type,
            "agent_id": agent_id or ctx.session_id,
            "agent_transcript_path": transcript_path,
            "last_assistant_message": last_message,
        }
        outcome = await self._event(ctx, "SubagentStop", agent_type, fields)
        return HookOutcome(outcome.block, outcome.message, system_message=outcome.system_message)

    # -- NotificationHooks -----------------------------------------------------------------

    async def notification(
        self,
        session_id: str,
        message: str,
        *,
        notification_type: str = "permission_prompt",
        title: str = "agentls",
    ) -> HookOutcome:
        commands = self.config.commands("Notification", notification_type)
        if not commands:
            return HookOutcome()
        cwd = self.cwd or Path.cwd()
        payload = self._base(session_id, cwd, "Notification")
        payload.update(message=message, title=title, notification_type=notification_type)
        combined = await self._run_all(commands, payload, session_id, cwd, "Notification")
        return HookOutcome(system_message=self._messages(combined))

    async def _event(
        self, ctx: ToolContext, event: str, subject: str | None, fields: Mapping[str, object]
    ) -> HookOutcome:
        """One non-tool event: block (where it can), context and messages."""
        commands = self.config.commands(event, subject)
        if not commands:
            return HookOutcome()
        payload = self._base(ctx.session_id, _cwd(ctx), event)
        payload.update(fields)
        combined = await self._run_all(commands, payload, ctx.session_id, _cwd(ctx), event, ctx)
        message = self._messages(combined)
        if combined.block and event not in _UNBLOCKABLE:
            reason = self._reason(combined, event)
            return HookOutcome(block=True, message=reason, system_message=message)
        return HookOutcome(additional_context="\n".join(combined.context), system_message=message)

    # -- running ---------------------------------------------------------------------------

    def _base(self, session_id: str, cwd: Path, event: str) -> JsonObject:
        return {
            "session_id": session_id,
            "transcript_path": str(self._hook_transcript(session_id)),
            "cwd": str(cwd),
            "hook_event_name": event,
            "permission_mode": self.permission_mode(),
        }

    def _transcript(self, session_id: str) -> Path:
        """The session's transcript, created (empty, private) when it does not exist yet
        (a direct `agentls tool` call has none); hook runs are recorded there."""
        from agentls.agent.persistence.transcript import transcript_dir
        from agentls.privatefiles import open_private, private_dir

        folder = self.transcript_dir or transcript_dir()
        path = folder / f"{session_id}.jsonl"
        if not path.exists():
            with contextlib.suppress(OSError):
                private_dir(folder)
                open_private(path).close()
        return path

    def _hook_transcript(self, session_id: str) -> Path:
        """What hooks get as `transcript_path`: the session's messages in Claude Code's
        format (`agentls.agent.persistence.transcript.ClaudeTranscript`), created empty when
        there are none yet, so a hook can always open it."""
        from agentls.agent.persistence.transcript import claude_transcript_path
        from agentls.privatefiles import open_private, private_dir

        path = claude_transcript_path(self._transcript(session_id))
        if not path.exists():
            with contextlib.suppress(OSError):
                private_dir(path.parent)
                open_private(path).close()
        return path

    def _reason(self, combined: _Combined, event: str) -> str:
        text = "\n".join(r for r in combined.reasons if r).strip()
        return self.redactor.redact(text) or f"a {event} hook blocked this"

    def _messages(self, combined: _Combined) -> str:
        return self.redactor.redact("\n".join(m for m in combined.messages if m).strip())

    async def _run_all(
        self,
        commands: Sequence[HookCommand],
        payload: JsonObject,
        session_id: str,
        cwd: Path,
        event: str,
        ctx: ToolContext | None = None,
    ) -> _Combined:
        data = self.redactor.redact(json.dumps(payload, ensure_ascii=False, default=str))
        if _is_verifier(ctx):  # a prompt/agent hook's own verifier: no hook recursion
            commands = [c for c in commands if c.kind not in ("prompt", "agent")]
        for command in (c for c in commands if c.background):
            work = self._finish(command, data, session_id, cwd, event, _Combined(), ctx)
            self._in_background(work)
        waited = [c for c in commands if not c.background]
        combined = _Combined()
        await asyncio.gather(
            *(self._finish(c, data, session_id, cwd, event, combined, ctx) for c in waited)
        )
        return combined

    async def _finish(
        self,
        command: HookCommand,
        data: str,
        session_id: str,
        cwd: Path,
        event: str,
        combined: _Combined,
        ctx: ToolContext | None = None,
    ) -> None:
        run = await self._run_one(command, data, cwd, ctx)
        suppressed = self._interpret(run, event, combined)
        self._record(session_id, event, run, suppressed)

    def _in_background(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _run_one(
        self, command: HookCommand, data: str, cwd: Path, ctx: ToolContext | None = None
    ) -> HookRun:
        if command.kind == "http":
            return await self._post(command, data)
        if command.kind in ("prompt", "agent"):
            from agentls.agent.hooks.model import evaluate

            verdict = await evaluate(command, data, ctx)
            return HookRun(
                command,
                verdict.exit_code,
                verdict.stdout,
                "",
                verdict.timed_out,
                verdict.error,
                verdict.seconds,
            )
        env = self.redactor.scrub_env(scrub_env(self.env))
        env.update(self.redactor.scrub_env(self.extra_env))
        env["CLAUDE_PROJECT_DIR"] = env["AGENTLS_PROJECT_DIR"] = str(cwd)
        if command.plugin_root is not None:
            env["CLAUDE_PLUGIN_ROOT"] = str(command.plugin_root)
        if command.pass_credentials:  # the user's own opt-in (user settings only)
            source = credentials.environ() if self.env is None else self.env
            env.update({k: source[k] for k in credentials.CREDENTIAL_VARS if source.get(k)})
        started = time.monotonic()
        try:
            result = await run_guarded(
                [_SHELL, "-c", command.command],
                cwd=cwd,
                env=env,
                inherit_env=False,
                timeout=command.timeout,
                max_output_bytes=MAX_HOOK_OUTPUT_BYTES,
                kill_grace=_KILL_GRACE,
                stdin=data.encode("utf-8"),
                pass_credentials=command.pass_credentials,
            )
        except ProcessStartError as exc:
            return HookRun(command, None, error=str(exc))
        seconds = time.monotonic() - started
        return HookRun(
            command, result.exit_code, result.stdout, result.stderr, result.timed_out, None, seconds
        )

    async def _post(self, command: HookCommand, data: str) -> HookRun:
        """An http hook: the event POSTed (`agentls.agent.hooks.http`)."""
        from agentls.agent.hooks.http import post_event

        answer = await post_event(
            command,
            data,
            private_addresses=self.private_addresses,
            environment=self.env,
            extra_env=self.redactor.scrub_env(self.extra_env),
        )
        body = self.redactor.redact(answer.body)
        return HookRun(
            command,
            answer.exit_code,
            body if answer.exit_code == 0 else "",
            "" if answer.exit_code == 0 else body[:RECORDED_CHARS],
            answer.timed_out,
            answer.error,
            answer.seconds,
        )

    def _interpret(self, run: HookRun, event: str, combined: _Combined) -> bool:
        """Fold one run into the combined outcome; returns whether it asked to suppress its
        output (`suppressOutput`)."""
        kind = "" if run.command.kind == "command" else f"{run.command.kind} "
        label = f"{event} {kind}hook `{_shown(run.command)}` ({run.command.source})"
        if run.command.background:
            if run.failed:
                self._problem(f"{label} (async) failed: {_failure(run)}")
            return False
        if run.timed_out:
            stopped = "was killed" if run.command.kind == "command" else "was stopped"
            self._problem(f"{label} timed out after {run.command.timeout:g}s and {stopped}")
            return False
        if run.error is not None:
            self._problem(f"{label} could not run: {run.error}")
            return False
        if run.exit_code == 2:
            reason = run.stderr.strip() or f"{label} exited with status 2"
            if event in _UNBLOCKABLE:
                combined.messages.append(reason)
            else:
                combined.block = True
                combined.reasons.append(reason)
            return False
        if run.exit_code != 0:
            self._problem(f"{label} failed with exit status {run.exit_code}: {_failure(run)}")
            return False
        output = run.json()
        if output is None:
            if run.stdout.strip() and event in _PLAIN_CONTEXT:
                combined.context.append(self.redactor.redact(run.stdout.strip()))
            elif run.stdout.strip().startswith("{"):
                self._problem(f"{label} printed invalid JSON; its output was ignored")
            return False
        _apply_json(output, event, combined)
        return output.get("suppressOutput") is True

    def _record(self, session_id: str, event: str, run: HookRun, suppressed: bool) -> None:
        """A `hook` record in the session's transcript (stdout left out when suppressed)."""
        from agentls.privatefiles import open_private

        record: HookRecord = {
            "type": "hook",
            "ts": round(time.time(), 3),
            "event": event,
            "hook_type": run.command.kind,
            "command": _shown(run.command),
            "source": run.command.source,
            "exit_code": run.exit_code,
            "timed_out": run.timed_out,
            "duration_ms": round(run.seconds * 1000, 1),
            "stderr": self.redactor.redact(run.stderr[-RECORDED_CHARS:]),
        }
        if run.error:
            record["error"] = run.error
        if suppressed:
            record["stdout_suppressed"] = True
        else:
            record["stdout"] = self.redactor.redact(run.stdout[:RECORDED_CHARS])
        try:
            with open_private(self._transcript(session_id)) as handle:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        except OSError:
            log.debug("cannot record a hook run in the transcript", exc_info=True)

    def _problem(self, message: str) -> None:
        log.warning("%s", message)
        self.reports.append(message)
        del self.reports[:-100]
        if self.on_problem is not None:
            try:
                self.on_problem(message)
            except Exception:
                log.exception("hook problem handler failed")


def _apply_json(output: JsonObject, event: str, combined: _Combined) -> None:
    specific = output.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    reason = output.get("reason")
    reason_text = reason if isinstance(reason, str) else ""
    message = output.get("systemMessage")
    if isinstance(message, str) and message.strip():
        combined.messages.append(message.strip())
    if output.get("continue") is False:
        stop = output.get("stopReason")
        why = stop if isinstance(stop, str) and stop else reason_text
        if event in _UNBLOCKABLE:
            combined.messages.append(why)
        else:
            combined.block = True
            combined.reasons.append(why)
    decision = output.get("decision")
    if decision == "block" and event not in _UNBLOCKABLE:
        combined.block = True
        combined.reasons.append(reason_text)
    elif decision == "approve" and event == "PreToolUse":
        _permission(combined, "allow", reason_text)
    if event == "PermissionRequest":
        _permission_request(specific, combined)
    if event == "PreToolUse":
        permission = specific.get("permissionDecision")
        why_text = specific.get("permissionDecisionReason")
        why_text = why_text if isinstance(why_text, str) else reason_text
        if permission in ("allow", "ask", "deny"):
            _permission(combined, permission, why_text)
        updated = specific.get("updatedInput", output.get("updatedInput"))
        if isinstance(updated, dict):
            combined.updated = {**(combined.updated or {}), **updated}
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        combined.context.append(context.strip())


def _permission_request(specific: JsonObject, combined: _Combined) -> None:
    """`hookSpecificOutput.decision`: `{"behavior": "allow"|"deny", "message": …}`."""
    decision = specific.get("decision")
    if not isinstance(decision, dict):
        return
    behavior = decision.get("behavior")
    message = decision.get("message")
    if behavior in ("allow", "deny"):
        _permission(combined, behavior, message if isinstance(message, str) else "")


_STRICTNESS: dict[HookPermission, int] = {"allow": 0, "ask": 1, "deny": 2}


def _permission(combined: _Combined, decision: HookPermission, reason: str) -> None:
    """Several hooks: the strictest decision wins (deny over ask over allow)."""
    current = combined.permission
    if current is not None and _STRICTNESS[current] >= _STRICTNESS[decision]:
        return
    combined.permission = decision
    combined.permission_reason = reason


class NotifyingApprover:
    """An `Approver` that first lets PermissionRequest hooks answer (allow or deny), then
    tells Notification hooks when it opens a prompt (in the background: a slow hook never
    delays the prompt)."""

    def __init__(self, approver: Approver, hooks: CommandHooks) -> None:
        self.approver = approver
        self.hooks = hooks

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        outcome = await self.hooks.permission_request(request, self.hooks.cwd or Path.cwd())
        if outcome.system_message:
            self.hooks._problem(outcome.system_message)
        if outcome.permission is not None and outcome.permission.behavior == "allow":
            return "allow_once"
        if outcome.permission is not None and outcome.permission.behavior == "deny":
            return "deny"
        message = f"agentls needs your permission to use {request.tool}: {request.summary}"
        self.hooks._in_background(self.hooks.notification(request.session_id, message))
        return await self.approver.ask(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.approver, name)


def _is_verifier(ctx: ToolContext | None) -> bool:
    if ctx is None:
        return False
    from agentls.agent.hooks.model import VERIFIERS

    return ctx.agent_type in VERIFIERS or ctx.run.subagent in VERIFIERS


def _cwd(ctx: ToolContext) -> Path:
    roots = ctx.workspace.roots
    return Path(roots[0]) if roots else Path.cwd()


def _output_text(output: ToolOutput) -> str:
    if isinstance(output.content, str):
        return output.content
    return "\n".join(
        str(block.get("text", "")) for block in output.content if block.get("type") == "text"
    )


def _failure(run: HookRun) -> str:
    if run.timed_out:
        return f"timed out after {run.command.timeout:g}s"
    if run.error:
        return run.error
    detail = run.stderr.strip().splitlines()[-1:] or ["no error output"]
    return detail[0]


def _shown(command: HookCommand) -> str:
    """How a hook is named in messages and records: an http hook by its host only (a
    webhook URL's path or query is often its secret, e.g. Slack's)."""
    if command.kind != "http":
        return _short(command.command)
    from urllib.parse import urlsplit

    parts = urlsplit(command.command)
    rest = "/…" if parts.path.strip("/") or parts.query else ""
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{rest}"


def _short(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= 60 else line[:59] + "…"
