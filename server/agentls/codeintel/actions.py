"""Which code action the model means by `apply`: shared by the sources (which resolve and
run it) and the `code_actions` tool (which stages its edit), so both pick the same one."""

from __future__ import annotations

from collections.abc import Sequence

from agentls.codeintel.model import CodeAction, SourceFailed


def choose(actions: Sequence[CodeAction], apply: str) -> int:
    """Its exact title, a unique title ignoring case, or its 1-based number in the list."""
    wanted = apply.strip()
    for index, action in enumerate(actions):
        if action.title == wanted:
            return index
    loose = [i for i, a in enumerate(actions) if a.title.lower() == wanted.lower()]
    if len(loose) == 1:
        return loose[0]
    if wanted.isdigit() and 1 <= int(wanted) <= len(actions):
        return int(wanted) - 1
    titles = "\n".join(f"  {i + 1}. {a.title}" for i, a in enumerate(actions)) or "  (none)"
    raise SourceFailed(
        f"No code action is titled `{wanted}` here. The actions offered are:\n{titles}\n"
        "Give one of these titles (or its number) as `apply`.",
        final=True,
    )
