"""The CLI's first-day rough edges (issue 21): refused edits in a script, `tools` text,
`ask` on a terminal, the demo's closing hint."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from agentls.headless.commands import first_sentence
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, on_a_terminal, run_cli, write_tree


def test_auto_mode_without_an_allow_rule_says_why_and_exits_1(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(tmp_path / "ws", {"calc.py": "X = 1\n"})
    api.extend(
        tool_turn(("edit_file", {"path": "calc.py", "old_string": "X = 1", "new_string": "X = 2"})),
        text_turn("I could not edit calc.py."),
    )
    env = cli_env(api.base_url, tmp_path / "state")
    result = run_cli("run", "bump", "-w", str(workspace), "--mode", "auto", "--apply", env=env)
    out = result.stdout
    assert result.code == 1, out + result.stderr
    assert "refused: Editing calc.py" in out
    assert "approval" in out
    assert re.search(r"--allow 'edit_file\([^)]*calc\.py\)'", out), out
    assert "--allow edit_file" in out
    assert "--permission-mode acceptEdits" in out
    assert "Every edit the run asked for was refused" in out
    assert (workspace / "calc.py").read_text() == "X = 1\n"


def test_first_sentence_never_cuts_mid_sentence() -> None:
    assert first_sentence("Read a file.\nReturns numbered lines. More.") == "Read a file. …"
    assert first_sentence("Edit (e.g. a.b) a file. Then") == "Edit (e.g. a.b) a file. …"
    assert first_sentence("One sentence,\nwrapped over lines") == "One sentence, wrapped over lines"


def test_tools_table_shows_whole_first_sentences(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "A = 1\n"})
    env = cli_env(None, tmp_path / "state")
    env["COLUMNS"] = "80"
    table = run_cli("tools", "-w", str(workspace), env=env)
    assert table.code == 0, table.stderr
    assert "--json: the full definitions, exactly as the model gets them" in table.stdout
    text = " ".join(table.stdout.split())
    assert "…" in text  # descriptions with more after their first sentence say so


def test_ask_on_a_terminal_renders_the_answer_once(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(tmp_path / "ws", {"notes.md": "hello\n"})
    api.extend(text_turn("The notes say **hello** to everyone."))
    env = cli_env(api.base_url, tmp_path / "state")
    argv = [sys.executable, "-m", "agentls", "ask", "What do the notes say?", "-w", str(workspace)]
    run = on_a_terminal(argv, env)
    plain = run.plain
    assert run.code == 0, plain[-2000:]
    assert "The notes say hello to everyone." in plain  # rendered Markdown…
    assert "**hello**" not in plain  # …and never the raw stream before it
