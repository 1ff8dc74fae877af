"""VS Code (code-server) end to end: per-hunk review in the Refactor Preview (issue 30).

Runs `editor-clients/vscode/e2e/hunks.mjs`: code-server with the extension from its .vsix,
driven by Playwright in Debian's chromium, against the scripted model. A review-mode run
renames `greet` in hello.py (two hunks, lines 1 and 5); the Refactor Preview lists each
hunk as an entry of its own (one change annotation per hunk, labelled with the file's
check before review); only hunk 1 is ticked and applied. Fails, naming the install script,
when code-server, chromium or the extension's npm dependencies are missing
(`bash scripts/editor-deps.sh vscode`).
"""

from __future__ import annotations

from pathlib import Path

from tests.vscode_support import run_driver


def test_code_server_refactor_preview_lists_hunks_and_applies_the_ticked_one(
    tmp_path: Path,
) -> None:
    result = run_driver("hunks.mjs", "--screenshot", str(tmp_path / "hunks.png"))
    rows = result["hunkRows"]
    assert any(r.startswith("Hunk 1 of hello.py (line 1)") for r in rows), rows
    assert any(r.startswith("Hunk 2 of hello.py (line 5)") for r in rows), rows
    # each label carries the file's check before review
    assert all("— 0 new errors" in r for r in rows), rows
    assert result["uncheckedAtStart"] is True  # each hunk needs the user's tick
    assert result["secondTicked"] is False
    assert result["editorText"] == [
        "def welcome(name):",
        '    return "Hello, " + name',
        "",
        "",
        'print(greet("world"))',
    ]
    # the agent view lists the file with its check before review
    assert result["viewChecks"] == ["0 new errors"]
