"""Assemble the tool pool and serialise it for the API.

Order (as Claude Code builds its pool): built-ins (filtered by mode, deny rules,
`is_enabled`) + external tools → de-duplicate by name with built-ins winning → sort by name.
The serialised array is computed once per pool (and per set of discovered deferred tools) so
every turn of a session sends byte-identical tools (prompt cache) until a `tool_search`
discovery adds to it.

Deferred tools (docs/mcp.md, "Deferred tools"): a tool with `should_defer`, or — once the
pool is large — every tool with `defer_when_large` (MCP tools), is left out of the `tools`
array. The model sees their names in a system reminder and loads them with `tool_search`;
the session derives the discovered set from its history and hands it to `set_discovered`
before each request.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from agentls.agent.framework.tool_profile import COMPACT_TOOLS, compact_definition
from agentls.agent.framework.tool_search import TOOL_SEARCH_NAME as TOOL_SEARCH_NAME
from agentls.agent.framework.tool_search import AnyTool as AnyTool
from agentls.agent.framework.tool_search import ToolSearch
from agentls.agent.framework.tool_search import discovered_tool_names as discovered_tool_names
from agentls.agent.protocol.messages import ToolParam, ToolUnionParam, cache_control
from agentls.config import ToolSearchSettings as ToolSearchSettings

if TYPE_CHECKING:
    from anthropic.types import ToolSearchToolBm25_20251119Param, ToolSearchToolRegex20251119Param


def server_side_search_tool(variant: Literal["bm25", "regex"]) -> ToolUnionParam:
    """Anthropic's own tool-search tool, carrying the cache breakpoint."""
    if variant == "regex":
        regex: ToolSearchToolRegex20251119Param = {
            "type": "tool_search_tool_regex_20251119",
            "name": "tool_search_tool_regex",
            "cache_control": cache_control(),
        }
        return regex
    bm25: ToolSearchToolBm25_20251119Param = {
        "type": "tool_search_tool_bm25_20251119",
        "name": "tool_search_tool_bm25",
        "cache_control": cache_control(),
    }
    return bm25


class ToolSource(Protocol):
    """Tools that are only known after something asynchronous happened (MCP servers started).

    A session awaits its sources once, before its first run, so servers start lazily and the
    session's pool is fixed (byte-stable) from then on.
    """

    async def tools(self) -> Sequence[AnyTool]: ...


log = logging.getLogger(__name__)


async def load_sources(sources: Sequence[ToolSource]) -> list[tuple[ToolSource, Sequence[AnyTool]]]:
    """Each source's tools, awaited together; a failing source is logged and gives none
    (the others still count). Cancellation goes through."""
    results = await asyncio.gather(*(s.tools() for s in sources), return_exceptions=True)
    loaded: list[tuple[ToolSource, Sequence[AnyTool]]] = []
    for source, result in zip(sources, results, strict=True):
        if isinstance(result, BaseException):
            if isinstance(result, asyncio.CancelledError):
                raise result
            log.error("tool source %r failed: %s", source, result)
            continue
        loaded.append((source, result))
    return loaded


def source_instructions(loaded: Sequence[tuple[ToolSource, Sequence[AnyTool]]]) -> str:
    """What the sources want in the system prompt about the tools they gave (a source's
    optional `instructions_for(tools)`, e.g. MCP servers' `instructions`)."""
    parts = []
    for source, tools in loaded:
        describe = getattr(source, "instructions_for", None)
        text = describe(tools) if callable(describe) and tools else ""
        if isinstance(text, str) and text.strip():
            parts.append(text.strip())
    return "\n\n".join(parts)


@dataclass(frozen=True)
class PoolFilter:
    """What may be offered: `read_only` for plan mode; `denied` for blanket deny rules."""

    read_only: bool = False
    denied: Callable[[str], bool] = lambda name: False


def _offered(tool: AnyTool, pool_filter: PoolFilter) -> bool:
    if pool_filter.denied(tool.name) or not tool.is_enabled():
        return False
    return not (pool_filter.read_only and not tool.is_read_only(None))


class ToolPool:
    """The tools of one session, sorted by name, with lookup by name or alias."""

    def __init__(
        self,
        tools: Sequence[AnyTool],
        search: ToolSearchSettings | None = None,
        *,
        compact: bool = False,
    ) -> None:
        self.search = search or ToolSearchSettings()
        self.compact = compact
        """The compact profile (`agentls.agent.framework.tool_profile`): short definitions."""
        self._tools: tuple[AnyTool, ...] = tuple(sorted(tools, key=lambda t: t.name))
        self._by_name: dict[str, AnyTool] = {}
        for tool in self._tools:
            self._by_name.setdefault(tool.name, tool)
        for tool in self._tools:
            for alias in tool.aliases:
                self._by_name.setdefault(alias, tool)
        self.deferred: frozenset[str] = _deferred_names(self._tools, self.search)
        self._discovered: frozenset[str] = frozenset()
        self._api_tools: dict[frozenset[str], list[ToolUnionParam]] = {}

    @classmethod
    def assemble(
        cls,
        builtins: Iterable[AnyTool],
        external: Iterable[AnyTool] = (),
        pool_filter: PoolFilter | None = None,
        search: ToolSearchSettings | None = None,
        *,
        compact: bool = False,
    ) -> ToolPool:
        """Filter, de-duplicate (built-ins win) and sort; add `tool_search` when some tools
        end up deferred and the search runs client-side. `compact`: only the compact
        profile's built-ins, with short definitions."""
        flt = pool_filter or PoolFilter()
        settings = search or ToolSearchSettings()
        chosen: dict[str, AnyTool] = {}
        for tool in builtins:
            if compact and tool.name not in COMPACT_TOOLS:
                continue
            if _offered(tool, flt):
                chosen.setdefault(tool.name, tool)
        for tool in external:
            if _offered(tool, flt):
                chosen.setdefault(tool.name, tool)
        chosen.pop(TOOL_SEARCH_NAME, None)
        tools = list(chosen.values())
        deferred = _deferred_names(tools, settings)
        if deferred and not settings.server_side:
            catalog = [t for t in sorted(tools, key=lambda t: t.name) if t.name in deferred]
            tools.append(ToolSearch(catalog, settings.max_results))
        return cls(tools, settings, compact=compact)

    def __iter__(self) -> Any:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self._tools]

    def find(self, name: str) -> AnyTool | None:
        return self._by_name.get(name)

    @property
    def deferred_tools(self) -> list[AnyTool]:
        return [t for t in self._tools if t.name in self.deferred]

    @property
    def discovered(self) -> frozenset[str]:
        """Deferred tools whose schemas the latest request carried (so they may be called)."""
        return self._discovered

    def set_discovered(self, names: Collection[str]) -> None:
        """Record which deferred tools the history has loaded; called before each request."""
        self._discovered = self.deferred.intersection(names)

    def needs_discovery(self, name: str) -> bool:
        """Whether calling `name` now must first go through `tool_search`."""
        return (
            name in self.deferred and not self.search.server_side and name not in self._discovered
        )

    def api_tools(self) -> list[ToolUnionParam]:
        """The `tools` request parameter: the same list object for the same discovered set,
        so the bytes only change when a discovery adds a tool."""
        key = self._discovered
        cached = self._api_tools.get(key)
        if cached is None:
            cached = self._build_api_tools(key)
            self._api_tools[key] = cached
        return cached

    def _build_api_tools(self, discovered: frozenset[str]) -> list[ToolUnionParam]:
        if self.search.server_side and self.deferred:
            # Loaded tools first, then the server's search tool (carrying the cache
            # breakpoint), then every deferred tool marked `defer_loading`.
            loaded: list[ToolUnionParam] = [
                t.api_definition() or tool_to_api_schema(t)
                for t in self._tools
                if t.name not in self.deferred
            ]
            loaded.append(server_side_search_tool(self.search.server_side_variant))
            deferred = [tool_to_api_schema(t, defer_loading=True) for t in self.deferred_tools]
            return loaded + deferred
        schemas: list[ToolUnionParam] = [
            tool.api_definition() or self._definition(tool)
            for tool in self._tools
            if tool.name not in self.deferred or tool.name in discovered
        ]
        if schemas:
            last = dict(schemas[-1])  # a copy: a server tool's definition may be shared
            last["cache_control"] = cache_control()
            schemas[-1] = cast(ToolUnionParam, last)
        return schemas

    def _definition(self, tool: AnyTool) -> ToolParam:
        if self.compact:
            return compact_definition(tool.name, tool.description(), tool.input_schema())
        return tool_to_api_schema(tool)


def _deferred_names(tools: Sequence[AnyTool], search: ToolSearchSettings) -> frozenset[str]:
    if search.mode == "never":
        return frozenset()
    always = {t.name for t in tools if t.should_defer}
    candidates = {t.name for t in tools if t.defer_when_large and t.name != TOOL_SEARCH_NAME}
    if not candidates:
        return frozenset(always)
    deferrable = [t for t in tools if t.name in candidates]
    if search.mode == "always" or _is_large(deferrable, search):
        return frozenset(always | candidates)
    return frozenset(always)


def _is_large(tools: Sequence[AnyTool], search: ToolSearchSettings) -> bool:
    """Whether the deferrable tools (MCP tools) are many or large enough that loading them
    on demand pays: the built-in tools alone come to ~40k characters, so counting them
    would defer even a single MCP tool."""
    if len(tools) > search.max_tools:
        return True
    chars = 0
    for tool in tools:
        chars += len(tool.description()) + len(json.dumps(tool.input_schema()))
        if chars > search.max_schema_chars:
            return True
    return False


def tool_to_api_schema(tool: AnyTool, *, defer_loading: bool = False) -> ToolParam:
    schema: ToolParam = {
        "name": tool.name,
        "description": tool.description(),
        "input_schema": tool.input_schema(),
    }
    if tool.strict:
        schema["strict"] = True
    if defer_loading:
        schema["defer_loading"] = True
    return schema
