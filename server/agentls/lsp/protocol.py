"""Our pygls protocol: the LSP rules about bad or early input, and the one place that
touches pygls internals.

- Before `initialize`, a request gets `-32002 ServerNotInitialized` at once and a
  notification is dropped (except `exit`), as the LSP specification says; without this a
  request waited for a host that did not exist yet and failed a minute later.
- `textDocument/didChange` for a document that was never opened is logged and ignored
  (pygls raised `KeyError`, which the editor showed as "Error in server").
- Bodies that are not JSON, or nest deeper than `jsonbody.MAX_DEPTH`, get `-32700`, JSON
  that is not a message object `-32600`, and a request whose params do not fit the
  method's type gets its error answered to its id (pygls only logged those, leaving the
  client waiting forever).

pygls has no public API to answer an arbitrary message id with an error, nor to give a
custom stdio loop the stop event that `shutdown`/`exit` set; `send_error` and
`set_stop_event` below are the only uses of its private attributes, and
`tests/test_lsp_framing.py` checks that they still exist so an upgrade fails loudly.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol, lsp_method

from agentls.jsonbody import loads_bounded

if TYPE_CHECKING:
    from collections.abc import Generator

    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

PRIVATE_PYGLS_ATTRIBUTES = (("JsonRPCProtocol", "_send_response"), ("JsonRPCServer", "_stop_event"))
"""What this module relies on beyond pygls's public API (checked by a test)."""


class JsonList(list[Any]):
    """A result already in its JSON form (camelCase keys, no None values), sent as is.

    pygls unstructures every result with cattrs, which costs more than building it for a
    request that answers with hundreds of small objects (`workspace/symbol`,
    `documentSymbol`); a handler that builds the JSON itself returns it in this type."""


def _as_is(value: JsonList) -> JsonList:
    return value


class AgentProtocol(LanguageServerProtocol):
    """`LanguageServerProtocol` that answers bad and early input instead of failing on it."""

    def __init__(self, server: LanguageServer, converter: Any) -> None:
        super().__init__(server, converter)
        converter.register_unstructure_hook(JsonList, _as_is)
        self.initialize_received = False

    def handle_body(self, body: bytes) -> None:
        """Parse one message body and handle it; never raises."""
        try:
            raw = loads_bounded(body)
        except (ValueError, UnicodeDecodeError) as exc:
            log.warning("unparsable message body (%d bytes): %s", len(body), exc)
            send_error(self, None, JsonRpcParseError(f"Parse error: {exc}"))
            return
        if not isinstance(raw, dict):
            log.warning("a message that is not a JSON object: %.200r", raw)
            send_error(self, None, JsonRpcInvalidRequest("Invalid Request: not a JSON object"))
            return
        try:
            # pygls applies this as a json `object_hook`; only the top level has `jsonrpc`
            message = self.structure_message(raw)
        except JsonRpcException as exc:
            log.warning("malformed %s message: %s", raw.get("method", "response"), exc)
            if "id" in raw and "method" in raw:
                send_error(self, raw["id"], exc)
            return
        try:
            self.handle_message(message)
        except Exception:  # a handler bug must not end the connection
            log.exception("handling %s failed", raw.get("method", "a response"))

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if not self.initialize_received:
            if method == types.INITIALIZE:
                self.initialize_received = True
            elif method != types.EXIT:
                self._refuse_before_initialize(message, method)
                return
        super().handle_message(message)

    def _refuse_before_initialize(self, message: Any, method: str | None) -> None:
        msg_id = getattr(message, "id", None)
        if method is None or msg_id is None:
            log.info("dropped %s before initialize", method or "a response")
            return
        send_error(
            self,
            msg_id,
            JsonRpcServerNotInitialized(f"{method} before initialize: send initialize first"),
        )

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        """pygls's own handler, for documents that are open; others are ignored."""
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.info("didChange for %s, which is not open: ignored", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)


def send_error(protocol: LanguageServerProtocol, msg_id: Any, error: JsonRpcException) -> None:
    """Answer a message id (None for "unknown") with a JSON-RPC error."""
    try:
        protocol._send_response(msg_id, None, error.to_response_error())
    except Exception:
        log.exception("cannot send an error response")


def set_stop_event(server: LanguageServer, event: threading.Event) -> None:
    """Give a custom read loop the event `shutdown`/`exit` set (pygls's `start_io` does)."""
    server._stop_event = event
