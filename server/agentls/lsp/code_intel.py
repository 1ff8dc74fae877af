"""The LSP host's code-intelligence sources: the editor bridge, then agentls's own servers.

Settings are read per query, so a `workspace/didChangeConfiguration` that changes
`languageServers` restarts the affected server on its next use. A project file's
`languageServers` (and the project's own executables found by discovery) are used only
once the workspace is trusted (`agentls.agent.trust`; never with `trustProjectSettings:
false`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agentls.codeintel.settings import (
    DEFAULT_EDITOR_TIMEOUT,
    EditorQuerySettings,
    LanguageServerSettings,
)

if TYPE_CHECKING:
    from agentls.codeintel.sources import CodeSource
    from agentls.lsp.server import AgentLanguageServer
    from agentls.workspace import Workspace

log = logging.getLogger(__name__)


def code_sources(ls: AgentLanguageServer, workspace: Workspace) -> list[CodeSource]:
    """Source 1 (the editor, when it announced `agentls/editorQuery`) and source 2."""
    from agentls.langservers import LanguageServerPool
    from agentls.lsp.editor_queries import EditorQuerySource, announced

    methods = announced(ls.initialization_options, ls.client_capabilities)
    settings = _SettingsReader(ls)

    def editor_settings() -> EditorQuerySettings:
        timeout = ls.config.current.editor_query_timeout or DEFAULT_EDITOR_TIMEOUT
        return EditorQuerySettings(methods, timeout)

    return [
        EditorQuerySource(ls, editor_settings),
        LanguageServerPool(workspace, settings.language_servers),
    ]


class _SettingsReader:
    """`LanguageServerSettings` from the layered configuration, parsed when it changes."""

    def __init__(self, ls: AgentLanguageServer) -> None:
        self.ls = ls
        self._key: str | None = None
        self._value = LanguageServerSettings()

    def language_servers(self) -> LanguageServerSettings:
        config = self.ls.config
        user = config.editor.settings.language_servers
        project = config.project_source.settings.language_servers
        trust = config.project_trusted  # workspace trust (agentls.lsp.trust)
        key = repr((user, project, trust))
        if key != self._key:
            self._key = key
            self._value = LanguageServerSettings.merge(user, project, trust_project=trust)
        return self._value
