"""What `agentls doctor` says about language servers: found or not, and why not."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from agentls.codeintel.discovery import all_plans
from agentls.codeintel.settings import LanguageServerSettings

Verdict = tuple[str, Literal["ok", "info"], str]
"""(name, status, detail) for one doctor line."""


def language_server_lines(workspace: Path, settings: LanguageServerSettings) -> list[Verdict]:
    """One line per server: the languages it serves and where it was found, or why none."""
    by_server: dict[tuple[str, ...] | str, list[str]] = {}
    plans = all_plans([workspace], settings)
    for plan in plans:
        key: tuple[str, ...] | str = plan.argv or f"missing:{plan.name or plan.language}"
        by_server.setdefault(key, []).append(plan.language)
    lines: list[Verdict] = []
    seen: set[tuple[str, ...] | str] = set()
    for plan in plans:
        key = plan.argv or f"missing:{plan.name or plan.language}"
        if key in seen:
            continue
        seen.add(key)
        languages = ", ".join(by_server[key])
        name = plan.name or languages
        if plan.argv is not None:
            lines.append((name, "ok", f"{languages}: {plan.argv[0]} ({plan.origin})"))
        else:
            lines.append((name, "info", f"{languages}: {plan.problem}"))
    lines.append(_sandbox_line())
    return lines


def _sandbox_line() -> Verdict:
    """Whether the servers above would run in the sandbox (`agentls.langservers.sandboxed`)."""
    from agentls.sandbox.availability import probe

    found = probe()
    if found.backend == "bwrap":
        return (
            "sandbox",
            "ok",
            "headless servers run in bubblewrap: workspace read-only, network off "
            "(unless `sandbox.enabled` is false)",
        )
    return ("sandbox", "info", f"headless servers run unsandboxed: {found.reason or found.backend}")
