"""web_fetch through the real pipeline and a rule policy, against a local HTTP server.

The tests allow 127.0.0.1 explicitly (`webFetch.allowedPrivateAddresses`) and an allow
rule for it; everything else private stays refused, also behind a name or a redirect.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.permissions.approval import ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.config.web import WebFetchSettings
from agentls.tools._web import AddressGuard, guarded_client
from agentls.tools.web_fetch import WebFetch
from agentls.workspace import ChangeSet, Workspace
from tests.web_support import base_url, web_server

LOCAL = ["127.0.0.1"]


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    with web_server() as running:
        yield running


class Asker:
    def __init__(self, answer: str = "deny") -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        return self.answer


def fetcher(
    tmp_path: Path,
    *,
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    private: list[str] | None = None,
    asker: Asker | None = None,
    **settings: Any,
) -> tuple[Pipeline, ToolContext]:
    rules, problems = parse_rules(
        {
            "allow": allow if allow is not None else ["WebFetch(domain:127.0.0.1)"],
            "deny": deny or [],
        },
        "test",
        root=tmp_path,
    )
    assert not problems, problems
    tool = WebFetch(
        WebFetchSettings(
            allowed_private_addresses=LOCAL if private is None else private, **settings
        )
    )
    policy = RulePolicy(RuleSet(rules), approver=asker)
    ctx = ToolContext(session_id="s", workspace=Workspace([tmp_path]), changes=ChangeSet())
    return Pipeline(ToolPool([tool]), policy), ctx


async def fetch(pipeline: Pipeline, ctx: ToolContext, url: str, **extra: Any) -> ToolCallResult:
    return await pipeline.execute(ToolCall("t1", "web_fetch", {"url": url, **extra}), ctx)


def text(result: ToolCallResult) -> str:
    assert isinstance(result.content, str)
    return result.content


async def test_html_becomes_markdown(server: ThreadingHTTPServer, tmp_path: Path) -> None:
    pipeline, ctx = fetcher(tmp_path)
    result = await fetch(pipeline, ctx, base_url(server) + "/page")
    out = text(result)
    assert not result.is_error, out
    assert "HTTP 200, text/html" in out
    assert "converted to Markdown" in out
    assert "# Widgets" in out
    assert "A **widget** turns *gears*." in out
    assert f"[the API]({base_url(server)}/api)" in out  # links made absolute
    assert "tracking" not in out
    assert "color: red" not in out  # no script, no style
    assert "- fast" in out
    assert "widget.turn(3)" in out


async def test_the_second_fetch_comes_from_the_cache(
    server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    pipeline, ctx = fetcher(tmp_path)
    url = base_url(server) + "/page"
    await fetch(pipeline, ctx, url)
    again = text(await fetch(pipeline, ctx, url))
    assert "from the cache" in again
    assert server.hits.count("/page") == 1  # type: ignore[attr-defined]


async def test_without_a_rule_the_user_is_asked(
    server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    asker = Asker("deny")
    pipeline, ctx = fetcher(tmp_path, allow=[], asker=asker)
    result = await fetch(pipeline, ctx, base_url(server) + "/page")
    assert result.is_error
    assert "the user denied this call" in text(result)
    [request] = asker.asked
    assert request.reason == "web_fetch reaches 127.0.0.1 on the network"
    assert request.remember == ("web_fetch(domain:127.0.0.1)",)
    assert server.hits == []  # type: ignore[attr-defined]
    # without any way to ask, "ask" is a denial naming the rule that would allow it
    pipeline, ctx = fetcher(tmp_path, allow=[])
    message = text(await fetch(pipeline, ctx, base_url(server) + "/page"))
    assert "web_fetch(domain:127.0.0.1)" in message


async def test_allow_for_the_session_remembers_the_host(
    server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    asker = Asker("allow_session")
    pipeline, ctx = fetcher(tmp_path, allow=[], asker=asker)
    assert not (await fetch(pipeline, ctx, base_url(server) + "/page")).is_error
    assert not (await fetch(pipeline, ctx, base_url(server) + "/data.json")).is_error
    assert len(asker.asked) == 1


async def test_a_deny_rule_wins(server: ThreadingHTTPServer, tmp_path: Path) -> None:
    pipeline, ctx = fetcher(tmp_path, deny=["WebFetch(domain:127.0.0.1)"])
    result = await fetch(pipeline, ctx, base_url(server) + "/page")
    assert result.is_error
    assert "WebFetch(domain:127.0.0.1)" in text(result)
    assert server.hits == []  # type: ignore[attr-defined]


async def test_redirect_to_a_denied_domain_is_not_followed(
    server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    pipeline, ctx = fetcher(tmp_path, deny=["WebFetch(domain:evil.example)"])
    result = await fetch(pipeline, ctx, base_url(server) + "/to/http://evil.example/steal")
    message = text(result)
    assert result.is_error
    assert "redirected (302) to http://evil.example/steal, which was not followed" in message
    assert "WebFetch(domain:evil.example)" in message
    assert "denies it" in message


async def test_redirect_to_a_host_nobody_approved_is_asked_for(
    server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    asker = Asker("deny")
    pipeline, ctx = fetcher(tmp_path, asker=asker)
    result = await fetch(pipeline, ctx, base_url(server) + "/to/http://other.example/x")
    assert result.is_error
    assert "the user denied this call" in text(result)
    assert [r.input["url"] for r in asker.asked] == ["http://other.example/x"]


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata (link-local)
        "http://10.1.2.3/admin",
        "http://[::1]:8080/",
        "http://127.0.0.2/",  # loopback, but not the allowed address
        "http://[::ffff:169.254.169.254]/",  # IPv4-mapped IPv6
        "http://0x7f000002/",  # a hex spelling of 127.0.0.2
    ],
)
async def test_redirect_to_a_private_address_is_refused(
    server: ThreadingHTTPServer, tmp_path: Path, target: str
) -> None:
    # even with every host allowed: the address guard is not a rule
    pipeline, ctx = fetcher(tmp_path, allow=["WebFetch(domain:*)"])
    result = await fetch(pipeline, ctx, base_url(server) + "/to/" + target)
    message = text(result)
    assert result.is_error, message
    assert "which was not followed" in message, message
    assert "webFetch.allowedPrivateAddresses" in message


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "2130706433"])
async def test_private_addresses_are_refused_unless_allowed(
    server: ThreadingHTTPServer, tmp_path: Path, host: str
) -> None:
    port = server.server_address[1]
    pipeline, ctx = fetcher(tmp_path, allow=["WebFetch(domain:*)"], private=[])
    result = await fetch(pipeline, ctx, f"http://{host}:{port}/page")
    message = text(result)
    assert result.is_error, message
    assert "loopback address" in message, message
    assert "webFetch.allowedPrivateAddresses" in message
    assert server.hits == []  # type: ignore[attr-defined]


async def test_the_connection_itself_is_guarded(server: ThreadingHTTPServer) -> None:
    """What `assess` checked is checked again at connection time (a name may resolve
    differently the second time: DNS rebinding)."""
    async with guarded_client(AddressGuard(), 5) as client:
        with pytest.raises(httpx2.ConnectError, match="loopback"):
            await client.get(base_url(server) + "/page")
    async with guarded_client(AddressGuard.of(LOCAL), 5) as client:
        assert (await client.get(base_url(server) + "/page")).status_code == 200
    assert server.hits == ["/page"]  # type: ignore[attr-defined]


async def test_oversize_is_refused(server: ThreadingHTTPServer, tmp_path: Path) -> None:
    pipeline, ctx = fetcher(tmp_path, max_bytes=1_000_000)
    message = text(await fetch(pipeline, ctx, base_url(server) + "/big"))
    assert "is 2.9 MB, over web_fetch's limit of 976.6 KB" in message
    message = text(await fetch(pipeline, ctx, base_url(server) + "/big-chunked"))
    assert "is more than 976.6 KB" in message
    assert "webFetch.maxBytes" in message


async def test_a_long_page_is_cut_keeping_what_the_prompt_asks_for(
    server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    pipeline, ctx = fetcher(tmp_path, max_chars=5_000)
    out = text(await fetch(pipeline, ctx, base_url(server) + "/long", prompt="gearbox ratio"))
    assert "The gearbox ratio is 42 to 1." in out
    assert "[looking for: gearbox ratio]" in out
    assert "[page cut: " in out
    assert "parts that mention the prompt's words were kept" in out
    assert len(out) < 6_000


async def test_timeout(server: ThreadingHTTPServer, tmp_path: Path) -> None:
    pipeline, ctx = fetcher(tmp_path, timeout=0.5)
    started = asyncio.get_running_loop().time()
    message = text(await fetch(pipeline, ctx, base_url(server) + "/slow"))
    assert "did not answer within 0.5 s" in message
    assert "webFetch.timeout" in message
    assert asyncio.get_running_loop().time() - started < 3


async def test_json_is_shown_and_pdf_gets_a_clear_message(
    server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    pipeline, ctx = fetcher(tmp_path)
    out = text(await fetch(pipeline, ctx, base_url(server) + "/data.json"))
    assert "application/json" in out
    assert '"name": "widget"' in out
    result = await fetch(pipeline, ctx, base_url(server) + "/doc.pdf")
    assert result.is_error
    assert "is application/pdf (2.0 KB): web_fetch reads HTML, Markdown" in text(result)


async def test_bad_urls_errors_and_redirect_loops(
    server: ThreadingHTTPServer, tmp_path: Path
) -> None:
    pipeline, ctx = fetcher(tmp_path)
    assert "http(s) URLs only, not file" in text(await fetch(pipeline, ctx, "file:///etc/passwd"))
    assert "user name or password" in text(await fetch(pipeline, ctx, "http://me:pw@127.0.0.1/"))
    assert "HTTP 404" in text(await fetch(pipeline, ctx, base_url(server) + "/missing"))
    message = text(await fetch(pipeline, ctx, base_url(server) + "/loop"))
    assert "redirected more than 5 times" in message
