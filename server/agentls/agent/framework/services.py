"""`ToolServices`: the typed services a tool may use, as `ToolContext.services`.

Why: tools used to look each service up by key on the workspace (`sandbox_of(ctx.workspace)`,
`secrets_for(...)`, `host_terminal_of(...)`, …) — a service locator beside the one typed
object a tool gets. Now a tool names what it uses on its context (`ctx.services.sandbox`),
and the type says what it is, as pydantic-ai's `RunContext.deps` does.

What the services are is the runtime's to supply (`agentls.runtime.AgentRuntime` applies
the settings: secrets, read roots, environment, sandbox; a host's ports give the editor's
files and terminal; the host's code sources make code intelligence). Each property reads
what is current, so a settings reload reaches a run already going, as before. `Attachment`
keys stay for caches (the symbol index, shadow copies, the web cache) and as this view's
storage per workspace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.workspace import Workspace

if TYPE_CHECKING:
    from agentls.codeintel.service import CodeIntel
    from agentls.sandbox import SandboxService
    from agentls.workspace.editor_files import EditorFiles
    from agentls.workspace.secrets import SecretMatcher
    from agentls.workspace.terminals import HostTerminal

__all__ = ["ToolServices"]


@dataclass(frozen=True)
class ToolServices:
    """The services of one workspace, as the runtime set them up (see the module
    docstring). Made per context; cheap: nothing is built until a property is read."""

    workspace: Workspace

    @property
    def sandbox(self) -> SandboxService:
        """Where a call's processes run (`place`) and their confinement."""
        from agentls.sandbox import sandbox_of

        return sandbox_of(self.workspace)

    @property
    def secrets(self) -> SecretMatcher:
        """The secret-file rules (the `secrets` setting, or the defaults)."""
        return self.workspace.services.secrets

    @property
    def read_roots(self) -> tuple[Path, ...]:
        """Folders outside the workspace the read tools may reach (`additionalDirectories`)."""
        return self.workspace.services.read_roots

    @property
    def environment(self) -> Mapping[str, str]:
        """The settings' `env` for the commands tools start."""

        return dict(self.workspace.services.environment)

    @property
    def editor_files(self) -> EditorFiles | None:
        """The editor's files, for editors that answer only when asked (ACP); None when
        the editor pushes its buffers (LSP)."""
        return self.workspace.services.editor_files

    @property
    def terminal(self) -> HostTerminal | None:
        """The editor's terminal for `run_command` in the real tree (ACP), or None."""
        return self.workspace.services.terminal

    @property
    def code_intel(self) -> CodeIntel:
        """Code intelligence: the host's sources (editor, language servers), then the index."""
        from agentls.codeintel.service import code_intel_for

        return code_intel_for(self.workspace)
