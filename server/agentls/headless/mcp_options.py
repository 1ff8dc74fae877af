"""The CLI's MCP options: `--allow-mcp`, and where the server's notices go.

`--allow-mcp` approves the workspace's `.mcp.json` servers for this one command (nothing
is remembered): alone, all of them; `--allow-mcp=NAME[,NAME…]` (repeatable) only those.
It reaches the server as the user-level settings `mcp.enableAllProjectMcpServers` /
`mcp.enabledMcpjsonServers` in `initializationOptions`, which a repository's own files can
never set. Without it (and without a terminal to ask on), servers awaiting approval are
named on stderr with the way to approve them.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from agentls.agent.protocol.events import EventPayload

ALL = "*"
_NAME = re.compile(r"^[^\s,]+$")


def server_names(value: str) -> str:
    """argparse type: a comma-separated list of server names (no spaces: a prompt that
    followed `--allow-mcp` by mistake is refused with the fix)."""
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names or not all(_NAME.match(n) for n in names):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a list of MCP server names; write --allow-mcp=NAME[,NAME], "
            "or put a bare --allow-mcp after the prompt"
        )
    return ",".join(names)


def add_allow_mcp(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-mcp",
        nargs="?",
        const=ALL,
        action="append",
        type=server_names,
        metavar="NAMES",
        help="start the workspace's .mcp.json servers without asking, for this command: "
        "all of them, or only --allow-mcp=NAME[,NAME] (repeatable)",
    )


class McpSwitches(TypedDict, total=False):
    """The `mcp` settings `--allow-mcp` sets (keys of `McpSettings`)."""

    enableAllProjectMcpServers: bool
    enabledMcpjsonServers: list[str]


def mcp_settings(allow_mcp: list[str] | None) -> McpSwitches:
    """The `mcp` settings `--allow-mcp` stands for ({} without it)."""
    if not allow_mcp:
        return {}
    if ALL in allow_mcp:
        return {"enableAllProjectMcpServers": True}
    names = sorted({n for value in allow_mcp for n in value.split(",")})
    return {"enabledMcpjsonServers": names}


def with_mcp(
    options: dict[str, object] | None, allow_mcp: list[str] | None
) -> dict[str, object] | None:
    """`initializationOptions` with the `mcp` settings of `--allow-mcp` added."""
    settings = mcp_settings(allow_mcp)
    if not settings:
        return options
    merged = dict(options or {})
    given = merged.get("mcp")
    merged["mcp"] = {**(given if isinstance(given, dict) else {}), **settings}
    return merged


class StderrNotices:
    """A `Listener` for commands without a run view: the server's warnings and errors
    (MCP servers awaiting approval, failed to start, bad configuration) on stderr."""

    def on_event(self, event: EventPayload) -> None:
        return None

    def on_progress(self, kind: str, message: str) -> None:
        return None

    def on_message(self, kind: int, message: str) -> None:
        if kind <= 2:  # error, warning
            sys.stderr.write(f"{message}\n")
            sys.stderr.flush()
