"""The runtime decides when staged edits are delivered; hosts only carry it out."""

from __future__ import annotations

import pytest

from agentls.runtime.delivery import delivery_for


@pytest.mark.parametrize(
    ("mode", "permission_mode", "final", "expected"),
    [
        ("plan", "bypassPermissions", True, "none"),
        ("auto", "default", False, "write"),
        ("review", "default", False, "later"),
        ("review", "default", True, "review"),
        ("review", "dontAsk", True, "review"),
        ("review", "acceptEdits", True, "write"),
        ("review", "bypassPermissions", True, "write"),
    ],
)
def test_delivery_by_run_mode_and_permission_mode(
    mode: str, permission_mode: str, final: bool, expected: str
) -> None:
    assert delivery_for(mode, permission_mode, final=final) == expected  # type: ignore[arg-type]


def test_nothing_staged_is_never_delivered() -> None:
    assert delivery_for("auto", "bypassPermissions", final=True, empty=True) == "none"
