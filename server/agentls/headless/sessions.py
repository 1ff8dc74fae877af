"""`agentls sessions`: the saved sessions, read straight from their state files.

No server is started: the state files are the source of truth for resumable sessions.
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

from agentls.agent.store import SessionStore


def list_sessions(workspace: Path | None, *, as_json: bool = False) -> int:
    root = workspace.resolve() if workspace is not None else None
    summaries = SessionStore().list(root)
    if as_json:
        sys.stdout.write(json.dumps([s.to_dict() for s in summaries], indent=2) + "\n")
        return 0
    if not summaries:
        where = f" for {root}" if root is not None else ""
        sys.stdout.write(f"No saved sessions{where}.\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    from agentls.headless.ui import format_cost

    table = Table("id", "updated", "status", "tokens", "cost", "first prompt", "workspace")
    for entry in (s.to_dict() for s in summaries):
        cost = entry.get("cost_usd")
        table.add_row(
            str(entry["id"]),
            _when(entry.get("updated")),
            str(entry.get("status", "")),
            str(entry.get("tokens", "")),
            format_cost(cost),
            str(entry.get("first_prompt", ""))[:60],
            ", ".join(str(w) for w in entry.get("workspace") or []),
        )
    Console(soft_wrap=True).print(table)
    return 0


def _when(value: object) -> str:
    if isinstance(value, int | float):
        return datetime.datetime.fromtimestamp(value).strftime("%Y-%m-%d %H:%M")
    return str(value or "")
