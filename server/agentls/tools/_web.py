"""What `web_fetch` needs besides the tool: the private-address guard, a guarded HTTP
client, the 15-minute cache, and HTML → Markdown.

The address guard (`agentls.workspace.netguard`, shared with http hooks) runs twice, on
purpose. `web_fetch`'s `assess` resolves the URL's host
and reports a private, loopback or link-local address as a refusal (a fact for the
permission step, with a clear message before anything is sent). The HTTP client's network
backend resolves again at connection time and connects only to the addresses it checked,
so a name that resolves differently the second time (DNS rebinding), or a redirect, cannot
reach a private address either.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx2

from agentls.workspace.core import Attachment, Workspace
from agentls.workspace.netguard import (
    AddressGuard,
    BlockedAddress,
    GuardedBackend,
    IPAddress,
    IPNetwork,
    address_kind,
    guarded_transport_client,
)

__all__ = [
    "ACCEPT",
    "USER_AGENT",
    "AddressGuard",
    "BlockedAddress",
    "GuardedBackend",
    "IPAddress",
    "IPNetwork",
    "Page",
    "PageCache",
    "address_kind",
    "guarded_client",
    "html_to_markdown",
    "page_cache",
]


def guarded_client(guard: AddressGuard, timeout: float) -> httpx2.AsyncClient:
    """An HTTP client whose every connection goes through the guard. It ignores proxy
    variables (a proxy would connect on our behalf, past the guard) and follows no
    redirect itself: `web_fetch` checks each one against the permission rules first."""
    return guarded_transport_client(guard, timeout, {"User-Agent": USER_AGENT, "Accept": ACCEPT})


USER_AGENT = "agentls-web-fetch/0.1 (+https://github.com/agentls/agentls)"
ACCEPT = "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,*/*;q=0.5"


# -- the cache --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    """A fetched page, as `web_fetch` shows it (before the per-call budget)."""

    url: str
    status: int
    content_type: str
    size: int
    text: str
    kind: str
    """"markdown" (converted HTML), "text" or "json"."""


@dataclass
class PageCache:
    """URL → page for `cache_minutes`, per workspace (as Claude Code's 15-minute cache)."""

    pages: dict[str, tuple[float, Page]] = field(default_factory=dict)
    limit: int = 100

    def get(self, url: str, max_age: float) -> Page | None:
        found = self.pages.get(url)
        if found is None or time.monotonic() - found[0] > max_age:
            self.pages.pop(url, None)
            return None
        return found[1]

    def put(self, urls: Sequence[str], page: Page) -> None:
        if len(self.pages) >= self.limit:
            oldest = min(self.pages, key=lambda u: self.pages[u][0])
            self.pages.pop(oldest)
        for url in urls:
            self.pages[url] = (time.monotonic(), page)


_CACHE: Attachment[PageCache] = Attachment("web_fetch cache")


def page_cache(workspace: Workspace) -> PageCache:
    return workspace.attached(_CACHE, PageCache)


# -- HTML → Markdown ----------------------------------------------------------------------------


def html_to_markdown(html: str, url: str) -> str:
    """Markdown of a page (navigation, scripts and styles left out), with html-to-markdown."""
    import html_to_markdown as converter

    options = converter.ConversionOptions(
        base_url=url,
        extract_metadata=True,
        preprocessing=converter.PreprocessingOptions(enabled=True, remove_navigation=True),
    )
    result = converter.convert(html, options)
    return str(result.content or "").strip()
