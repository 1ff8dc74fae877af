"""What `agentls doctor` says about language servers: found or not, and why not; and each
language the workspace has, with its server's state and the command that installs it."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Literal

from agentls.codeintel.discovery import ServerPlan, all_plans, plan_language
from agentls.codeintel.languages import known_server_named, known_servers_for, language_of
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


SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "env", "target", "build", "dist"})
MAX_FILES = 50_000
"""At most this many files are looked at to tell the workspace's languages."""


def languages_present(workspace: Path, limit: int = MAX_FILES) -> Counter[str]:
    """How many files of each language the workspace has (hidden, dependency and build
    folders skipped; the first `limit` files)."""
    counts: Counter[str] = Counter()
    seen = 0
    for _folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in files:
            language = language_of(name)
            if language is not None:
                counts[language.id] += 1
            seen += 1
            if seen >= limit:
                return counts
    return counts


def workspace_language_lines(
    workspace: Path, settings: LanguageServerSettings, trusted: bool
) -> list[Verdict]:
    """One line per language present in the workspace: its server's state and, when it
    is missing, the exact command that installs it."""
    lines: list[Verdict] = []
    for language, count in languages_present(workspace).most_common():
        plan = plan_language(language, [workspace], settings)
        files = f"{count} file{'s' if count != 1 else ''}"
        lines.append((language, *_state(plan, files, trusted)))
    return lines


def _state(plan: ServerPlan, files: str, trusted: bool) -> tuple[Literal["ok", "info"], str]:
    known = known_server_named(plan.name) if plan.name else None
    if plan.argv is not None:
        where = f"{plan.name} ({plan.argv[0]}, {plan.origin})"
        if known is not None and known.before_trust == "held back" and not trusted:
            return "info", f"{files}; {where}: held back until the workspace is trusted " \
                f"(it would run {known.loads})"  # fmt: skip
        return "ok", f"{files}; {where}: ready, starts on first use"
    candidates = known_servers_for(plan.language)
    if plan.config is not None or not candidates:
        return "info", f"{files}; {plan.problem}"
    installs = "; or ".join(f"`{s.install}`" for s in candidates)
    return "info", f"{files}; {candidates[0].name}: not installed. Install: {installs}"
