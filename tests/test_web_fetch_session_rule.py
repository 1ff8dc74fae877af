"""`web_fetch` × "Allow for this session" over real stdio (issue 15's tool, the LSP approver).

`agentls serve` under pytest-lsp, a scripted model calling `web_fetch` against a local web
server reached under two host names (`127.0.0.1` and `localhost`, both allowed as private
addresses by `webFetch.allowedPrivateAddresses`, neither by an allow rule). Answering
"Allow for this session" remembers the host, nothing wider:

- a second fetch from the same host does not ask, in the same run and in the session's
  next run; a fetch from the other host asks;
- a redirect from a remembered host to another host asks for that host (and a denial
  there stops the fetch before the other host is contacted);
- another session remembers nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
import pytest_asyncio

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env
from tests.web_support import web_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.fixture(scope="module")
def web() -> Iterator[ThreadingHTTPServer]:
    with web_server() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    api: ScriptedMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    root = tmp_path_factory.mktemp("ws")
    (root / "app.py").write_text("x = 1\n")
    env = server_env(api.base_url, tmp_path_factory.mktemp("state"))
    options = {"webFetch": {"allowedPrivateAddresses": ["127.0.0.1", "::1"], "cacheMinutes": 0}}
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=options
    ) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _fresh(
    editor: FakeEditor, web: ThreadingHTTPServer, api: ScriptedMessagesServer
) -> Iterator[None]:
    editor.prompts.clear()
    editor.choices.clear()
    web.hits.clear()  # type: ignore[attr-defined]
    yield
    assert api.remaining == 0, "the test left scripted turns unplayed"
    assert editor.choices == [], "a scripted answer was not asked for"


def url(web: ThreadingHTTPServer, host: str, path: str) -> str:
    return f"http://{host}:{web.server_address[1]}{path}"


def fetch(address: str) -> tuple[str, dict[str, Any]]:
    return ("web_fetch", {"url": address})


def asked(editor: FakeEditor) -> list[str]:
    return [p.message for p in editor.prompts]


def results(api: ScriptedMessagesServer, count: int) -> list[dict[str, Any]]:
    """The last `count` web_fetch results the model got, in order."""
    found = [r for request in api.message_requests for r in request.tool_results()]
    unique = list({r["tool_use_id"]: r for r in found}.values())
    return unique[-count:]


async def run(editor: FakeEditor, prompt: str, session: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"prompt": prompt, "wait": True}
    if session is not None:
        args["session"] = session
    result: dict[str, Any] = await command(editor, "agentls.run", args)
    assert result["status"] == "completed", result
    return result


async def test_allow_for_this_session_remembers_the_host_and_only_the_host(
    editor: FakeEditor, api: ScriptedMessagesServer, web: ThreadingHTTPServer
) -> None:
    api.extend(
        tool_turn(fetch(url(web, "127.0.0.1", "/page"))),
        tool_turn(fetch(url(web, "127.0.0.1", "/data.json"))),
        tool_turn(fetch(url(web, "localhost", "/page"))),
        text_turn("Fetched three pages."),
    )
    editor.choices[:] = [ALLOW_SESSION, ALLOW_ONCE]
    first = await run(editor, "read the widget docs")
    # asked for 127.0.0.1 once (offering to remember it), then for localhost
    prompts = editor.prompts
    assert len(prompts) == 2, asked(editor)
    assert "127.0.0.1" in prompts[0].message
    assert "/page" in prompts[0].message
    assert [a.title for a in prompts[0].actions or []] == [ALLOW_ONCE, ALLOW_SESSION, DENY]
    assert "localhost" in prompts[1].message
    assert all(not r.get("is_error") for r in results(api, 3)), results(api, 3)
    assert web.hits == ["/page", "/data.json", "/page"]  # type: ignore[attr-defined]

    # the session's next run still remembers 127.0.0.1; localhost was allowed only once
    editor.prompts.clear()
    web.hits.clear()  # type: ignore[attr-defined]
    api.extend(
        tool_turn(fetch(url(web, "127.0.0.1", "/missing"))),
        tool_turn(fetch(url(web, "localhost", "/data.json"))),
        text_turn("Done."),
    )
    editor.choices[:] = [DENY]
    await run(editor, "once more", session=first["session"])
    assert len(editor.prompts) == 1
    assert "localhost" in editor.prompts[0].message
    missing, denied = results(api, 2)
    assert "404" in str(missing["content"])  # fetched without asking: the server answered
    assert denied.get("is_error")
    assert web.hits == ["/missing"]  # type: ignore[attr-defined]

    # a new session remembers nothing
    editor.prompts.clear()
    api.extend(tool_turn(fetch(url(web, "127.0.0.1", "/page"))), text_turn("Refused."))
    editor.choices[:] = [DENY]
    await run(editor, "fresh session")
    assert len(editor.prompts) == 1
    assert "127.0.0.1" in editor.prompts[0].message
    (refused,) = results(api, 1)
    assert refused.get("is_error")


async def test_a_redirect_from_a_remembered_host_to_another_host_asks_again(
    editor: FakeEditor, api: ScriptedMessagesServer, web: ThreadingHTTPServer
) -> None:
    target = url(web, "localhost", "/data.json")
    api.extend(
        tool_turn(fetch(url(web, "127.0.0.1", "/page"))),
        tool_turn(fetch(url(web, "127.0.0.1", "/to/" + target))),
        text_turn("The redirect was not followed."),
    )
    editor.choices[:] = [ALLOW_SESSION, DENY]
    await run(editor, "follow the link")
    assert len(editor.prompts) == 2, asked(editor)
    assert "127.0.0.1" in editor.prompts[0].message
    assert "localhost" in editor.prompts[1].message  # the redirect's host, asked for
    page, redirected = results(api, 2)
    assert not page.get("is_error")
    assert redirected.get("is_error")
    assert "not followed" in str(redirected["content"])
    assert web.hits == ["/page", "/to/" + target]  # type: ignore[attr-defined]
