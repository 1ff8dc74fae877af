"""SubagentStop hooks (issue 17) with the real `task` tool (issue 14), over real stdio.

A workspace carries a Claude Code style `.claude/settings.json`: a `SubagentStop` command
hook matched on the sub-agent type `explore`, another matched on `general-purpose`, and a
`Stop` hook, each a script that records the JSON it is given. The workspace is trusted the
way a user does it (`agentls trust`). The scripted model calls `task` (explore) from an
`agentls.run` in `agentls serve`:

- the explore hook gets `hook_event_name: "SubagentStop"`, `agent_type: "explore"`,
  `stop_hook_active: false`; the general-purpose one does not run;
- when it blocks once (exit 2 with the reason on stderr, or `{"decision": "block",
  "reason": …}` on stdout) the sub-agent goes on with the reason as its next user message
  and its second answer is the report the session gets; the hook then sees
  `stop_hook_active: true` and lets it stop;
- the session's `Stop` hook runs once, for the session, never for the sub-agent;
- an untrusted workspace's hooks do not run at all.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import command, editor_session, server_env
from tests.subagent_support import Roles, requests_of
from tests.trust_support import trust_workspace

REASON = "Also name the test that covers main()."
FIRST_REPORT = "main() is defined in app.py, line 1."
SECOND_REPORT = "main() is in app.py, line 1; test_app.py::test_main covers it."

HOOK = """\
import json, sys

data = json.load(sys.stdin)
log, style = sys.argv[1], sys.argv[2]
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps(data) + "\\n")
if style != "record" and not data.get("stop_hook_active"):
    reason = sys.argv[3]
    if style == "exit2":
        print(reason, file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"decision": "block", "reason": reason}))
"""


def hook_command(script: Path, log: Path, style: str) -> dict[str, Any]:
    argv = [sys.executable, str(script), str(log), style, REASON]
    return {"type": "command", "command": " ".join(shlex.quote(a) for a in argv)}


def workspace(tmp_path: Path, style: str) -> tuple[Path, Path]:
    """A project whose `.claude/settings.json` holds the hooks; returns (root, logs)."""
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    (root / "app.py").write_text("def main():\n    return 1\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    script = tmp_path / "hook.py"
    script.write_text(HOOK)
    hooks = {
        "SubagentStop": [
            {"matcher": "explore", "hooks": [hook_command(script, logs / "explore.jsonl", style)]},
            {
                "matcher": "general-purpose",
                "hooks": [hook_command(script, logs / "general.jsonl", "record")],
            },
        ],
        "Stop": [{"hooks": [hook_command(script, logs / "stop.jsonl", "record")]}],
    }
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}, indent=2))
    return root, logs


def seen(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def is_file(path: str) -> bool:
    return Path(path).is_file()


def explore_task(marker: str) -> tuple[str, dict[str, Any]]:
    prompt = f"Find where main() is defined {marker}"
    return ("task", {"description": "find main", "prompt": prompt, "subagent_type": "explore"})


def last_user_text(request: Any) -> str:
    content = request.messages[-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


@pytest.mark.parametrize("style", ["exit2", "json"])
async def test_subagent_stop_hook_blocks_once_and_the_subagent_continues(
    api: ScriptedMessagesServer, tmp_path: Path, style: str
) -> None:
    root, logs = workspace(tmp_path, style)
    env = server_env(api.base_url, tmp_path / "state")
    trust_workspace(root, env)
    mark = f"[{style}]"
    Roles(
        session=[tool_turn(explore_task(mark)), text_turn("The explorer reported back.")],
        subagents={mark: [text_turn(FIRST_REPORT), text_turn(SECOND_REPORT)]},
    ).play(api)
    async with editor_session("visual-studio-code", root, env) as editor:
        result = await command(editor, "agentls.run", {"prompt": "where is main?", "wait": True})
    assert result["status"] == "completed", result
    session = result["session"]
    assert api.remaining == 0, "the sub-agent did not go on after the hook blocked"

    # the explore hook ran twice: blocking (not active), then letting it stop (active)
    first, second = seen(logs / "explore.jsonl")
    assert first["hook_event_name"] == second["hook_event_name"] == "SubagentStop"
    assert first["agent_type"] == second["agent_type"] == "explore"
    assert (first["stop_hook_active"], second["stop_hook_active"]) == (False, True)
    assert first["session_id"] == session  # the session the sub-agent works for
    assert first["agent_id"]
    assert first["agent_id"] != session
    assert first["last_assistant_message"] == FIRST_REPORT
    assert second["last_assistant_message"] == SECOND_REPORT
    assert is_file(first["agent_transcript_path"])
    assert first["cwd"] == str(root)
    # the matcher is on the agent type: the general-purpose hook never ran
    assert seen(logs / "general.jsonl") == []

    # the reason was the sub-agent's next user message; its second answer is the report
    child = requests_of(api, mark)
    assert len(child) == 2
    assert REASON in last_user_text(child[1])
    (report,) = requests_of(api, None)[-1].tool_results()
    assert SECOND_REPORT in str(report["content"])
    assert FIRST_REPORT not in str(report["content"])

    # the session's Stop hook: once, for the session, after the sub-agent's work
    (stop,) = seen(logs / "stop.jsonl")
    assert stop["hook_event_name"] == "Stop"
    assert stop["session_id"] == session
    assert stop["stop_hook_active"] is False
    assert "agent_type" not in stop


async def test_an_untrusted_workspace_runs_no_subagent_stop_hook(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """A cloned repository's hooks must not run (nor keep a sub-agent going) untrusted."""
    root, logs = workspace(tmp_path, "json")
    env = server_env(api.base_url, tmp_path / "state")
    mark = "[untrusted]"
    Roles(
        session=[tool_turn(explore_task(mark)), text_turn("Reported.")],
        subagents={mark: [text_turn(FIRST_REPORT)]},
    ).play(api)
    async with editor_session("visual-studio-code", root, env) as editor:
        result = await command(editor, "agentls.run", {"prompt": "where is main?", "wait": True})
    assert result["status"] == "completed", result
    assert api.remaining == 0
    assert len(requests_of(api, mark)) == 1
    assert list(logs.iterdir()) == []
