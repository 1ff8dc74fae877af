"""`agentls tool` (direct) starts its server before importing its own LSP client, so the
two start-ups overlap (issue 33). A command that fails before it connects (bad input)
must still leave no server and no log behind, and one that connects behaves as before
(the CLI tests of `agentls tool` cover its output, edits and exit codes)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli_support import cli_env, run_cli, write_tree


def servers_logging_to(folder: Path) -> list[int]:
    """Processes whose command line names `folder` (the server's `--log-file`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(str(folder).encode() in arg for arg in argv) and b"serve" in argv:
                found.append(int(entry.name))
    return found


def test_bad_input_leaves_no_server_and_no_log(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "A = 1\n"})
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = cli_env(None, tmp_path / "state") | {"TMPDIR": str(tmp)}
    result = run_cli("tool", "read_file", '{"path": ', "-w", str(workspace), env=env)
    assert result.code == 2
    assert "not valid JSON" in result.stderr
    assert list(tmp.glob("agentls-serve-*.log")) == []
    assert servers_logging_to(tmp) == []


def test_a_good_call_through_the_started_server(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "A = 1\n"})
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = cli_env(None, tmp_path / "state") | {"TMPDIR": str(tmp)}
    result = run_cli("tool", "read_file", '{"path": "a.py"}', "-w", str(workspace), env=env)
    assert result.code == 0, result.stderr[-2000:]
    assert "A = 1" in result.stdout
    assert list(tmp.glob("agentls-serve-*.log")) == []  # no error: the log is removed
    assert servers_logging_to(tmp) == []
    assert os.listdir(tmp) == []
