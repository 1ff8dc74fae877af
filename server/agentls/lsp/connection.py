"""The state of one LSP connection: `AgentLanguageServer`, the pygls server every handler gets.

It only carries per-connection state (configuration, the runtime and agent host, the
client's features) and knows no handler. The feature modules do not import it either:
they name `agentls.lsp.contract.Connection`, the Protocol of what they use, and
`agentls.lsp.server` builds this class and registers them on it (the way esbonio
assembles its server). So the package's
import graph has no cycle (tests/test_lsp_layering.py). Nothing here is module-level
mutable state, so tests and benchmarks can build as many servers as they like.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from agentls import __version__
from agentls.lsp.capabilities import ClientFeatures

if TYPE_CHECKING:
    from agentls.agent.safety import Safety
    from agentls.host import AgentHost
    from agentls.lsp.protocol import AgentProtocol
    from agentls.runtime.config_state import ConfigState
    from agentls.runtime.runtime import AgentRuntime
    from agentls.workspace import Workspace

log = logging.getLogger(__name__)


NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithNotebook(
            notebook=types.NotebookDocumentFilterNotebookType(notebook_type="jupyter-notebook")
        ),
        types.NotebookDocumentFilterWithNotebook(
            notebook=types.NotebookDocumentFilterPattern(pattern="**/*.ipynb")
        ),
    ],
    save=True,
)
"""Jupyter notebooks are synced as notebooks (VS Code): see `agentls.lsp.notebooks`."""


class NotReady(RuntimeError):
    """A request arrived before `initialize` set the workspace up."""


class AgentLanguageServer(LanguageServer):
    """pygls server plus the state one connection needs."""

    protocol: AgentProtocol

    def __init__(self) -> None:
        from agentls.lsp.protocol import AgentProtocol

        super().__init__(
            "agentls", __version__, protocol_cls=AgentProtocol, notebook_document_sync=NOTEBOOK_SYNC
        )
        self._config: ConfigState | None = None
        self.features = ClientFeatures()
        self._host: AgentHost | None = None
        self.initialization_options: Any = None
        self.ready = asyncio.Event()
        """Set once `initialized` has built the agent host (commands wait for it)."""
        self._runtime: AgentRuntime | None = None
        self.open_uris: dict[Path, str] = {}
        """Resolved path → the URI the editor opened it by (they can differ via symlinks)."""
        self.watch_task: asyncio.Task[None] | None = None
        """The disk poll, for clients that cannot watch files (see `agentls.lsp.watch`)."""
        self.workspace_ready = asyncio.Event()
        """Set once the agent's `Workspace` (and its symbol index) exists, before the host:
        symbol requests and document sync need only these (see `agentls.lsp.symbols`)."""
        self._workspace: Workspace | None = None

    @property
    def config(self) -> ConfigState:
        """The layered configuration (built on first use: pydantic is slow to import)."""
        if self._config is None:
            from agentls.runtime.config_state import ConfigState

            self._config = ConfigState()
        return self._config

    @property
    def runtime(self) -> AgentRuntime:
        """Builds every session part from the settings (`agentls.runtime`)."""
        if self._runtime is None:
            raise NotReady("the server is not initialized yet")
        return self._runtime

    @runtime.setter
    def runtime(self, value: AgentRuntime) -> None:
        self._runtime = value

    @property
    def safety(self) -> Safety | None:
        """The loaded permission rules and hooks (None before start-up or when they could
        not be loaded)."""
        return self._runtime.safety if self._runtime is not None else None

    @property
    def host(self) -> AgentHost:
        if self._host is None:
            raise NotReady("the server is not initialized yet")
        return self._host

    @host.setter
    def host(self, value: AgentHost) -> None:
        self._host = value

    @property
    def has_host(self) -> bool:
        return self._host is not None

    async def wait_ready(self, seconds: float = 60.0) -> AgentHost:
        """The host, once `initialized` has built it (requests may arrive earlier)."""
        if self._host is None:
            try:
                await asyncio.wait_for(self.ready.wait(), seconds)
            except TimeoutError:
                raise NotReady("the server did not finish starting; see its log") from None
        return self.host

    @property
    def agent_workspace(self) -> Workspace:
        if self._workspace is not None:
            return self._workspace
        return self.host.workspace

    @agent_workspace.setter
    def agent_workspace(self, value: Workspace) -> None:
        self._workspace = value
        self.workspace_ready.set()

    def open_document(self, uri: str) -> TextDocument | None:
        """The editor's open document for `uri`, or None. pygls keys documents by the
        unquoted URI while editors send percent-encoded ones (`my%20file.py`,
        `na%C3%AFve.py`); `get_text_document` is not used because it invents a document
        read from disk for a URI the editor never opened."""
        documents: dict[str, TextDocument] = self.workspace.text_documents
        return documents.get(unquote(uri))

    @property
    def has_workspace(self) -> bool:
        return self._workspace is not None or self._host is not None

    async def wait_workspace(self, seconds: float = 60.0) -> Workspace:
        """The agent's workspace, once `initialized` has made it (before the host)."""
        if not self.has_workspace:
            try:
                await asyncio.wait_for(self.workspace_ready.wait(), seconds)
            except TimeoutError:
                raise NotReady("the server did not finish starting; see its log") from None
        return self.agent_workspace

    def roots(self) -> list[Path]:
        """Workspace folders from the client, else its root URI, else the current directory."""
        roots: list[Path] = []
        for folder in self.workspace.folders.values():
            path = to_fs_path(folder.uri)
            if path:
                roots.append(Path(path))
        if not roots and self.workspace.root_path:
            roots.append(Path(self.workspace.root_path))
        return roots or [Path(os.getcwd())]

    def message(self, kind: types.MessageType, text: str) -> None:
        """Show a message to the user (and log it), never raising."""
        log.log(logging.WARNING if kind <= types.MessageType.Warning else logging.INFO, "%s", text)
        try:
            self.window_show_message(types.ShowMessageParams(type=kind, message=text))
        except Exception:
            log.exception("cannot show a message")

    def report_problems(self, problems: list[str]) -> None:
        """Settings problems (from start-up, a configuration change or the trust answer)
        as one warning; nothing when there are none."""
        if problems:
            self.message(types.MessageType.Warning, "agentls configuration: " + "; ".join(problems))

    def log_line(self, text: str, kind: types.MessageType = types.MessageType.Log) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=text))
        except Exception:
            log.exception("cannot send a log message")
