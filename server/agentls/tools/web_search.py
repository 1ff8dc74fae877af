"""`web_search`: Anthropic's server-side web search tool (`web_search_20250305`).

The API runs the searches during a model turn and streams `server_tool_use` and
`web_search_tool_result` blocks, which the history keeps unchanged (the next request must
send them back as they came). agentls never runs a search itself; this class only decides
whether the tool is offered and with which limits:

- offered when the endpoint is Anthropic's API (`webSearch.enabled: auto`), or always /
  never by setting; another endpoint (a local model, a proxy) does not know the tool;
- `max_uses`, `allowed_domains` / `blocked_domains` from the `webSearch` settings, plus a
  blocked domain for each `WebSearch(domain:…)` deny rule;
- a tool-wide `WebSearch` deny rule removes it (like any tool). A tool-wide ask rule
  removes it too: the searches run on Anthropic's servers inside one model turn, so
  agentls cannot ask before each one, and it will not run them unasked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.agent.protocol.pricing import is_anthropic_endpoint
from agentls.agent.run.prompts import search_summary
from agentls.config.web import WebSearchSettings
from agentls.errors import ToolError

if TYPE_CHECKING:
    from anthropic.types import WebSearchTool20250305Param

    from agentls.agent.protocol.messages import ToolUnionParam
    from agentls.agent.rules.rule import RuleSet

WEB_SEARCH_TYPE = "web_search_20250305"
"""The version of the server tool agentls offers."""


class WebSearchInput(ToolInput):
    query: str


class WebSearch(Tool[WebSearchInput]):
    name = "web_search"
    input_model = WebSearchInput
    usage = "Search the web (runs on Anthropic's servers; results come with their sources)."

    def __init__(
        self,
        settings: WebSearchSettings | None = None,
        base_url: str | None = None,
        rules: RuleSet | None = None,
    ) -> None:
        self.settings = settings or WebSearchSettings()
        self.base_url = base_url
        self.blocked = _blocked_domains(self.settings, rules)
        self.asked_by_rule = _ask_rule(rules)

    def is_read_only(self, input: WebSearchInput | None = None) -> bool:
        return True

    def is_enabled(self) -> bool:
        return self.offered()[0]

    def offered(self) -> tuple[bool, str]:
        """Whether the tool is offered, and why (for `agentls doctor` and the status)."""
        mode = self.settings.enabled
        if mode == "never":
            return False, "not offered: the setting `webSearch.enabled` is `never`"
        if self.asked_by_rule is not None:
            return False, (
                f"not offered: the rule `{self.asked_by_rule}` asks before each search, but "
                "searches run on Anthropic's servers inside a model turn, where agentls cannot "
                "ask; allow `WebSearch` (or remove the ask rule) to use it"
            )
        if mode == "always":
            return True, f"offered (`webSearch.enabled: always`, endpoint {self.endpoint})"
        if is_anthropic_endpoint(self.base_url):
            return True, f"offered: the endpoint {self.endpoint} is Anthropic's API"
        return False, (
            f"not offered: the endpoint {self.endpoint} is not Anthropic's API, and the "
            "server-side web search runs on Anthropic's servers. Set `webSearch.enabled` to "
            "`always` if this endpoint passes server tools on to Anthropic"
        )

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.anthropic.com"

    def api_definition(self) -> ToolUnionParam:
        definition: WebSearchTool20250305Param = {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": self.settings.max_uses,
        }
        allowed = [d for d in self.settings.allowed_domains if d not in self.blocked]
        if allowed:  # the API takes one of the two lists, never both
            definition["allowed_domains"] = allowed
        elif self.blocked:
            definition["blocked_domains"] = list(self.blocked)
        return definition

    def summary(self, input: WebSearchInput) -> str:
        return search_summary(input.query)

    async def call(self, input: WebSearchInput, ctx: ToolContext) -> str:
        raise ToolError(
            "web_search runs on Anthropic's servers and cannot be called as a client tool here"
        )


def _blocked_domains(settings: WebSearchSettings, rules: RuleSet | None) -> tuple[str, ...]:
    blocked = list(settings.blocked_domains)
    for rule in rules.of("deny") if rules is not None else ():
        if (
            rule.covers_tool("web_search")
            and rule.specifier
            and rule.specifier.startswith("domain:")
        ):
            host = rule.specifier[len("domain:") :].strip().removeprefix("*.")
            if host and host != "*":
                blocked.append(host)
    return tuple(dict.fromkeys(blocked))


def _ask_rule(rules: RuleSet | None) -> str | None:
    for rule in rules.of("ask") if rules is not None else ():
        if rule.covers_tool("web_search"):
            return rule.text
    return None
