"""VS Code: the extension's lint and unit tests, its .vsix, and the code-server end to end.

`editor-clients/vscode/e2e/run.mjs` installs the .vsix into a headless code-server, drives
it with Playwright (Debian's chromium), runs "agentls: Run Task…" against the scripted
model, accepts the refactor preview, checks the live view and "agentls: Show Status"; then
drives the agent view (a webview in the activity bar): a prompt sent from it streams in,
the preview is discarded (a notification with Show Diff / Accept Staged / Reject says the
edits stay staged), a tool call's output is expanded, a file opens in VS Code's diff
editor, one file is accepted and the other rejected in the view; and cancels a third run
by clicking the status-bar item. Fails, naming the install script, when the extension's
npm dependencies, code-server or chromium are not installed (`scripts/editor-deps.sh
vscode` installs all three).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.vscode_support import missing_extension_deps, npm, run_driver


def test_extension_lint_and_unit_tests() -> None:
    missing = missing_extension_deps()
    if missing is not None:
        pytest.fail(missing)
    lint = npm("run", "--silent", "lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    unit = npm("test")
    assert unit.returncode == 0, unit.stdout[-4000:] + unit.stderr[-2000:]
    assert "# fail 0" in unit.stdout


def test_code_server_run_task_agent_view_and_cancel(tmp_path: Path) -> None:
    result = run_driver(
        "run.mjs",
        "--screenshot",
        str(tmp_path / "e2e.png"),
        "--view-screenshot",
        str(tmp_path / "view.png"),
    )
    assert result["editorText"][0] == "def welcome(name):"
    assert "agentls.server.command" in result["startError"]  # a clear error when it can't start
    assert result["uncheckedAtStart"] >= 1  # the preview really needed the user's tick
    assert "→ Editing hello.py" in result["liveView"]  # output channel fed by agentls/event
    assert result["status"].startswith("agentls — 1 session(s)")
    assert "== cancelled" in result["cancelView"]  # status-bar click cancelled run 3
    assert (tmp_path / "e2e.png").stat().st_size > 10_000
    # the agent view
    assert result["viewContext"] == "Context: hello.py"  # the prompt box sends the file
    assert result["discardNotice"].startswith("agentls: nothing was applied")
    assert "The edits stay staged." in result["discardNotice"]
    # the reason both files were not applied is said once, for both
    assert result["discardNotice"].count("hello.py") == 1
    assert "delivering the edits" in result["headerDuringPreview"]  # not "⟳ completed"
    assert "completed" not in result["headerDuringPreview"]
    assert "delivering the edits" in result["statusDuringPreview"]
    assert {"hello.py", "greeting.txt"} <= set(result["fileLinks"])  # links to the files …
    assert result["webLinks"] == []  # … not to http://hello.py
    assert "rejected 1 file(s)" in result["statusAfterDecisions"]  # not "2 file(s) not applied"
    assert result["discardActions"] == ["Show Diff", "Accept Staged", "Reject"]
    assert any(
        line.startswith("✓Reading hello.py") and line.endswith(" ms")
        for line in result["toolLines"]
    )
    assert "def welcome(name):" in result["toolOutput"]  # collapsible output, fetched on open
    # tokens, then the cost (or "cost n/a" for a model without a known price)
    assert re.fullmatch(r"[\d,]+ in · [\d,]+ out · (\$[\d.]+|cost n/a)", result["usageLine"])
    # each file with its state, and the check before review under it (docs/review.md)
    assert result["viewFiles"] == ["hello.pyrejected0 new errors", "greeting.txtapplied"]
    assert "Let me polish the greeting." in result["viewText"]  # Markdown rendered
    assert (tmp_path / "view.png").stat().st_size > 10_000
