"""Source 2: language servers agentls runs itself, one per language (or per shared command).

`LanguageServerPool` implements the core's `CodeSource`. It finds a server for a file's
language (`languageServers`, else discovery), starts it on the first query, keeps it warm,
restarts it after a crash (see `managed.py`) and stops every server with the workspace.
A server unused for `languageServerIdleTimeout` seconds is stopped, and while the servers
together use more than `languageServerMemoryBudget` MiB the least recently used one is
stopped (both start again on their next query; `agentls.status` says why they stopped).
Before each request the server is shown what the agent sees (`documents.py`); disk
changes the host reports are forwarded as `workspace/didChangeWatchedFiles`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types

from agentls.codeintel.autoinstall import InstallFailed, install
from agentls.codeintel.discovery import ServerPlan, all_plans, language_for_file, plan_language
from agentls.codeintel.languages import known_servers_for
from agentls.codeintel.model import (
    Answer,
    CallHierarchy,
    CodeAction,
    Diagnostic,
    Document,
    FileEdit,
    Location,
    Overlay,
    Pos,
    RenameResult,
    SourceFailed,
    Span,
    SymbolRange,
)
from agentls.codeintel.registry import KnownServer
from agentls.codeintel.settings import LanguageServerSettings
from agentls.codeintel.sources import Direction, Method
from agentls.langservers.connection import LanguageServerConnection, Published
from agentls.langservers.convert import Converter, Encoding, Lines
from agentls.langservers.hardening import harden
from agentls.langservers.managed import ManagedServer, Spawn
from agentls.langservers.operations import (
    call_hierarchy,
    code_action_params,
    code_actions,
    overlapping,
    symbols_of,
)
from agentls.langservers.sandboxed import confine
from agentls.langservers.spawn import spawn_language_server
from agentls.sandbox import SandboxService
from agentls.workspace.core import Workspace
from agentls.workspace.toolchain import venv_env

log = logging.getLogger(__name__)
T = TypeVar("T")
ConfirmInstall = Callable[[KnownServer], Awaitable[bool]]
"""Asked with the registry row before it is installed; True: install it."""

PLAN_TTL_SECONDS = 30.0
"""How long a "no server found" answer is kept before PATH is searched again."""
SETTLE_SECONDS = 30.0
"""How long a fresh server's first query waits for the project to be loaded."""
REAP_SECONDS = 30.0
"""How often idle servers and the memory budget are checked (at most)."""
DIAGNOSTICS_SETTLE_SECONDS = 0.15
"""After a version-less `publishDiagnostics`, how long to wait for a follow-up one."""
_PROVIDERS: dict[Method, str] = {
    "textDocument/definition": "definition_provider",
    "textDocument/references": "references_provider",
    "textDocument/hover": "hover_provider",
    "textDocument/rename": "rename_provider",
    "textDocument/implementation": "implementation_provider",
    "textDocument/typeDefinition": "type_definition_provider",
    "textDocument/prepareCallHierarchy": "call_hierarchy_provider",
    "textDocument/codeAction": "code_action_provider",
    "textDocument/documentSymbol": "document_symbol_provider",
}
_LOCATION_PARAMS = {
    "textDocument/implementation": types.ImplementationParams,
    "textDocument/typeDefinition": types.TypeDefinitionParams,
}


class LanguageServerPool:
    """The workspace's language servers, as a `CodeSource`."""

    kind = "language server"
    sees_staged = True

    def __init__(
        self,
        workspace: Workspace,
        settings: Callable[[], LanguageServerSettings] = LanguageServerSettings,
        spawn: Spawn = spawn_language_server,
        confirm_install: ConfirmInstall | None = None,
        sandbox: SandboxService | None = None,
    ) -> None:
        self.workspace = workspace
        self.sandbox = sandbox or SandboxService()
        """The workspace's sandbox (`ToolServices.sandbox`): its settings, read at each
        start, say whether a server runs sandboxed (the defaults: on)."""
        self._confirm_install = confirm_install
        """Asks the user before `languageServers.autoInstall` installs a server (None: the
        host cannot ask, so nothing is installed)."""
        self._declined: set[str] = set()
        self._settings = settings
        self._spawn = spawn
        self._servers: dict[str, ManagedServer] = {}
        """By server key (command and configuration)."""
        self._plans: dict[str, tuple[float, ServerPlan]] = {}
        self._plans_for: LanguageServerSettings | None = None
        self._retired: list[ManagedServer] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending_disk: set[Path] = set()
        self._unsubscribe = workspace.add_listener(self._workspace_changed)
        self._stopped_why: dict[str, str] = {}
        """By language: why its server was stopped (idle, memory budget), for status."""
        self._reaper: asyncio.TimerHandle | None = None

    # -- which server ---------------------------------------------------------------------

    def _current_settings(self) -> LanguageServerSettings:
        settings = self._settings()
        if settings != self._plans_for:
            self._plans.clear()
            self._plans_for = settings
        return settings

    def plan_for(self, path: Path) -> ServerPlan | None:
        settings = self._current_settings()
        language = language_for_file(path, settings)
        if language is None:
            return None
        cached = self._plans.get(language)
        now = time.monotonic()
        if cached is not None and (
            cached[1].argv is not None or now - cached[0] < PLAN_TTL_SECONDS
        ):
            return cached[1]
        plan = plan_language(language, self.workspace.roots, settings)
        self._plans[language] = (now, plan)
        return plan

    def covers(self, path: Path, method: Method) -> bool:
        plan = self.plan_for(path)
        if plan is None or plan.argv is None:
            return False
        server = self._servers.get(_key(plan, self._settings().trust_project))
        connection = server.connection if server is not None else None
        if connection is not None and connection.exit_code is None and method in _PROVIDERS:
            return bool(getattr(connection.capabilities, _PROVIDERS[method], None))
        return True

    async def _auto_install(self, path: Path) -> None:
        """With `languageServers.autoInstall`, a missing npm/PyPI server of the registry is
        installed into agentls's cache once the user agreed (asked once per language)."""
        settings = self._current_settings()
        if not settings.auto_install or self._confirm_install is None:
            return
        plan = self.plan_for(path)
        if plan is None or plan.argv is not None or plan.config is not None:
            return
        if plan.language in self._declined:
            return
        candidates = [
            s for s in known_servers_for(plan.language) if s.install_spec.auto_installable
        ]
        if not candidates:
            return
        server = candidates[0]
        if not await self._confirm_install(server):
            self._declined.add(plan.language)
            return
        try:
            await asyncio.to_thread(install, server)
        except InstallFailed as exc:
            raise SourceFailed(f"Installing {server.name} failed: {exc}") from None
        self._plans.pop(plan.language, None)

    def _server(self, path: Path) -> ManagedServer:
        plan = self.plan_for(path)
        if plan is None or plan.argv is None:
            raise SourceFailed(f"No language server for {self.workspace.display(path)}.")
        key = _key(plan, self._settings().trust_project)
        server = self._servers.get(key)
        if server is None:
            self._retire_replaced(plan)
            trusted = self._settings().trust_project
            roots = self.workspace.roots
            # Before trust the project's virtualenv is not activated for the server: pyright
            # would run its interpreter (hardening.py says what else is held back).
            extra_env = venv_env(roots) if trusted else {}
            server = ManagedServer(
                plan,
                roots,
                self._spawn,
                extra_env,
                hardening=harden(plan, trusted, roots),
                confinement=confine(self.workspace, plan.argv, self.sandbox.settings),
                max_restarts=self._settings().max_restarts,
            )
            self._servers[key] = server
        server.languages.add(plan.language)
        server.last_used = time.monotonic()
        self._stopped_why.pop(plan.language, None)
        self._loop = asyncio.get_running_loop()
        self._schedule_reaper()
        return server

    # -- idle time and memory budget ------------------------------------------------------

    def _schedule_reaper(self) -> None:
        if self._reaper is not None:
            return
        idle = self._settings().idle_timeout
        every = min(REAP_SECONDS, idle / 2) if idle > 0 else REAP_SECONDS
        loop = asyncio.get_running_loop()
        self._reaper = loop.call_later(every, self._reap)

    def _reap(self) -> None:
        """Stop idle servers and, over the memory budget, the least recently used ones."""
        self._reaper = None
        settings = self._settings()
        now = time.monotonic()
        running = [s for s in self._servers.values() if s.running and not s.gate.locked()]
        if settings.idle_timeout > 0:
            for server in running:
                if now - server.last_used >= settings.idle_timeout:
                    idle = f"unused for {settings.idle_timeout:.0f} s (languageServerIdleTimeout)"
                    self._stop(server, idle)
        if settings.memory_budget_mb > 0:
            self._keep_budget(settings.memory_budget_mb)
        if any(s.running for s in self._servers.values()):
            self._schedule_reaper()

    def _keep_budget(self, budget_mb: int) -> None:
        running = sorted(
            (s for s in self._servers.values() if s.running), key=lambda s: s.last_used
        )
        sizes = {id(s): s.rss_mb() for s in running}
        total = sum(sizes.values())
        for server in running[:-1]:  # the most recently used one always stays
            if total <= budget_mb:
                return
            total -= sizes[id(server)]
            self._stop(
                server,
                f"over the memory budget of {budget_mb} MiB (languageServerMemoryBudget): "
                f"the least recently used server ({sizes[id(server)]:.0f} MiB)",
            )

    def _stop(self, server: ManagedServer, why: str) -> None:
        log.info("stopping %s: %s", server.name, why)
        for key, found in list(self._servers.items()):
            if found is server:
                del self._servers[key]
        for language in server.languages:
            self._stopped_why[language] = f"stopped: {why}; starts again on its next query"
        self._retired.append(server)
        asyncio.get_running_loop().create_task(server.stop())

    def _retire_replaced(self, plan: ServerPlan) -> None:
        """A language got a different server (settings changed): stop the old one."""
        for key, server in list(self._servers.items()):
            if plan.language in server.languages:
                server.languages.discard(plan.language)
                if not server.languages:
                    del self._servers[key]
                    self._retired.append(server)
                    asyncio.get_running_loop().create_task(server.stop())

    # -- queries --------------------------------------------------------------------------

    async def definition(
        self, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]] | None:
        async def ask(server: ManagedServer, conv: Converter) -> Answer[list[Location]]:
            params = types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri()),
                position=conv.position(doc.path, pos),
            )
            result = await server.request(types.TEXT_DOCUMENT_DEFINITION, params, "the definition")
            return Answer(conv.locations(result), self._label(server))

        return await self._query(doc, overlay, "textDocument/definition", ask)

    async def references(
        self, doc: Document, pos: Pos, overlay: Overlay, include_declaration: bool
    ) -> Answer[list[Location]] | None:
        async def ask(server: ManagedServer, conv: Converter) -> Answer[list[Location]]:
            params = types.ReferenceParams(
                context=types.ReferenceContext(include_declaration=include_declaration),
                text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri()),
                position=conv.position(doc.path, pos),
            )
            result = await server.request(types.TEXT_DOCUMENT_REFERENCES, params, "the references")
            return Answer(conv.locations(result), self._label(server))

        return await self._query(doc, overlay, "textDocument/references", ask)

    async def locations(
        self, method: Method, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]] | None:
        params_type = _LOCATION_PARAMS[method]

        async def ask(server: ManagedServer, conv: Converter) -> Answer[list[Location]]:
            params = params_type(
                text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri()),
                position=conv.position(doc.path, pos),
            )
            result = await server.request(method, params, method.rsplit("/", 1)[-1])
            return Answer(conv.locations(result), self._label(server))

        return await self._query(doc, overlay, method, ask)

    async def hover(self, doc: Document, pos: Pos, overlay: Overlay) -> Answer[str] | None:
        async def ask(server: ManagedServer, conv: Converter) -> Answer[str]:
            params = types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri()),
                position=conv.position(doc.path, pos),
            )
            result = await server.request(types.TEXT_DOCUMENT_HOVER, params, "hover")
            return Answer(conv.hover_text(result), self._label(server))

        return await self._query(doc, overlay, "textDocument/hover", ask)

    async def rename(
        self, doc: Document, pos: Pos, overlay: Overlay, new_name: str
    ) -> Answer[RenameResult] | None:
        async def ask(server: ManagedServer, conv: Converter) -> Answer[RenameResult]:
            params = types.RenameParams(
                text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri()),
                position=conv.position(doc.path, pos),
                new_name=new_name,
            )
            result = await server.request(types.TEXT_DOCUMENT_RENAME, params, "the rename")
            return Answer(conv.rename(result), self._label(server))

        return await self._query(doc, overlay, "textDocument/rename", ask)

    async def call_hierarchy(
        self, doc: Document, pos: Pos, overlay: Overlay, direction: Direction, depth: int
    ) -> Answer[CallHierarchy] | None:
        async def ask(server: ManagedServer, conv: Converter) -> Answer[CallHierarchy]:
            params = types.CallHierarchyPrepareParams(
                text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri()),
                position=conv.position(doc.path, pos),
            )
            found = await call_hierarchy(_requester(server), conv, params, direction, depth)
            if found is None:
                raise SourceFailed(
                    f"The language server {server.name} finds no function or method at that "
                    "position; give the name of a function (its definition or a call).",
                    final=True,
                )
            return Answer(found, self._label(server))

        return await self._query(doc, overlay, "textDocument/prepareCallHierarchy", ask)

    async def document_symbols(
        self, doc: Document, overlay: Overlay
    ) -> Answer[list[SymbolRange]] | None:
        async def ask(server: ManagedServer, conv: Converter) -> Answer[list[SymbolRange]]:
            params = types.DocumentSymbolParams(
                text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri())
            )
            raw = await server.request(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, params, "the symbols")
            return Answer(symbols_of(conv, doc.path, raw), self._label(server))

        return await self._query(doc, overlay, "textDocument/documentSymbol", ask)

    async def code_actions(
        self,
        doc: Document,
        span: Span,
        overlay: Overlay,
        only: str | None,
        apply: str | None,
    ) -> Answer[list[CodeAction]] | None:
        """The server's actions for `span`, told the diagnostics it reported there."""
        server = self._server(doc.path)
        async with server.gate:
            connection = await server.connect()
            if not connection.capabilities.code_action_provider:
                return None
            before = connection.diagnostics.seq
            version_before = connection.documents.version_of(doc.path)
            self._sync(server, connection, overlay, {doc.path: doc.text})
            await connection.settle(doc.path.as_uri(), SETTLE_SECONDS)
            converter = Converter(
                Encoding(connection.encoding), Lines({**overlay.texts, doc.path: doc.text})
            )
            rng = types.Range(
                converter.position(doc.path, span.start), converter.position(doc.path, span.end)
            )
            found = await self._raw_diagnostics(server, connection, doc, before, version_before)
            params = code_action_params(doc.path.as_uri(), rng, overlapping(found, rng))
            provider = connection.capabilities.code_action_provider
            can_resolve = bool(getattr(provider, "resolve_provider", False))

            async def execute(command: types.Command) -> RenameResult | str:
                return await _execute(server, connection, converter, command)

            actions = await code_actions(
                _requester(server), converter, params, only, apply, can_resolve, execute
            )
            return Answer(actions, self._label(server))

    async def _raw_diagnostics(
        self,
        server: ManagedServer,
        connection: LanguageServerConnection,
        doc: Document,
        before: int,
        version_before: int | None,
    ) -> list[types.Diagnostic]:
        """The server's own diagnostics for the document (quick fixes are keyed on them)."""
        try:
            if connection.capabilities.diagnostic_provider is not None:
                params = types.DocumentDiagnosticParams(
                    text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri())
                )
                report = await server.request(
                    types.TEXT_DOCUMENT_DIAGNOSTIC, params, "the diagnostics"
                )
                return list(getattr(report, "items", None) or [])
            return await self._pushed(server, connection, doc, before, version_before)
        except SourceFailed as exc:
            if exc.final:
                raise
            return []

    async def _query(
        self,
        doc: Document,
        overlay: Overlay,
        method: Method,
        ask: Callable[[ManagedServer, Converter], Awaitable[Answer[T]]],
    ) -> Answer[T] | None:
        await self._auto_install(doc.path)
        server = self._server(doc.path)
        async with server.gate:
            connection = await server.connect()
            if not getattr(connection.capabilities, _PROVIDERS[method], None):
                return None
            self._sync(server, connection, overlay, {doc.path: doc.text})
            await connection.settle(doc.path.as_uri(), SETTLE_SECONDS)
            texts = {**overlay.texts, doc.path: doc.text}
            converter = Converter(Encoding(connection.encoding), Lines(texts))
            return await ask(server, converter)

    # -- diagnostics ----------------------------------------------------------------------

    async def diagnostics(
        self, docs: Sequence[Document], overlay: Overlay
    ) -> Answer[list[Diagnostic]] | None:
        groups: dict[int, tuple[ManagedServer, list[Document]]] = {}
        for doc in docs:
            await self._auto_install(doc.path)
            server = self._server(doc.path)
            groups.setdefault(id(server), (server, []))[1].append(doc)
        found: list[Diagnostic] = []
        labels: list[str] = []
        for server, group in groups.values():
            found.extend(await self._diagnose(server, group, overlay))
            labels.append(self._label(server))
        return Answer(found, ", ".join(dict.fromkeys(labels)))

    async def _diagnose(
        self, server: ManagedServer, docs: list[Document], overlay: Overlay
    ) -> list[Diagnostic]:
        async with server.gate:
            connection = await server.connect()
            store = connection.diagnostics
            before = store.seq
            versions_before = {d.path: connection.documents.version_of(d.path) for d in docs}
            overlay_docs = {d.path: d.text for d in docs if d.path in overlay.texts}
            disk_docs = {d.path: d.text for d in docs if d.path not in overlay.texts}
            self._sync(server, connection, overlay, overlay_docs, disk_docs)
            await connection.settle(docs[0].path.as_uri(), SETTLE_SECONDS)
            texts = {**overlay.texts, **{d.path: d.text for d in docs}}
            converter = Converter(Encoding(connection.encoding), Lines(texts))
            if connection.capabilities.diagnostic_provider is not None:
                return await self._pull(server, docs, converter)
            waits = [
                self._pushed(server, connection, d, before, versions_before[d.path]) for d in docs
            ]
            published = await asyncio.gather(*waits)
        found: list[Diagnostic] = []
        for doc, items in zip(docs, published, strict=True):
            found.extend(converter.diagnostics(doc.path, items))
        return found

    async def _pushed(
        self,
        server: ManagedServer,
        connection: LanguageServerConnection,
        doc: Document,
        seq_before: int,
        version_before: int | None,
    ) -> list[types.Diagnostic]:
        version = connection.documents.version_of(doc.path)
        changed = version != version_before

        def ready(published: Published) -> bool:
            if published.version is not None:
                return published.version == version
            return published.seq > seq_before or not changed

        uri = doc.path.as_uri()
        result = await connection.diagnostics.wait(uri, ready, server.request_timeout)
        if result is None:
            raise SourceFailed(
                f"The language server {server.name} published no diagnostics for "
                f"{self.workspace.display(doc.path)} within {server.request_timeout:.0f} s."
            )
        if result.version is None:  # no version: let a second publish (semantic pass) land
            await asyncio.sleep(DIAGNOSTICS_SETTLE_SECONDS)
            result = connection.diagnostics.by_uri.get(uri, result)
        return result.items

    async def _pull(
        self, server: ManagedServer, docs: list[Document], converter: Converter
    ) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        for doc in docs:
            params = types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=doc.path.as_uri())
            )
            report = await server.request(types.TEXT_DOCUMENT_DIAGNOSTIC, params, "the diagnostics")
            items = getattr(report, "items", None) or []
            found.extend(converter.diagnostics(doc.path, items))
        return found

    # -- documents ------------------------------------------------------------------------

    def _sync(
        self,
        server: ManagedServer,
        connection: LanguageServerConnection,
        overlay: Overlay,
        query_docs: dict[Path, str],
        disk_docs: dict[Path, str] | None = None,
    ) -> None:
        """Show the server the overlay files of its languages, and the query's files."""
        desired: dict[Path, str] = {}
        for path, text in overlay.texts.items():
            plan = self.plan_for(path)
            if plan is not None and plan.language in server.languages:
                desired[path] = text
        desired.update(query_docs)

        def language_id(path: Path) -> str:
            plan = self.plan_for(path)
            return plan.lsp_language_id if plan is not None else ""

        connection.documents.sync(desired, language_id, disk_docs)

    def _workspace_changed(self, path: Path) -> None:
        """A buffer or disk change (any thread): forward disk changes to running servers."""
        loop = self._loop
        if loop is None or loop.is_closed() or self.workspace.buffer(path) is not None:
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(self._queue_disk_change, path)

    def _queue_disk_change(self, path: Path) -> None:
        if not self._pending_disk:
            asyncio.get_running_loop().call_later(0.05, self._flush_disk_changes)
        self._pending_disk.add(path)

    def _flush_disk_changes(self) -> None:
        paths, self._pending_disk = self._pending_disk, set()
        events = [
            types.FileEvent(
                uri=p.as_uri(),
                type=types.FileChangeType.Changed if p.exists() else types.FileChangeType.Deleted,
            )
            for p in paths
        ]
        params = types.DidChangeWatchedFilesParams(changes=events)
        for server in self._servers.values():
            connection = server.connection
            if connection is not None and connection.exit_code is None:
                connection.notify(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, params)

    # -- status and shutdown --------------------------------------------------------------

    def _label(self, server: ManagedServer) -> str:
        return f"language server ({server.name})"

    def status(self) -> list[dict[str, object]]:
        settings = self._current_settings()
        entries: list[dict[str, object]] = []
        running = {lang: s for s in self._servers.values() for lang in s.languages}
        for plan in all_plans(self.workspace.roots, settings):
            server = running.get(plan.language)
            if server is not None:
                entry = {"language": plan.language, **server.status()}
            elif plan.argv is not None:
                entry = {
                    "language": plan.language,
                    "server": plan.name,
                    "command": list(plan.argv),
                    "origin": plan.origin,
                    "state": "idle",
                    "reason": self._stopped_why.get(plan.language, "starts on first use"),
                }
            else:
                entry = {
                    "language": plan.language,
                    "server": plan.name or None,
                    "state": "unavailable",
                    "reason": plan.problem,
                }
            entries.append({"source": "language server", **entry})
        for language in settings.ignored_project:
            entries.append(
                {
                    "source": "language server",
                    "language": language,
                    "state": "ignored",
                    "reason": "set in the project file, but the workspace is not trusted "
                    "(answer the trust prompt, run `agentls trust`, or check "
                    "trustProjectSettings)",
                }
            )
        return entries

    async def aclose(self) -> None:
        self._unsubscribe()
        if self._reaper is not None:
            self._reaper.cancel()
        servers = [*self._servers.values(), *self._retired]
        self._servers.clear()
        self._retired.clear()
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)

    def close(self) -> None:
        """Synchronous: end every server's process group (no LSP handshake)."""
        self._unsubscribe()
        if self._reaper is not None:
            self._reaper.cancel()
        for server in [*self._servers.values(), *self._retired]:
            server.kill()
        self._servers.clear()


def _requester(server: ManagedServer) -> Callable[[str, object, Any], Awaitable[Any]]:
    """pygls structures each result by its method (the result type is for the editor);
    `kind` None asks for plain JSON."""

    async def ask(method: str, params: object, kind: Any) -> Any:
        what = method.rsplit("/", 1)[-1]
        return await server.request(method, params, what, raw=kind is None)

    return ask


async def _execute(
    server: ManagedServer,
    connection: LanguageServerConnection,
    converter: Converter,
    command: types.Command,
) -> RenameResult | str:
    """`workspace/executeCommand`, with the edits the server applies meanwhile captured
    (`workspace/applyEdit`) instead of written: they are staged like any other edit."""
    provider = connection.capabilities.execute_command_provider
    if provider is None or command.command not in (provider.commands or []):
        return (
            f"it runs the command `{command.command}`, which the language server "
            f"{server.name} does not offer to run"
        )
    params = types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    with connection.capturing_edits() as captured:
        await server.request(types.WORKSPACE_EXECUTE_COMMAND, params, "the command")
    edits: list[FileEdit] = []
    skipped: list[str] = []
    for edit in captured:
        result = converter.rename(edit)
        edits.extend(result.edits)
        skipped.extend(result.skipped)
    return RenameResult(tuple(edits), tuple(skipped))


def _key(plan: ServerPlan, trusted: bool) -> str:
    """Servers are shared by command and configuration; trusting the workspace starts a
    new one (it may load more of the project)."""
    config = plan.config.model_dump(mode="json", by_alias=True) if plan.config else None
    return json.dumps([list(plan.argv or ()), config, trusted], sort_keys=True, default=str)
