"""`agentls run` end to end: a real CLI subprocess drives `agentls serve` over LSP stdio,
with the scripted Messages API as the model, on fixture workspaces."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, run_cli, snapshot, write_tree

APP = "import os\r\n\r\n\r\ndef main():\r\n    return 1  # ünïcode ✓ 🎉\r\n"
UTIL = "def helper():\n    pass"  # no final newline
OLD = "old.py"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "ws",
        {"app.py": APP, "pkg/util.py": UTIL, OLD: "GONE = 1\n", "keep.txt": "keep\n"},
    )


def edit_script(api: ScriptedMessagesServer) -> None:
    """Read, edit two files (CRLF + emoji; no final newline), create one, delete one."""
    api.extend(
        tool_turn(
            ("read_file", {"path": "app.py"}),
            ("read_file", {"path": "pkg/util.py"}),
            text="Reading first.\n",
        ),
        tool_turn(
            ("edit_file", {"path": "app.py", "old_string": "return 1", "new_string": "return 2"}),
            (
                "edit_file",
                {"path": "pkg/util.py", "old_string": "pass", "new_string": "return 42"},
            ),
            ("write_file", {"path": "pkg/new_mod.py", "content": "VALUE = 'ü'\n"}),
            ("delete_file", {"path": OLD}),
        ),
        text_turn("Changed **main** and helper.\nAdded new_mod.", usage={"output_tokens": 17}),
    )


def expected_after(workspace: Path) -> dict[str, str]:
    return {
        "app.py": APP.replace("return 1", "return 2"),
        "pkg/util.py": "def helper():\n    return 42",
        "pkg/new_mod.py": "VALUE = 'ü'\n",
    }


def test_apply_writes_every_change_and_reports_them(
    api: ScriptedMessagesServer, workspace: Path, tmp_path: Path
) -> None:
    edit_script(api)
    result = run_cli(
        "run",
        "Make main return 2",
        "--workspace",
        str(workspace),
        "--apply",
        env=cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1"),
    )
    assert result.code == 0, result.stdout + result.stderr
    for name, text in expected_after(workspace).items():
        assert (workspace / name).read_bytes().decode("utf-8") == text, name
    assert not (workspace / OLD).exists()
    assert (workspace / "keep.txt").read_text() == "keep\n"
    assert not list(workspace.rglob("*.agentls")), "no temporary files left behind"
    out = result.stdout
    # plain text when not a terminal: no spinner, no escape sequences
    assert "\x1b[" not in out
    assert "⠋" not in out
    assert "→ Reading app.py" in out
    assert "→ Editing pkg/util.py" in out
    assert "Reading first." in out
    assert "Changed **main** and helper." in out
    assert "completed" in out
    assert "Files changed (written)" in out
    for name in ("app.py", "pkg/util.py", "pkg/new_mod.py", OLD):
        assert name in out
    assert "Token usage" in out
    assert "output" in out
    # the scripted endpoint has no known price: cost n/a, and why
    assert "n/a" in out
    assert "no price known" in out
    assert "+    return 2  # ünïcode ✓ 🎉" in out  # the unified diff at the end
    assert api.remaining == 0


def test_dry_run_shows_the_diff_and_writes_nothing(
    api: ScriptedMessagesServer, workspace: Path, tmp_path: Path
) -> None:
    edit_script(api)
    before = snapshot(workspace)
    result = run_cli(
        "run",
        "Make main return 2",
        "-w",
        str(workspace),
        env=cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1"),
    )
    assert result.code == 0, result.stdout + result.stderr
    assert snapshot(workspace) == before
    flat = " ".join(result.stdout.split())
    assert "not written: dry run" in flat
    assert " apply " in flat  # `agentls apply SESSION`
    assert "without running the model again" in flat
    assert "diff --git a/pkg/util.py b/pkg/util.py" in result.stdout


def test_diff_prints_only_a_patch_that_applies(
    api: ScriptedMessagesServer, workspace: Path, tmp_path: Path
) -> None:
    edit_script(api)
    before = snapshot(workspace)
    result = run_cli(
        "run",
        "Make main return 2",
        "-w",
        str(workspace),
        "--diff",
        env=cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1"),
    )
    assert result.code == 0, result.stderr
    assert snapshot(workspace) == before, "--diff writes nothing"
    assert result.stdout.startswith("diff --git "), result.stdout[:200]
    assert "→ Reading app.py" in result.stderr, "progress goes to stderr"
    assert "\\ No newline at end of file" in result.stdout
    assert "deleted file mode" in result.stdout
    assert "new file mode" in result.stdout
    # the patch reproduces the agent's result on a pristine copy
    copy = tmp_path / "copy"
    shutil.copytree(workspace, copy)
    patch = tmp_path / "out.patch"
    patch.write_bytes(result.stdout.encode("utf-8"))
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    subprocess.run([git, "apply", "--unsafe-paths", str(patch)], cwd=copy, check=True)
    for name, text in expected_after(workspace).items():
        assert (copy / name).read_bytes().decode("utf-8") == text, name
    assert not (copy / OLD).exists()


def test_patch_file_and_json_result(
    api: ScriptedMessagesServer, workspace: Path, tmp_path: Path
) -> None:
    edit_script(api)
    before = snapshot(workspace)
    patch = tmp_path / "changes.patch"
    result = run_cli(
        "run",
        "Make main return 2",
        "-w",
        str(workspace),
        "--patch",
        str(patch),
        "--json",
        env=cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1"),
    )
    assert result.code == 0, result.stderr
    payload = json.loads(result.stdout)  # the result object and nothing else
    assert payload["status"] == "completed"
    assert payload["session"]
    assert payload["text"].endswith("Added new_mod.")
    assert payload["usage"]["output_tokens"] >= 17
    edit = payload["edit"]
    assert edit["applied"] is False
    assert edit["reason"] == "dry run"
    assert sorted(Path(u).name for u in edit["files"]) == [
        "app.py",
        "new_mod.py",
        "old.py",
        "util.py",
    ]
    assert payload["transcript"].startswith("file://")
    assert patch.read_bytes().decode("utf-8") == payload["diff"]
    assert "diff --git a/app.py b/app.py" in payload["diff"]
    assert snapshot(workspace) == before


def test_failed_run_exits_1_with_the_error(
    api: ScriptedMessagesServer, workspace: Path, tmp_path: Path
) -> None:
    api.extend(text_turn("never", error_status=400, error_message="prompt is too long"))
    result = run_cli(
        "run",
        "anything",
        "-w",
        str(workspace),
        "--json",
        env=cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1"),
    )
    assert result.code == 1, result.stdout + result.stderr
    payload = json.loads(result.stdout)
    assert payload["status"] == "failed"
    assert "prompt is too long" in payload["error"]


def test_plan_mode_and_unknown_session(
    api: ScriptedMessagesServer, workspace: Path, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("write_file", {"path": "x.py", "content": "X = 1\n"})),
        text_turn("I would add x.py."),
    )
    env = cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1")
    before = snapshot(workspace)
    result = run_cli("run", "plan it", "-w", str(workspace), "--mode", "plan", "--apply", env=env)
    assert result.code == 0, result.stdout + result.stderr
    assert snapshot(workspace) == before
    assert "write_file" not in api.message_requests[-1].tool_names
    unknown = run_cli("run", "go on", "-w", str(workspace), "--session", "nope", env=env)
    assert unknown.code == 1
    assert "unknown session 'nope'" in unknown.stdout
    assert "Traceback" not in unknown.stdout + unknown.stderr


def test_auto_mode_applies_each_edit_with_an_allow_rule(
    api: ScriptedMessagesServer, workspace: Path, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(
            ("read_file", {"path": "app.py"}),
            ("edit_file", {"path": "app.py", "old_string": "return 1", "new_string": "return 3"}),
        ),
        tool_turn(("read_file", {"path": "app.py"})),
        text_turn("done"),
    )
    result = run_cli(
        "run",
        "bump",
        "-w",
        str(workspace),
        "--mode",
        "auto",
        "--apply",
        "--allow",
        "edit_file",
        env=cli_env(api.base_url, tmp_path / "state", AGENTLS_READ_BEFORE_EDIT="1"),
    )
    assert result.code == 0, result.stdout + result.stderr
    assert "return 3" in (workspace / "app.py").read_text(encoding="utf-8")
    assert "The editor applied this change." in str(api.message_requests[1].tool_results())
    # the agent's next read sees the file as written on disk
    assert "return 3" in str(api.message_requests[2].tool_results())


def test_missing_key_fails_with_a_clear_message(workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    result = run_cli("run", "hello", "-w", str(workspace), env=cli_env(None, state))
    assert result.code == 1
    assert "no API key" in result.stderr
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "ANTHROPIC_BASE_URL" in result.stderr
    assert "agentls demo" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not list(state.rglob("*.state.json")), "no session is recorded"
    assert not list(state.rglob("*.jsonl"))
