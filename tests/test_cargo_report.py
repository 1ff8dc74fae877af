"""`cargo test` text, in the panic formats of old and new Rust (Debian ships 1.63; 1.73
changed the format), gives each failure its message and location."""

from __future__ import annotations

import pytest

from agentls.workspace.test_text_reports import parse_cargo_test

HEAD = (
    "running 2 tests\ntest t::a ... FAILED\ntest t::b ... ok\n\n"
    "failures:\n\n---- t::a stdout ----\n"
)
TAIL = "\n\nfailures:\n    t::a\n\ntest result: FAILED. 1 passed; 1 failed\n"
NEW = (
    "thread 't::a' panicked at src/lib.rs:3:5:\n"
    "assertion `left == right` failed\n  left: 1\n right: 2"
)
OLD = (
    "thread 't::a' panicked at 'assertion failed: `(left == right)`\n"
    "  left: `1`,\n right: `2`', src/lib.rs:3:5"
)


@pytest.mark.parametrize("panic", [NEW, OLD], ids=["rust>=1.73", "rust<1.73"])
def test_failure_message_and_location(panic: str) -> None:
    report = parse_cargo_test(HEAD + panic + TAIL)
    assert (report.passed, report.failed) == (1, 1)
    [failed] = [case for case in report.cases if case.outcome == "failed"]
    assert (failed.test_id, failed.file, failed.line) == ("t::a", "src/lib.rs", 3)
    assert failed.message.startswith("assertion")
    assert "left" in failed.details
    assert "right" in failed.details
