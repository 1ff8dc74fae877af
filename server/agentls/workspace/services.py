"""`WorkspaceServices`: the settings-made services of one workspace, as a typed field.

Why: these used to be `Attachment` keys set with `use_secrets`, `use_read_roots`,
`use_child_env`, `use_editor_files`, `use_host_terminal` and `set_checks`, and read with
`secrets_for`, `read_roots_of`, `checks_of`, … — a service locator beside the typed objects
code gets. Now the runtime (`agentls.runtime.AgentRuntime`) sets them on
`Workspace.services` from the settings and the host's ports, and every reader names the
field: `workspace.services.secrets`. Tools see them through `ToolContext.services`, the
workspace's `ToolServices` (`agentls.agent.framework.services`), which also holds the
services of layers above `workspace/` (sandbox, code intelligence, skills, sub-agent types,
the checks' tools). `Attachment` is for caches only (the symbol index, shadow copies, the
web cache, grep's file lists, background jobs).

The object is changed field by field on a settings reload, so a run already going reads
the current values, as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.workspace.editor_files import EditorFiles
from agentls.workspace.secrets import SecretMatcher
from agentls.workspace.terminals import HostTerminal

if TYPE_CHECKING:
    from agentls.config.checks import ChecksSettings  # pydantic: not imported at start-up

__all__ = ["WorkspaceServices"]


@dataclass
class WorkspaceServices:
    """What the settings and the host's ports give one workspace (see the module docstring)."""

    secrets: SecretMatcher
    """The secret-file rules (the `secrets` setting, or the defaults)."""
    read_roots: tuple[Path, ...] = ()
    """Folders outside the workspace the read tools may reach (`additionalDirectories`),
    resolved."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """The settings' `env` for the commands tools start."""
    editor_files: EditorFiles | None = None
    """The editor's files for editors that answer only when asked (ACP); None when the
    editor pushes its buffers (LSP)."""
    terminal: HostTerminal | None = None
    """The editor's terminal for `run_command` in the real tree (ACP), or None."""
    checks: ChecksSettings | None = None
    """The `checks` settings the write tools and the review apply after an edit; None
    until the runtime sets them (the defaults: `agentls.tools.after_edit.checks_settings`)."""

    @classmethod
    def defaults(cls, roots: Sequence[Path]) -> WorkspaceServices:
        """Before any settings are loaded: the default secret rules, nothing else."""
        return cls(secrets=SecretMatcher(roots=list(roots)))

    def set_read_roots(self, folders: Sequence[Path]) -> None:
        """The folders outside the workspace the read tools may reach (resolved)."""
        self.read_roots = tuple(dict.fromkeys(Path(os.path.realpath(f)) for f in folders))

    def set_environment(self, env: Mapping[str, str]) -> None:
        """The settings' `env` (copied: the settings object may change later)."""
        self.environment = dict(env)
