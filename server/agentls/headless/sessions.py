"""`agentls sessions`: the saved sessions, read straight from their state files; and the
short id prefixes every command accepts in place of a full session id.

No server is started: the state files are the source of truth for resumable sessions.
"""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from agentls.agent.persistence.store import STATE_SUFFIX, SessionStore

SHORT_ID = 6
"""Shortest prefix shown (like git's short hashes); longer where needed to be unique."""


class AmbiguousSession(ValueError):
    """A prefix that starts more than one saved session id."""


def known_ids(store: SessionStore | None = None) -> list[str]:
    """Every saved session id (state files and transcripts), without reading them."""
    folder = (store or SessionStore()).folder
    if not folder.is_dir():
        return []
    ids = {p.name[: -len(STATE_SUFFIX)] for p in folder.glob(f"*{STATE_SUFFIX}")}
    ids.update(p.stem for p in folder.glob("*.jsonl"))
    return sorted(ids)


def resolve_id(prefix: str, store: SessionStore | None = None) -> str:
    """The full id of the one saved session `prefix` starts; `prefix` itself when it is a
    full id or starts none (the server then says the session is unknown)."""
    ids = known_ids(store)
    if prefix in ids or not prefix:
        return prefix
    matches = [i for i in ids if i.startswith(prefix)]
    if len(matches) > 1:
        shown = ", ".join(matches[:6]) + (", …" if len(matches) > 6 else "")
        raise AmbiguousSession(f"session id prefix {prefix!r} is ambiguous: {shown}")
    return matches[0] if matches else prefix


def short_ids(ids: Iterable[str], among: Iterable[str]) -> dict[str, str]:
    """The shortest prefix (at least SHORT_ID characters) of each id that no other id of
    `among` starts with."""
    others = sorted(set(among))
    out = {}
    for full in ids:
        length = min(SHORT_ID, len(full))
        while length < len(full) and any(o != full and o.startswith(full[:length]) for o in others):
            length += 1
        out[full] = full[:length]
    return out


def list_sessions(workspace: Path | None, *, as_json: bool = False) -> int:
    root = workspace.resolve() if workspace is not None else None
    store = SessionStore()
    summaries = store.list(root)
    if as_json:
        sys.stdout.write(json.dumps(summaries, indent=2) + "\n")
        return 0
    if not summaries:
        where = f" for {root}" if root is not None else ""
        sys.stdout.write(f"No saved sessions{where}.\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    from agentls.headless.ui import format_cost

    short = short_ids([s["id"] for s in summaries], known_ids(store))
    table = Table("id", "updated", "status", "tokens", "cost", "first prompt", "workspace")
    table.columns[0].no_wrap = True
    for entry in summaries:
        cost = entry.get("cost_usd")
        table.add_row(
            short[str(entry["id"])],
            _when(entry.get("updated")),
            str(entry.get("status", "")),
            str(entry.get("tokens", "")),
            format_cost(cost),
            str(entry.get("first_prompt", ""))[:60],
            ", ".join(str(w) for w in entry.get("workspace") or []),
        )
    console = Console()
    console.print(table)
    console.print(
        "[dim]Any command takes an id prefix: agentls resume ID PROMPT, agentls transcript ID, "
        "agentls run --session ID[/dim]"
    )
    return 0


def _when(value: object) -> str:
    if isinstance(value, int | float):
        return datetime.datetime.fromtimestamp(value).strftime("%Y-%m-%d %H:%M")
    return str(value or "")
