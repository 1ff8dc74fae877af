"""The tests the agent ran in a session (`run_tests` targets), kept for the checks before
review (`agentls.tools.auto_checks`), which run them again on the final changeset."""

from __future__ import annotations

import weakref

from agentls.workspace.changes import ChangeSet

__all__ = ["record_tests_run", "tests_ran"]

_RAN: weakref.WeakKeyDictionary[ChangeSet, list[str | None]] = weakref.WeakKeyDictionary()


def record_tests_run(changes: ChangeSet, target: str | None) -> None:
    """`run_tests` was called with `target` (None: the whole suite)."""
    ran = _RAN.setdefault(changes, [])
    if target in ran:
        ran.remove(target)
    ran.append(target)


def tests_ran(changes: ChangeSet) -> list[str | None]:
    """The targets, oldest first (each once, at its latest place)."""
    return list(_RAN.get(changes, []))
