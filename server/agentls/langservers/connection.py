"""One running language server, driven with pygls's `LanguageClient`.

The process comes from `spawn_language_server` (not from pygls's `start_io`), so the client
is attached to it here the way `start_io` does it. The connection answers the server's own
requests (configuration from the `settings` of `languageServers`, capability registration,
progress), keeps its published diagnostics, and turns a server that dies mid-request into
a clear error instead of a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, PyglsError
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

from agentls import __version__
from agentls.langservers.documents import Documents
from agentls.langservers.spawn import SpawnedServer

log = logging.getLogger(__name__)

SHUTDOWN_SECONDS = 3.0
_F = TypeVar("_F", bound=Callable[..., Any])


class ServerGone(Exception):
    """The server process exited (or its pipe closed) while a request was pending."""


class RequestTimeout(Exception):
    """The server did not answer in time (the request was cancelled)."""


class ServerError(Exception):
    """The server answered a request with an error."""


@attrs.define
class RawResult:
    """A JSON-RPC response whose `result` stays plain JSON (`request(raw=True)`)."""

    id: int | str
    jsonrpc: str
    result: Any = None


@dataclass
class Published:
    version: int | None
    items: list[types.Diagnostic]
    seq: int


@dataclass
class DiagnosticStore:
    """The last `publishDiagnostics` per URI, and waiters for newer ones."""

    by_uri: dict[str, Published] = field(default_factory=dict)
    seq: int = 0
    _waiters: list[tuple[str, Callable[[Published], bool], asyncio.Future[Published]]] = field(
        default_factory=list
    )

    def publish(self, uri: str, version: int | None, items: list[types.Diagnostic]) -> None:
        self.seq += 1
        published = self.by_uri[uri] = Published(version, items, self.seq)
        for waiter in list(self._waiters):
            want_uri, ready, future = waiter
            if want_uri == uri and not future.done() and ready(published):
                future.set_result(published)
                self._waiters.remove(waiter)

    async def wait(
        self, uri: str, ready: Callable[[Published], bool], seconds: float
    ) -> Published | None:
        current = self.by_uri.get(uri)
        if current is not None and ready(current):
            return current
        future: asyncio.Future[Published] = asyncio.get_running_loop().create_future()
        entry = (uri, ready, future)
        self._waiters.append(entry)
        try:
            return await asyncio.wait_for(future, seconds)
        except TimeoutError:
            return None
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)


_NOTEBOOK_FILTERS = (
    ("notebookType", types.NotebookDocumentFilterNotebookType),
    ("scheme", types.NotebookDocumentFilterScheme),
    ("pattern", types.NotebookDocumentFilterPattern),
)


def _converter() -> Any:
    """lsprotocol's converter, plus the notebook filter union it cannot structure (ruff's
    `initialize` result names one: without the hook the whole answer is rejected)."""
    converter = default_converter()  # type: ignore[no-untyped-call]

    def notebook_filter(value: Any, _: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        for key, kind in _NOTEBOOK_FILTERS:
            if isinstance(value, dict) and key in value:
                return converter.structure(value, kind)
        return value

    for owner in (types.NotebookDocumentFilterWithNotebook, types.NotebookDocumentFilterWithCells):
        converter.register_structure_hook(attrs.fields(owner).notebook.type, notebook_filter)
    return converter


class _Client(LanguageClient):
    def __init__(self, on_exit: Callable[[int | None], None]) -> None:
        super().__init__("agentls", __version__, converter_factory=_converter)
        self._on_exit = on_exit

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self._on_exit(server.returncode)

    def report_server_error(
        self, error: Exception, source: type[PyglsError] | type[JsonRpcException]
    ) -> None:
        log.warning("language server protocol error (%s): %s", source.__name__, error)


class LanguageServerConnection:
    """An initialized language server with its documents and diagnostics."""

    def __init__(
        self,
        name: str,
        spawned: SpawnedServer,
        roots: Sequence[Path],
        settings: dict[str, object] | None,
        on_exit: Callable[[int | None], None],
    ) -> None:
        self.name = name
        self.spawned = spawned
        self.roots = list(roots)
        self.settings = settings or {}
        self.exit_code: int | None = None
        self.exited = asyncio.Event()
        self._on_exit = on_exit
        self.client = _Client(self._exited)
        self.capabilities = types.ServerCapabilities()
        self.server_info_name = ""
        self.encoding = "utf-16"
        self.diagnostics = DiagnosticStore()
        self.documents = Documents(self.notify)
        self.ready = asyncio.Event()
        """Set when the server logs its readiness message (see `ready_log`)."""
        self.ready_log: re.Pattern[str] | None = None
        self.settled = False
        """Whether the first query's document was analysed (see `settle`)."""
        self.progress: set[str] = set()
        """Work-done tokens the server has begun and not ended (project loading, indexing)."""
        self.quiet = asyncio.Event()
        self.quiet.set()
        self._captured: list[types.WorkspaceEdit] | None = None
        self._register_handlers()
        self._attach()

    # -- start ----------------------------------------------------------------------------

    def _attach(self) -> None:
        """What pygls's `start_io` does after spawning, for a process spawned by us."""
        process = self.spawned.process
        assert process.stdin is not None
        assert process.stdout is not None
        client = self.client
        client.protocol.set_writer(process.stdin)
        reader = asyncio.get_running_loop().create_task(
            run_async(
                stop_event=client._stop_event,
                reader=process.stdout,
                protocol=client.protocol,
                logger=log,
                error_handler=client.report_server_error,
            )
        )
        watcher = asyncio.get_running_loop().create_task(client._server_exit())  # type: ignore[no-untyped-call]
        client._server = process
        client._async_tasks.extend([reader, watcher])

    async def initialize(
        self, initialization_options: Any, seconds: float
    ) -> types.InitializeResult:
        folders = [types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in self.roots]
        params = types.InitializeParams(
            process_id=None,
            root_uri=self.roots[0].as_uri() if self.roots else None,
            root_path=str(self.roots[0]) if self.roots else None,
            capabilities=client_capabilities(),
            client_info=types.ClientInfo(name="agentls", version=__version__),
            workspace_folders=folders,
            initialization_options=initialization_options,
        )
        result = await self.request(types.INITIALIZE, params, seconds)
        assert isinstance(result, types.InitializeResult)
        self.capabilities = result.capabilities
        encoding = result.capabilities.position_encoding
        self.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
        if result.server_info is not None:
            self.server_info_name = result.server_info.name
        self.notify(types.INITIALIZED, types.InitializedParams())
        if self.settings:
            self.notify(
                types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                types.DidChangeConfigurationParams(settings=self.settings),
            )
        return result

    # -- messages -------------------------------------------------------------------------

    def notify(self, method: str, params: object) -> None:
        if self.exit_code is not None or self.spawned.process.returncode is not None:
            return
        try:
            self.client.protocol.notify(method, params)
        except Exception as exc:  # a closed pipe: the exit watcher reports the crash
            log.info("%s: cannot send %s: %s", self.name, method, exc)

    async def request(
        self, method: str, params: object, seconds: float, *, raw: bool = False
    ) -> Any:
        """Send a request; `ServerGone`, `RequestTimeout` or `ServerError` on failure.
        `raw`: the result as plain JSON (lsprotocol's structuring of some results is wrong:
        it turns a code action that has a `command` into a bare `Command`)."""
        if self.exit_code is not None:
            raise ServerGone(self._exit_text())
        msg_id = str(uuid.uuid4())
        try:
            future = self.client.protocol.send_request_async(method, params, msg_id=msg_id)
            if raw:
                self.client.protocol._result_types[msg_id] = RawResult
        except Exception as exc:
            raise ServerGone(f"cannot write to the server ({exc})") from None
        gone = asyncio.ensure_future(self.exited.wait())
        try:
            done, _ = await asyncio.wait(
                {future, gone}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            gone.cancel()
        if future in done:
            try:
                return future.result()
            except JsonRpcException as exc:
                raise ServerError(str(exc)) from None
            except RuntimeError:  # pygls: "Server process … exited with return code …"
                await self._settle_exit()
                raise ServerGone(self._exit_text()) from None
        if self.exit_code is not None or gone.done():
            future.cancel()
            raise ServerGone(self._exit_text())
        future.cancel()
        self.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        raise RequestTimeout(f"{method} got no answer within {seconds:.0f} s")

    async def _settle_exit(self) -> None:
        """pygls fails pending requests just before it reports the exit: wait for it."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.exited.wait(), 2.0)

    async def settle(self, uri: str, seconds: float) -> None:
        """Once per server: wait until it has analysed the first document it was shown (its
        first `publishDiagnostics`) and finished the work it announced (project loading).
        Before that, servers like tsserver answer cross-file queries from a half-loaded
        project."""
        if self.settled or (self.ready_log is not None and self.ready.is_set()):
            return  # its readiness message already said the project is loaded
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        if self.capabilities.diagnostic_provider is None:  # a pull server never publishes
            await self.diagnostics.wait(uri, lambda published: True, seconds)
        await asyncio.sleep(0.05)  # a progress `begin` right after the publish
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.quiet.wait(), max(0.0, deadline - loop.time()))
        self.settled = True

    def _exited(self, code: int | None) -> None:
        self.exit_code = code if code is not None else -1
        self.exited.set()
        self._on_exit(code)

    def _exit_text(self) -> str:
        code = self.exit_code
        detail = self.spawned.last_error_line()
        if code is None:
            text = "its connection closed"
        else:
            text = f"exit code {code}" if code >= 0 else f"killed by signal {-code}"
        return f"{text}: {detail}" if detail else text

    # -- the server's requests ------------------------------------------------------------

    def _register_handlers(self) -> None:
        """Answer the language server's requests the way an editor without a UI would."""
        feature = cast(Callable[[str], Callable[[_F], _F]], self.client.feature)
        handlers: dict[str, Callable[..., Any]] = {  # functions: pygls marks what it registers
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: LanguageServerConnection._publish,
            types.PROGRESS: LanguageServerConnection._progress,
            types.WORKSPACE_CONFIGURATION: LanguageServerConnection._configuration,
            types.WORKSPACE_WORKSPACE_FOLDERS: LanguageServerConnection._folders,
            types.WORKSPACE_APPLY_EDIT: LanguageServerConnection._apply_edit,
            types.WINDOW_LOG_MESSAGE: LanguageServerConnection._log_message,
            types.WINDOW_SHOW_MESSAGE: LanguageServerConnection._show_message,
        }
        for method, handler in handlers.items():
            feature(method)(functools.partial(handler, self))
        for method in _ANSWERED_WITH_NULL:
            feature(method)(_null)
        for method in _IGNORED_NOTIFICATIONS:
            feature(method)(_ignore)

    def _publish(self, ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        self.diagnostics.publish(params.uri, params.version, list(params.diagnostics))

    def _progress(self, ls: LanguageClient, params: types.ProgressParams) -> None:
        value = params.value
        kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
        token = str(params.token)
        if kind == "begin":
            self.progress.add(token)
            self.quiet.clear()
        elif kind == "end":
            self.progress.discard(token)
            if not self.progress:
                self.quiet.set()

    def _configuration(self, ls: LanguageClient, params: types.ConfigurationParams) -> list[Any]:
        return [_section(self.settings, item.section) for item in params.items]

    def _folders(self, ls: LanguageClient, params: None) -> list[types.WorkspaceFolder]:
        return [types.WorkspaceFolder(uri=r.as_uri(), name=r.name) for r in self.roots]

    @contextlib.contextmanager
    def capturing_edits(self) -> Iterator[list[types.WorkspaceEdit]]:
        """While a code action's command runs: the server's `workspace/applyEdit` requests
        are collected (and answered as applied) so the agent can stage them."""
        captured: list[types.WorkspaceEdit] = []
        self._captured = captured
        try:
            yield captured
        finally:
            self._captured = None

    def _apply_edit(
        self, ls: LanguageClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        if self._captured is not None:
            self._captured.append(params.edit)
            return types.ApplyWorkspaceEditResult(applied=True)
        return types.ApplyWorkspaceEditResult(
            applied=False, failure_reason="agentls changes files only through the agent"
        )

    def _log_message(self, ls: LanguageClient, params: types.LogMessageParams) -> None:
        log.debug("%s: %s", self.name, params.message)
        if self.ready_log is not None and self.ready_log.search(params.message):
            self.ready.set()

    def _show_message(self, ls: LanguageClient, params: types.ShowMessageParams) -> None:
        log.info("%s says: %s", self.name, params.message)


def _null(ls: LanguageClient, params: Any) -> None:
    return None


def _ignore(ls: LanguageClient, params: Any) -> None:
    return None


_ANSWERED_WITH_NULL = (
    types.CLIENT_REGISTER_CAPABILITY,
    types.CLIENT_UNREGISTER_CAPABILITY,
    types.WINDOW_WORK_DONE_PROGRESS_CREATE,
    types.WINDOW_SHOW_MESSAGE_REQUEST,
    types.WINDOW_SHOW_DOCUMENT,
    types.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
    types.WORKSPACE_INLAY_HINT_REFRESH,
    types.WORKSPACE_CODE_LENS_REFRESH,
    types.WORKSPACE_DIAGNOSTIC_REFRESH,
    types.WORKSPACE_INLINE_VALUE_REFRESH,
    "_typescript.rename",  # after a refactoring: "start renaming the new function" (a UI step)
)
_IGNORED_NOTIFICATIONS = (types.TELEMETRY_EVENT, types.LOG_TRACE, "$/typescriptVersion")


def _section(settings: dict[str, object], section: str | None) -> Any:
    """`workspace/configuration`: the value at a dotted section of the settings (or None)."""
    if not section:
        return settings or None
    value: Any = settings
    for part in section.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def client_capabilities() -> types.ClientCapabilities:
    """What agentls's client does: versioned sync, pushed and pulled diagnostics, hover
    in markdown, location links, rename with document changes; UTF-16 or UTF-32 columns."""
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf32, types.PositionEncodingKind.Utf16]
        ),
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            workspace_folders=True,
            apply_edit=True,  # only while a code action's command runs (capturing_edits)
            execute_command=types.ExecuteCommandClientCapabilities(),
            did_change_configuration=types.DidChangeConfigurationClientCapabilities(),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            ),
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    types.ResourceOperationKind.Create,
                    types.ResourceOperationKind.Rename,
                    types.ResourceOperationKind.Delete,
                ],
            ),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=False),
            hover=types.HoverClientCapabilities(
                content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]
            ),
            definition=types.DefinitionClientCapabilities(link_support=True),
            references=types.ReferenceClientCapabilities(),
            rename=types.RenameClientCapabilities(prepare_support=False),
            document_symbol=types.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
            call_hierarchy=types.CallHierarchyClientCapabilities(),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=[k.value for k in types.CodeActionKind]
                    )
                ),
                is_preferred_support=True,
                disabled_support=True,
                data_support=True,
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]),
            ),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                version_support=True, related_information=False
            ),
            diagnostic=types.DiagnosticClientCapabilities(),
        ),
        window=types.WindowClientCapabilities(work_done_progress=True),
    )


async def close_connection(connection: LanguageServerConnection) -> None:
    """`shutdown` + `exit`, then end the process group if it lingers."""
    process = connection.spawned.process
    if process.returncode is None and connection.exit_code is None:
        try:
            await connection.request(types.SHUTDOWN, None, SHUTDOWN_SECONDS)
            connection.notify(types.EXIT, None)
        except (ServerGone, RequestTimeout, ServerError) as exc:
            log.info("%s did not shut down cleanly: %s", connection.name, exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), SHUTDOWN_SECONDS)
    connection.spawned.kill_group()
    connection.client._stop_event.set()
    for task in connection.client._async_tasks:
        task.cancel()
