"""Neovim end to end: a question and a plan answered in the editor, the todo list shown.

Runs the `plan` case of `editor-clients/neovim/test/run_e2e.py` (its script is
`test/e2e_plan.lua`, its scenario `test/scenario-plan.json`) in a real headless Neovim
against the scripted model: a plan-mode run writes a todo list (shown in the session side
buffer), asks a multi-select question (one `vim.ui.select` per choice, then "Done"),
presents a plan (a scratch buffer `agentls://plan/<session>`, decided with
`vim.ui.select`, answered asynchronously as dressing.nvim or telescope would), and the edit
it then makes arrives in review mode and is accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_editor_neovim import RENAMED, run_case


def _view_todos(view: list[str]) -> list[str]:
    start = view.index("Todo") + 1
    return view[start : view.index("", start)]


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_plan_approved_with_vim_ui_select_then_the_edit_follows_and_todos_show(
    version: str,
) -> None:
    result: dict[str, Any] = run_case("plan", version)
    assert result["status"] == "completed"
    # the plan: a Markdown scratch buffer on screen, decided with vim.ui.select
    assert result["plan_name"] == f"agentls://plan/{result['session']}"
    assert result["plan_visible"]
    assert result["plan_filetype"] == "markdown"
    assert result["plan_lines"][:2] == ["## Plan", "1. Rename `greet` to `welcome` in hello.py."]
    # the question: one vim.ui.select per choice, the chosen rows gone, then "Done"
    asked = [s for s in result["selects"] if s["kind"] == "agentls.question"]
    prompt = "agentls asks (1/1) — Scope: Which names should change?"
    assert [s["prompt"] for s in asked] == [
        f"{prompt} (one at a time)",
        f"{prompt} (chosen: greet)",
        f"{prompt} (chosen: greet, callers)",
    ]
    assert asked[0]["items"] == [
        "greet — the function",
        "callers — every call site",
        "docs — the docstring",
        "Other…",
    ]
    assert asked[2]["items"] == ["docs — the docstring", "Done", "Other…"]
    answer = result["tool_results"]["ask_user_question"]
    assert '"Which names should change?" → "greet", "callers"' in answer
    (select,) = [s for s in result["selects"] if s["kind"] == "agentls.plan"]
    assert select["items"] == [
        "Approve and let the agent edit (review)",
        "Approve with auto-accepted edits",
        "Keep planning",
    ]
    assert result["decision"] == "review"
    # the todo list in the session view: while the plan waited, and at the end
    assert _view_todos(result["view_at_plan"]) == [
        "  [~] Renaming greet",
        "  [ ] Check the callers",
    ]
    assert _view_todos(result["view"]) == ["  [x] Rename greet", "  [~] Checking the callers"]
    assert "! plan approved: the agent makes the changes (for review)" in result["view"]
    assert any(line.startswith("✓ Editing hello.py") for line in result["view"])
    # review mode: the edit was staged, then accepted into the buffer
    assert result["accepted"]["applied"] is True
    assert result["buffer"] == RENAMED
