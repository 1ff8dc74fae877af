"""Combining `sandbox` settings layers so that a project can only tighten them.

The model is `agentls.config.sandbox.SandboxSettings` (part of the settings tree); this
module is the merge the safety loader uses (`agentls.agent.safety`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pydantic import BaseModel, ValidationError

from agentls.config.sandbox import (
    DEFAULT_CACHES,
    FALLBACK_TOOLS,
    Fallback,
    SandboxLimits,
    SandboxNetwork,
    SandboxSettings,
)

__all__ = [
    "DEFAULT_CACHES",
    "FALLBACK_TOOLS",
    "Fallback",
    "SandboxLimits",
    "SandboxNetwork",
    "SandboxSettings",
    "merge_layers",
]


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


Refusal = Callable[[str], None]
"""Reports a project setting that would loosen the sandbox (the key, camelCase)."""


def _tighten(
    base: SandboxSettings, layer: SandboxSettings, label: str, problems: list[str]
) -> SandboxSettings:
    """Apply only the stricter parts of a project layer."""

    def refused(key: str) -> None:
        problems.append(
            f"{label}: `sandbox.{key}` would loosen the sandbox; a project can only tighten "
            "it (set it in your user settings instead); ignored"
        )

    values: dict[str, object] = {}
    network: dict[str, object] = {}
    limits: dict[str, int] = {}
    fallback: dict[str, Fallback] = dict(base.fallback)
    _tighten_commands(base, layer, values, refused)
    _tighten_network(base, layer, network, refused)
    _tighten_resources(base, layer, values, fallback, limits, refused)
    return SandboxSettings.model_validate(
        {
            **base.model_dump(),
            **values,
            "network": {**base.network.model_dump(), **network},
            "fallback": fallback,
            "limits": {**base.limits.model_dump(), **limits},
        }
    )


def _tighten_commands(
    base: SandboxSettings, layer: SandboxSettings, values: dict[str, object], refused: Refusal
) -> None:
    """`enabled`, `excludedCommands`, `allowUnsandboxedCommands`: which commands run inside."""
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


def _tighten_resources(
    base: SandboxSettings,
    layer: SandboxSettings,
    values: dict[str, object],
    fallback: dict[str, Fallback],
    limits: dict[str, int],
    refused: Refusal,
) -> None:
    """`caches`, `fallback`, `limits`: what a run may write to, fall back to and use."""
    fields = layer.model_fields_set
    if "caches" in fields:
        if set(layer.caches.items()) - set(base.caches.items()):
            refused("caches")
        values["caches"] = {k: v for k, v in base.caches.items() if layer.caches.get(k) == v}
    if "fallback" in fields:
        for tool, mode in layer.fallback.items():
            if mode == "refuse":
                fallback[tool] = "refuse"
            elif base.fallback_for(tool) == "refuse":
                refused(f"fallback.{tool}")
    if "limits" in fields:
        for name in layer.limits.model_fields_set:
            limits[name] = min(getattr(base.limits, name), getattr(layer.limits, name))


def _tighten_network(
    base: SandboxSettings, layer: SandboxSettings, network: dict[str, object], refused: Refusal
) -> None:
    net = layer.network.model_fields_set if "network" in layer.model_fields_set else set()
    if "allowed_domains" in net:
        wanted = set(layer.network.allowed_domains)
        if wanted - set(base.network.allowed_domains):
            refused("network.allowedDomains")
        network["allowed_domains"] = [d for d in base.network.allowed_domains if d in wanted]
    if "allow_local_binding" in net:
        if not layer.network.allow_local_binding:
            network["allow_local_binding"] = False
        elif not base.network.allow_local_binding:
            refused("network.allowLocalBinding")
