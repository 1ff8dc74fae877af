"""`ToolServices`: the one typed services object of a workspace, as `ToolContext.services`.

Why: tools used to look each service up by key on the workspace (`sandbox_of(ctx.workspace)`,
`skills_of(...)`, `agents_for(...)`, `code_intel_for(...)`, …) — a service locator beside the
one typed object a tool gets. Now a tool names what it uses on its context
(`ctx.services.sandbox`), and the type says what it is, as pydantic-ai's `RunContext.deps`
does.

The runtime builds one per workspace (`agentls.runtime.AgentRuntime.services`) and sets
what the settings and the host give: the sandbox's settings, the code-intelligence sources,
the skills, the sub-agent types, the `lint` / `tests` settings of the checks. `AgentHost`
passes it to every session and direct call, and the session to each `ToolContext`. The
services of `workspace/`'s own layer (secrets, read roots, environment, the editor's files
and terminal) stay typed fields of `Workspace.services` and are read here through it.

The object is changed field by field on a settings reload, so a run already going reads
the current values, as before. A field nobody set is made with its defaults on first use
(a context a test or script makes on its own: sandbox on, no skills, the index alone).
`Attachment` keys are for caches only (the symbol index, shadow copies, the web cache).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.workspace import Workspace

if TYPE_CHECKING:
    from agentls.agent.claude.skills import SkillCatalog
    from agentls.agent.claude.subagents import AgentCatalog
    from agentls.codeintel.service import CodeIntel
    from agentls.config.checks import LintEntry, TestEntry  # pydantic: not at start-up
    from agentls.sandbox import SandboxService
    from agentls.workspace.editor_files import EditorFiles
    from agentls.workspace.secrets import SecretMatcher
    from agentls.workspace.terminals import HostTerminal

__all__ = ["CheckTools", "ToolServices"]


def _nothing_denied(name: str) -> bool:
    del name
    return False


@dataclass(frozen=True)
class CheckTools:
    """The `lint` and `tests` settings the checks after an edit and before review run with,
    as the runtime built the tools from them."""

    lint: tuple[LintEntry, ...] = ()
    tests: tuple[TestEntry, ...] = ()
    denied: Callable[[str], bool] = _nothing_denied
    """Tools a blanket deny rule hides from the model: the checks do not run them either."""


class ToolServices:
    """The services of one workspace (see the module docstring)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    # -- set by the runtime (defaults until it does) --------------------------------------

    @cached_property
    def sandbox(self) -> SandboxService:
        """Where a call's processes run (`place`) and their confinement; its `config` is
        the `sandbox` settings (the defaults, sandbox on, until the runtime sets them)."""
        from agentls.sandbox import SandboxService

        return SandboxService()

    @cached_property
    def code_intel(self) -> CodeIntel:
        """Code intelligence: the host's sources (editor, language servers), then the index
        (the index alone until the host gives sources)."""
        from agentls.codeintel.service import CodeIntel

        return CodeIntel(self.workspace)

    @cached_property
    def skills(self) -> SkillCatalog:
        """The skills the `skill` tool loads and `read_file` may read (none until set)."""
        from agentls.agent.claude.skills import SkillCatalog

        return SkillCatalog()

    @cached_property
    def agents(self) -> AgentCatalog:
        """The sub-agent types `task` offers (`.claude/agents`, built-ins)."""
        from agentls.agent.claude.subagents import AgentCatalog

        return AgentCatalog(list(self.workspace.roots))

    @cached_property
    def check_tools(self) -> CheckTools:
        """The `lint` / `tests` settings of the checks (none until the runtime sets them)."""
        return CheckTools()

    def made(self, name: str) -> bool:
        """Whether the service `name` was set or made (status and shutdown must not make
        one: a code-intelligence service made then would start nothing but cost an import)."""
        return name in vars(self)

    def close(self) -> None:
        """Stop what the services run that has no handshake (the sandbox's proxies; the
        language servers when they were not closed properly): server shutdown."""
        for name in ("sandbox", "code_intel"):
            service = vars(self).get(name)
            if service is not None:
                service.close()

    # -- `Workspace.services`: the settings-made services of `workspace/`'s layer ---------

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
