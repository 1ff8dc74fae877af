"""Settings of the web tools: `web_fetch` (fetched here) and `web_search` (Anthropic's
server-side search), see docs/tools.md."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, field_validator

from agentls.config.base import SettingsModel, meta
from agentls.config.problems import entry_error


class WebFetchSettings(SettingsModel):
    """Limits of the `web_fetch` tool and the private addresses it may reach."""

    allowed_private_addresses: list[str] = Field(
        default_factory=list, json_schema_extra=meta(user_only=True, restricted=True)
    )
    """Loopback, link-local and private addresses (`127.0.0.1`, `10.0.0.0/8`, `::1`) that
    `web_fetch` may reach. Everything else in those ranges is refused, also when a name
    resolves to it or a redirect leads there. User settings only."""
    timeout: float = Field(default=30.0, gt=0, le=300)
    """Seconds one fetch may take in all (connecting, redirects, reading)."""
    max_bytes: int = Field(default=5_000_000, ge=1_000, le=100_000_000)
    """The largest response body read; a larger one is refused."""
    max_chars: int = Field(default=100_000, ge=1_000, le=1_000_000)
    """Characters of Markdown returned to the model at most (the rest is cut, with a note)."""
    max_redirects: int = Field(default=5, ge=0, le=20)
    """Redirects followed at most; each one is checked against the permission rules."""
    cache_minutes: float = Field(default=15.0, ge=0, le=1440)
    """How long a fetched page is reused for the same URL (0: no cache)."""

    @field_validator("allowed_private_addresses")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for text in value:
            try:
                ipaddress.ip_network(text.strip(), strict=False)
            except ValueError:
                raise entry_error(
                    f"{text!r} is not an IP address or network (e.g. 127.0.0.1, 10.0.0.0/8)"
                ) from None
        return value


class WebSearchSettings(SettingsModel):
    """Anthropic's server-side web search (`web_search_20250305`)."""

    enabled: Literal["auto", "always", "never"] = Field(
        default="auto", json_schema_extra=meta(restricted=True)
    )
    """`auto`: offered when the endpoint is Anthropic's API; `always`: also through another
    endpoint that passes server tools on to Anthropic (a proxy); `never`: not offered."""
    max_uses: int = Field(default=5, ge=1, le=50)
    """Searches per model request at most (`max_uses`)."""
    allowed_domains: list[str] = Field(default_factory=list)
    """Only results from these domains (`allowed_domains`)."""
    blocked_domains: list[str] = Field(default_factory=list)
    """Never results from these domains (`blocked_domains`; `WebSearch(domain:…)` deny rules
    are added)."""
