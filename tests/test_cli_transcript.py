"""`agentls transcript` renders a real session's transcript, through the command line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.agent_support import make_session


def _agentls(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "agentls", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


async def test_transcript_command_renders_tree_and_json(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(tool_turn(("probe_read", {"label": "a"})), text_turn("Done reading."))
    session = make_session(api, tmp_path)
    result = await session.run("read a")
    env = {**os.environ, "AGENTLS_TRANSCRIPT_DIR": str(result.transcript.parent)}

    tree = await asyncio.to_thread(_agentls, "transcript", session.id, env=env)
    assert tree.returncode == 0, tree.stderr
    assert f"session {session.id}" in tree.stdout
    assert "probe_read" in tree.stdout
    assert "completed after 2 turns" in tree.stdout

    raw = await asyncio.to_thread(_agentls, "transcript", str(result.transcript), "--json")
    assert json.loads(raw.stdout)[-1]["type"] == "run_end"

    missing = await asyncio.to_thread(_agentls, "transcript", "nope")
    assert missing.returncode == 2
    assert "no transcript" in missing.stderr
