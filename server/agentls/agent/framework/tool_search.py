"""`tool_search`: load deferred tools by name (`select:`) or find them by keywords (docs/mcp.md).

It lives in the agent core, beside the registry that decides which tools are deferred: it
needs nothing from the workspace, and the registry adds it to a pool by itself.

Deferred tools are not in the request's `tools` array; the model only sees their names in a
system reminder. A successful search returns a small JSON object whose `loaded` list names
the tools; the session scans its history for those results (`discovered_tool_names`) and
adds the tools' full definitions to every later request. Deriving the set from the history,
rather than keeping it in memory, means a resumed conversation keeps its loaded tools.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput, ToolOutput, one_line
from agentls.agent.protocol.messages import MessageParam, blocks_of

__all__ = [
    "TOOL_SEARCH_NAME",
    "ToolSearch",
    "ToolSearchInput",
    "discovered_tool_names",
    "rank_tools",
]

AnyTool = Tool[Any]
TOOL_SEARCH_NAME = "tool_search"
SELECT_PREFIX = "select:"


class ToolSearchInput(ToolInput):
    query: str = Field(
        description=(
            'Either "select:NAME" or "select:NAME1,NAME2" to load tools by exact name, or '
            "keywords describing the capability you need (matched against tool names, "
            "descriptions and parameter names). Prefix a keyword with + to require it."
        ),
        min_length=1,
    )
    max_results: int = Field(
        default=5, ge=1, le=50, description="Most tools to load for a keyword query."
    )


class ToolSearch(Tool[ToolSearchInput]):
    """Searches the pool's deferred tools; holds them as its catalogue."""

    name = TOOL_SEARCH_NAME
    usage = """Loads deferred tools so you can call them. Deferred tools are listed by name \
(with a one-line hint) in a system reminder; until loaded, only the name is known and there \
is no parameter schema, so calling one fails.
- If you know the tool you need, load it directly: query "select:mcp__server__tool" (several: \
"select:a,b").
- Otherwise search with keywords, e.g. "create issue github" or "+calendar event"; the best \
matches (at most max_results) are loaded.
- After a successful search, the loaded tools' full definitions are part of your tools from \
your next turn on; call them normally then. Load only what you need."""
    search_hint = "find load deferred tools mcp"
    input_model = ToolSearchInput

    def __init__(self, catalog: Sequence[AnyTool], default_max_results: int = 5) -> None:
        self.catalog: dict[str, AnyTool] = {t.name: t for t in catalog}
        self.default_max_results = default_max_results
        self._index: list[SearchEntry] | None = None

    def is_read_only(self, input: ToolSearchInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: ToolSearchInput) -> bool:
        return True

    def summary(self, input: ToolSearchInput) -> str:
        return f"Searching tools for {input.query!r}"

    async def call(self, input: ToolSearchInput, ctx: ToolContext) -> ToolOutput:
        query = input.query.strip()
        if query.lower().startswith(SELECT_PREFIX):
            names = [n.strip() for n in query[len(SELECT_PREFIX) :].split(",") if n.strip()]
            return self._select(names)
        limit = input.max_results
        if "max_results" not in input.model_fields_set:
            limit = self.default_max_results
        return self._keywords(query, limit)

    def _select(self, names: list[str]) -> ToolOutput:
        loaded = [n for n in dict.fromkeys(names) if n in self.catalog]
        missing = [n for n in dict.fromkeys(names) if n not in self.catalog]
        result: SearchResult = {"loaded": loaded, "tools": self._describe(loaded)}
        if missing:
            result["not_found"] = {
                n: difflib.get_close_matches(n, list(self.catalog), n=3, cutoff=0.5)
                for n in missing
            }
        result["note"] = _note(loaded, missing)
        return ToolOutput(_dump(result), is_error=not loaded)

    def _keywords(self, query: str, limit: int) -> ToolOutput:
        if self._index is None:
            self._index = [SearchEntry.of(t) for t in self.catalog.values()]
        ranked = rank_tools(query, self._index)
        loaded = [t.name for t, _ in ranked[:limit]]
        result: SearchResult = {"loaded": loaded, "tools": self._describe(loaded)}
        if loaded:
            result["note"] = (
                "These tools are loaded; call them directly from your next turn on."
                + (
                    f" {len(ranked) - len(loaded)} more matched."
                    if len(ranked) > len(loaded)
                    else ""
                )
            )
        else:
            result["note"] = (
                f"No deferred tool matched {query!r} among {len(self.catalog)} deferred tools. "
                "Try other keywords, or select a name from the deferred-tools reminder."
            )
        return ToolOutput(_dump(result))

    def _describe(self, names: Iterable[str]) -> list[ToolBrief]:
        return [{"name": n, "description": one_line(self.catalog[n].description())} for n in names]


class ToolBrief(TypedDict):
    name: str
    description: str


class SearchResult(TypedDict):
    """What `tool_search` answers, as JSON: the tools it loaded and a note for the model."""

    loaded: list[str]
    tools: list[ToolBrief]
    not_found: NotRequired[dict[str, list[str]]]
    """Close matches for each selected name that is not a deferred tool."""
    note: NotRequired[str]


def _note(loaded: list[str], missing: list[str]) -> str:
    parts = []
    if loaded:
        parts.append("Loaded; call them directly from your next turn on.")
    if missing:
        parts.append(
            "Not deferred tools: "
            + ", ".join(missing)
            + ". Check the spelling against the deferred-tools reminder (see not_found for "
            "close matches); tools already in your tool list need no loading."
        )
    return " ".join(parts)


def _dump(result: SearchResult) -> str:
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


_WORD = re.compile(r"[A-Za-z0-9]+")


def _words(text: str) -> set[str]:
    """Lower-case words, with snake_case, kebab-case and camelCase split apart."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return {w.lower() for w in _WORD.findall(spaced)}


def _param_names(tool: AnyTool) -> set[str]:
    props = tool.input_schema().get("properties")
    names: set[str] = set()
    if isinstance(props, dict):
        for key in props:
            names.add(str(key).lower())
            names |= _words(str(key))
    return names


@dataclass(frozen=True)
class SearchEntry:
    """What keyword search looks at, computed once per tool (schemas are costly to build)."""

    tool: AnyTool
    name: str
    name_words: frozenset[str]
    params: frozenset[str]
    text: str
    text_words: frozenset[str]

    @classmethod
    def of(cls, tool: AnyTool) -> SearchEntry:
        text = f"{tool.description()} {tool.search_hint}".lower()
        return cls(
            tool,
            tool.name.lower(),
            frozenset(_words(tool.name)),
            frozenset(_param_names(tool)),
            text,
            frozenset(_words(text)),
        )

    def score(self, term: str) -> float:
        term_score = 0.0
        if term == self.name:
            term_score = 20
        elif term in self.name_words:
            term_score = 10
        elif term in self.name:
            term_score = 6
        if term in self.params:
            term_score = max(term_score, 4)
        if term in self.text_words:
            term_score += 2
        elif term in self.text:
            term_score += 1
        return term_score


def rank_tools(query: str, tools: Iterable[AnyTool | SearchEntry]) -> list[tuple[AnyTool, float]]:
    """Tools matching the keywords, best first (ties by name, so results are stable).

    A term scores most as a whole word of the name, then as part of the name, then as a
    parameter name, then in the description or search hint. `+term` must match somewhere.
    """
    terms = [t.lower() for t in query.split() if t.strip("+")]
    required = [t[1:] for t in terms if t.startswith("+") and len(t) > 1]
    terms = [t.lstrip("+") for t in terms]
    if not terms:
        return []
    scored: list[tuple[AnyTool, float]] = []
    for item in tools:
        entry = item if isinstance(item, SearchEntry) else SearchEntry.of(item)
        score = 0.0
        matched: set[str] = set()
        for term in terms:
            term_score = entry.score(term)
            if term_score:
                matched.add(term)
            score += term_score
        if score and all(r in matched for r in required):
            scored.append((entry.tool, score))
    scored.sort(key=lambda pair: (-pair[1], pair[0].name))
    return scored


def discovered_tool_names(messages: Sequence[MessageParam]) -> set[str]:
    """Names loaded by `tool_search` calls anywhere in the history.

    A `tool_search` result is a JSON object whose `loaded` list names the tools it loaded
    (see `ToolSearch`); the history is the only state, so resume keeps them.
    """
    search_ids: set[str] = set()
    found: set[str] = set()
    for message in messages:
        for block in blocks_of(message):
            if block["type"] == "tool_use" and block["name"] == TOOL_SEARCH_NAME:
                search_ids.add(block["id"])
            elif block["type"] == "tool_result" and block["tool_use_id"] in search_ids:
                found.update(_loaded_names(block.get("content")))
    return found


def _loaded_names(content: object) -> list[str]:
    """`loaded` from a tool_search result, which may carry text a post-hook appended."""
    if isinstance(content, list):
        content = "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    if not isinstance(content, str):
        return []
    try:
        data, _ = json.JSONDecoder().raw_decode(content.lstrip())
    except ValueError:
        return []
    loaded = data.get("loaded") if isinstance(data, dict) else None
    return [str(n) for n in loaded] if isinstance(loaded, list) else []
