"""Pool names for MCP tools, and permission-rule matching by those names.

The Messages API accepts tool names matching `^[a-zA-Z0-9_-]{1,64}$`; MCP allows dots,
spaces in practice, and 128 characters. Names are `mcp__<server>__<tool>` with every other
character replaced by `_`; a name that is too long (or collides after sanitising) keeps a
readable prefix and gets a short hash of the original so it stays unique and stable.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME = 64
PREFIX = "mcp__"
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def sanitize(part: str) -> str:
    return _INVALID.sub("_", part) or "_"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, sanitised and at most 64 characters."""
    name = f"{PREFIX}{sanitize(server)}__{sanitize(tool)}"
    if len(name) <= MAX_NAME:
        return name
    return f"{name[: MAX_NAME - 9]}_{_digest(f'{server}/{tool}')}"


def unique_tool_names(server: str, tools: Iterable[str]) -> dict[str, str]:
    """Original MCP tool name → pool name, disambiguating names equal after sanitising."""
    result: dict[str, str] = {}
    taken: set[str] = set()
    # Names that need no sanitising keep their plain form; the others yield on a clash.
    for original in sorted(set(tools), key=lambda n: (sanitize(n) != n, n)):
        name = tool_name(server, original)
        if name in taken:
            name = f"{name[: MAX_NAME - 9]}_{_digest(f'{server}/{original}')}"
        taken.add(name)
        result[original] = name
    return result


def server_prefix(server: str) -> str:
    return f"{PREFIX}{sanitize(server)}"


def rule_matches_tool(rule: str, name: str) -> bool:
    """Whether a permission/deny rule names this tool, Claude Code style.

    `mcp__github` (or `mcp__github__*`) covers every tool of the server `github`;
    `mcp__github__create_issue` covers one tool; other rules must match exactly.
    """
    rule = rule.strip()
    if rule == name:
        return True
    if not rule.startswith(PREFIX):
        return False
    base = rule.removesuffix("__*")
    return "__" not in base[len(PREFIX) :] and name.startswith(base + "__")
