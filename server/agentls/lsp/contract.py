"""`Connection`: what the LSP handlers use of one connection, as a Protocol.

The handlers (`agentls.lsp.actions`, `sync`, `symbols`, `delivery`, …) adapt the protocol
to the runtime (`agentls.runtime.AgentRuntime`) and its host; they name this small
interface, never the concrete `agentls.lsp.connection.Connection` (the pygls
server that carries the connection's state). Only `agentls.lsp.server` (which builds the
server and registers the features) and `agentls.lsp.serve` (which runs it on a
transport) know that class; tests/test_lsp_layering.py holds the handlers to it, and mypy
checks in `agentls.lsp.server` that the concrete class satisfies this Protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from lsprotocol import types
    from pygls.progress import Progress
    from pygls.workspace import TextDocument
    from pygls.workspace import Workspace as EditorWorkspace

    from agentls.agent.safety import Safety
    from agentls.host import AgentHost
    from agentls.lsp.capabilities import ClientFeatures
    from agentls.lsp.protocol import AgentProtocol
    from agentls.runtime.config_state import ConfigState
    from agentls.runtime.runtime import AgentRuntime
    from agentls.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])


class Connection(Protocol):
    """One editor connection: its runtime and host, its settings, its open documents, and
    the few requests the handlers send the client."""

    protocol: AgentProtocol
    features: ClientFeatures
    """What the client supports (`agentls.lsp.capabilities`)."""
    initialization_options: Any
    ready: asyncio.Event
    open_uris: dict[Path, str]
    watch_task: asyncio.Task[None] | None

    # -- registration (only `agentls.lsp.server.create_server` calls the `setup`s) --------

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]: ...

    def command(self, command_name: str) -> Callable[[F], F]: ...

    # -- the agent's side -----------------------------------------------------------------

    @property
    def config(self) -> ConfigState: ...

    @property
    def runtime(self) -> AgentRuntime: ...

    @runtime.setter
    def runtime(self, value: AgentRuntime) -> None: ...

    @property
    def safety(self) -> Safety | None: ...

    @property
    def host(self) -> AgentHost: ...

    @host.setter
    def host(self, value: AgentHost) -> None: ...

    @property
    def has_host(self) -> bool: ...

    async def wait_ready(self, seconds: float = ...) -> AgentHost: ...

    @property
    def agent_workspace(self) -> Workspace: ...

    @agent_workspace.setter
    def agent_workspace(self, value: Workspace) -> None: ...

    @property
    def has_workspace(self) -> bool: ...

    async def wait_workspace(self, seconds: float = ...) -> Workspace: ...

    def roots(self) -> list[Path]: ...

    # -- the editor's side ----------------------------------------------------------------

    @property
    def workspace(self) -> EditorWorkspace: ...

    @property
    def work_done_progress(self) -> Progress: ...

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...

    def open_document(self, uri: str) -> TextDocument | None: ...

    def message(self, kind: types.MessageType, text: str) -> None: ...

    def report_problems(self, problems: list[str]) -> None: ...

    def log_line(self, text: str, kind: types.MessageType = ...) -> None: ...

    async def window_show_message_request_async(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None: ...

    async def window_show_document_async(
        self, params: types.ShowDocumentParams
    ) -> types.ShowDocumentResult: ...

    async def workspace_apply_edit_async(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult: ...

    async def workspace_configuration_async(
        self, params: types.ConfigurationParams
    ) -> Sequence[Any | None]: ...

    async def client_register_capability_async(self, params: types.RegistrationParams) -> None: ...
