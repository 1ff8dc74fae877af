"""Headless language servers inside bubblewrap: the project read-only, the network off.

A language server reads the whole project and, once trusted, may load code from it (the
workspace's TypeScript, build scripts). Whatever it loads, inside the sandbox it sees:

- the system read-only (so the user's tools and the server itself run), the workspace
  roots read-only (agentls sends the agent's unsaved and staged edits as documents, so the
  server never needs to write there);
- no network (`--unshare-all`), a private `/tmp` and a private HOME inside it (caches such
  as TypeScript's typings go there and vanish with the server);
- nothing of what every sandboxed run hides: `~/.ssh`, cloud credentials, agentls's own
  folders, the home folder's secret files (`agentls.sandbox.layout`).

It follows the workspace's `sandbox.enabled` setting and runs where the sandbox can run
(bubblewrap on Linux); elsewhere the server runs unsandboxed with the restrictions of
`hardening.py` alone, and `agentls.status` says so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentls.sandbox import SandboxSettings
from agentls.sandbox.availability import probe
from agentls.sandbox.bwrap import bwrap_args, sandbox_env
from agentls.sandbox.layout import build_layout
from agentls.sandbox.network import NetworkPlan
from agentls.workspace.core import Workspace

__all__ = ["Confinement", "confine"]

HOME = Path("/tmp/agentls-langserver-home")
"""The server's HOME inside the sandbox (in its private /tmp)."""


@dataclass(frozen=True)
class Confinement:
    """How a server's command is wrapped: a prefix before its argv and environment."""

    prefix: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    why_not: str = ""
    """Why the server runs unsandboxed (empty when sandboxed)."""

    @property
    def sandboxed(self) -> bool:
        return bool(self.prefix)

    def describe(self) -> str:
        if self.sandboxed:
            return "bwrap (project read-only, network off)"
        return f"off: {self.why_not}"


def confine(workspace: Workspace, argv: Sequence[str], settings: SandboxSettings) -> Confinement:
    """The sandbox for a server started with `argv` in `workspace`, by the workspace's
    `sandbox` settings."""
    if not settings.enabled:
        return Confinement(why_not="the sandbox is switched off (`sandbox.enabled: false`)")
    found = probe()
    if found.backend != "bwrap":
        reason = found.reason or f"language servers are sandboxed with bwrap only ({found.backend})"
        return Confinement(why_not=reason)
    roots = [Path(r).resolve() for r in workspace.roots]
    programs = _program_folders(argv)
    layout = build_layout(
        roots=(),
        writable=(),
        home=HOME,
        cwd=roots[0] if roots else Path("/"),
        caches={},
        secrets=workspace.services.secrets,
        readable=programs,
    )
    # The roots and the server's own installation are shown read-only (they may sit under
    # /tmp, private in every run: a temporary cache of auto-installed servers).
    installs = [p.resolve() for p in programs if p.is_dir() and _under_tmp(p)]
    shown = tuple(dict.fromkeys([*layout.reexposed, *roots, *installs]))
    layout = replace(layout, reexposed=shown)
    args = [found.program, *bwrap_args(layout, NetworkPlan()), "--dir", str(HOME), "--"]
    env = sandbox_env({}, layout)
    return Confinement(tuple(args), env)


def _under_tmp(path: Path) -> bool:
    return path.resolve().is_relative_to("/tmp")


def _program_folders(argv: Sequence[str]) -> list[Path]:
    """The installation of each program in the command, shown even under a private folder
    (a server installed in a temporary virtualenv or tools folder)."""
    found: list[Path] = []
    for word in argv:
        if not os.path.isabs(word) or not os.path.exists(word):
            continue
        real = Path(os.path.realpath(word))
        node_modules = next((p for p in real.parents if p.name == "node_modules"), None)
        found.append(node_modules if node_modules is not None else real.parent.parent)
        found.append(Path(word).parent)
    found.append(Path(os.path.realpath(sys.executable)).parent.parent)
    return found
