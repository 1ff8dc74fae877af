"""VS Code (code-server) end to end: a multi-select question, a plan approved and a todo list.

Runs `editor-clients/vscode/e2e/plan.mjs`: code-server with the extension from its .vsix,
driven by Playwright in Debian's chromium, against the scripted model. A plan-mode run
writes a todo list, asks a multi-select question — answered in the extension's quick pick
with two rows ticked — and presents a plan, shown as a Markdown document beside the editor
and approved "for review" in a quick pick; its edit then arrives in the Refactor Preview
and is applied, and the agent view shows the todo list. Fails, naming the install script,
when code-server, chromium or the extension's npm dependencies are missing
(`bash scripts/editor-deps.sh vscode`).
"""

from __future__ import annotations

from pathlib import Path

from tests.vscode_support import run_driver


def test_code_server_question_plan_approval_and_todos(tmp_path: Path) -> None:
    shot = tmp_path / "plan.png"
    result = run_driver("plan.mjs", "--screenshot", str(shot))
    # the question: the extension's own quick pick, a row per option and "Other…"
    assert result["questionTitle"] == "agentls asks (1/1): Formats"
    assert result["questionPlaceholder"] == "Which date formats should the parser accept?"
    rows = result["questionRows"]
    assert [r.split(",")[0] for r in rows][:3] == ["ISO", "RFC", "Unix"]
    assert rows[3].startswith("Other…")
    answered = result["questionResult"]
    assert not answered["is_error"]
    assert '"Which date formats should the parser accept?" → "ISO", "Unix"' in answered["content"]
    # the plan: a Markdown document beside the editor, decided in a quick pick
    assert result["planTab"].startswith("plan ")
    assert result["planTab"].endswith(".md")
    assert "Rename `greet` to `welcome` in hello.py." in result["planText"]
    assert [c.split(",")[0] for c in result["planChoices"]] == [
        "Approve and let the agent edit (review)",
        "Approve with auto-accepted edits",
        "Keep planning",
    ]
    assert "approved your plan" in result["planResult"]["content"]
    assert shot.stat().st_size > 10_000
    # the edit followed in review mode (the Refactor Preview, applied)
    assert result["editorText"][0] == "def welcome(name):"
    # the todo list in the agent view, as the agent left it
    assert result["viewTodos"] == ["☑ Rename greet", "☑ Update the caller", "◐ Running the tests"]
    assert result["viewTodoClasses"] == ["todo completed", "todo completed", "todo in_progress"]
    assert result["viewNotes"] == [
        "! Plan approved: the agent makes the changes, staged for your review."
    ]
