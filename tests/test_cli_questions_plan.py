"""`agentls run` and the user: questions and a plan answered at the terminal, the todo list
in the live view, and the non-interactive fallback (`--json`: nobody to ask)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, on_a_terminal, plain_text, run_cli, write_tree

PLAN = "## Plan\n1. Set `X` to 2 in a.py."
QUESTION = {
    "questions": [
        {
            "question": "Which formats should be accepted?",
            "header": "Formats",
            "options": [
                {"label": "ISO", "description": "2024-01-31"},
                {"label": "RFC", "description": "Wed, 31 Jan"},
                {"label": "Unix", "description": "seconds"},
            ],
            "multi_select": True,
        }
    ]
}
TODOS = [
    {"content": "Change X", "status": "in_progress", "active_form": "Changing X"},
    {"content": "Check it", "status": "pending", "active_form": "Checking it"},
]


def answering(
    argv: list[str], env: dict[str, str], answers: list[tuple[bytes, bytes]]
) -> tuple[int, str]:
    """Run the CLI on a pseudo-terminal; type each answer once its prompt appears."""
    pending = list(answers)

    def respond(output: bytes) -> bytes | None:
        if pending and pending[0][0] in plain_text(output.decode("utf-8", "replace")).encode():
            return pending.pop(0)[1]
        return None

    run = on_a_terminal(argv, env, respond, timeout=150)
    return run.code, run.plain


def _tool_results(api: ScriptedMessagesServer, index: int) -> list[dict[str, object]]:
    return api.message_requests[index].tool_results()


def test_a_question_and_a_plan_answered_at_the_terminal(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "X = 1\n"})
    api.extend(
        tool_turn(("todo_write", {"todos": TODOS}), ("ask_user_question", QUESTION)),
        tool_turn(("exit_plan_mode", {"plan": PLAN})),
        tool_turn(("edit_file", {"path": "a.py", "old_string": "X = 1", "new_string": "X = 2"})),
        text_turn("Done."),
    )
    env = cli_env(api.base_url, tmp_path / "state")
    argv = [sys.executable, "-m", "agentls", "run", "change X", "-w", str(workspace)]
    argv += ["--mode", "plan", "--apply"]
    code, out = answering(
        argv,
        env,
        [
            (b"choices, e.g. 1,3 [1]:", b"1,4\n"),
            (b"your answer:", b"also epoch millis\n"),
            (b"What now?", b"1\n"),
        ],
    )
    assert code == 0, out[-3000:]
    assert "Formats — Which formats should be accepted?" in out
    assert "1) ISO — 2024-01-31" in out
    assert "4) Other…" in out
    (answer,) = _tool_results(api, 1)[1:]
    assert '"ISO"; in their own words: "also epoch millis"' in str(answer["content"])
    assert "The agent's plan" in out
    assert "Set X to 2 in a.py" in out.replace("`", "")
    assert "1) Approve and let the agent edit (review)" in out
    assert "Plan approved: the agent now makes the changes (edits for review)" in out
    assert "Todo 0/2 · Changing X" in out
    assert "[~] Changing X" in out
    assert (workspace / "a.py").read_text() == "X = 2\n"


def test_without_a_terminal_nobody_is_asked_and_the_plan_is_not_left(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "X = 1\n"})
    api.extend(
        tool_turn(("ask_user_question", QUESTION), ("exit_plan_mode", {"plan": PLAN})),
        text_turn("Here is my plan."),
    )
    env = cli_env(api.base_url, tmp_path / "state")
    done = run_cli("run", "change X", "-w", str(workspace), "--mode", "plan", "--json", env=env)
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    asked, planned = _tool_results(api, 1)
    assert asked["is_error"]
    assert "proceed on your best assumption" in str(asked["content"])
    assert planned["is_error"]
    assert "No one can approve a plan here" in str(planned["content"])
    assert (workspace / "a.py").read_text() == "X = 1\n"


def test_doctor_lists_the_subagent_types_and_a_skipped_agent_file(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(
        tmp_path / "ws",
        {
            ".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews.\n---\nx\n",
            ".agentls/agents/bad.md": "no front matter\n",
        },
    )
    api.extend(text_turn("pong"))
    env = cli_env(api.base_url, tmp_path / "state")
    done = run_cli("doctor", "--json", "-w", str(workspace), env=env)
    checks = [c for c in json.loads(done.stdout)["checks"] if c["group"] == "sub-agents"]
    assert [c["name"] for c in checks if c["status"] == "info"] == [
        "general-purpose",
        "explore",
        "reviewer",
    ]
    (bad,) = [c for c in checks if c["status"] == "warn"]
    assert "bad.md was skipped: it has no front matter" in bad["detail"]
