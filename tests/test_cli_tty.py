"""`agentls run` on a terminal: a spinner, and approval prompts answered at the keyboard."""

from __future__ import annotations

import os
import pty
import re
import select
import sys
import time
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, write_tree

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def test_terminal_run_shows_a_spinner_and_asks_before_an_auto_edit(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "X = 1\n"})
    api.extend(
        tool_turn(("edit_file", {"path": "a.py", "old_string": "X = 1", "new_string": "X = 2"})),
        text_turn("done"),
    )
    env = cli_env(api.base_url, tmp_path / "state")
    argv = [sys.executable, "-m", "agentls", "run", "bump", "-w", str(workspace)]
    argv += ["--mode", "auto", "--apply"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI on a terminal
        try:
            os.execve(sys.executable, argv, env)
        finally:
            os._exit(127)
    output = b""
    answered = False
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            output += data
            if not answered and b"choice [1]" in output:
                os.write(fd, b"1\n")  # Allow once
                answered = True
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    text = output.decode("utf-8", "replace")
    plain = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", text)
    assert os.waitstatus_to_exitcode(status) == 0, plain[-3000:]
    assert answered, plain[-3000:]
    assert any(frame in plain for frame in SPINNER), "a spinner on a terminal"
    assert "\x1b[" in text, "styled output on a terminal"
    assert "allow edit_file? Editing a.py" in plain
    assert "Allow for this session" in plain
    assert (workspace / "a.py").read_text() == "X = 2\n"
