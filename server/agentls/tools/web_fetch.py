"""`web_fetch`: one web page as Markdown, within size and time limits.

Permission is the pipeline's: the call is read-only, but it reaches the network, so its
`assess` reports an approval reason (Claude Code's default for WebFetch is "ask") unless a
`WebFetch(domain:…)` / `web_fetch(domain:…)` allow rule covers the host, and a refusal when
the host resolves to a private address no setting allows. A redirect to another host is
followed only when the pipeline's permission steps allow that host too (`ctx.recheck`):
deny rules, ask rules and the address guard apply to every hop.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import CallRisk, Tool, ToolInput
from agentls.config.web import WebFetchSettings
from agentls.errors import ToolError

if TYPE_CHECKING:  # the HTTP stack (httpx2, httpcore2, ssl) loads with the first fetch
    import httpx2

    from agentls.tools._web import AddressGuard, Page
from agentls.workspace.textio import human_size

_HTML = ("text/html", "application/xhtml+xml")
_REDIRECTS = (301, 302, 303, 307, 308)
_WORD = re.compile(r"[A-Za-z0-9_]{3,}")


class WebFetchInput(ToolInput):
    url: str = Field(
        description="The http(s) URL to fetch, e.g. 'https://docs.python.org/3/library/json.html'.",
        max_length=2000,
    )
    prompt: str | None = Field(
        default=None,
        description="What you are looking for on the page; when the page is longer than the "
        "budget, the parts that mention it are kept.",
        max_length=2000,
    )


class WebFetch(Tool[WebFetchInput]):
    name = "web_fetch"
    input_model = WebFetchInput
    search_hint = "fetch url web page http documentation download read online"
    usage = """
Fetch a web page and read it as Markdown (HTML is converted; plain text, Markdown and JSON
are shown as they are). Use it for documentation, an issue or a changelog the user points
to, or an error message you need to look up at a known URL.

- The user approves each site unless their settings allow it (`WebFetch(domain:host)`);
  if a fetch is denied, do not retry it — ask the user or work without it.
- Only http(s). Pages are capped in size and time; very long pages are cut to a budget:
  pass `prompt` (what you are looking for) so the relevant parts are kept.
- Redirects to another host are followed only when that host is allowed too; otherwise the
  result names the new URL and why it was not followed.
- Local and private network addresses (localhost, 10.x, 192.168.x, cloud metadata) are
  refused unless the user allowed them.
- PDFs, images and other binary files cannot be read. Results are cached for a few minutes.
- Prefer the workspace's own files and the tools for them to the web: fetch only what the
  task needs.

Example: {"url": "https://docs.python.org/3/library/pathlib.html", "prompt": "Path.walk"}
"""

    def __init__(self, settings: WebFetchSettings | None = None) -> None:
        self.settings = settings or WebFetchSettings()

    @functools.cached_property
    def guard(self) -> AddressGuard:
        """Built on first use: it brings the HTTP stack in (issue 33: idle memory)."""
        from agentls.tools._web import AddressGuard

        return AddressGuard.of(self.settings.allowed_private_addresses)

    def is_read_only(self, input: WebFetchInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: WebFetchInput) -> bool:
        return True

    def summary(self, input: WebFetchInput) -> str:
        return f"Fetching {input.url}"

    async def validate_input(self, input: WebFetchInput, ctx: ToolContext) -> str | None:
        return url_problem(input.url)

    async def assess(self, input: WebFetchInput, ctx: ToolContext) -> CallRisk:
        from agentls.tools._web import BlockedAddress

        host = urlsplit(input.url.strip()).hostname or ""
        try:
            await self.guard.resolve(host, _port(input.url))
        except BlockedAddress as exc:
            return CallRisk.refused(str(exc))
        except Exception:  # cannot resolve now: the fetch itself will say so
            pass
        return CallRisk.asks(f"web_fetch reaches {host} on the network")

    async def call(self, input: WebFetchInput, ctx: ToolContext) -> str:
        from agentls.tools._web import page_cache

        url = input.url.strip()
        cache = page_cache(ctx.workspace)
        page = cache.get(url, self.settings.cache_minutes * 60)
        cached = page is not None
        if page is None:
            try:
                async with asyncio.timeout(self.settings.timeout):
                    page, chain = await self._fetch(url, input, ctx)
            except TimeoutError:
                raise ToolError(
                    f"{url} did not answer within {self.settings.timeout:g} s (the setting "
                    "`webFetch.timeout`); try again later or another source"
                ) from None
            if self.settings.cache_minutes:
                # under the final host's URLs only: a cross-host redirect is re-checked
                # (and maybe asked for) on every fetch of the first URL
                final = urlsplit(chain[-1]).hostname
                cache.put([u for u in chain if urlsplit(u).hostname == final], page)
        return _present(page, input.prompt, self.settings.max_chars, cached)

    async def _fetch(
        self, url: str, input: WebFetchInput, ctx: ToolContext
    ) -> tuple[Page, list[str]]:
        import httpx2

        from agentls.tools._web import guarded_client

        chain = [url]
        async with guarded_client(self.guard, self.settings.timeout) as client:
            current = url
            for _ in range(self.settings.max_redirects + 1):
                request = client.build_request("GET", current)
                try:
                    response = await client.send(request, stream=True)
                except httpx2.HTTPError as exc:
                    raise ToolError(f"fetching {current} failed: {_reason(exc)}") from None
                try:
                    if response.status_code not in _REDIRECTS:
                        return await self._read(current, response), chain
                    target = await self._next_hop(current, response, input, ctx)
                finally:
                    await response.aclose()
                current = target
                chain.append(current)
        raise ToolError(
            f"{url} redirected more than {self.settings.max_redirects} times (the setting "
            "`webFetch.maxRedirects`); not followed further"
        )

    async def _next_hop(
        self, current: str, response: httpx2.Response, input: WebFetchInput, ctx: ToolContext
    ) -> str:
        location = response.headers.get("location")
        if not location:
            raise ToolError(f"{current} answered {response.status_code} without a Location")
        target = urljoin(current, location)
        problem = url_problem(target)
        if problem is None and urlsplit(target).hostname != urlsplit(current).hostname:
            problem = await ctx.recheck({"url": target, "prompt": input.prompt})
        if problem is not None:
            raise ToolError(
                f"{current} redirected ({response.status_code}) to {target}, which was not "
                f"followed: {problem}"
            )
        return target

    async def _read(self, url: str, response: httpx2.Response) -> Page:
        if response.status_code >= 400:
            raise ToolError(
                f"{url} answered HTTP {response.status_code} {response.reason_phrase}".rstrip()
            )
        limit = self.settings.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise ToolError(_too_large(url, int(declared), limit))
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise ToolError(_too_large(url, None, limit))
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        text = bytes(body).decode(response.encoding or "utf-8", errors="replace")
        return _page(url, response.status_code, content_type, len(body), text)


def url_problem(url: str) -> str | None:
    """Why `url` cannot be fetched at all, or None."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises for a bad port
    except ValueError as exc:
        return f"{url!r} is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return f"web_fetch fetches http(s) URLs only, not {parts.scheme or 'a URL without scheme'}"
    if not parts.hostname:
        return f"{url!r} has no host name"
    if parts.username or parts.password:
        return (
            "URLs with a user name or password are not fetched (credentials do not belong in URLs)"
        )
    return None


def _port(url: str) -> int:
    parts = urlsplit(url.strip())
    return parts.port or (443 if parts.scheme == "https" else 80)


def _reason(exc: httpx2.HTTPError) -> str:
    from agentls.tools._web import BlockedAddress

    cause: BaseException = exc
    while cause.__cause__ is not None and not isinstance(cause, BlockedAddress):
        cause = cause.__cause__
    return str(cause) or type(cause).__name__


def _too_large(url: str, size: int | None, limit: int) -> str:
    what = f"{human_size(size)}" if size is not None else f"more than {human_size(limit)}"
    return (
        f"{url} is {what}, over web_fetch's limit of {human_size(limit)} (the setting "
        "`webFetch.maxBytes`); not read"
    )


def _page(url: str, status: int, content_type: str, size: int, text: str) -> Page:
    from agentls.tools._web import Page, html_to_markdown

    if content_type in _HTML or (not content_type and "<html" in text[:1000].lower()):
        return Page(
            url, status, content_type or "text/html", size, html_to_markdown(text, url), "markdown"
        )
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            shown = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            shown = text
        return Page(url, status, content_type, size, shown, "json")
    if content_type.startswith("text/") or content_type in (
        "application/xml",
        "application/x-yaml",
    ):
        return Page(url, status, content_type, size, text, "text")
    raise ToolError(
        f"{url} is {content_type or 'of an unknown type'} ({human_size(size)}): web_fetch reads "
        "HTML, Markdown, plain text and JSON only, so it cannot show this (a PDF, an image or "
        "another binary file). Ask the user for the content, or look for an HTML version"
    )


def _present(page: Page, prompt: str | None, budget: int, cached: bool) -> str:
    what = {"markdown": "converted to Markdown", "json": "JSON", "text": "text"}[page.kind]
    head = (
        f"[{page.url}: HTTP {page.status}, {page.content_type}, {human_size(page.size)}, "
        f"{what}{'; from the cache' if cached else ''}]"
    )
    if prompt:
        head += f"\n[looking for: {prompt}]"
    return f"{head}\n\n{_within(page.text, prompt, budget)}"


def _within(text: str, prompt: str | None, budget: int) -> str:
    """The text, or when it is longer than `budget`: its start, then the paragraphs that
    mention the prompt's words, with a note on what was left out."""
    if len(text) <= budget:
        return text
    words = {w.lower() for w in _WORD.findall(prompt or "")}
    head = text[: budget if not words else budget // 2]
    kept = [head]
    used = len(head)
    if words:
        rest = text[len(head) :].split("\n\n")
        for paragraph in rest:
            if used + len(paragraph) > budget:
                continue
            if words & {w.lower() for w in _WORD.findall(paragraph)}:
                kept.append(paragraph)
                used += len(paragraph) + 2
    note = (
        f"\n\n[page cut: {used:,} of {len(text):,} characters shown"
        + ("; the parts that mention the prompt's words were kept" if words else "")
        + ". Fetch a more specific URL (an anchor or sub-page) for the rest.]"
    )
    return "\n\n".join(kept) + note
