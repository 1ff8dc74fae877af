"""OAuth for remote MCP servers through the MCP SDK's client auth.

Against the SDK's own authorization server (dynamic registration, PKCE): the sign-in page
is handed to the host (`open_url`), the "browser" follows the redirect to agentls's
loopback callback, the tokens are stored (privately) and reused by the next start without
asking again. A server that only says 401 is reported as needing authentication, and so
is a sign-in nobody can do (no user to show the page to).
"""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from agentls.mcp import ApprovalStore, HostBridge, McpManager
from agentls.mcp.connection import NEEDS_AUTH
from agentls.mcp.oauth import LoopbackCallback, SignInRequired, oauth_provider
from tests.mcp_servers.oauth_server import Always401, OAuthDemoServer
from tests.mcp_servers.questions import ScriptedUser
from tests.mcp_servers.support import free_port

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def secure() -> Iterator[OAuthDemoServer]:
    with OAuthDemoServer() as server:
        yield server


class Browser(ScriptedUser):
    """A user whose browser signs in: follows the authorization redirect to the callback."""

    async def open_url(self, url: str, message: str) -> bool:
        self.opened.append(url)
        async with httpx2.AsyncClient() as http:
            answer = await http.get(url)
            assert answer.status_code in (302, 303, 307), answer.text
            callback = await http.get(answer.headers["location"])
            assert callback.status_code == 200, callback.text
        return True


def _manager(tmp_path: Path, url: str, user: ScriptedUser | None) -> McpManager:
    return McpManager.from_config(
        tmp_path,
        {"mcpServers": {"secure": {"type": "http", "url": url}}, "startupWaitSeconds": 60},
        approvals=ApprovalStore(tmp_path / "approvals.json"),
        user_config=tmp_path / "user.json",
        home=tmp_path,
        bridge=HostBridge(
            roots=lambda: [tmp_path], questions=user, oauth_folder=tmp_path / "oauth"
        ),
    )


async def test_sign_in_through_the_browser_then_tokens_are_reused(
    secure: OAuthDemoServer, tmp_path: Path
) -> None:
    user = Browser()
    manager = _manager(tmp_path, secure.url, user)
    try:
        names = {t.name for t in await manager.tools()}
    finally:
        await manager.aclose()
    status = {s["name"]: s for s in manager.status()}
    assert "mcp__secure__echo" in names, status
    assert len(user.opened) == 1
    assert user.opened[0].startswith(secure.base + "/authorize?")
    assert "code_challenge=" in user.opened[0]  # PKCE
    assert secure.provider.authorized == 1
    (stored,) = (tmp_path / "oauth").iterdir()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600  # tokens are private
    assert secure.provider.tokens  # a token was issued and is what the server checks

    again = Browser()
    second = _manager(tmp_path, secure.url, again)
    try:
        assert "mcp__secure__echo" in {t.name for t in await second.tools()}
    finally:
        await second.aclose()
    assert again.opened == []
    assert secure.provider.authorized == 1  # no second sign-in


async def test_a_sign_in_nobody_can_do_says_the_server_needs_authentication(
    secure: OAuthDemoServer, tmp_path: Path
) -> None:
    manager = _manager(tmp_path, secure.url, None)  # no user: nobody to open the page
    try:
        assert await manager.tools() == []
    finally:
        await manager.aclose()
    (entry,) = manager.status()
    assert entry["state"] == "failed"
    assert entry["error"].startswith(NEEDS_AUTH)


async def test_a_plain_401_says_the_server_needs_authentication(tmp_path: Path) -> None:
    with Always401() as server:
        manager = _manager(tmp_path, server.url, Browser())
        try:
            assert await manager.tools() == []
        finally:
            await manager.aclose()
    (entry,) = manager.status()
    assert entry["state"] == "failed"
    assert NEEDS_AUTH in entry["error"], entry["error"]


async def test_a_configured_authorization_header_is_sent_and_oauth_stays_out(
    tmp_path: Path,
) -> None:
    with Always401() as server:
        manager = McpManager.from_config(
            tmp_path,
            {
                "mcpServers": {
                    "keyed": {
                        "type": "http",
                        "url": server.url,
                        "headers": {"Authorization": "Bearer x"},
                    }
                },
                "startupWaitSeconds": 60,
            },
            approvals=ApprovalStore(tmp_path / "approvals.json"),
            user_config=tmp_path / "user.json",
            home=tmp_path,
            bridge=HostBridge(questions=Browser(), oauth_folder=tmp_path / "oauth"),
        )
        try:
            await manager.tools()
        finally:
            await manager.aclose()
    (entry,) = manager.status()
    assert NEEDS_AUTH in entry["error"]
    assert "HTTP 401" in entry["error"]
    assert not (tmp_path / "oauth").exists()  # no sign-in was attempted


async def test_the_callback_ignores_requests_for_another_sign_in(tmp_path: Path) -> None:
    callback = LoopbackCallback(free_port())
    callback.expected_state = "the-real-state"
    await callback.listen()
    waiting = asyncio.ensure_future(callback.wait())
    base = callback.redirect_uri
    async with httpx2.AsyncClient() as http:
        forged = await http.get(f"{base}?code=stolen&state=guess")
        assert forged.status_code == 400
        assert not waiting.done()  # still waiting
        elsewhere = await http.get(base.replace("/callback", "/other") + "?code=x")
        assert elsewhere.status_code == 404
        real = await http.get(f"{base}?code=good&state=the-real-state")
        assert real.status_code == 200
    result = await asyncio.wait_for(waiting, 10)
    assert result.code == "good"


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "vscode://evil/command",
        "http://attacker.example/authorize",  # a sign-in over plain http to another host
    ],
)
async def test_a_sign_in_page_that_is_not_a_web_page_is_not_opened(
    url: str, tmp_path: Path
) -> None:
    user = Browser()
    provider = oauth_provider("srv", "https://srv.example/mcp", user.open_url, folder=tmp_path)
    redirect = provider.context.redirect_handler
    assert redirect is not None
    with pytest.raises(SignInRequired, match="will not open"):
        await redirect(url)
    assert user.opened == []
