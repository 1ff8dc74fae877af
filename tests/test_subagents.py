"""`task`: sub-agents with their own context, against the scripted Messages API.

Two read-only sub-agents run in parallel; a general-purpose one stages an edit in the
session's changeset; a sub-agent never gets `task`, `ask_user_question` or the plan-mode
tools (whatever its type asks for, whatever the model calls); usage rolls up; the
transcript nests each sub-agent under its call; cancelling the run stops a sub-agent at
once with every tool_use answered at each level and no process left behind.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.claude.subagents import AgentCatalog
from agentls.agent.persistence.transcript import read_records, render_tree
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.tools import builtin_tools
from agentls.workspace import Workspace
from tests.agent_support import EventLog, ProbeRead, make_session
from tests.sandbox_support import marked, sandboxed
from tests.subagent_support import Roles, requests_of


def tools_for(root: Path, home: Path | None = None) -> list[Any]:
    catalog = AgentCatalog([root], home=home or root / "no-home")
    return [*builtin_tools(agents=catalog), ProbeRead()]


def task(marker: str, kind: str | None = "explore", description: str = "look around") -> Any:
    args: dict[str, Any] = {"description": description, "prompt": f"Find things {marker}"}
    if kind is not None:
        args["subagent_type"] = kind
    return ("task", args)


async def test_two_explore_subagents_run_in_parallel_and_only_their_reports_come_back(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    Roles(
        session=[tool_turn(task("[A]"), task("[B]")), text_turn("Both reported.")],
        subagents={
            mark: [
                tool_turn(("probe_read", {"label": mark, "delay": 0.6})),
                text_turn(f"report {mark}: main() is in app.py line 1"),
            ]
            for mark in ("[A]", "[B]")
        },
    ).play(api)
    session = make_session(api, tmp_path, tools=tools_for(tmp_path))
    log = EventLog()
    result = await session.run("where is main?", events=log)
    assert result.status == "completed", result.error
    # the two task calls overlap in time, and so do the sub-agents' own calls
    tasks = [e for e in log.of("tool_finished") if e.name == "task"]
    assert len(tasks) == 2
    first, second = sorted(tasks, key=lambda e: e.started_at)
    assert second.started_at < first.finished_at, "the explore sub-agents ran one after another"
    probes = [e for e in log.of("tool_finished") if e.name == "probe_read"]
    assert len(probes) == 2
    assert max(p.started_at for p in probes) < min(p.finished_at for p in probes)
    # their steps reach the session's events, named after their type and marked with the call
    started = [e for e in log.of("tool_started") if e.name == "probe_read"]
    assert {e.summary for e in started} == {"explore: Probing [A]", "explore: Probing [B]"}
    task_ids = {e.tool_use_id for e in tasks}
    assert {e.parent_tool_use_id for e in started} == task_ids
    assert all(e.session_id == session.id for e in started)
    # only the reports enter the session's context
    final = requests_of(api, None)[-1]
    reports = sorted(str(r["content"]) for r in final.tool_results())
    assert reports == [
        "report [A]: main() is in app.py line 1",
        "report [B]: main() is in app.py line 1",
    ]
    assert "Probing" not in str(final.messages)
    assert "read:[A]" not in str(final.messages)
    # an explore sub-agent gets read-only tools and nothing that reaches beyond it
    child_tools = set(requests_of(api, "[A]")[0].tool_names)
    assert {"read_file", "grep", "list_files", "probe_read"} <= child_tools
    assert not child_tools & {"task", "ask_user_question", "enter_plan_mode", "exit_plan_mode"}
    assert not child_tools & {"edit_file", "write_file", "run_command", "delete_file"}
    # usage and cost roll up: the session counts every response, its sub-agents' included
    assert len(api.message_requests) == 6
    per_response = [r for r in read_records(session.transcript.path) if r["type"] == "usage"]
    assert len(per_response) == 2  # the session's own turns
    child_out = 0
    for path in (tmp_path / "transcripts").glob(f"{session.id}.agents/*.jsonl"):
        child_out += sum(
            r["usage"]["output_tokens"] for r in read_records(path) if r["type"] == "usage"
        )
    own_out = sum(r["usage"]["output_tokens"] for r in per_response)
    assert child_out > 0
    assert session.usage.output_tokens == own_out + child_out
    assert result.usage.output_tokens == own_out + child_out


async def test_the_transcript_tree_nests_each_subagent_under_its_call(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    roles = Roles(
        session=[tool_turn(task("[A]", description="find main")), text_turn("done")],
        subagents={"[A]": [tool_turn(("probe_read", {"label": "deep"})), text_turn("found it")]},
    ).play(api)
    del roles
    session = make_session(api, tmp_path, tools=tools_for(tmp_path))
    await session.run("go")
    path = session.transcript.path
    tree = render_tree(read_records(path), path).splitlines()
    start = next(i for i, line in enumerate(tree) if "▶ sub-agent explore" in line)
    end = next(i for i, line in enumerate(tree) if "◀ sub-agent explore" in line)
    nested = tree[end + 1 :]
    assert "'find main'" in tree[start]
    assert any("probe_read" in line and line.startswith("│  │  │     ") for line in nested)
    assert any("✓ probe_read" in line for line in nested)
    assert any("completed after 2 turns" in line for line in nested)
    # the tool_use of the task call comes before the sub-agent, its result after
    call = next(i for i, line in enumerate(tree) if "├─ task " in line)
    result = next(i for i, line in enumerate(tree) if "✓ task" in line)
    assert call < start < end < result


async def test_a_general_purpose_subagent_stages_its_edit_in_the_sessions_changeset(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    (tmp_path / "hello.py").write_text("print('hi')\n")
    edit = {"path": "hello.py", "old_string": "'hi'", "new_string": "'hello'"}
    Roles(
        session=[tool_turn(task("[W]", kind=None, description="fix greeting")), text_turn("ok")],
        subagents={
            "[W]": [
                tool_turn(("read_file", {"path": "hello.py"}), ("edit_file", edit)),
                text_turn("changed hello.py"),
            ]
        },
    ).play(api)
    session = make_session(api, tmp_path, tools=tools_for(tmp_path))
    log = EventLog()
    result = await session.run("fix it", events=log)
    assert result.status == "completed", result.error
    assert [str(p) for p in session.changes.changed_paths()] == [str(tmp_path / "hello.py")]
    assert (tmp_path / "hello.py").read_text() == "print('hi')\n"  # staged, not written
    started = [e for e in log.of("tool_started") if e.name == "edit_file"]
    assert [e.summary for e in started] == ["general-purpose: Editing hello.py"]
    child_tools = set(requests_of(api, "[W]")[0].tool_names)
    assert {"edit_file", "write_file", "run_command", "todo_write"} <= child_tools
    assert not child_tools & {"task", "ask_user_question", "enter_plan_mode", "exit_plan_mode"}


async def test_a_subagent_cannot_launch_subagents_or_ask_the_user_whatever_it_tries(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """Even a user-defined type that lists Task and AskUserQuestion does not get them, and a
    model that calls them anyway is told they do not exist."""
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "greedy.md").write_text(
        "---\nname: greedy\ndescription: Wants everything.\n"
        "tools: Read, Task, AskUserQuestion, ExitPlanMode, mcp__x__y\n---\nDo it all.\n"
    )
    question = {
        "questions": [
            {
                "question": "Which?",
                "header": "Pick",
                "options": [{"label": "a", "description": ""}, {"label": "b"}],
            }
        ]
    }
    Roles(
        session=[tool_turn(task("[G]", kind="greedy")), text_turn("fine")],
        subagents={
            "[G]": [
                tool_turn(
                    ("task", {"description": "nested", "prompt": "go deeper"}),
                    ("ask_user_question", question),
                    ("exit_plan_mode", {"plan": "x"}),
                ),
                text_turn("could not"),
            ]
        },
    ).play(api)
    session = make_session(api, tmp_path, tools=tools_for(tmp_path))
    result = await session.run("go")
    assert result.status == "completed"
    child = requests_of(api, "[G]")
    assert child[0].tool_names == ["read_file"]
    results = child[1].tool_results()
    assert len(results) == 3
    assert all(r["is_error"] for r in results)
    assert all("No such tool available" in str(r["content"]) for r in results)
    assert len(api.message_requests) == 4  # no nested sub-agent ever asked the model


async def test_a_claude_agents_type_is_offered_and_used_and_a_broken_file_is_reported(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a change for bugs; use after an edit.\n"
        "tools: Read, Grep, Glob\nmodel: inherit\n---\nYou are a meticulous reviewer. "
        "List each bug with its line.\n"
    )
    # no rule of Claude Code's reads this (`description: [unclosed` alone would load, quoted)
    (agents / "broken.md").write_text("---\n\tname: broken: [unclosed\n---\nx\n")
    (agents / "nameless.md").write_text("No front matter here.\n")
    catalog = AgentCatalog([tmp_path], home=tmp_path / "no-home")
    assert [t.name for t in catalog.types()] == ["general-purpose", "explore", "reviewer"]
    problems = catalog.problems
    assert len(problems) == 2
    assert any("broken.md was skipped" in p and "not valid YAML" in p for p in problems)
    assert any("nameless.md was skipped" in p and "no front matter" in p for p in problems)
    Roles(
        session=[tool_turn(task("[R]", kind="reviewer")), text_turn("reviewed")],
        subagents={"[R]": [text_turn("no bugs found")]},
    ).play(api)
    session = make_session(api, tmp_path, tools=[*builtin_tools(agents=catalog), ProbeRead()])
    result = await session.run("review")
    assert result.status == "completed"
    description = next(
        t["description"] for t in api.message_requests[0].tools if t["name"] == "task"
    )
    offered = "- reviewer: Reviews a change for bugs; use after an edit. (Tools: read_file, grep, "
    assert offered + "list_files)" in description
    child = requests_of(api, "[R]")[0]
    assert sorted(child.tool_names) == ["grep", "list_files", "read_file"]
    assert "You are a meticulous reviewer." in child.system_text
    assert "# Your role: reviewer" in child.system_text
    assert requests_of(api, None)[-1].tool_results()[0]["content"] == "no bugs found"
    # an unknown type is refused with the list of the ones that exist
    api.extend(tool_turn(task("[X]", kind="nosuch")), text_turn("ok"))
    await session.run("again")
    refused = api.message_requests[-1].tool_results()[0]
    assert refused["is_error"]
    assert "Unknown subagent_type 'nosuch'" in refused["content"]
    assert "general-purpose, explore, reviewer" in refused["content"]


async def test_cancel_mid_subagent_stops_it_at_once_answers_every_call_and_kills_its_process(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    token = f"agentls-subagent-{time.monotonic_ns()}"
    services = sandboxed(Workspace([tmp_path]))
    (tmp_path / "a.txt").write_text("a\n")
    Roles(
        session=[tool_turn(task("[S]", kind=None, description="slow work")), text_turn("x")],
        subagents={
            "[S]": [
                tool_turn(
                    ("read_file", {"path": "a.txt"}),
                    ("run_command", {"command": f"sleep 30 # {token}"}),
                ),
                text_turn("never"),
            ]
        },
    ).play(api)
    session = make_session(api, tmp_path, tools=tools_for(tmp_path))
    session.config.workspace = services.workspace
    session.config.services = services  # the sub-agent's calls get the session's services
    log = EventLog()
    run = asyncio.ensure_future(session.run("do the slow thing", events=log))
    deadline = time.monotonic() + 60
    while not marked(token):
        assert time.monotonic() < deadline, "the sub-agent's command never started"
        assert not run.done(), run.result()
        await asyncio.sleep(0.05)
    asked = time.monotonic()
    assert session.cancel()
    result = await asyncio.wait_for(run, 5)
    # the sub-agent's command sleeps 30 s: the bound tells 'stopped' from 'waited' on a loaded
    # machine; the latency itself is measured in bench/acp_cancel.py
    assert time.monotonic() - asked < 10
    assert result.status == "cancelled"
    # every tool_use at each level has its tool_result
    for message_list in _histories(session, tmp_path):
        uses = [b["id"] for m in message_list for b in _blocks(m) if b["type"] == "tool_use"]
        answered = [
            b["tool_use_id"] for m in message_list for b in _blocks(m) if b["type"] == "tool_result"
        ]
        assert uses
        assert sorted(uses) == sorted(answered)
    # no process of the sub-agent is left
    deadline = time.monotonic() + 5
    while marked(token) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    assert marked(token) == []
    # the session continues cleanly: the task call was answered as cancelled
    api.extend(text_turn("resumed"))
    again = await session.run("go on")
    assert again.status == "completed"
    (answer,) = api.message_requests[-1].tool_results()
    assert answer["is_error"]
    assert "ancel" in str(answer["content"])


def _blocks(message: Any) -> list[Any]:
    content = message["content"]
    return content if isinstance(content, list) else []


def _histories(session: Any, tmp_path: Path) -> list[list[Any]]:
    """The session's history and each sub-agent's, rebuilt from its transcript."""
    histories = [list(session.messages)]
    for path in (tmp_path / "transcripts").glob(f"{session.id}.agents/*.jsonl"):
        messages = [
            {"role": r["role"], "content": r["content"]}
            for r in read_records(path)
            if r["type"] == "message"
        ]
        histories.append(messages)
    assert len(histories) == 2
    return histories


@pytest.mark.parametrize("model", ["inherit", "haiku", "claude-other-1"])
async def test_a_types_model_is_used_or_the_sessions_with_a_note(
    api: ScriptedMessagesServer, tmp_path: Path, model: str
) -> None:
    agents = tmp_path / ".agentls" / "agents"
    agents.mkdir(parents=True)
    (agents / "m.md").write_text(
        f"---\nname: m\ndescription: Model test.\nmodel: {model}\n---\nBe brief.\n"
    )
    Roles(
        session=[tool_turn(task("[M]", kind="m")), text_turn("ok")],
        subagents={"[M]": [text_turn("brief")]},
    ).play(api)
    session = make_session(api, tmp_path, tools=tools_for(tmp_path))
    log = EventLog()
    await session.run("go", events=log)
    child = requests_of(api, "[M]")[0]
    expected = {"inherit": session.settings.model, "haiku": "claude-haiku-5-5"}.get(model, model)
    assert child.model == expected  # an alias resolves as Claude Code resolves it
    notes = [e.message for e in log.of("notice")]
    assert not any("names no model id here" in n for n in notes)


async def test_a_hostile_call_id_cannot_place_the_subagent_transcript_elsewhere(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """The `task` call's id comes from the endpoint; it names the sub-agent's transcript
    file, so it must not steer it out of the session's folder."""
    hostile = "../../../../" + str(tmp_path / "outside" / "pwned").lstrip("/")
    (tmp_path / "outside").mkdir()
    call = ("task", {"description": "x", "prompt": "Find things [H]"}, hostile)
    Roles(
        session=[tool_turn(call), text_turn("ok")],
        subagents={"[H]": [text_turn("report")]},
    ).play(api)
    session = make_session(api, tmp_path, tools=tools_for(tmp_path))
    result = await session.run("go")
    assert result.status == "completed"
    assert list((tmp_path / "outside").iterdir()) == []
    folder = tmp_path / "transcripts" / f"{session.id}.agents"
    (written,) = [p for p in folder.iterdir() if p.is_file()]
    # its copy in Claude Code's format (for hooks) stays inside the folder too
    assert [p.name for p in folder.iterdir() if p.is_dir()] in ([], ["claude-code"])
    assert written.parent == folder
    assert written.suffix == ".jsonl"
    assert ".." not in written.name
    assert "/" not in written.name


async def test_a_subagent_gets_the_same_secret_file_refusal_as_the_session(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text("API_TOKEN=s3cr3t-value\n")
    Roles(
        session=[tool_turn(task("[S]")), text_turn("ok")],
        subagents={"[S]": [tool_turn(("read_file", {"path": ".env"})), text_turn("no luck")]},
    ).play(api)
    session = make_session(api, tmp_path, tools=tools_for(tmp_path))
    await session.run("read the env")
    (refused,) = requests_of(api, "[S]")[-1].tool_results()
    assert refused["is_error"]
    assert "secret-file pattern" in str(refused["content"])
    assert "s3cr3t-value" not in str(api.message_requests[-1].json)


def test_an_oversized_or_misnamed_agent_file_is_skipped_with_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / ".agentls" / "agents"
    folder.mkdir(parents=True)
    (folder / "huge.md").write_text("---\nname: huge\ndescription: x\n---\n" + "x" * 200_000)
    (folder / "path.md").write_text("---\nname: ../../etc\ndescription: x\n---\nhi\n")
    (folder / "tools.md").write_text("---\nname: t\ndescription: x\ntools: 42\n---\nhi\n")
    (folder / "list.md").write_text("---\n- a\n- b\n---\nhi\n")
    catalog = AgentCatalog([tmp_path], home=None)
    assert [t.name for t in catalog.types()] == ["general-purpose", "explore"]
    reasons = "\n".join(catalog.problems)
    assert "huge.md was skipped: it is 200034 bytes (the limit is 100000)" in reasons
    assert "path.md was skipped: `name` '../../etc' must be letters" in reasons
    assert "tools.md was skipped: `tools` must be a comma-separated string" in reasons
    assert "list.md was skipped: its front matter is not a mapping" in reasons


def test_agent_files_come_from_home_then_claude_then_agentls_and_the_later_wins(
    tmp_path: Path,
) -> None:
    def agent(folder: Path, name: str, description: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        text = f"---\nname: {name}\ndescription: {description}\n---\nYou are {name}.\n"
        (folder / f"{name}.md").write_text(text)

    home, root = tmp_path / "home", tmp_path / "ws"
    agent(home / ".claude" / "agents", "mine", "from home")
    agent(home / ".claude" / "agents", "reviewer", "home reviewer")
    agent(root / ".claude" / "agents", "reviewer", "project reviewer")
    agent(root / ".claude" / "agents", "linter", "claude linter")
    agent(root / ".agentls" / "agents", "linter", "agentls linter")
    catalog = AgentCatalog([root], home=home)
    found = {t.name: t.description for t in catalog.types()}
    assert found == {
        "general-purpose": found["general-purpose"],
        "explore": found["explore"],
        "linter": "agentls linter",
        "mine": "from home",
        "reviewer": "project reviewer",
    }
    assert catalog.problems == []
    # the task tool's description offers each of them
    (tool,) = [t for t in builtin_tools(agents=catalog) if t.name == "task"]
    offered = tool.description()
    for name, description in found.items():
        assert f"- {name}: {description} (Tools: " in offered


@pytest.mark.parametrize(
    ("claude", "ours"),
    [
        ("Task", "task"),
        ("Agent", "task"),
        ("TodoWrite", "todo_write"),
        ("AskUserQuestion", "ask_user_question"),
        ("ExitPlanMode", "exit_plan_mode"),
    ],
)
def test_claude_codes_rules_for_these_tools_apply_to_ours(
    tmp_path: Path, claude: str, ours: str
) -> None:
    """A `deny: ["Task"]` in `.claude/settings.json` must not be ignored now that the tool
    exists: it removes `task` from the pool (and hook matchers see the same names)."""
    from agentls.agent.rules.rule import RuleSet, claude_names_for, parse_rule

    rule, problem = parse_rule(claude, "deny", "settings.json", root=tmp_path)
    assert problem is None
    assert rule is not None
    rules = RuleSet()
    rules.extend([rule])
    assert rules.denies_tool(ours)
    assert claude in claude_names_for(ours) or claude == "Agent"


async def test_a_subagents_calls_get_the_sessions_services(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """The runtime's one services object reaches a sub-agent's calls too: the same sandbox,
    skills and code intelligence as the session's own calls."""
    from agentls.agent.framework.context import ToolContext
    from agentls.agent.framework.services import ToolServices
    from tests.agent_support import ProbeInput

    seen: list[tuple[str, ToolServices]] = []

    class ServicesProbe(ProbeRead):
        name = "services_probe"
        aliases = ()

        async def call(self, input: ProbeInput, ctx: ToolContext) -> str:
            seen.append((input.label, ctx.services))
            return "seen"

    Roles(
        session=[
            tool_turn(("services_probe", {"label": "session"}), task("[S]")),
            text_turn("done"),
        ],
        subagents={
            "[S]": [tool_turn(("services_probe", {"label": "sub"})), text_turn("report [S]")]
        },
    ).play(api)
    catalog = AgentCatalog([tmp_path], home=tmp_path / "no-home")
    session = make_session(api, tmp_path, tools=[*builtin_tools(agents=catalog), ServicesProbe()])
    services = ToolServices(session.config.workspace)
    session.config.services = services
    result = await session.run("probe", events=EventLog())
    assert result.status == "completed", result.error
    assert sorted(label for label, _ in seen) == ["session", "sub"]
    assert all(found is services for _, found in seen)
