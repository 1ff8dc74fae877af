"""`acpx` (the ACP command-line client, npm) against `agentls acp`.

Each acpx command is its own process; its queue owner keeps the agent process only while
it is busy (`--ttl 1`), so every step below meets a new `agentls acp` that finds the session
on disk: `sessions new` (saved at once), a prompt (the session resumed), a second prompt
after the agent exited (resumed again, with its history), and `sessions list` (title).
acpx is installed by `bash scripts/deps/acp.sh` from the committed lock file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.testing import ScriptedMessagesServer, text_turn
from tests.acp_support import agent_env, node_sdk_entry, write_project


def acpx_binary() -> Path:
    sdk = Path(node_sdk_entry().removeprefix("file://"))
    modules = next(p for p in sdk.parents if p.name == "node_modules")
    binary = modules / ".bin" / "acpx"
    if not binary.exists():
        pytest.skip(f"acpx is not installed ({binary}): run `bash scripts/deps/acp.sh`")
    return binary


def run_acpx(root: Path, env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    agent = f"{sys.executable} -m agentls acp"
    command = [str(acpx_binary()), "--agent", agent, "--cwd", str(root), "--ttl", "1"]
    command += ["--format", "json", "--approve-all", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def agent_texts(messages: list[dict[str, Any]]) -> str:
    return "".join(
        m["params"]["update"]["content"].get("text", "")
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def test_acpx_creates_a_session_prompts_it_and_resumes_it_in_a_new_process(
    tmp_path: Path,
) -> None:
    root = write_project(tmp_path / "proj", {"a.py": "x = 1\n"})
    with ScriptedMessagesServer([text_turn("x is one"), text_turn("still one")]) as api:
        env = agent_env(api.base_url, tmp_path / "home")
        (created,) = run_acpx(root, env, "sessions", "new")
        session = created["acpxSessionId"]
        first = run_acpx(root, env, "what is x?")
        methods = [m.get("method") for m in first]
        assert "session/resume" in methods  # a new agent process found the saved session
        assert agent_texts(first) == "x is one"
        time.sleep(3)  # the queue owner (and its agent) exit after one idle second
        second = run_acpx(root, env, "and now?")
        assert "session/resume" in [m.get("method") for m in second]
        assert agent_texts(second) == "still one"
        sent = api.message_requests[-1].messages
        assert "what is x?" in str(sent[0])  # the history came back from disk
        assert "x is one" in str(sent)
        (listed,) = run_acpx(root, env, "sessions", "list")
        (entry,) = listed["sessions"]
        assert (entry["sessionId"], entry["title"]) == (session, "what is x?")
