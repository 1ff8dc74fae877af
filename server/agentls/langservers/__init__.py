"""Language servers agentls runs itself (source 2 of code intelligence), with pygls's client.

Kept out of the core: the core reaches it only through the `CodeSource` port, which the
host injects (`agentls.lsp.code_intel`). Every process starts through
`spawn_language_server`.
"""

from agentls.langservers.pool import LanguageServerPool
from agentls.langservers.spawn import SpawnedServer, spawn_language_server

__all__ = ["LanguageServerPool", "SpawnedServer", "spawn_language_server"]
