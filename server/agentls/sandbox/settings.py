"""The `sandbox` settings: Claude Code's keys where they mean the same, plus ours.

One pydantic model with camelCase aliases (how editors and `.claude/settings.json` spell
them). The same model reads every source; `merge_layers` combines them so that a project
file (`.agentls.toml`, `[tool.agentls]`, a repository's `.claude/settings.json`) can only
tighten what the user's own settings allow: a cloned repository must not be able to open
the network, add writable folders or switch the sandbox off.

Claude Code's keys: `enabled`, `excludedCommands`, `allowUnsandboxedCommands`,
`network.allowedDomains`, `network.allowLocalBinding`. Ours: `allowLocalBinding` (also
accepted at the top level), `caches` (tool caches mounted writable), `fallback` (what each
tool does where no sandbox can run), `limits`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "DEFAULT_CACHES",
    "FALLBACK_TOOLS",
    "Fallback",
    "SandboxLimits",
    "SandboxNetwork",
    "SandboxSettings",
    "merge_layers",
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


_ALIASES = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class SandboxNetwork(BaseModel):
    """`sandbox.network`: off unless a domain or local binding is allowed."""

    model_config = _ALIASES

    allowed_domains: tuple[str, ...] = Field(default=(), alias="allowedDomains")
    """Hosts reachable through agentls's filtering proxy (`example.com`, `*.example.com`)."""
    allow_local_binding: bool = Field(default=False, alias="allowLocalBinding")
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


class SandboxLimits(BaseModel):
    """Resource limits of one run (the whole process tree where cgroups are available)."""

    model_config = _ALIASES

    memory_mb: int = Field(default=4096, ge=64, le=1 << 20, alias="memoryMb")
    processes: int = Field(default=512, ge=8, le=1 << 16)
    file_size_mb: int = Field(default=2048, ge=1, le=1 << 20, alias="fileSizeMb")
    """The largest file one process may write (RLIMIT_FSIZE)."""


class SandboxSettings(BaseModel):
    """The `sandbox` section (camelCase keys)."""

    model_config = _ALIASES

    enabled: bool = True
    excluded_commands: tuple[str, ...] = Field(default=(), alias="excludedCommands")
    """run_command commands that run outside the sandbox (`docker *`, `git push`); they
    still need permission like any command."""
    allow_unsandboxed_commands: bool = Field(default=True, alias="allowUnsandboxedCommands")
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


def merge_layers(
    layers: Iterable[tuple[str, object, bool]],
) -> tuple[SandboxSettings, list[str]]:
    """Combine `(label, raw sandbox section, user_level)` layers, lowest precedence first.

    User-level layers set values as given (a later one wins). Project layers may only
    tighten: enable the sandbox, drop domains, local binding or unsandboxed commands,
    turn a fallback from ask to refuse, lower limits. Anything else they try is reported
    and ignored. Invalid sections are reported and ignored as a whole.
    """
    problems: list[str] = []
    current = SandboxSettings()
    for label, raw, user_level in layers:
        if raw is None:
            continue
        try:
            layer = SandboxSettings.model_validate(raw)
        except ValidationError as exc:
            why = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(section)'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            )
            problems.append(f"{label}: `sandbox` is invalid ({why}); ignored")
            continue
        if user_level:
            current = _overlay(current, layer)
        else:
            current = _tighten(current, layer, label, problems)
    return current, problems


def _overlay(base: SandboxSettings, layer: SandboxSettings) -> SandboxSettings:
    """`layer`'s explicitly set fields over `base` (nested sections field by field)."""
    values = base.model_dump()
    for name in layer.model_fields_set:
        value = getattr(layer, name)
        if isinstance(value, BaseModel):
            values[name] = {**values[name], **value.model_dump(include=value.model_fields_set)}
        elif name == "fallback":
            values[name] = {**values[name], **value}
        else:
            values[name] = value
    return SandboxSettings.model_validate(values)


def _tighten(
    base: SandboxSettings, layer: SandboxSettings, label: str, problems: list[str]
) -> SandboxSettings:
    """Apply only the stricter parts of a project layer."""

    def refused(key: str) -> None:
        problems.append(
            f"{label}: `sandbox.{key}` would loosen the sandbox; a project can only tighten "
            "it (set it in your user settings instead); ignored"
        )

    values = base.model_dump()
    fields = layer.model_fields_set
    if "enabled" in fields:
        if layer.enabled:
            values["enabled"] = True
        elif base.enabled:
            refused("enabled")
    if "excluded_commands" in fields:
        kept = [c for c in base.excluded_commands if c in layer.excluded_commands]
        if set(layer.excluded_commands) - set(base.excluded_commands):
            refused("excludedCommands")
        values["excluded_commands"] = kept
    if "allow_unsandboxed_commands" in fields:
        if not layer.allow_unsandboxed_commands:
            values["allow_unsandboxed_commands"] = False
        elif not base.allow_unsandboxed_commands:
            refused("allowUnsandboxedCommands")
    _tighten_network(base, layer, values, refused)
    if "caches" in fields:
        if set(layer.caches.items()) - set(base.caches.items()):
            refused("caches")
        values["caches"] = {k: v for k, v in base.caches.items() if layer.caches.get(k) == v}
    if "fallback" in fields:
        for tool, mode in layer.fallback.items():
            if mode == "refuse":
                values["fallback"][tool] = "refuse"
            elif base.fallback_for(tool) == "refuse":
                refused(f"fallback.{tool}")
    if "limits" in fields:
        for name in layer.limits.model_fields_set:
            values["limits"][name] = min(getattr(base.limits, name), getattr(layer.limits, name))
    return SandboxSettings.model_validate(values)


def _tighten_network(
    base: SandboxSettings, layer: SandboxSettings, values: dict[str, Any], refused: Any
) -> None:
    net = layer.network.model_fields_set if "network" in layer.model_fields_set else set()
    if "allowed_domains" in net:
        wanted = set(layer.network.allowed_domains)
        if wanted - set(base.network.allowed_domains):
            refused("network.allowedDomains")
        values["network"]["allowed_domains"] = [
            d for d in base.network.allowed_domains if d in wanted
        ]
    if "allow_local_binding" in net:
        if not layer.network.allow_local_binding:
            values["network"]["allow_local_binding"] = False
        elif not base.network.allow_local_binding:
            refused("network.allowLocalBinding")
