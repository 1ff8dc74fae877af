"""Where the execution tools' processes run, and what that means for permission.

`run_command`, `run_tests` and `lint` run code: the project's tests, its linters' configs
and plugins, executables shipped in the repository, and whatever this session staged (a
`conftest.py`, a `package.json` script). Inside the sandbox that code can only touch the
shadow copy. Outside it — no sandbox here, the sandbox switched off, an excluded command —
it runs as the user, so:

- the sandbox wanted but unavailable: the tool's `sandbox.fallback` decides — `refuse`
  (a denial that says why and how to fix it) or `ask` (the user approves running without
  it; "allow for this session" makes that once per session);
- `run_tests`/`lint` over code this session staged, or running an executable from the
  repository (a venv or `node_modules/.bin` in the workspace), are not read-only there:
  they ask, with the reason ("runs code this session wrote: conftest.py"), unless a rule
  allows them.

Each tool calls `execution_risk` from `Tool.assess` (facts the pipeline's permission step
weighs: a refusal, or a reason to ask) and `confinement_for` when it runs;
`Execution.result_fields` labels the result (and so the transcript).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import NO_RISK, CallRisk, ToolError
from agentls.agent.rules.shell import split_command
from agentls.sandbox import Placement
from agentls.workspace.process import Confinement
from agentls.workspace.shadow import ShadowWorkspace

__all__ = ["Execution", "confinement_for", "execution_risk", "plan_execution"]

_SHOWN = 5

Executables = Sequence[str] | Callable[[], Sequence[str]]
"""Programs a call starts, or a function that finds them (called only when it matters)."""


@dataclass(frozen=True)
class Execution:
    """One call's plan: sandboxed or why not, and the code it runs that is not the user's."""

    tool: str
    placement: Placement
    staged: tuple[str, ...] = ()
    repo_executables: tuple[str, ...] = ()

    def label(self) -> str:
        """ "runs code this session wrote: conftest.py" (and repository executables)."""
        parts = []
        if self.staged:
            parts.append(f"runs code this session wrote: {_names(self.staged)}")
        if self.repo_executables:
            parts.append(f"runs executables from the repository: {_names(self.repo_executables)}")
        return "; ".join(parts)

    def sandbox_line(self) -> str:
        if self.placement.sandboxed:
            return "on"
        return f"off: {self.placement.why_not}"

    def result_fields(self) -> dict[str, object]:
        """Keys for a structured tool result: the transcript shows them with the call."""
        fields: dict[str, object] = {"sandbox": self.sandbox_line()}
        label = self.label()
        if label:
            fields["runs_session_code"] = label
        return fields


def plan_execution(
    tool: str,
    ctx: ToolContext,
    *,
    command: str | None = None,
    executables: Executables = (),
    unsandboxed_requested: bool = False,
) -> Execution:
    """Decide for one call (cheap: the availability probe is cached). `executables` (the
        programs the call would start, or a function finding them) is only looked at when the
        call would run unsandboxed: inside the sandbox they cannot reach anything. Staged code is
    always named (the transcript says a run executed what the session wrote)."""
    placement = ctx.services.sandbox.place(
        tool, command_parts=_parts(command), unsandboxed_requested=unsandboxed_requested
    )
    found = () if placement.sandboxed else executables() if callable(executables) else executables
    return Execution(tool, placement, _staged(ctx), _in_repository(ctx, found))


def execution_risk(
    tool: str,
    ctx: ToolContext,
    *,
    command: str | None = None,
    executables: Executables = (),
    unsandboxed_requested: bool = False,
) -> CallRisk:
    """What `Tool.assess` reports for an execution tool (see the module docstring)."""
    plan = plan_execution(
        tool,
        ctx,
        command=command,
        executables=executables,
        unsandboxed_requested=unsandboxed_requested,
    )
    decision = plan.placement
    if decision.sandboxed:
        return NO_RISK
    if decision.fallback == "refuse":
        return CallRisk.refused(_refusal(tool, decision))
    reasons = []
    if decision.fallback == "ask":
        fix = f"; fix: {decision.fix}" if decision.fix else ""
        reasons.append(f"{tool} would run WITHOUT the sandbox ({decision.why_not}{fix})")
    label = plan.label() if tool != "run_command" else ""
    if label:
        reasons.append(label)
    return CallRisk.asks("; ".join(reasons)) if reasons else NO_RISK


def confinement_for(
    tool: str,
    ctx: ToolContext,
    shadow: ShadowWorkspace,
    cwd: Path,
    *,
    command: str | None = None,
    unsandboxed_requested: bool = False,
    git_writes: bool = False,
) -> Confinement | None:
    """The sandbox for this call's processes; None when it runs unsandboxed (allowed by
    the permission step). Refuses again here, so no path around the permission step
    runs code unsandboxed where the settings say refuse."""
    service = ctx.services.sandbox
    decision = service.place(
        tool, command_parts=_parts(command), unsandboxed_requested=unsandboxed_requested
    )
    if decision.sandboxed:
        return service.confinement(shadow, cwd, git_writes=git_writes)
    if decision.fallback == "refuse":
        raise ToolError(_refusal(tool, decision))
    return None


def _parts(command: str | None) -> list[str] | None:
    """The simple commands of a shell line; a line that does not parse fully gets an
    empty-string part, which no `excludedCommands` pattern matches (it stays sandboxed)."""
    if command is None:
        return None
    split = split_command(command)
    parts = [part.text for part in split.parts]
    return parts if split.complete and parts else [""]


def _refusal(tool: str, decision: Placement) -> str:
    fix = f" Fix: {decision.fix}." if decision.fix else ""
    return (
        f"{tool} refuses to run without the sandbox: {decision.why_not}.{fix} (The user "
        f'can set `sandbox.fallback.{tool}` to "ask" to run it unsandboxed after approval.)'
    )


def _staged(ctx: ToolContext) -> tuple[str, ...]:
    """Files this session staged that still exist in its view (what a run would execute)."""
    view = ctx.workspace.view(ctx.changes)
    names = [
        ctx.workspace.display(path) for path in ctx.changes.changed_paths() if view.is_file(path)
    ]
    return tuple(sorted(names))


def _in_repository(ctx: ToolContext, executables: Sequence[str]) -> tuple[str, ...]:
    found = []
    for executable in executables:
        path = Path(executable)
        if not path.is_absolute():
            continue
        if any(path == root or path.is_relative_to(root) for root in ctx.workspace.roots):
            found.append(ctx.workspace.display(path))
    return tuple(found)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    more = len(names) - _SHOWN
    return f"{shown} and {more} more" if more > 0 else shown
