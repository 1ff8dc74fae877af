"""`OsConfinement`: what both OS sandbox backends are built from.

bubblewrap (`bwrap.py`, Linux) and Seatbelt (`seatbelt.py`, macOS) differ only in how they
turn a command into a confined launch; both are made from the same four parts, here, so
the service (`service.py`) builds either the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentls.sandbox.layout import Layout
from agentls.sandbox.network import ProxyPool
from agentls.sandbox.settings import SandboxSettings


@dataclass
class OsConfinement:
    """The parts of a backend: its program, the filesystem layout, the settings and the
    network proxies of allowed domains."""

    program: str
    """The sandbox program (`bwrap`, `sandbox-exec`) as found on PATH."""
    layout: Layout
    settings: SandboxSettings
    proxies: ProxyPool
