"""Neovim end to end: per-hunk review in `:AgentlsDiff` (issue 30).

Runs the `hunks` case of `editor-clients/neovim/test/run_e2e.py` (script
`test/e2e_hunks.lua`, scenario `test/scenario-hunks.json`) in a real headless Neovim
against the scripted model: a run renames `greet` in hello.py (two hunks, lines 1 and 5);
in the diff, `hr` on line 5 rejects that hunk with a reason (asked with `vim.ui.input`) and
`ha` on line 1 accepts the other; the continued session's next request carries the reason.
"""

from __future__ import annotations

import pytest

from tests.test_editor_neovim import run_case


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_agentls_diff_rejects_and_accepts_the_hunk_under_the_cursor(version: str) -> None:
    result = run_case("hunks", version)
    assert result["hunks_before"] == 2
    assert result["under_cursor"] == {"index": 2, "where": "line 5"}
    # after the reject, the agent's side shows only the other hunk
    assert result["staged_after_reject"][0] == "def welcome(name):"
    assert result["staged_after_reject"][-1] == 'print(greet("world"))'
    assert result["disk"] == [
        "def welcome(name):",
        '    return "Hello, " + name',
        "",
        "",
        'print(greet("world"))',
    ]
    assert result["modified"] == []
    assert (
        "The user rejected hunk 2 of hello.py (line 5): keep the call, it is public"
        in result["last_message"]
    )
    # :AgentlsRewind lists the turns with their prompts and files
    assert result["turns_shown"] == ["1. Rename greet — hello.py", "2. go on — no files"]
    # each file's check before review: in the side buffer, and with the file in the diff
    assert result["side_checks"] == ["   ✓ hello.py: 0 new errors"], result["side_checks"]
    assert "hello.py (changed by the agent) · checks: 0 new errors" in result["diff_check"]
    if version != "0.7":
        assert result["winbar"] == "checks: 0 new errors"
