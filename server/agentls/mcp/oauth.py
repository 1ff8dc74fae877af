"""OAuth sign-in for remote MCP servers, through the MCP SDK's client auth.

A remote server configured without an `Authorization` header gets the SDK's
`OAuthClientProvider` on its HTTP client. Nothing happens until the server answers 401:
then the SDK discovers the authorization server, registers agentls as a client (dynamic
registration), and calls our `redirect_handler` with the sign-in URL — the host opens it
(LSP `window/showDocument`, the CLI prints it) — and our `callback_handler` waits for the
browser to come back to a one-shot listener on `http://127.0.0.1:<port>/callback`.

Tokens and the registration are kept per server URL in
`platformdirs.user_config_dir("agentls")/mcp-oauth/<hash>.json` (mode 0600), so the next
start refreshes silently. The callback port is kept with them: the registered redirect URI
names it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import socket
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import platformdirs

from agentls.mcp.elicitation import openable
from agentls.mcp.sdk import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthClientProvider,
    OAuthFlowError,
    OAuthToken,
)

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
SIGN_IN_TIMEOUT = 300.0
"""How long a start waits for the user to finish signing in in the browser."""
MAX_REQUEST_BYTES = 16 * 1024
PAGE = (
    "<!doctype html><meta charset=utf-8><title>agentls</title>"
    "<p>{message}</p><p>You can close this tab and return to your editor.</p>"
)

UrlOpener = Callable[[str, str], Awaitable[bool]]
"""(url, message) → whether the host could open or show it."""


class SignInRequired(Exception):
    """The server needs a sign-in that nobody can do here (no host to open the page)."""


def store_folder() -> Path:
    return Path(platformdirs.user_config_dir("agentls")) / "mcp-oauth"


class FileTokenStorage:
    """The SDK's `TokenStorage`, as one private JSON file per server URL."""

    def __init__(self, url: str, folder: Path | None = None) -> None:
        digest = hashlib.sha256(url.encode()).hexdigest()[:24]
        self.path = (folder or store_folder()) / f"{digest}.json"
        self.url = url

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("url") == self.url else {}

    def _write(self, **changes: Any) -> None:
        data = self._read() or {"url": self.url}
        data.update(changes)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".token-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("cannot save the MCP sign-in for %s: %s", self.url, exc)

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self._read().get("tokens")
        try:
            return OAuthToken.model_validate(tokens) if tokens else None
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._write(tokens=tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        info = self._read().get("client_info")
        try:
            return OAuthClientInformationFull.model_validate(info) if info else None
        except ValueError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._write(client_info=client_info.model_dump(mode="json", exclude_none=True))

    def callback_port(self) -> int | None:
        port = self._read().get("callback_port")
        return port if isinstance(port, int) else None

    def remember_port(self, port: int) -> None:
        self._write(callback_port=port)

    def has_tokens(self) -> bool:
        return bool(self._read().get("tokens"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LoopbackCallback:
    """One-shot HTTP listener on 127.0.0.1 that receives the browser's redirect."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self._server: asyncio.Server | None = None
        self.expected_state: str | None = None
        """The `state` of the sign-in we started: another request (a web page poking at
        the port) is refused and does not end the wait."""

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def listen(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def wait(self) -> AuthorizationCodeResult:
        """The browser's redirect, within `SIGN_IN_TIMEOUT`; the listener closes after."""
        if self._result is None:
            await self.listen()
        assert self._result is not None
        try:
            async with asyncio.timeout(SIGN_IN_TIMEOUT):
                return await asyncio.shield(self._result)
        except TimeoutError:
            raise OAuthFlowError(
                f"nobody finished the sign-in within {SIGN_IN_TIMEOUT:g} s"
            ) from None
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            target = line.decode("latin-1").split(" ")[1] if line.count(b" ") >= 2 else ""
            parts = urlsplit(target)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if parts.path != CALLBACK_PATH:
                await _respond(writer, 404, "Not the agentls sign-in address.")
                return
            if self.expected_state is not None and query.get("state") != self.expected_state:
                await _respond(writer, 400, "This is not the sign-in agentls started.")
                return
            if "error" in query:
                message = query.get("error_description") or query["error"]
                await _respond(writer, 400, f"Sign-in failed: {message}")
                self._settle(OAuthFlowError(f"the sign-in failed: {message}"))
                return
            if not query.get("code"):
                await _respond(writer, 400, "No authorization code in this request.")
                return
            await _respond(writer, 200, "Signed in.")
            self._settle(
                AuthorizationCodeResult(
                    code=query["code"], state=query.get("state"), iss=query.get("iss")
                )
            )
        except (OSError, TimeoutError, IndexError, UnicodeError):
            log.debug("bad request on the OAuth callback", exc_info=True)
        finally:
            writer.close()

    def _settle(self, outcome: AuthorizationCodeResult | Exception) -> None:
        future = self._result
        if future is None or future.done():
            return
        if isinstance(outcome, Exception):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


async def _respond(writer: asyncio.StreamWriter, status: int, message: str) -> None:
    body = PAGE.format(message=message).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode() + body)
    with contextlib.suppress(OSError):
        await writer.drain()


def oauth_provider(
    server: str,
    url: str,
    open_url: UrlOpener | None,
    on_sign_in: Callable[[], None] = lambda: None,
    folder: Path | None = None,
) -> OAuthClientProvider:
    """The SDK's provider for one remote server; `on_sign_in` runs when the user must act
    (the connection then extends its start-up deadline)."""
    storage = FileTokenStorage(url, folder)
    port = storage.callback_port() or _free_port()
    callback = LoopbackCallback(port)

    async def redirect(authorization_url: str) -> None:
        if open_url is None:
            raise SignInRequired(
                f"the MCP server '{server}' needs you to sign in, and this client cannot "
                "open a browser page"
            )
        if not openable(authorization_url):
            raise SignInRequired(
                f"the MCP server '{server}' sent a sign-in address agentls will not open: "
                f"{authorization_url[:200]}"
            )
        on_sign_in()
        storage.remember_port(port)
        state = parse_qs(urlsplit(authorization_url).query).get("state")
        callback.expected_state = state[0] if state else None
        await callback.listen()
        message = f"Sign in to the MCP server '{server}': open {authorization_url}"
        if not await open_url(authorization_url, message):
            await callback.close()
            raise SignInRequired(
                f"the sign-in page for the MCP server '{server}' could not be shown"
            )

    async def wait_for_browser() -> AuthorizationCodeResult:
        return await callback.wait()

    metadata = OAuthClientMetadata(
        client_name="agentls",
        redirect_uris=[callback.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect,
        callback_handler=wait_for_browser,
    )
