"""`RulePolicy`: permission modes + allow/ask/deny rules + the user's approver.

Why one object: every host (LSP, CLI, ACP, tests) must make the same decision for the
same call, and "allow for this session" must be remembered in one place. A host only
supplies an `Approver` that shows a prompt; without one, "ask" fails closed. When the
safety settings cannot be loaded, a host uses this same policy with no rules.

It is the rules part of the one permission decision (`agentls.agent.run.decision.decide`),
and answers with the same type (`Requirement`: skip, forbidden, needs approval). Before it,
the decision has already forbidden what no configuration may allow: a hook's "deny",
secret files, anything not read-only in plan mode, and a call its tool refuses
(`CallRisk.needs` forbidden, e.g. a command where the sandbox should run but cannot). Then, first
decisive step wins:

1. deny rules — in every mode, bypass included;
2. reasons to ask that no allow rule can override: an ask rule, a shell command that names
   a secret file, an edit to the agent's own configuration (`.claude/`, `.agentls.toml`,
   `.git/`, the `[tool.agentls]` table of a pyproject.toml:
   `agent/permissions/settings_edits.py`), a
   tool that always asks (run_command in the real tree), a hook's "ask" —
   in bypass mode these are allowed, except the secret and config cases, which are denied;
3. bypassPermissions: allow;
4. a PreToolUse hook's "allow", allow rules and this session's remembered approvals;
5. what the tool found out about the call (`CallRisk.needs` an approval: e.g. run_tests over code
   this session staged, or run_tests outside the sandbox): ask;
6. a shell command that only reads, in the sandbox (`agentls.agent.rules.readonly`;
   off with `read_only_commands=False`): allow;
7. the mode's default: read-only tools run; edits are staged in review delivery, asked in
   auto delivery (acceptEdits: run); everything else (run_command, MCP tools that write)
   asks.

"needs approval" goes to the approver (`approve`); without one the call is forbidden with a
message that says how to allow it. In `dontAsk` mode nobody is asked: whatever would ask is
forbidden.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.agent.framework.requirement import Requirement
from agentls.agent.framework.tool import NO_RISK, CallRisk
from agentls.agent.permissions.approval import (
    PERMISSION_MODES,
    ApprovalChoice,
    ApprovalKind,
    ApprovalRequest,
    Approver,
    PendingCall,
    PermissionMode,
)
from agentls.agent.permissions.guards import call_subject, in_plan_mode, input_dict, is_read_only
from agentls.agent.permissions.settings_edits import settings_table_change
from agentls.agent.protocol.messages import JsonObject
from agentls.agent.rules.readonly import Where, read_only_problem
from agentls.agent.rules.rule import COMMAND_TOOLS, EDIT_TOOLS, Rule, RuleSet, Subject
from agentls.agent.rules.suggestions import session_rules
from agentls.agent.settings import ConfigError
from agentls.workspace.secrets import SecretMatcher

if TYPE_CHECKING:
    from agentls.agent.framework.context import ToolContext
    from agentls.agent.framework.tool import Tool

__all__ = [
    "PROTECTED_PATHS",
    "BypassNotAllowed",
    "RulePolicy",
]

log = logging.getLogger(__name__)

PROTECTED_PATHS: tuple[str, ...] = (".claude/**", ".agentls.toml", ".git/**", ".vscode/**")
"""Writing these could change the agent's own permissions or hooks (or the repository's
internals), so an edit always asks — even in acceptEdits mode or with an allow rule."""

_KINDS: dict[str, ApprovalKind] = {
    "delete_file": "delete",
    "rename_file": "move",
    "grep": "search",
    "list_files": "search",
    "search_symbols": "search",
}


class BypassNotAllowed(ConfigError):
    """bypassPermissions was requested without the user enabling it in user settings."""


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
        edit_tools: Collection[str] = EDIT_TOOLS,
        protected_paths: Sequence[str] = PROTECTED_PATHS,
        always_ask: Collection[str] = (),
        read_only_commands: bool = True,
        read_roots: Sequence[Path] = (),
    ) -> None:
        self.rules = rules or RuleSet()
        self.read_only_commands = read_only_commands
        """Allow sandboxed shell commands that only read (`runCommand.autoAllowReadOnly`)."""
        self.read_roots = tuple(read_roots)
        """Folders outside the workspace that may be read (`additionalDirectories`)."""
        self.approver = approver
        self.secrets = secrets
        """For commands that name a secret file. None: the workspace's registered matcher
        (`Workspace.services.secrets`), defaults included."""
        self.bypass_enabled = bypass_enabled
        self.edit_tools = frozenset(edit_tools)
        self.always_ask = frozenset(always_ask)
        self._protected = SecretMatcher(patterns=tuple(protected_paths), exceptions=())
        self._session_rules: dict[str, RuleSet] = {}
        self._grants: dict[str, list[RuleSet]] = {}
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

    def grant(self, session_id: str, rules: Sequence[Rule]) -> Callable[[], None]:
        """Allow rules for one run of a session (a custom command's `allowed-tools`). They
        count like allow rules — below deny and ask rules, secret files and plan mode —
        until the returned function revokes them."""
        granted = RuleSet(list(rules))
        self._grants.setdefault(session_id, []).append(granted)

        def revoke() -> None:
            found = self._grants.get(session_id, [])
            if granted in found:
                found.remove(granted)

        return revoke

    def forget_session(self, session_id: str) -> None:
        self._session_rules.pop(session_id, None)

    # -- PermissionPolicy ------------------------------------------------------------------

    def requirement(self, call: PendingCall) -> Requirement:
        """What the rules say about one call (`PermissionPolicy.requirement`)."""
        found = self.evaluate(call.tool, call.input, call.ctx, call.hook, call.risk)
        log.debug("permission %s for %s: %s", found.kind, call.tool.name, found.reason)
        return found

    def evaluate(
        self,
        tool: Tool[Any],
        input: Any,
        ctx: ToolContext,
        hook: Requirement | None = None,
        risk: CallRisk = NO_RISK,
    ) -> Requirement:
        """The rules' requirement before asking anyone (pure). `hook` is a PreToolUse
        hook's "allow" or "ask", `risk` what the tool found out about the call
        (`Tool.assess`). A hook's "deny" is not weighed here: `decide` forbade the call."""
        found = self._evaluate(tool, input, ctx, hook, risk)
        if found.kind == "needs_approval" and self._mode == "dontAsk":
            hint = f" such as `{found.remember[0].text}`" if found.remember else ""
            return Requirement.forbidden(
                f"{found.reason}; the permission mode is dontAsk, which denies whatever "
                f"would ask. The user can add an allow rule{hint} to the settings",
            )
        return found

    def _evaluate(
        self,
        tool: Tool[Any],
        input: Any,
        ctx: ToolContext,
        hook: Requirement | None,
        risk: CallRisk,
    ) -> Requirement:
        subject = self.subject(tool.name, input_dict(input), ctx)
        denied = self.rules.first_hit("deny", subject)
        if denied is not None:
            return Requirement.forbidden(f"the rule `{denied.text}` ({denied.source}) denies it")
        # a plan run never reaches here with a change (`decide` forbade it), and its
        # reads are judged like the default mode's, bypass or not
        mode: PermissionMode = "default" if in_plan_mode(ctx.mode, self._mode) else self._mode
        read_only = is_read_only(tool, input)
        forced = self._forced_ask(tool, input, subject, hook, ctx)
        if forced is not None:
            reason, hard = forced
            if mode == "bypassPermissions":
                return Requirement.forbidden(reason) if hard else Requirement.skip()
            return Requirement.needs_approval(reason)
        if mode == "bypassPermissions" or (hook is not None and hook.kind == "skip"):
            return Requirement.skip()
        if self._allowed_by_rules(subject, ctx.session_id):
            return Requirement.skip()
        return self._unruled(tool, subject, ctx, risk, mode, read_only=read_only)

    def _allowed_by_rules(self, subject: Subject, session_id: str) -> bool:
        """An allow rule from the settings, this session's answers or a command's grant."""
        if self.rules.allowing(subject) is not None:
            return True
        session = self._session_rules.get(session_id)
        if session is not None and session.allowing(subject) is not None:
            return True
        # a custom command's allowed-tools, for its run
        return any(g.allowing(subject) is not None for g in self._grants.get(session_id, ()))

    def _unruled(
        self,
        tool: Tool[Any],
        subject: Subject,
        ctx: ToolContext,
        risk: CallRisk,
        mode: PermissionMode,
        *,
        read_only: bool,
    ) -> Requirement:
        """A call no rule or hook decided: reads inside the workspace pass, the rest asks."""
        name = tool.name
        remember = self._remember(subject)
        if risk.needs.kind == "needs_approval":
            return Requirement.needs_approval(risk.needs.reason, remember)
        outside = self._outside_reads(subject, ctx) if read_only else None
        if outside is not None:
            return Requirement.needs_approval(
                f"{outside} is outside the workspace and outside "
                "`permissions.additionalDirectories`",
                remember,
            )
        if read_only or self._reads_only(subject, risk, ctx):
            return Requirement.skip()
        if name in self.edit_tools:
            if mode == "acceptEdits" or ctx.mode == "review":
                return Requirement.skip()  # review: staged, the user accepts or rejects later
            reason = f"{name} changes files directly (auto delivery)"
            return Requirement.needs_approval(reason, remember)
        return Requirement.needs_approval(f"{name} is not read-only", remember)

    # -- pieces ----------------------------------------------------------------------------

    def subject(self, tool: str, raw: JsonObject, ctx: ToolContext) -> Subject:
        """The paths or command a call is about, as rules match them."""
        return call_subject(tool, raw, ctx.workspace.roots)

    def _outside_reads(self, subject: Subject, ctx: ToolContext) -> str | None:
        """A path a read reaches outside the workspace and `additionalDirectories` (only a
        `Read(…)` allow rule's folder lets a tool get there; the rule must match). The
        folders of the skills the session offers are readable: the skill tool names their
        files for the model to read."""
        skills = [str(skill.folder) for skill in ctx.services.skills.skills]
        folders = [*(str(r) for r in ctx.workspace.roots), *map(str, self.read_roots), *skills]
        for path in subject.paths:
            real = os.path.realpath(path)  # where the tool really reads
            if not any(real == f or real.startswith(f.rstrip("/") + "/") for f in folders):
                return path
        return None

    def _reads_only(self, subject: Subject, risk: CallRisk, ctx: ToolContext) -> bool:
        """A sandboxed shell command that only reads (`agentls.agent.rules.readonly`)."""
        if subject.command is None or not risk.confined or not self.read_only_commands:
            return False
        roots = tuple(Path(r) for r in ctx.workspace.roots)
        if not roots:
            return False
        where = Where(
            cwd=roots[0],
            readable=(*roots, *self.read_roots),
            secrets=self.secrets or ctx.services.secrets,
            home=Path.home(),
        )
        problem = read_only_problem(subject.command, where)
        log.debug("read-only check of %r: %s", subject.command.source, problem or "read-only")
        return problem is None

    def _forced_ask(
        self,
        tool: Tool[Any],
        input: Any,
        subject: Subject,
        hook: Requirement | None,
        ctx: ToolContext,
    ) -> tuple[str, bool] | None:
        """A reason to ask that no allow rule overrides, and whether bypass must deny it."""
        asked = self.rules.first_hit("ask", subject)
        if asked is not None:
            return f"the rule `{asked.text}` ({asked.source}) asks for approval", False
        if subject.command is not None:
            secrets = self.secrets or ctx.services.secrets
            named = [w for part in subject.command.parts for w in part.words[1:]]
            for word in [*named, *subject.command.reads]:  # `cat < .env` names it too
                pattern = secrets.match(word.strip("'\""), resolve=False)
                if pattern is not None:
                    return (
                        f"the command names {word}, which matches the secret-file "
                        f"pattern `{pattern}`",
                        True,
                    )
        if tool.name in self.edit_tools or not is_read_only(tool, input):
            for path in (*subject.paths, *subject.real_paths):
                pattern = self._protected.match(path)
                if pattern is not None:
                    return (
                        f"{path} is agent or repository configuration (`{pattern}`); "
                        "changing it needs the user's approval",
                        True,
                    )
            settings = settings_table_change(tool.name, input_dict(input), ctx)
            if settings is not None:
                return settings, True
        if tool.name in self.always_ask or tool.always_ask(input):
            return f"{tool.name} always asks in this configuration", False
        if hook is not None and hook.kind == "needs_approval":
            return hook.reason or "a PreToolUse hook asks for approval", False
        return None

    def _remember(self, subject: Subject) -> tuple[Rule, ...]:
        """What "allow for this session" would remember: valid rules only (see
        `agentls.agent.rules.suggestions`), so the hint in a denial can be pasted as it is."""
        return session_rules(subject)

    async def approve(self, call: PendingCall, needed: Requirement) -> Requirement:
        """The one ask-flow: an approval request to the host's `Approver`; the answer is
        skip (allowed, and remembered for the session when the user chose so) or
        forbidden."""
        tool, input, ctx = call.tool, call.input, call.ctx
        remember = tuple(r.text for r in needed.remember)
        if self.approver is None:
            hint = f" such as `{remember[0]}`" if remember else ""
            return Requirement.forbidden(
                f"{needed.reason}; it needs the user's approval and no approval prompt is "
                f"available here. The user can add an allow rule{hint} to the settings"
            )
        request = self._request(tool, input, needed, ctx)
        try:
            choice: ApprovalChoice = await self.approver.ask(request)
        except Exception as exc:
            log.warning("approval prompt failed: %s", exc)
            return Requirement.forbidden(f"the approval prompt failed ({exc})")
        if ctx.cancelled.is_set() or choice == "cancelled":
            # an answer to a question the run no longer asks: never run, never remember
            return Requirement.forbidden("the run was cancelled before the user answered")
        if choice == "allow_session" and needed.remember:
            self._session_rules.setdefault(ctx.session_id, RuleSet()).extend(needed.remember)
            return Requirement.skip()
        if choice in ("allow_once", "allow_session"):
            return Requirement.skip()
        return Requirement.forbidden("the user denied this call")

    def _request(
        self, tool: Tool[Any], input: Any, needed: Requirement, ctx: ToolContext
    ) -> ApprovalRequest:
        try:
            summary = tool.summary(input)
        except Exception:
            summary = f"Run {tool.name}"
        raw = input_dict(input)
        command = raw.get("command") if tool.name in COMMAND_TOOLS else None
        if isinstance(command, str) and command.strip() not in summary:
            # The model writes the description: the user must see what really runs.
            summary = f"{summary}: {command.strip()}"
        subject = self.subject(tool.name, raw, ctx)
        return ApprovalRequest(
            session_id=ctx.session_id,
            tool=tool.name,
            summary=summary,
            reason=needed.reason,
            input=raw,
            remember=tuple(r.text for r in needed.remember),
            tool_use_id=ctx.tool_use_id,
            kind=self._kind(tool, input),
            paths=subject.paths,
        )

    def _kind(self, tool: Tool[Any], input: Any) -> ApprovalKind:
        if tool.name in COMMAND_TOOLS:
            return "execute"
        if tool.name in _KINDS:
            return _KINDS[tool.name]
        if tool.name in self.edit_tools:
            return "edit"
        return "read" if is_read_only(tool, input) else "other"


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
