"""Neovim end to end: the Lua plugin in a real headless `nvim` against the scripted model.

Runs `editor-clients/neovim/test/run_e2e.py` (one nvim per case) on Neovim 0.7.2
(Debian), 0.11.4 and 0.12.0-dev (PyPI builds, see tests/editor_support.py) and asserts on
the JSON each case prints.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.editor_support import neovim

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "editor-clients" / "neovim" / "test" / "run_e2e.py"
RENAMED = ["def welcome(name):", '    return "Hello, " + name', "", "", 'print(welcome("world"))']


def run_case(case: str, version: str) -> dict[str, Any]:
    nvim = neovim(version)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run(
        [sys.executable, str(RUNNER), case, "--nvim", nvim],
        capture_output=True,
        text=True,
        timeout=200,
        env=env,
        cwd=ROOT,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"runner printed no result (exit {proc.returncode}): {proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result.get("ok"), json.dumps(result, indent=1)[-6000:]
    assert result["nvim"].startswith(version + ".")
    assert proc.returncode == 0
    return result


def _no_render_errors(result: dict[str, Any]) -> None:
    text = "\n".join(result["messages"] + result.get("all_notifications", []))
    assert "attempt to" not in text, text
    assert "cannot render" not in text, text


@pytest.mark.parametrize("version", ["0.7", "0.11", "0.12"])
def test_setup_with_only_a_project_venv_starts_its_agentls(version: str) -> None:
    """`setup({})`, agentls not on PATH, the project's `.venv/bin/agentls`: the server
    starts from there (it was `.venv/bin/.venv/bin/agentls`), and :checkhealth agrees."""
    result = run_case("venv", version)
    assert result["cmd"][0].endswith("/workspace/.venv/bin/agentls"), result["cmd"]
    assert ".venv/bin/.venv" not in result["cmd"][0]
    health = "\n".join(result["health"])
    assert "server command: " + result["cmd"][0] in health, health


def test_selection_ranges_and_fix_prompt() -> None:
    result = run_case("unit", "0.7")
    assert all(result["checks"].values()), result["checks"]


@pytest.mark.parametrize("version", ["0.7", "0.11", "0.12"])
def test_run_then_accept_changes_the_buffer(version: str) -> None:
    """On 0.12 the log used to crash on every run_finished (`error` is vim.NIL)."""
    result = run_case("edit", version)
    assert result["buffer"] == RENAMED
    assert result["accepted"]["applied"] is True
    assert "they selected lines 1-2" in result["prompts"][0]  # :1,2AgentlsRun passed the range
    assert result["status_sessions"] == 1  # :AgentlsStatus
    assert "edit_file" in result["tools"]
    assert any(line.startswith("→ Editing hello.py") for line in result["log"])
    assert "== completed after 2 turn(s)" in result["log"]  # no ": vim.NIL" error part
    assert not any("NIL" in line or "userdata" in line for line in result["log"])
    _no_render_errors(result)
    notes = result["all_notifications"]
    assert any(n.startswith("agentls: 1 file(s) staged for review") for n in notes)
    assert any(":AgentlsDiff/Accept/Reject" in n and "agentls.accept" not in n for n in notes)
    assert any(n.startswith("agentls: applied 1 file(s)") for n in notes)
    # one line each, never "agentls: agentls: …" (0.7 echoed the progress title so), so a
    # run never ends at "Press ENTER"
    assert not any("\n" in n for n in notes), notes
    shown = notes + result["echoes"] + result["messages"]
    assert not any("agentls: agentls:" in text for text in shown), shown
    progress = [text for text in result["echoes"] if text.startswith("agentls: ")]
    assert all("\n" not in text for text in progress), progress  # (:AgentlsStatus is a page)


def test_ask_without_settings_warns_about_nothing() -> None:
    result = run_case("ask", "0.7")
    assert result["status"] == "completed"
    assert "read_file" in result["tools"]
    assert "edit_file" not in result["tools"]  # :AgentlsAsk is a read-only (plan) run
    assert any("followed by name" in line for line in result["messages"])
    # settings omitted: an empty Lua table used to reach the server as a JSON list
    assert not any("configuration" in m for m in result["server_messages"])


def test_cancel_mid_run_changes_nothing_and_says_what_stays_staged() -> None:
    result = run_case("cancel", "0.7")
    assert result["status"] == "cancelled"
    assert any(line.startswith("== cancelled") for line in result["log"])
    notes = result["all_notifications"]
    assert any(n.startswith("agentls: the cancelled run left 1 file(s) staged") for n in notes)
    assert any(n.startswith("agentls: rejected 1 file(s)") for n in notes)


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_created_renamed_and_deleted_files_are_accepted_and_saved(version: str) -> None:
    result = run_case("resource", version)
    accepted = result["accepted"]
    assert accepted["applied"] is True, accepted
    assert "left_out" not in accepted, accepted
    assert len(accepted["files"]) == 4
    disk = result["disk"]
    assert disk["new"] == ["NEW = 1"]
    assert disk["moved"] == ["OLD = 1"]
    assert disk["old"] is False
    assert disk["gone"] is False
    assert disk["hello"] == RENAMED  # saved: it had no unsaved changes of the user
    assert result["modified"] == []  # no hidden unsaved buffer: :qa works (no E37)
    assert any(n.startswith("agentls: applied 4 file(s)") for n in result["all_notifications"])


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_side_buffer_diff_review_and_checkhealth(version: str) -> None:
    result = run_case("review", version)
    view = result["view"]
    assert result["view_open"]  # opened on the right when the run started
    assert view[0].startswith(f"agentls · session {result['session']} · completed")
    assert "> Rename greet and bump the version" in view
    assert view[view.index("Todo") + 1 :][:3] == [
        "  [x] Rename greet",
        "  [~] Bumping the version",
        "  [ ] Run the tests",
    ]
    assert "I'll rename `greet` and bump the version." in view  # streamed text
    assert any(line.startswith("✓ Reading hello.py (") for line in view)
    assert any(line.startswith("✓ Editing version.py (") for line in view)
    assert "Renamed and **bumped**." in view
    assert any(line.startswith("── completed — 2 file(s) staged for review") for line in view)
    assert any(line.strip().startswith("staged: hello.py, version.py") for line in view)
    assert any("│ " in line and "def greet(name):" in line for line in result["expanded"])
    # :AgentlsDiff: the agent's version beside the buffer, in diff mode
    first, second = result["first"], result["second"]
    assert first["name"].endswith("/hello.py (agentls " + result["session"] + ")")
    assert first["tab_label"] == "hello.py (agentls " + result["session"] + ")"  # not a//s/1/…
    assert first["no_name"] == 0  # no [No Name] buffers while reviewing …
    assert result["no_name_after"] == 0  # … nor after
    assert first["lines"] == RENAMED
    assert first["diff_windows"] == 2
    assert "/version.py (agentls " in second["name"]
    assert second["lines"] == ["VERSION = 2"]
    assert result["hello_disk"][0] == "def greet(name):"  # rejected with gr
    assert result["modified"] == []
    assert result["tabs"] == 1
    # after gr and ga the side buffer says what became of them, not "staged for review"
    after = result["view_after"]
    assert not any("staged for review" in line for line in after), after
    [outcome] = [line for line in after if line.startswith("── completed — ")]
    assert "rejected hello.py" in outcome
    assert "applied version.py" in outcome
    notes = result["all_notifications"]
    assert any(n.startswith("agentls: rejected 1 file(s)") for n in notes)
    assert any(n.startswith("agentls: applied 1 file(s)") and "version.py" in n for n in notes)
    health = "\n".join(result["health"])
    assert "server command:" in health
    assert "version: agentls " in health
    assert "an API key is set" in health
    assert "endpoint: http://127.0.0.1:" in health
    assert "documentChanges=true, resourceOperations=create,rename,delete" in health
    assert "symbol index: ready" in health
    assert "ERROR" not in health


def test_skipped_edit_and_conflict_are_reported_not_silent() -> None:
    result = run_case("stale", "0.7")
    skipped = result["skipped"]
    assert skipped["applied"] is False
    assert "did not change" in skipped["left_out"][0]["reason"]
    assert "nothing was applied" in result["stale_message"]
    assert ":AgentlsDiff" in result["stale_message"]
    assert result["conflict"]["conflicts"]
    assert result["conflict"]["applied"] is False
    assert "changes overlap" in result["conflict_message"]
    assert result["buffer"][0] == "def greet(person):"  # the user's text is kept


@pytest.mark.parametrize("version", ["0.11", "0.12"])
def test_vim_lsp_enable_with_the_runtime_file_and_lsp_progress(version: str) -> None:
    result = run_case("enable", version)
    assert result["disk"] == RENAMED
    assert result["modified"] == []
    by_token: dict[str, list[dict[str, Any]]] = {}
    for report in result["progress"]:
        by_token.setdefault(report["token"], []).append(report)
    titles = {reports[0].get("title") or "": reports for reports in by_token.values()}
    [run] = [
        reports for title, reports in titles.items() if title.startswith("agentls: Rename greet")
    ]
    health = "\n".join(result["health"])  # :checkhealth on the vim.lsp.enable path
    assert "not on PATH" not in health, health
    assert "server command: " in health, health
    assert run[0]["kind"] == "begin"
    assert run[-1]["kind"] == "end"
    assert run[-1]["message"].startswith("completed — 1 file(s) staged")
    assert any("Editing hello.py" in p["status"] for p in run)  # vim.lsp.status()
    index = titles.get("agentls: indexing symbols")  # the index reports its first build too
    assert index is None or index[-1]["kind"] == "end"
    assert result["server_messages"] == []  # no settings given, nothing to warn about
