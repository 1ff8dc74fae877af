"""`RulePolicy`: permission modes + allow/ask/deny rules + secrets + the user's approver.

Why one object: every host (LSP, CLI, tests) must make the same decision for the same
call, and "allow for this session" must be remembered in one place. The editor only
supplies an `Approver` that shows a prompt.

Order of evaluation (first decisive step wins):

1. the tool's own `deny` (e.g. a path outside the workspace);
2. secret files (`.env*`, keys, cloud credentials) for tools that read contents;
3. deny rules — in every mode, bypass included;
4. plan mode: anything not read-only is denied;
5. reasons to ask that no allow rule can override: an ask rule, a shell command that names
   a secret file, an edit to the agent's own configuration (`.claude/`, `.agentls.toml`,
   `.git/`), a tool that always asks (run_command in the real tree), a hook's "ask" —
   in bypass mode these are allowed, except the secret and config cases, which are denied;
6. bypassPermissions: allow;
7. a PreToolUse hook's "allow", allow rules and this session's remembered approvals;
8. the tool's own `ask`;
9. the mode's default: read-only tools run; edits are staged in review delivery, asked in
   auto delivery (acceptEdits: run); everything else (run_command, MCP tools that write)
   asks.

"ask" goes to the approver; without one the call is denied with a message that says how
to allow it, so a host without prompts fails closed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from agentls.agent.hooks import HookVerdicts
from agentls.agent.permissions import (
    PERMISSION_MODES,
    ApprovalChoice,
    ApprovalRequest,
    Approver,
    PermissionMode,
)
from agentls.agent.rules import COMMAND_TOOLS, EDIT_TOOLS, Rule, RuleSet, Subject
from agentls.agent.settings import ConfigError
from agentls.agent.shell_parse import split_command
from agentls.agent.tool import PermissionDecision
from agentls.workspace.secrets import SecretMatcher, secrets_for

if TYPE_CHECKING:
    from agentls.agent.context import ToolContext
    from agentls.agent.tool import Tool

__all__ = [
    "PROTECTED_PATHS",
    "SECRET_GUARDED_TOOLS",
    "BypassNotAllowed",
    "RulePolicy",
    "Verdict",
]

log = logging.getLogger(__name__)

SECRET_GUARDED_TOOLS: tuple[str, ...] = ("read_file", "grep", "edit_file")
"""Tools that show file contents: denied on secret files (grep/list_files must also skip
secret files inside folders they walk; see `agentls.workspace.secrets.secrets_for`)."""

PROTECTED_PATHS: tuple[str, ...] = (".claude/**", ".agentls.toml", ".git/**", ".vscode/**")
"""Writing these could change the agent's own permissions or hooks (or the repository's
internals), so an edit always asks — even in acceptEdits mode or with an allow rule."""

_PATH_KEYS = ("path", "new_path", "file_path")
_PATH_LIST_KEYS = ("paths",)
_WALKING_TOOLS = ("grep", "list_files")
"""Tools whose missing `path` means the whole workspace, and that read a whole folder."""
_ANY_FILE = "<any file>"


class BypassNotAllowed(ConfigError):
    """bypassPermissions was requested without the user enabling it in user settings."""


@dataclass(frozen=True)
class Verdict:
    """The policy's answer before anyone is asked."""

    behavior: Literal["allow", "deny", "ask"]
    reason: str = ""
    remember: tuple[Rule, ...] = ()
    """What "allow for this session" would remember (empty: only "allow once")."""


def _input_dict(input: Any) -> dict[str, Any]:
    if isinstance(input, BaseModel):
        return input.model_dump()
    if isinstance(input, dict):
        return dict(input)
    return {}


class RulePolicy:
    """A `PermissionPolicy`. Create one per host or per session; approvals for "this
    session" are kept per session id either way."""

    def __init__(
        self,
        rules: RuleSet | None = None,
        *,
        mode: PermissionMode = "default",
        approver: Approver | None = None,
        secrets: SecretMatcher | None = None,
        bypass_enabled: bool = False,
        verdicts: HookVerdicts | None = None,
        edit_tools: Collection[str] = EDIT_TOOLS,
        secret_tools: Collection[str] = SECRET_GUARDED_TOOLS,
        protected_paths: Sequence[str] = PROTECTED_PATHS,
        always_ask: Collection[str] = (),
    ) -> None:
        self.rules = rules or RuleSet()
        self.approver = approver
        self.secrets = secrets
        """None: the workspace's registered matcher (`secrets_for`), defaults included."""
        self.bypass_enabled = bypass_enabled
        self.verdicts = verdicts
        self.edit_tools = frozenset(edit_tools)
        self.secret_tools = frozenset(secret_tools)
        self.always_ask = frozenset(always_ask)
        self._protected = SecretMatcher(patterns=tuple(protected_paths), exceptions=())
        self._session_rules: dict[str, RuleSet] = {}
        self._mode: PermissionMode = "default"
        self.mode = mode

    # -- mode ------------------------------------------------------------------------------

    @property
    def mode(self) -> PermissionMode:
        return self._mode

    @mode.setter
    def mode(self, mode: PermissionMode) -> None:
        self._mode = check_mode(mode, bypass_enabled=self.bypass_enabled)

    def remembered(self, session_id: str) -> list[str]:
        """What "allow for this session" remembered so far (for status and tests)."""
        found = self._session_rules.get(session_id)
        return [r.text for r in found.rules] if found else []

    def forget_session(self, session_id: str) -> None:
        self._session_rules.pop(session_id, None)

    # -- PermissionPolicy ------------------------------------------------------------------

    async def decide(
        self,
        tool: Tool[Any],
        input: Any,
        tool_opinion: PermissionDecision,
        ctx: ToolContext,
    ) -> PermissionDecision:
        verdict = self.evaluate(tool, input, tool_opinion, ctx)
        log.debug("permission %s for %s: %s", verdict.behavior, tool.name, verdict.reason)
        if verdict.behavior == "allow":
            return PermissionDecision.allow()
        if verdict.behavior == "deny":
            return PermissionDecision.deny(verdict.reason)
        return await self._ask(tool, input, verdict, ctx)

    def evaluate(
        self, tool: Tool[Any], input: Any, opinion: PermissionDecision, ctx: ToolContext
    ) -> Verdict:
        """The decision before asking anyone (pure apart from taking a hook's verdict)."""
        name = tool.name
        mode: PermissionMode = "plan" if ctx.mode == "plan" else self._mode
        raw = _input_dict(input)
        hook = self.verdicts.take(ctx.session_id, ctx.tool_use_id) if self.verdicts else None
        if opinion.behavior == "deny":
            return Verdict("deny", opinion.message)
        subject = self.subject(name, raw, ctx)
        secrets = self.secrets or secrets_for(ctx.workspace)
        secret = self._secret_path(subject, secrets) if name in self.secret_tools else None
        if secret is not None:
            return Verdict("deny", secret)
        denied = self.rules.first_hit("deny", subject)
        if denied is not None:
            return Verdict("deny", f"the rule `{denied.text}` ({denied.source}) denies it")
        read_only = _read_only(tool, input)
        if mode == "plan" and not read_only:
            return Verdict(
                "deny",
                f"{name} is not read-only and the session is in plan mode; describe the "
                "change instead of making it",
            )
        forced = self._forced_ask(tool, input, subject, hook, secrets)
        if forced is not None:
            reason, hard = forced
            if mode == "bypassPermissions":
                return Verdict("deny", reason) if hard else Verdict("allow")
            return Verdict("ask", reason)
        if mode == "bypassPermissions":
            return Verdict("allow")
        if hook is not None and hook[0] == "allow":
            return Verdict("allow")
        if self.rules.allowing(subject) is not None:
            return Verdict("allow")
        session = self._session_rules.get(ctx.session_id)
        if session is not None and session.allowing(subject) is not None:
            return Verdict("allow")
        remember = self._remember(subject)
        if opinion.behavior == "ask":
            return Verdict("ask", opinion.message or f"{name} asks for approval", remember)
        if read_only:
            return Verdict("allow")
        if name in self.edit_tools:
            if mode == "acceptEdits" or ctx.mode == "review":
                return Verdict("allow")  # review: staged, the user accepts or rejects later
            return Verdict("ask", f"{name} changes files directly (auto delivery)", remember)
        return Verdict("ask", f"{name} is not read-only", remember)

    # -- pieces ----------------------------------------------------------------------------

    def subject(self, tool: str, raw: dict[str, Any], ctx: ToolContext) -> Subject:
        """The paths or command a call is about, as rules match them."""
        if tool in COMMAND_TOOLS:
            command = raw.get("command")
            return Subject(tool, command=split_command(command if isinstance(command, str) else ""))
        texts: list[str] = []
        for key in _PATH_KEYS:
            value = raw.get(key)
            if isinstance(value, str) and value.strip():
                texts.append(value)
        for key in _PATH_LIST_KEYS:
            values = raw.get(key)
            if isinstance(values, list):
                texts.extend(v for v in values if isinstance(v, str) and v.strip())
        if not texts and tool in _WALKING_TOOLS:
            texts.append(".")
        roots = list(ctx.workspace.roots)
        lexical = tuple(_absolute(t, roots) for t in texts)
        real = tuple(os.path.realpath(p) for p in lexical)
        extra = tuple(r for r in real if r not in lexical)
        contents: tuple[str, ...] = ()
        if tool in _WALKING_TOOLS:
            contents = tuple(os.path.join(p, _ANY_FILE) for p in (*lexical, *extra))
        return Subject(tool, lexical, extra, contents=contents)

    def _secret_path(self, subject: Subject, secrets: SecretMatcher) -> str | None:
        for path in (*subject.paths, *subject.real_paths, *subject.contents):
            pattern = secrets.match(path, resolve=False)
            if pattern is not None:
                return (
                    f"{path} matches the secret-file pattern `{pattern}`. Reading secret files "
                    "(keys, credentials, .env) is denied by default; the user can change the "
                    "`secrets` setting. Do not try to read it another way"
                )
        return None

    def _forced_ask(
        self,
        tool: Tool[Any],
        input: Any,
        subject: Subject,
        hook: tuple[str, str] | None,
        secrets: SecretMatcher,
    ) -> tuple[str, bool] | None:
        """A reason to ask that no allow rule overrides, and whether bypass must deny it."""
        asked = self.rules.first_hit("ask", subject)
        if asked is not None:
            return f"the rule `{asked.text}` ({asked.source}) asks for approval", False
        if subject.command is not None:
            for part in subject.command.parts:
                for word in part.words[1:]:
                    pattern = secrets.match(word.strip("'\""), resolve=False)
                    if pattern is not None:
                        return (
                            f"the command names {word}, which matches the secret-file "
                            f"pattern `{pattern}`",
                            True,
                        )
        if tool.name in self.edit_tools or not _read_only(tool, input):
            for path in (*subject.paths, *subject.real_paths):
                pattern = self._protected.match(path)
                if pattern is not None:
                    return (
                        f"{path} is agent or repository configuration (`{pattern}`); "
                        "changing it needs the user's approval",
                        True,
                    )
        needs = getattr(tool, "always_ask", None)
        if tool.name in self.always_ask or (callable(needs) and needs(input)):
            return f"{tool.name} always asks in this configuration", False
        if hook is not None and hook[0] == "ask":
            return hook[1] or "a PreToolUse hook asks for approval", False
        return None

    def _remember(self, subject: Subject) -> tuple[Rule, ...]:
        source = "allowed for this session"
        if subject.command is not None:
            split = subject.command
            if not split.complete or split.writes or not split.parts:
                return ()
            return tuple(Rule.exact(subject.tool, p.text, source) for p in split.parts)
        if subject.paths:
            values = sorted({*subject.paths, *subject.real_paths})
            return (Rule.exact_paths(subject.tool, values, source),)
        return (Rule.exact(subject.tool, None, source),)

    async def _ask(
        self, tool: Tool[Any], input: Any, verdict: Verdict, ctx: ToolContext
    ) -> PermissionDecision:
        remember = tuple(r.text for r in verdict.remember)
        if self.approver is None:
            hint = f" such as `{remember[0]}`" if remember else ""
            return PermissionDecision.deny(
                f"{verdict.reason}; it needs the user's approval and no approval prompt is "
                f"available here. The user can add an allow rule{hint} to the settings"
            )
        try:
            summary = tool.summary(input)
        except Exception:
            summary = f"Run {tool.name}"
        raw = _input_dict(input)
        command = raw.get("command") if tool.name in COMMAND_TOOLS else None
        if isinstance(command, str) and command.strip() not in summary:
            # The model writes the description: the user must see what really runs.
            summary = f"{summary}: {command.strip()}"
        request = ApprovalRequest(
            session_id=ctx.session_id,
            tool=tool.name,
            summary=summary,
            reason=verdict.reason,
            input=raw,
            remember=remember,
            tool_use_id=ctx.tool_use_id,
        )
        try:
            choice: ApprovalChoice = await self.approver.ask(request)
        except Exception as exc:
            log.warning("approval prompt failed: %s", exc)
            return PermissionDecision.deny(f"the approval prompt failed ({exc})")
        if choice == "allow_session" and verdict.remember:
            self._session_rules.setdefault(ctx.session_id, RuleSet()).extend(verdict.remember)
            return PermissionDecision.allow()
        if choice in ("allow_once", "allow_session"):
            return PermissionDecision.allow()
        return PermissionDecision.deny("the user denied this call")


def check_mode(mode: str, *, bypass_enabled: bool) -> PermissionMode:
    """Validate a requested mode; bypassPermissions needs the user's explicit opt-in."""
    for known in PERMISSION_MODES:
        if mode == known:
            if known == "bypassPermissions" and not bypass_enabled:
                raise BypassNotAllowed(
                    "bypassPermissions mode is not enabled: set `allowBypassPermissions: true` "
                    "in your user-level agentls settings (editor user settings, not the "
                    "project) to allow it. Nothing was started"
                )
            return known
    raise ConfigError(f"unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")


def _read_only(tool: Tool[Any], input: Any) -> bool:
    try:
        return bool(tool.is_read_only(input))
    except Exception:
        return False


def _absolute(text: str, roots: list[Path]) -> str:
    """The path a tool would use, lexically (like `PathResolver`: multi-root names work)."""
    raw = text.strip() or "."
    if os.path.isabs(raw):
        return os.path.normpath(raw)
    if not roots:
        return os.path.normpath(os.path.abspath(raw))
    parts = Path(raw).parts
    if len(roots) > 1 and parts and parts[0] not in (".", ".."):
        for root in roots[1:]:
            if parts[0] == root.name and not os.path.lexists(roots[0] / parts[0]):
                return os.path.normpath(os.path.join(root, *parts[1:]))
    return os.path.normpath(os.path.join(roots[0], raw))
