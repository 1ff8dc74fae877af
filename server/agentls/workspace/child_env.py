"""The settings' `env`: variables every command agentls runs for the agent gets.

Claude Code's `env` key (and ours) applies to commands, hooks and MCP servers. Hooks and
MCP servers get it from the host directly; commands (`run_command`, `run_tests`, `lint`)
find it here, on the workspace, set by the host whenever the settings are (re)loaded.
What it may contain was decided when the settings were merged (a project cannot set
`PATH` or `LD_PRELOAD`; the agent's credentials are never in it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from agentls.workspace.core import Attachment, Workspace

__all__ = ["child_env_of", "use_child_env"]

_CHILD_ENV: Final = Attachment[dict[str, str]]("environment for commands")


def use_child_env(workspace: Workspace, env: Mapping[str, str]) -> None:
    workspace.attach(_CHILD_ENV, dict(env))


def child_env_of(workspace: Workspace) -> dict[str, str]:
    """The variables to add to a command's (scrubbed) environment."""
    found: dict[str, str] = workspace.attached(_CHILD_ENV, dict)
    return dict(found)
