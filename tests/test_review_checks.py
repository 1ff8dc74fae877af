"""A checked changeset before review (issue 30, `checks.beforeReview`): when a run ends
with staged edits, each staged file is checked (real basedpyright, started headless by
`agentls serve`) and the result is shown per file in the CLI's table and `--json`."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, run_cli, write_tree
from tests.codeintel_support import basedpyright_langserver

FILES = {
    "a.py": "def double(n: int) -> int:\n    return n * 2\n",
    "b.py": "from a import double\nvalue = double(2)\n",
    "c.py": "from a import double\nother = double(3)\n",
}


def test_a_run_ends_with_each_staged_file_checked(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    basedpyright_langserver()
    root = write_tree(tmp_path / "ws", FILES)
    (root / ".agentls.toml").write_text(
        "[checks]\nafterEditSeconds = 60\nbeforeReviewSeconds = 60\n"
    )
    env = cli_env(api.base_url, tmp_path / "state")
    edit_b = ("edit_file", {"path": "b.py", "old_string": "double(2)", "new_string": 'double("2")'})
    edit_c = ("edit_file", {"path": "c.py", "old_string": "double(3)", "new_string": "double(4)"})
    api.extend(tool_turn(edit_b, edit_c), text_turn("done"))
    result = run_cli("run", "change b and c", "-w", str(root), "--json", env=env, timeout=300)
    assert result.code == 0, result.stderr
    checks = {Path(c["path"]).name: c for c in json.loads(result.stdout)["checks"]}
    assert checks["b.py"]["summary"].startswith("1 new error: b.py:2 error: Argument of type")
    assert checks["b.py"]["new_errors"] == 1
    assert checks["c.py"]["summary"] == "0 new errors"

    api.extend(tool_turn(edit_b), text_turn("done"))
    shown = run_cli("run", "change b", "-w", str(root), env=env, timeout=300)
    assert shown.code == 0, shown.stderr
    assert "Checks before review" in shown.stdout
    assert "1 new error: b.py:2" in shown.stdout
