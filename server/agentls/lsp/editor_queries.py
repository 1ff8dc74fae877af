"""Source 1: the editor's own language servers, asked with `agentls/editorQuery`.

A server→client request `agentls/editorQuery {method, params}`: `method` is an LSP method
(`textDocument/definition`, `textDocument/references`, `textDocument/hover`,
`textDocument/rename`, `workspace/symbol`) or `agentls/diagnostics` (`params: {uris}` → the
editor's collected diagnostics, `[{uri, diagnostics}]`); `params` are that method's LSP
params, positions in the encoding negotiated with the editor. The answer is the method's
LSP result, or `{result, source}` where `source` names the server that answered
("basedpyright", "VS Code: typescript"). An error or a timeout (`editorQueryTimeout`,
default 5 s) moves on to the next source.

Asked only when the client announced the method (`initializationOptions.editorQueries` or
`capabilities.experimental.agentlsEditorQueries`), and only while the session has no
staged edits: the editor sees its buffers, not the agent's staged text.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException

from agentls.codeintel.actions import choose
from agentls.codeintel.model import (
    Answer,
    CallHierarchy,
    CodeAction,
    Diagnostic,
    Document,
    Location,
    Overlay,
    Pos,
    RenameResult,
    SourceFailed,
    Span,
    SymbolRange,
)
from agentls.codeintel.settings import EditorQuerySettings
from agentls.codeintel.sources import DIAGNOSTICS, LANGUAGES, Direction, Method
from agentls.langservers.convert import Converter, Encoding, Lines, path_of
from agentls.langservers.operations import (
    Requester,
    call_hierarchy,
    code_action_params,
    code_actions,
    symbols_of,
)

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection

log = logging.getLogger(__name__)

REQUEST = "agentls/editorQuery"
LANGUAGES_TTL_S = 5.0
"""How long the editor's list of served languages is reused (servers attach and exit)."""
_converter = get_converter()


@attrs.define
class RawResponse:
    """A JSON-RPC response whose `result` stays plain JSON."""

    id: int | str
    jsonrpc: str
    result: Any = None


class EditorQuerySource:
    """Asks the editor that runs agentls (a `CodeSource`)."""

    kind = "editor"
    sees_staged = False

    def __init__(self, ls: Connection, settings: Callable[[], EditorQuerySettings]) -> None:
        self.ls = ls
        self._settings = settings
        self.asked = 0
        self.failed = 0
        self.last_error = ""
        self._languages: tuple[float, frozenset[str]] | None = None

    def covers(self, path: Path, method: Method) -> bool:
        return method in self._settings().methods

    async def serves_language(self, doc: Document) -> bool:
        """Whether the editor runs a language server for `doc`'s language (the client's
        answer to `agentls/languages`, LSP language ids; agentls's own name counts too).
        A client that did not announce it, or fails to answer, serves none: agentls then
        starts its own servers as before."""
        if LANGUAGES not in self._settings().methods:
            return False
        now = time.monotonic()
        if self._languages is None or now - self._languages[0] > LANGUAGES_TTL_S:
            try:
                raw, _ = await self._ask(LANGUAGES, {})
            except SourceFailed:
                raw = []
            names = raw if isinstance(raw, list) else []
            self._languages = (now, frozenset(str(n) for n in names if isinstance(n, str)))
        served = self._languages[1]
        return doc.language in served or _lsp_language_id(doc) in served

    # -- queries --------------------------------------------------------------------------

    async def definition(
        self, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]] | None:
        converter = self._converter(overlay, doc)
        params = types.DefinitionParams(
            text_document=self._document(doc.path), position=converter.position(doc.path, pos)
        )
        raw, source = await self._ask(types.TEXT_DOCUMENT_DEFINITION, params)
        return Answer(converter.locations(_structure_locations(raw)), source)

    async def references(
        self, doc: Document, pos: Pos, overlay: Overlay, include_declaration: bool
    ) -> Answer[list[Location]] | None:
        converter = self._converter(overlay, doc)
        params = types.ReferenceParams(
            context=types.ReferenceContext(include_declaration=include_declaration),
            text_document=self._document(doc.path),
            position=converter.position(doc.path, pos),
        )
        raw, source = await self._ask(types.TEXT_DOCUMENT_REFERENCES, params)
        return Answer(converter.locations(_structure_locations(raw)), source)

    async def locations(
        self, method: Method, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]] | None:
        converter = self._converter(overlay, doc)
        params = types.TextDocumentPositionParams(
            text_document=self._document(doc.path), position=converter.position(doc.path, pos)
        )
        raw, source = await self._ask(method, params)
        return Answer(converter.locations(_structure_locations(raw)), source)

    async def hover(self, doc: Document, pos: Pos, overlay: Overlay) -> Answer[str] | None:
        converter = self._converter(overlay, doc)
        params = types.HoverParams(
            text_document=self._document(doc.path), position=converter.position(doc.path, pos)
        )
        raw, source = await self._ask(types.TEXT_DOCUMENT_HOVER, params)
        hover = _structure(raw, types.Hover) if raw else None
        return Answer(converter.hover_text(hover), source)

    async def rename(
        self, doc: Document, pos: Pos, overlay: Overlay, new_name: str
    ) -> Answer[RenameResult] | None:
        converter = self._converter(overlay, doc)
        params = types.RenameParams(
            text_document=self._document(doc.path),
            position=converter.position(doc.path, pos),
            new_name=new_name,
        )
        raw, source = await self._ask(types.TEXT_DOCUMENT_RENAME, params)
        edit = _structure(raw, types.WorkspaceEdit) if raw else None
        return Answer(converter.rename(edit), source)

    async def call_hierarchy(
        self, doc: Document, pos: Pos, overlay: Overlay, direction: Direction, depth: int
    ) -> Answer[CallHierarchy] | None:
        converter = self._converter(overlay, doc)
        params = types.CallHierarchyPrepareParams(
            text_document=self._document(doc.path), position=converter.position(doc.path, pos)
        )
        sources: list[str] = []
        found = await call_hierarchy(self._requester(sources), converter, params, direction, depth)
        if found is None:
            return None
        return Answer(found, sources[0] if sources else "editor")

    async def document_symbols(
        self, doc: Document, overlay: Overlay
    ) -> Answer[list[SymbolRange]] | None:
        converter = self._converter(overlay, doc)
        params = types.DocumentSymbolParams(text_document=self._document(doc.path))
        raw, source = await self._ask(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, params)
        try:
            return Answer(symbols_of(converter, doc.path, raw), source)
        except Exception as exc:
            raise SourceFailed(f"The editor's symbols were not valid: {exc}") from None

    async def code_actions(
        self,
        doc: Document,
        span: Span,
        overlay: Overlay,
        only: str | None,
        apply: str | None,
    ) -> Answer[list[CodeAction]] | None:
        """The editor's actions (it adds its own diagnostics for the range). The editor's
        commands are never run from here: they would change its buffers outside the session.
        An action with an edit has that edit staged, its command named as not run (VS Code's
        TypeScript attaches one to every quick fix and organize imports, for its telemetry
        and follow-ups); an action that is only a command is asked of the next source (a
        headless server) instead."""
        converter = self._converter(overlay, doc)
        rng = types.Range(
            converter.position(doc.path, span.start), converter.position(doc.path, span.end)
        )
        params = code_action_params(self._uri(doc.path), rng, [])
        sources: list[str] = []

        async def execute(command: types.Command) -> RenameResult | str:
            return (
                f"the editor runs its command `{command.command}` itself, outside this "
                "session, so it was not run"
            )

        can_resolve = "codeAction/resolve" in self._settings().methods
        actions = await code_actions(
            self._requester(sources), converter, params, only, apply, can_resolve, execute
        )
        chosen = actions[choose(actions, apply)] if apply is not None else None
        if chosen is not None and chosen.edit is None and chosen.command:
            raise SourceFailed(
                f"The editor's action runs the command `{chosen.command}`, which would "
                "change the editor's buffers outside this session."
            )
        return Answer(actions, sources[0] if sources else "editor")

    def _requester(self, sources: list[str]) -> Requester:
        """`_ask` as the shared operations want it; the answering sources are noted."""

        async def ask(method: str, params: object, kind: Any) -> Any:
            raw, source = await self._ask(method, params)
            sources.append(source)
            return raw if kind is None else _structure(raw, kind)

        return ask

    async def diagnostics(
        self, docs: Sequence[Document], overlay: Overlay
    ) -> Answer[list[Diagnostic]] | None:
        converter = self._converter(overlay, *docs)
        uris = {self._uri(doc.path): doc.path for doc in docs}
        raw, source = await self._ask(DIAGNOSTICS, {"uris": list(uris)})
        entries = raw.get("items", []) if isinstance(raw, dict) else raw or []
        found: list[Diagnostic] = []
        answered: set[Path] = set()
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            uri = str(entry.get("uri", ""))
            path = uris.get(uri) or path_of(uri)
            if path is None:
                continue
            answered.add(path)
            items = [_structure(d, types.Diagnostic) for d in entry.get("diagnostics") or []]
            found.extend(converter.diagnostics(path, items))
        missing = [doc.path for doc in docs if doc.path not in answered]
        if missing:  # no entry is not "no problems": the editor may not have checked it
            names = ", ".join(p.name for p in missing)
            raise SourceFailed(f"The editor has no diagnostics for {names}.")
        return Answer(found, source)

    # -- the request ----------------------------------------------------------------------

    async def _ask(self, method: str, params: object) -> tuple[Any, str]:
        """Send one `agentls/editorQuery`; the raw result and the answering source's label."""
        settings = self._settings()
        payload = {"method": method, "params": _converter.unstructure(params)}
        self.asked += 1
        msg_id = str(uuid.uuid4())
        try:
            future = self.ls.protocol.send_request_async(REQUEST, payload, msg_id=msg_id)
            # pygls turns an untyped result into named tuples, which mangles the URI keys
            # of a WorkspaceEdit's `changes`: have it keep the JSON as it came.
            self.ls.protocol._result_types[msg_id] = RawResponse
            response = await asyncio.wait_for(future, settings.timeout)
        except TimeoutError:
            self._fail(f"no answer within {settings.timeout:g} s")
            raise SourceFailed(
                f"The editor did not answer {method} within {settings.timeout:g} s "
                "(`editorQueryTimeout`)."
            ) from None
        except JsonRpcException as exc:
            self._fail(str(exc))
            raise SourceFailed(f"The editor could not answer {method}: {exc}") from None
        except Exception as exc:  # a closed connection and the like
            self._fail(str(exc))
            raise SourceFailed(f"The editor could not answer {method}: {exc}") from None
        data = _plain(response)
        if isinstance(data, dict) and "result" in data and set(data) <= {"result", "source"}:
            name = str(data.get("source") or "").strip()
            return data["result"], f"editor ({name})" if name else "editor"
        return data, "editor"

    def _fail(self, reason: str) -> None:
        self.failed += 1
        self.last_error = reason
        log.info("agentls/editorQuery failed: %s", reason)

    def _converter(self, overlay: Overlay, *docs: Document) -> Converter:
        encoding = self.ls.workspace.position_encoding
        name = str(getattr(encoding, "value", encoding) or "utf-16")
        texts = {**overlay.texts, **{doc.path: doc.text for doc in docs}}
        return Converter(Encoding(name), Lines(texts))

    def _uri(self, path: Path) -> str:
        return self.ls.open_uris.get(path) or path.as_uri()

    def _document(self, path: Path) -> types.TextDocumentIdentifier:
        return types.TextDocumentIdentifier(uri=self._uri(path))

    # -- status ---------------------------------------------------------------------------

    def status(self) -> list[dict[str, object]]:
        methods = sorted(self._settings().methods)
        if not methods:
            return [
                {
                    "source": "editor",
                    "state": "unavailable",
                    "reason": "the editor did not announce agentls/editorQuery "
                    "(initializationOptions.editorQueries)",
                }
            ]
        entry: dict[str, object] = {
            "source": "editor",
            "state": "available",
            "methods": methods,
            "asked": self.asked,
            "failed": self.failed,
        }
        if self.last_error:
            entry["reason"] = f"last failure: {self.last_error}"
        return [entry]

    async def aclose(self) -> None:
        return None


def _lsp_language_id(doc: Document) -> str:
    from agentls.codeintel.languages import language_of

    language = language_of(doc.path)
    return language.lsp_id if language is not None else ""


def _plain(value: Any) -> Any:
    """pygls may hand untyped payloads over as named tuples; make them JSON values."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _structure(value: Any, kind: Any) -> Any:
    try:
        return _converter.structure(value, kind)
    except Exception as exc:
        raise SourceFailed(f"The editor's answer was not a valid {kind.__name__}: {exc}") from None


def _structure_locations(raw: Any) -> list[Any]:
    """Location | Location[] | LocationLink[] | null, as the editor sent it."""
    if not raw:
        return []
    items = raw if isinstance(raw, list) else [raw]
    found = []
    for item in items:
        if isinstance(item, dict) and "targetUri" in item:
            found.append(_structure(item, types.LocationLink))
        elif isinstance(item, dict) and "uri" in item:
            found.append(_structure(item, types.Location))
    return found


def announced(initialization_options: object, capabilities: object) -> frozenset[str]:
    """The methods a client said it answers (init option or experimental capability)."""
    from agentls.codeintel.settings import announced_methods
    from agentls.runtime.config_state import unwrap_section

    options = unwrap_section(initialization_options)
    methods: set[str] = set()
    if isinstance(options, dict):
        methods |= announced_methods(options.get("editorQueries"))
    experimental = getattr(capabilities, "experimental", None)
    if isinstance(experimental, dict):
        methods |= announced_methods(experimental.get("agentlsEditorQueries"))
    return frozenset(methods)
