"""Remote MCP servers that want authentication, for the OAuth tests.

`OAuthDemoServer`: the demo server behind the MCP SDK's own OAuth authorization server
(dynamic client registration, PKCE, tokens), with a provider that signs anyone in at once —
the test's "browser" follows the authorization redirect to agentls's loopback callback.
`Always401`: a server that answers every request with 401 and offers no sign-in.
Both run in a thread of the test process (uvicorn), on a free 127.0.0.1 port.
"""

from __future__ import annotations

import logging
import secrets
import socket
import threading
import time
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl

from tests.mcp_servers import demo_server
from tests.mcp_servers.support import free_port


class InstantProvider:
    """An authorization server that approves every request (the user "signs in" at once)."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.authorized = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        self.authorized += 1
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(client, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.tokens.pop(getattr(token, "token", ""), None)

    def _issue(
        self, client: OAuthClientInformationFull, scopes: list[str], resource: str | None
    ) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        client_id = client.client_id or ""
        self.tokens[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + 3600,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=3600,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


class _Threaded:
    """An ASGI app served by uvicorn in a daemon thread."""

    def __init__(self, app: Any, port: int) -> None:
        self.port = port
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", interface="asgi3")
        )
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the test HTTP server did not come up")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


class OAuthDemoServer:
    def __init__(self) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/mcp"
        self.provider = InstantProvider()
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        try:
            server = demo_server.build(
                "secure",
                0,
                auth_server_provider=self.provider,
                auth=AuthSettings(
                    issuer_url=AnyHttpUrl(self.base),
                    resource_server_url=AnyHttpUrl(self.url),
                    client_registration_options=ClientRegistrationOptions(enabled=True),
                    validate_token_resource=True,
                ),
            )
            app = server.streamable_http_app()
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)
        self._http = _Threaded(app, port)

    def __enter__(self) -> OAuthDemoServer:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()


class Always401:
    """Every request is answered 401, with no way to sign in."""

    def __init__(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/mcp"
        self._http = _Threaded(self._app, port)

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [(b"content-type", b"text/plain")],
            }
        )
        await send({"type": "http.response.body", "body": b"unauthorized"})

    def __enter__(self) -> Always401:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()
