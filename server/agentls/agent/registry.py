"""Assemble the tool pool and serialise it for the API.

Seed order: built-ins (filtered by mode, deny rules, `is_enabled`) + external tools →
de-duplicate by name with built-ins winning → sort by name. The serialised array is
computed once per pool so every turn of a session sends byte-identical tools (prompt cache).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentls.agent.tool import Tool

AnyTool = Tool[Any]
CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}


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

    def __init__(self, tools: Sequence[AnyTool]) -> None:
        self._tools: tuple[AnyTool, ...] = tuple(sorted(tools, key=lambda t: t.name))
        self._by_name: dict[str, AnyTool] = {}
        for tool in self._tools:
            self._by_name.setdefault(tool.name, tool)
        for tool in self._tools:
            for alias in tool.aliases:
                self._by_name.setdefault(alias, tool)
        self._api_tools: list[dict[str, Any]] | None = None

    @classmethod
    def assemble(
        cls,
        builtins: Iterable[AnyTool],
        external: Iterable[AnyTool] = (),
        pool_filter: PoolFilter | None = None,
    ) -> ToolPool:
        flt = pool_filter or PoolFilter()
        chosen: dict[str, AnyTool] = {}
        for tool in builtins:
            if _offered(tool, flt):
                chosen.setdefault(tool.name, tool)
        for tool in external:
            if _offered(tool, flt):
                chosen.setdefault(tool.name, tool)
        return cls(list(chosen.values()))

    def __iter__(self) -> Any:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self._tools]

    def find(self, name: str) -> AnyTool | None:
        return self._by_name.get(name)

    def api_tools(self) -> list[dict[str, Any]]:
        """The `tools` request parameter; the same list object on every call (byte-stable)."""
        if self._api_tools is None:
            schemas = [tool_to_api_schema(t) for t in self._tools if not t.should_defer]
            if schemas:
                schemas[-1]["cache_control"] = dict(CACHE_CONTROL)
            self._api_tools = schemas
        return self._api_tools


def tool_to_api_schema(tool: AnyTool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description(),
        "input_schema": tool.input_schema(),
    }
    if tool.strict:
        schema["strict"] = True
    return schema
