"""User-configured hook commands, in Claude Code's format and with its protocol.

Why Claude Code's format: users already have hooks in `.claude/settings.json`
(`{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command",
"command": "…", "timeout": 60}]}]}}`), and they should keep working here. Matchers are
regexes over the tool name; Claude Code's names (`Edit`, `Bash`, …) match our tools too.

Protocol per hook: a JSON object on stdin (session_id, transcript_path, cwd,
hook_event_name, permission_mode, tool_name, tool_input, tool_use_id, and tool_response
for PostToolUse, prompt for UserPromptSubmit, stop_hook_active for Stop).

- exit 0 proceeds; a JSON object on stdout may say `decision: "block" | "approve"`,
  `continue: false` (+ `stopReason`), `reason`, or `hookSpecificOutput` with
  `permissionDecision` ("allow" | "deny" | "ask"), `permissionDecisionReason`,
  `updatedInput` (PreToolUse) and `additionalContext`. Plain stdout of a UserPromptSubmit
  hook is added to the prompt as context.
- exit 2 blocks; stderr is the reason the model (or, for a prompt, the user) sees.
- any other exit, a crash, or a timeout (default 60 s) is reported through `on_problem`
  and the log, and the call proceeds: a broken hook must not wedge the agent.

Hooks run through the shared process runner (own process group, the whole group killed on
timeout or cancel, capped output, scrubbed environment), guarded by `process_guard` so
descendants that left the group die too. The input reaches the command on stdin.

What reaches a hook command (its JSON input, its environment) never carries the agent's
credentials. Redacting them from tool results is not a hook's job: the pipeline does it
for every call, with or without hooks.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls import credentials
from agentls.agent.hooks import HookDecision, HookOutcome, HookPermission
from agentls.agent.rules import claude_names_for
from agentls.workspace.process import ProcessStartError, scrub_env
from agentls.workspace.process_guard import run_guarded
from agentls.workspace.secrets import Redactor

if TYPE_CHECKING:
    from agentls.agent.context import ToolContext
    from agentls.agent.tool import ToolOutput

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "HOOK_EVENTS",
    "CommandHooks",
    "HookCommand",
    "HookConfig",
    "HookGroup",
    "HookRun",
]

log = logging.getLogger(__name__)

HOOK_EVENTS: tuple[str, ...] = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
UNSUPPORTED_EVENTS = frozenset(
    {"Notification", "SubagentStop", "PreCompact", "SessionStart", "SessionEnd"}
)
DEFAULT_HOOK_TIMEOUT = 60.0
MAX_HOOK_TIMEOUT = 3600.0
MAX_HOOK_OUTPUT_BYTES = 64 * 1024
_KILL_GRACE = 1.0
_SHELL = "/bin/sh"


@dataclass(frozen=True)
class HookCommand:
    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    source: str = ""
    pass_credentials: bool = False
    """`"passCredentials": true` (user settings only): the hook gets ANTHROPIC_API_KEY /
    ANTHROPIC_AUTH_TOKEN; every other hook runs without them."""


@dataclass(frozen=True)
class HookGroup:
    """One `{"matcher": …, "hooks": [...]}` entry of one event."""

    event: str
    matcher: str
    commands: tuple[HookCommand, ...]
    regex: re.Pattern[str] | None = None

    def matches(self, tool: str | None) -> bool:
        if self.regex is None or tool is None:
            return True
        names = [tool, *claude_names_for(tool)]
        return any(self.regex.fullmatch(name) for name in names)


@dataclass
class HookConfig:
    """Hooks from every settings source, merged (duplicates run once)."""

    groups: list[HookGroup] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    user_level: bool = True
    """Whether the source being parsed is the user's own (may pass credentials)."""

    @classmethod
    def parse(cls, raw: object, source: str, *, user_level: bool = True) -> HookConfig:
        """Parse a `hooks` object; every malformed part is reported and skipped.
        `passCredentials` is honoured only in user-level settings."""
        config = cls()
        config.user_level = user_level
        if raw is None:
            return config
        if not isinstance(raw, Mapping):
            config.problems.append(f"{source}: `hooks` must be an object; ignored")
            return config
        for event, entries in raw.items():
            if event in UNSUPPORTED_EVENTS:
                config.problems.append(f"{source}: {event} hooks are not supported; ignored")
                continue
            if event not in HOOK_EVENTS:
                config.problems.append(
                    f"{source}: unknown hook event {event!r} (known: {', '.join(HOOK_EVENTS)})"
                )
                continue
            if not isinstance(entries, list):
                config.problems.append(f"{source}: hooks.{event} must be a list; ignored")
                continue
            for index, entry in enumerate(entries):
                group = _parse_group(event, entry, f"{source}: hooks.{event}[{index}]", config)
                if group is not None:
                    config.groups.append(group)
        return config

    def merge(self, other: HookConfig) -> None:
        self.groups.extend(other.groups)
        self.problems.extend(other.problems)

    def commands(self, event: str, tool: str | None = None) -> list[HookCommand]:
        found: list[HookCommand] = []
        seen: set[str] = set()
        for group in self.groups:
            if group.event != event or not group.matches(tool):
                continue
            for command in group.commands:
                if command.command not in seen:
                    seen.add(command.command)
                    found.append(command)
        return found

    def __bool__(self) -> bool:
        return bool(self.groups)


def _parse_group(event: str, entry: object, where: str, config: HookConfig) -> HookGroup | None:
    if not isinstance(entry, Mapping):
        config.problems.append(f"{where} must be an object; ignored")
        return None
    matcher = entry.get("matcher", "")
    if not isinstance(matcher, str):
        config.problems.append(f"{where}: matcher must be a string; ignored")
        return None
    regex: re.Pattern[str] | None = None
    if matcher.strip() not in ("", "*"):
        try:
            regex = re.compile(matcher.strip())
        except re.error as exc:
            config.problems.append(f"{where}: matcher {matcher!r} is not a valid regex ({exc})")
            return None
    hooks = entry.get("hooks")
    if not isinstance(hooks, list) or not hooks:
        config.problems.append(f"{where}: `hooks` must be a non-empty list; ignored")
        return None
    commands: list[HookCommand] = []
    for index, hook in enumerate(hooks):
        at = f"{where}.hooks[{index}]"
        if not isinstance(hook, Mapping):
            config.problems.append(f"{at} must be an object; ignored")
            continue
        if hook.get("type", "command") != "command":
            config.problems.append(f'{at}: only type "command" is supported; ignored')
            continue
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            config.problems.append(f"{at}: `command` must be a non-empty string; ignored")
            continue
        timeout = hook.get("timeout", DEFAULT_HOOK_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            config.problems.append(f"{at}: timeout must be a positive number of seconds")
            timeout = DEFAULT_HOOK_TIMEOUT
        passes = _pass_credentials(hook, at, config)
        commands.append(HookCommand(command, min(float(timeout), MAX_HOOK_TIMEOUT), where, passes))
    if not commands:
        return None
    return HookGroup(event, matcher, tuple(commands), regex)


def _pass_credentials(hook: Mapping[str, Any], at: str, config: HookConfig) -> bool:
    value = hook.get("passCredentials", False)
    if not isinstance(value, bool):
        config.problems.append(f"{at}: passCredentials must be true or false; using false")
        return False
    if value and not config.user_level:
        config.problems.append(
            f"{at}: passCredentials can only be set in user settings (a project hook never "
            "gets the API key); ignored"
        )
        return False
    return value


@dataclass(frozen=True)
class HookRun:
    """How one hook command ended."""

    command: HookCommand
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None

    @property
    def failed(self) -> bool:
        """Crashed, timed out, could not start, or exited with neither 0 nor 2."""
        return self.error is not None or self.timed_out or self.exit_code not in (0, 2)

    def json(self) -> dict[str, Any] | None:
        text = self.stdout.strip()
        if self.exit_code != 0 or not text.startswith("{"):
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass
class _Combined:
    block: bool = False
    reasons: list[str] = field(default_factory=list)
    permission: HookPermission | None = None
    permission_reason: str = ""
    updated: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)


class CommandHooks:
    """Runs configured hook commands; a `HookRunner` and `LifecycleHooks`.

    `on_problem` receives a line for each crashing, hanging or unparsable hook (the host
    shows it to the user); `permission_mode` reports the current mode in the hook input.
    A PreToolUse permission decision is returned in the `HookOutcome`.
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
    ) -> None:
        self.config = config or HookConfig()
        self.redactor = redactor if redactor is not None else Redactor.from_env()
        self.on_problem = on_problem
        self.transcript_dir = transcript_dir
        self.permission_mode = permission_mode
        self.env = env
        self.reports: list[str] = []

    # -- HookRunner ------------------------------------------------------------------------

    async def pre_tool(
        self, tool_name: str, input: dict[str, Any], ctx: ToolContext
    ) -> HookOutcome:
        commands = self.config.commands("PreToolUse", tool_name)
        if not commands:
            return HookOutcome()
        sent = _with_file_path(input, ctx)
        payload = self._base(ctx, "PreToolUse")
        payload.update(tool_name=tool_name, tool_input=sent, tool_use_id=ctx.tool_use_id)
        combined = await self._run_all(commands, payload, ctx, "PreToolUse")
        if combined.block:
            return HookOutcome(block=True, message=self._reason(combined, "PreToolUse"))
        decision = None
        if combined.permission is not None:
            reason = self.redactor.redact(combined.permission_reason)
            decision = HookDecision(combined.permission, reason)
        if decision is not None and decision.behavior == "deny":
            return HookOutcome(permission=decision)
        updated = None
        if combined.updated is not None:
            updated = _apply_update(input, sent, combined.updated)
        return HookOutcome(
            updated_input=updated,
            additional_context="\n".join(combined.context),
            permission=decision,
        )

    async def post_tool(
        self, tool_name: str, input: dict[str, Any], output: ToolOutput, ctx: ToolContext
    ) -> HookOutcome:
        commands = self.config.commands("PostToolUse", tool_name)
        if not commands:
            return HookOutcome()
        payload = self._base(ctx, "PostToolUse")
        payload.update(
            tool_name=tool_name,
            tool_input=_with_file_path(input, ctx),
            tool_use_id=ctx.tool_use_id,
            tool_response={"content": _output_text(output), "is_error": output.is_error},
        )
        combined = await self._run_all(commands, payload, ctx, "PostToolUse")
        if combined.block:
            return HookOutcome(block=True, message=self._reason(combined, "PostToolUse"))
        return HookOutcome(additional_context="\n".join(combined.context))

    # -- LifecycleHooks --------------------------------------------------------------------

    async def user_prompt_submit(self, prompt: str, ctx: ToolContext) -> HookOutcome:
        commands = self.config.commands("UserPromptSubmit")
        if not commands:
            return HookOutcome()
        payload = self._base(ctx, "UserPromptSubmit")
        payload["prompt"] = prompt
        combined = await self._run_all(commands, payload, ctx, "UserPromptSubmit")
        if combined.block:
            return HookOutcome(block=True, message=self._reason(combined, "UserPromptSubmit"))
        return HookOutcome(additional_context="\n".join(combined.context))

    async def stop(self, ctx: ToolContext, *, stop_hook_active: bool) -> HookOutcome:
        commands = self.config.commands("Stop")
        if not commands:
            return HookOutcome()
        payload = self._base(ctx, "Stop")
        payload["stop_hook_active"] = stop_hook_active
        combined = await self._run_all(commands, payload, ctx, "Stop")
        if combined.block:
            return HookOutcome(block=True, message=self._reason(combined, "Stop"))
        return HookOutcome()

    # -- running ---------------------------------------------------------------------------

    def _base(self, ctx: ToolContext, event: str) -> dict[str, Any]:
        from agentls.agent.transcript import transcript_dir

        folder = self.transcript_dir or transcript_dir()
        return {
            "session_id": ctx.session_id,
            "transcript_path": str(folder / f"{ctx.session_id}.jsonl"),
            "cwd": str(_cwd(ctx)),
            "hook_event_name": event,
            "permission_mode": self.permission_mode(),
        }

    def _reason(self, combined: _Combined, event: str) -> str:
        text = "\n".join(r for r in combined.reasons if r).strip()
        return self.redactor.redact(text) or f"a {event} hook blocked this"

    async def _run_all(
        self,
        commands: Sequence[HookCommand],
        payload: dict[str, Any],
        ctx: ToolContext,
        event: str,
    ) -> _Combined:
        data = self.redactor.redact(json.dumps(payload, ensure_ascii=False, default=str))
        runs = await asyncio.gather(*(self._run_one(c, data, ctx) for c in commands))
        combined = _Combined()
        for run in runs:
            self._interpret(run, event, combined)
        return combined

    async def _run_one(self, command: HookCommand, data: str, ctx: ToolContext) -> HookRun:
        cwd = _cwd(ctx)
        env = self.redactor.scrub_env(scrub_env(self.env))
        env["CLAUDE_PROJECT_DIR"] = env["AGENTLS_PROJECT_DIR"] = str(cwd)
        if command.pass_credentials:  # the user's own opt-in (user settings only)
            source = credentials.environ() if self.env is None else self.env
            env.update({k: source[k] for k in credentials.CREDENTIAL_VARS if source.get(k)})
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
        return HookRun(command, result.exit_code, result.stdout, result.stderr, result.timed_out)

    def _interpret(self, run: HookRun, event: str, combined: _Combined) -> None:
        label = f"{event} hook `{_short(run.command.command)}` ({run.command.source})"
        if run.timed_out:
            self._problem(f"{label} timed out after {run.command.timeout:g}s and was killed")
            return
        if run.error is not None:
            self._problem(f"{label} could not run: {run.error}")
            return
        if run.exit_code == 2:
            combined.block = True
            combined.reasons.append(run.stderr.strip() or f"{label} exited with status 2")
            return
        if run.exit_code != 0:
            detail = run.stderr.strip().splitlines()[-1:] or ["no error output"]
            self._problem(f"{label} failed with exit status {run.exit_code}: {detail[0]}")
            return
        output = run.json()
        if output is None:
            if run.stdout.strip() and event == "UserPromptSubmit":
                combined.context.append(self.redactor.redact(run.stdout.strip()))
            elif run.stdout.strip().startswith("{"):
                self._problem(f"{label} printed invalid JSON; its output was ignored")
            return
        _apply_json(output, event, combined)

    def _problem(self, message: str) -> None:
        log.warning("%s", message)
        self.reports.append(message)
        del self.reports[:-100]
        if self.on_problem is not None:
            try:
                self.on_problem(message)
            except Exception:
                log.exception("hook problem handler failed")


def _apply_json(output: dict[str, Any], event: str, combined: _Combined) -> None:
    specific = output.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    reason = output.get("reason")
    reason_text = reason if isinstance(reason, str) else ""
    if output.get("continue") is False:
        combined.block = True
        stop = output.get("stopReason")
        combined.reasons.append(stop if isinstance(stop, str) and stop else reason_text)
    decision = output.get("decision")
    if decision == "block":
        combined.block = True
        combined.reasons.append(reason_text)
    elif decision == "approve" and event == "PreToolUse":
        _permission(combined, "allow", reason_text)
    if event == "PreToolUse":
        permission = specific.get("permissionDecision")
        why = specific.get("permissionDecisionReason")
        why_text = why if isinstance(why, str) else reason_text
        if permission in ("allow", "ask", "deny"):
            _permission(combined, permission, why_text)
        updated = specific.get("updatedInput", output.get("updatedInput"))
        if isinstance(updated, dict):
            combined.updated = {**(combined.updated or {}), **updated}
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        combined.context.append(context.strip())


_STRICTNESS: dict[HookPermission, int] = {"allow": 0, "ask": 1, "deny": 2}


def _permission(combined: _Combined, decision: HookPermission, reason: str) -> None:
    """Several hooks: the strictest decision wins (deny over ask over allow)."""
    current = combined.permission
    if current is not None and _STRICTNESS[current] >= _STRICTNESS[decision]:
        return
    combined.permission = decision
    combined.permission_reason = reason


def _cwd(ctx: ToolContext) -> Path:
    roots = ctx.workspace.roots
    return Path(roots[0]) if roots else Path.cwd()


def _with_file_path(input: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Our input plus Claude Code's `file_path` (absolute), so hooks written for Claude
    Code's Read/Edit/Write tools find the file where they expect it."""
    sent = dict(input)
    path = input.get("path")
    if isinstance(path, str) and "file_path" not in sent:
        root = _cwd(ctx)
        sent["file_path"] = path if os.path.isabs(path) else os.path.normpath(root / path)
    return sent


def _apply_update(
    input: dict[str, Any], sent: dict[str, Any], update: dict[str, Any]
) -> dict[str, Any]:
    changes = dict(update)
    file_path = changes.pop("file_path", None)
    if (
        "file_path" not in input
        and isinstance(file_path, str)
        and file_path != sent.get("file_path")
    ):
        changes.setdefault("path", file_path)
    return {**input, **changes}


def _output_text(output: ToolOutput) -> str:
    if isinstance(output.content, str):
        return output.content
    return "\n".join(
        str(block.get("text", "")) for block in output.content if block.get("type") == "text"
    )


def _short(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= 60 else line[:59] + "…"
