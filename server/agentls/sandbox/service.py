"""The sandbox of one workspace: its settings, whether it can run, and a confinement per run.

Tools ask two things (through `agentls.tools._execution`): where this call runs, sandboxed
or not (`place`), and, when sandboxed, the `Confinement` to hand to the process runner
(`confinement`). One per workspace, in its `ToolServices` (`ctx.services.sandbox`); the
runtime sets its `config` whenever the settings are (re)loaded; a workspace nobody
configured gets the defaults: sandbox on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls.sandbox.availability import Availability, probe
from agentls.sandbox.layout import build_layout
from agentls.sandbox.limits import cgroup_support
from agentls.sandbox.network import ProxyPool
from agentls.sandbox.settings import Fallback, SandboxSettings
from agentls.workspace.process import Confinement
from agentls.workspace.shadow import ShadowWorkspace

__all__ = ["Placement", "SandboxConfig", "SandboxService"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SandboxConfig:
    """What the host hands over: the merged settings and extra paths to hide."""

    settings: SandboxSettings = field(default_factory=SandboxSettings)
    hidden: tuple[Path, ...] = ()
    """Paths outside the workspace that deny rules for reading name."""


@dataclass(frozen=True)
class Placement:
    """Where one call runs: sandboxed, or not and why, and what the fallback setting says.
    The sandbox's answer, not a permission decision: the tool folds it into its
    `CallRisk`, one input of `agentls.agent.run.decision.decide`."""

    sandboxed: bool
    why_not: str = ""
    fallback: Fallback | None = None
    """Set when the sandbox should run but cannot: refuse, or ask then run unsandboxed."""
    fix: str = ""


class SandboxService:
    """Per workspace: `agentls.agent.framework.services.ToolServices.sandbox`."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.proxies = ProxyPool()

    @property
    def settings(self) -> SandboxSettings:
        return self.config.settings

    def availability(self) -> Availability:
        return probe()

    def place(
        self,
        tool: str,
        *,
        command_parts: Sequence[str] | None = None,
        unsandboxed_requested: bool = False,
    ) -> Placement:
        """Whether `tool` runs in the sandbox; `command_parts` are run_command's simple
        commands (excluded only when every one matches `excludedCommands`)."""
        settings = self.settings
        if not settings.enabled:
            return Placement(False, "the sandbox is switched off (`sandbox.enabled: false`)")
        if command_parts:
            patterns = [settings.excluded(part) for part in command_parts]
            if all(p is not None for p in patterns):
                shown = ", ".join(f"`{p}`" for p in dict.fromkeys(patterns))
                why = f"the command matches `sandbox.excludedCommands` {shown}"
                return Placement(False, why)
        if unsandboxed_requested:
            if not settings.allow_unsandboxed_commands:
                return Placement(
                    False,
                    "running outside the sandbox was requested, but "
                    "`sandbox.allowUnsandboxedCommands` is false",
                    "refuse",
                )
            return Placement(False, "running outside the sandbox was requested", "ask")
        found = self.availability()
        if found.ok:
            return Placement(True)
        why = f"no sandbox can run here: {found.reason}"
        return Placement(False, why, settings.fallback_for(tool), found.fix)

    def confinement(
        self, shadow: ShadowWorkspace, cwd: Path, *, git_writes: bool = False
    ) -> Confinement:
        """The sandbox for a run in `shadow` (call only after `place` said sandboxed);
        `git_writes`: the repository's git folder writable (a `git commit` that was
        allowed), else read-only."""
        found = self.availability()
        paths = shadow.sandbox_paths()
        layout = build_layout(
            roots=shadow.workspace.roots,
            writable=paths.writable,
            home=paths.home,
            cwd=cwd,
            caches=self.settings.caches,
            secrets=shadow.workspace.services.secrets,
            hidden=self.config.hidden,
            readable=paths.readable,
            git=shadow.git_binds(writable=git_writes),
        )
        if found.backend == "seatbelt":
            from agentls.sandbox.seatbelt import SeatbeltConfinement

            return SeatbeltConfinement(found.program, layout, self.settings, self.proxies)
        from agentls.sandbox.bwrap import BwrapConfinement

        return BwrapConfinement(found.program, layout, self.settings, self.proxies)

    def status(self) -> dict[str, object]:
        """For `agentls.status` and `agentls doctor`."""
        settings = self.settings
        found = self.availability()
        network = settings.network
        return {
            "enabled": settings.enabled,
            "available": found.ok,
            "backend": found.backend,
            "message": found.describe()
            if settings.enabled
            else "the sandbox is switched off (`sandbox.enabled: false`)",
            "fix": found.fix,
            "network": "off"
            if not (network.allowed_domains or network.allow_local_binding)
            else {
                "allowedDomains": list(network.allowed_domains),
                "allowLocalBinding": network.allow_local_binding,
            },
            "limits": cgroup_support().describe() if found.backend == "bwrap" else "",
            "fallback": {tool: settings.fallback_for(tool) for tool in settings.fallback},
        }

    def close(self) -> None:
        """Stop the proxies (workspace close = server shutdown)."""
        self.proxies.close()
