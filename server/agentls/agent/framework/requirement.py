"""`Requirement`: the one permission decision for a tool call (and `CallRisk`, the tool's
own say, which carries one).

Why one type: a call's permission used to be said six ways (a hook's decision, a hook's
outcome, the tool's risk, the rules' verdict, the policy's decision, the sandbox's
decision), and a hook's deny was checked twice. Now every input is folded by one function,
`agentls.agent.run.decision.decide`, into one of three answers (as codex-rs's
`ExecApprovalRequirement`):

- `skip`: no approval needed, the call runs;
- `forbidden`: it must not run; `reason` is what the model is told;
- `needs_approval`: the user must approve it; `remember` is what "allow for this session"
  would remember (empty: only "allow once" can be offered).

A PreToolUse hook's `permissionDecision` is read into a `Requirement` as well (allow →
skip, deny → forbidden, ask → needs approval), so it is weighed, not decided a second time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agentls.agent.rules.rule import Rule

__all__ = ["NO_RISK", "CallRisk", "Requirement", "RequirementKind"]

RequirementKind = Literal["skip", "forbidden", "needs_approval"]

_BEHAVIOR = {"skip": "allow", "forbidden": "deny", "needs_approval": "ask"}


@dataclass(frozen=True)
class Requirement:
    """What a call needs before it may run (see the module docstring)."""

    kind: RequirementKind
    reason: str = ""
    remember: tuple[Rule, ...] = ()
    """Only for `needs_approval`: the rules "allow for this session" would add."""
    told: str = ""
    """Only for `forbidden`: the whole message for the model when the step that forbade
    the call words it itself (plan mode, a hook's block); else it is built from `reason`."""

    @classmethod
    def skip(cls) -> Requirement:
        return cls("skip")

    @classmethod
    def forbidden(cls, reason: str, *, told: str = "") -> Requirement:
        return cls("forbidden", reason, told=told)

    @classmethod
    def needs_approval(cls, reason: str, remember: tuple[Rule, ...] = ()) -> Requirement:
        return cls("needs_approval", reason, remember)

    @classmethod
    def from_hook(cls, permission: str, reason: str = "") -> Requirement:
        """A PreToolUse hook's `permissionDecision` ("allow", "deny" or "ask")."""
        if permission == "allow":
            return cls("skip", reason)
        if permission == "deny":
            return cls.forbidden(reason)
        return cls.needs_approval(reason)

    @property
    def behavior(self) -> Literal["allow", "deny", "ask"]:
        """The same answer in Claude Code's words (`permissionDecision`)."""
        found: Literal["allow", "deny", "ask"] = _BEHAVIOR[self.kind]  # type: ignore[assignment]
        return found

    def message(self, tool: str) -> str:
        """What the model is told when the call is forbidden."""
        if self.told:
            return self.told
        reason = self.reason or "the user's permission settings do not allow this call"
        return (
            f"Permission denied for {tool}: {reason}. Do not retry the same call; "
            "choose another approach or ask the user."
        )


SKIP = Requirement("skip")


@dataclass(frozen=True)
class CallRisk:
    """What a tool found out about one call (`Tool.assess`), with the sandbox's answer
    folded in: the tool's own requirement (as codex-rs's `exec_approval_requirement`) and
    whether the call's processes are confined. An input of `decide`, not a decision.

    `needs` forbidden: the call must not run here at all (e.g. the sandbox should run but
    cannot and the fallback refuses), in every mode. `needs` needs approval: the user must
    approve it unless an allow rule or "allow for this session" covers it (like a call that
    is not read-only; bypass mode allows it). `confined`: its processes run in the OS
    sandbox, so a command that only reads can be allowed without asking
    (`agentls.agent.rules.readonly`).
    """

    needs: Requirement = SKIP
    confined: bool = False

    @classmethod
    def refused(cls, reason: str) -> CallRisk:
        return cls(Requirement.forbidden(reason))

    @classmethod
    def asks(cls, reason: str, *, confined: bool = False) -> CallRisk:
        return cls(Requirement.needs_approval(reason), confined)


NO_RISK = CallRisk()
