"""`HostBridge`: what a host lends its MCP servers, without importing the MCP SDK.

Hosts build one before any server is configured or started; keeping it apart from
`agentls.mcp.connection` lets a workspace without MCP servers never import the SDK (its
import takes most of a second; issue 33).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentls.mcp import elicitation


def _no_roots() -> Sequence[Path]:
    return ()


def _process_environment() -> Mapping[str, str]:
    return os.environ


@dataclass
class HostBridge:
    """What the host lends its MCP servers; the defaults suit a host with no user at hand.

    `roots` are the workspace folders (the MCP `roots` capability); `questions` asks the
    user (elicitation, and opening an OAuth sign-in page), None when nobody can answer, in
    which case elicitation is not offered to servers; `environment` is the base
    environment of stdio servers (before their own `env` entry).
    """

    roots: Callable[[], Sequence[Path]] = _no_roots
    questions: elicitation.QuestionPort | None = None
    environment: Callable[[], Mapping[str, str]] = _process_environment
    oauth_folder: Path | None = field(default=None)
    """Where OAuth tokens are kept (default: the user config folder; tests)."""
