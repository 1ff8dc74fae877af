"""Ctrl-C during `agentls run`: the run is cancelled through the server (agentls.cancel),
the CLI waits for the result, shuts the server down, exits 2 and writes nothing."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, snapshot, write_tree


def test_sigint_mid_run_cancels_cleanly_and_leaves_the_workspace_unchanged(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(tmp_path / "ws", {"app.py": "X = 1\n", "b.py": "B = 1\n"})
    before = snapshot(workspace)
    api.extend(
        tool_turn(
            ("edit_file", {"path": "app.py", "old_string": "X = 1", "new_string": "X = 2"}),
            ("write_file", {"path": "c.py", "content": "C = 1\n"}),
        ),
        # the next model turn streams one event and then hangs: a slow model mid-run
        text_turn("this never finishes", hang=True, hang_after_events=1),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls", "run", "change things", "-w", str(workspace), "--apply"],
        env=cli_env(api.base_url, tmp_path / "state"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.decode("utf-8", "replace"))

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    seen: list[str] = []
    deadline = time.monotonic() + 120
    try:
        while not any("→ Writing c.py" in line for line in seen):
            assert time.monotonic() < deadline, "the run never got going:\n" + "".join(seen)
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                assert proc.poll() is None, "".join(seen) + proc.stderr.read().decode()  # type: ignore[union-attr]
        # wait until the hanging model request is in flight
        while len(api.message_requests) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.3)
        interrupted = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
        elapsed = time.monotonic() - interrupted
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=5)
    proc.communicate()  # closes its pipes
    while not lines.empty():
        seen.append(lines.get())
    out = "".join(seen)
    assert code == 2, out
    assert elapsed < 30, f"cancel took {elapsed:.1f}s"
    assert "Cancelling" in out
    assert "cancelled" in out
    assert snapshot(workspace) == before, "nothing written after Ctrl-C"
    assert not list(workspace.rglob("*.agentls"))
    assert api.remaining == 0
