"""The `sandbox` settings: Claude Code's keys where they mean the same, plus ours.

Part of the settings tree (`AgentlsSettings.sandbox`), and also read from Claude Code's
`.claude/settings*.json`. Layers of it are not merged like other settings: a project file
(`.agentls.toml`, `[tool.agentls]`, a repository's `.claude/settings.json`) can only tighten
what the user's own settings allow (`agentls.sandbox.settings.merge_layers`), so a cloned
repository cannot open the network, add writable folders or switch the sandbox off.

Claude Code's keys: `enabled`, `excludedCommands`, `allowUnsandboxedCommands`,
`network.allowedDomains`, `network.allowLocalBinding`. Ours: `allowLocalBinding` (also
accepted at the top level), `caches` (tool caches mounted writable), `fallback` (what each
tool does where no sandbox can run), `limits`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from agentls.config.base import SettingsModel

__all__ = [
    "DEFAULT_CACHES",
    "FALLBACK_TOOLS",
    "Fallback",
    "SandboxLimits",
    "SandboxNetwork",
    "SandboxSettings",
]

Fallback = Literal["refuse", "ask"]
"""Where no sandbox can run: refuse to execute, or run unsandboxed after asking."""

FALLBACK_TOOLS = ("run_command", "run_tests", "lint")

DEFAULT_CACHES: dict[str, str] = {
    "pip": "~/.cache/pip",
    "npm": "~/.npm",
    "go": "~/go/pkg/mod",
    "go-build": "~/.cache/go-build",
    "cargo": "~/.cargo/registry",
}
"""Tool caches that persist across runs; each is writable inside the sandbox (at its own
path and at the same place under the sandbox's private HOME)."""


def _default_fallback() -> dict[str, Fallback]:
    return {"run_command": "refuse", "run_tests": "ask", "lint": "ask"}


class SandboxNetwork(SettingsModel):
    """`sandbox.network`: off unless a domain or local binding is allowed."""

    allowed_domains: tuple[str, ...] = ()
    """Hosts reachable through agentls's filtering proxy (`example.com`, `*.example.com`)."""
    allow_local_binding: bool = False
    """Let commands reach services listening on this machine's loopback (127.0.0.1)."""

    def allows_host(self, host: str) -> bool:
        name = host.strip().strip("[]").rstrip(".").lower()
        for pattern in self.allowed_domains:
            wanted = pattern.strip().rstrip(".").lower()
            if wanted.startswith("*."):
                if name.endswith(wanted[1:]):
                    return True
            elif name == wanted:
                return True
        return False


class SandboxLimits(SettingsModel):
    """Resource limits of one run (the whole process tree where cgroups are available)."""

    memory_mb: int = Field(default=4096, ge=64, le=1 << 20)
    processes: int = Field(default=512, ge=8, le=1 << 16)
    file_size_mb: int = Field(default=2048, ge=1, le=1 << 20)
    """The largest file one process may write (RLIMIT_FSIZE)."""


class SandboxSettings(SettingsModel):
    """The `sandbox` section (camelCase keys)."""

    enabled: bool = True
    excluded_commands: tuple[str, ...] = ()
    """run_command commands that run outside the sandbox (`docker *`, `git push`); they
    still need permission like any command."""
    allow_unsandboxed_commands: bool = True
    """False: nothing runs outside the sandbox but `excludedCommands` (no fallback asks,
    no `dangerously_disable_sandbox`)."""
    network: SandboxNetwork = Field(default_factory=SandboxNetwork)
    caches: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_CACHES))
    fallback: dict[str, Fallback] = Field(default_factory=lambda: _default_fallback())
    limits: SandboxLimits = Field(default_factory=SandboxLimits)

    @model_validator(mode="before")
    @classmethod
    def _top_level_local_binding(cls, data: Any) -> Any:
        """`allowLocalBinding` is accepted beside `network` too (same meaning)."""
        if isinstance(data, Mapping) and "allowLocalBinding" in data:
            data = dict(data)
            network = dict(data.get("network") or {})
            network.setdefault("allowLocalBinding", data.pop("allowLocalBinding"))
            data["network"] = network
        return data

    @model_validator(mode="after")
    def _known_fallback_tools(self) -> SandboxSettings:
        unknown = sorted(set(self.fallback) - set(FALLBACK_TOOLS))
        if unknown:
            raise ValueError(
                f"fallback names unknown tools {unknown} (known: {', '.join(FALLBACK_TOOLS)})"
            )
        return self

    def fallback_for(self, tool: str) -> Fallback:
        """What `tool` does where the sandbox cannot run (`refuse` unless set to `ask`)."""
        if not self.allow_unsandboxed_commands:
            return "refuse"
        default: Fallback = "refuse" if tool == "run_command" else "ask"
        return self.fallback.get(tool, default)

    def excluded(self, command: str) -> str | None:
        """The `excludedCommands` pattern one simple command matches, or None.

        A pattern matches the whole command line (exact or glob, `docker *`), its first
        words (`docker`, `git push`), or, in permission-rule style, `docker:*`. Callers
        pass each part of a compound command separately: every part must match."""
        line = " ".join(command.split())
        for pattern in self.excluded_commands:
            wanted = " ".join(pattern.split()).removesuffix(":*")
            if not wanted:
                continue
            if line == wanted or line.startswith(wanted + " "):
                return pattern
            if fnmatch.fnmatchcase(line, wanted):
                return pattern
        return None
