"""When a run's staged edits reach the files: decided here, for every host.

The runtime (`agentls.host.AgentHost`) asks `delivery_for` with the session's run mode and
permission mode, and hands a host's `EditorPort.deliver` only what to do now (`Handoff`:
write, or review with the user); the host carries it out in its own protocol and never
looks at permission modes.

- `none`: nothing to deliver (no edits, or plan mode: nothing is staged);
- `write`: write them now without asking — auto delivery after each write tool (its
  permission step asked already, unless the mode or a rule allowed it), or a review run's
  end in `acceptEdits` / `bypassPermissions` mode;
- `review`: at a review run's end in every other mode, ask the user with the whole diff;
- `later`: a review run's edit as it is staged: wait for the end.
"""

from __future__ import annotations

from typing import Literal

from agentls.config.base import PermissionMode, RunMode

Delivery = Literal["none", "write", "review", "later"]

Handoff = Literal["write", "review"]
"""What a host's `EditorPort.deliver` is told to do (the other answers need no host)."""

WRITE_WITHOUT_ASKING: tuple[PermissionMode, ...] = ("acceptEdits", "bypassPermissions")
"""Permission modes in which a review run's edits are written at its end without a question."""


def delivery_for(
    mode: RunMode, permission_mode: PermissionMode, *, final: bool, empty: bool = False
) -> Delivery:
    """What to do with a session's staged edits now (see the module docstring)."""
    if empty or mode == "plan":
        return "none"
    if mode == "auto":
        return "write"
    if not final:
        return "later"
    return "write" if permission_mode in WRITE_WITHOUT_ASKING else "review"
