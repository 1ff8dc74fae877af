"""The editor's terminal as a place to run commands, for hosts whose editor offers one.

ACP clients can run a command in a terminal of their own (`terminal/create`) and show it to
the user live. Such a terminal runs on the editor's side: as the user, in the real tree,
with the editor's environment, outside our sandbox and process runner. So it is used only
where a command would run that way anyway: `run_command` configured to run in the real
workspace (`runCommand.where: "workspace"`), where every call asks the user first. A
sandboxed command (the default) always runs in our own process runner.

A host gives the runtime a `HostTerminal` (`HostPorts.terminal`, set on
`Workspace.services.terminal`; the tool reads `ToolContext.services.terminal`); the tool then
hands it the command and formats the `ProcessResult` it gets back like its own runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentls.workspace.process import ProcessResult

__all__ = ["HostTerminal", "TerminalCommand"]


@dataclass(frozen=True)
class TerminalCommand:
    """One command for the editor's terminal."""

    session_id: str
    tool_use_id: str
    command: str
    """The shell command line, as the user approved it."""
    argv: tuple[str, ...]
    """What to start: the shell and its arguments (`bash -c COMMAND`)."""
    cwd: Path
    timeout: float
    """Seconds before the command is killed."""
    max_output_bytes: int
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables to add to the terminal's environment (e.g. the project's virtualenv)."""


class HostTerminal(Protocol):
    """Runs a command where the user sees it; returns when it exited or was killed.

    On timeout the command is killed and the result says `timed_out`; when the awaiting task
    is cancelled (the run was cancelled) the command is killed before the cancellation
    propagates. Raises `OSError` when the terminal cannot start the command."""

    async def run(self, command: TerminalCommand) -> ProcessResult: ...
