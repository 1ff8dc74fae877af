"""The LSP host's own code-intelligence source: the editor bridge (`agentls/editorQuery`).

The runtime puts it before agentls's own language servers (`agentls.runtime`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agentls.codeintel.settings import DEFAULT_EDITOR_TIMEOUT, EditorQuerySettings

if TYPE_CHECKING:
    from agentls.codeintel.sources import CodeSource
    from agentls.lsp.contract import Connection

log = logging.getLogger(__name__)


def editor_code_sources(ls: Connection) -> list[CodeSource]:
    """Source 1, the editor (when it announced `agentls/editorQuery`); the runtime adds
    agentls's own language servers after it (`agentls.runtime.code_sources`)."""
    from agentls.lsp.editor_queries import EditorQuerySource, announced

    methods = announced(ls.initialization_options, ls.client_capabilities)

    def editor_settings() -> EditorQuerySettings:
        timeout = ls.config.current.editor_query_timeout or DEFAULT_EDITOR_TIMEOUT
        return EditorQuerySettings(methods, timeout)

    return [EditorQuerySource(ls, editor_settings)]
