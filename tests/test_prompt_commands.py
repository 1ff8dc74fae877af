"""Custom commands: discovery, `/name args` expansion, and what `allowed-tools` and `@file`
may do (through the real loop and pipeline, against the scripted model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.claude.prompt_commands import UnknownCommand, command_run, discover_commands
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.agent_support import EventLog, make_session


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "project", tmp_path / "home"
    write(
        root / ".claude" / "commands" / "review.md",
        "---\ndescription: Review a file\nargument-hint: <file> [focus]\n"
        "allowed-tools: Bash(git diff:*), Read\nmodel: claude-haiku-5-0\n---\n"
        "Review @$0 with a focus on $1.\nAll arguments: $ARGUMENTS\n",
    )
    write(root / ".claude" / "commands" / "frontend" / "component.md", "Make a component.\n")
    write(root / ".agentls" / "commands" / "explain.md", "Explain the code.\n")
    write(root / ".claude" / "commands" / "bad.md", "---\nallowed-tools: {a: 1}\n---\nx\n")
    write(root / ".claude" / "commands" / "empty.md", "---\ndescription: nothing\n---\n\n")
    write(home / ".claude" / "commands" / "review.md", "User review.\n")
    write(home / ".claude" / "commands" / "standup.md", "---\ndescription: Standup\n---\nS\n")
    write(root / "src" / "app.py", "def main():\n    return 1\n")
    write(root / ".env", "API_TOKEN=hunter2\n")
    return root, home


def test_discovery_names_descriptions_and_problems(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    catalog = discover_commands([root], home)
    assert [c.name for c in catalog.commands] == ["component", "review", "explain", "standup"]
    review = catalog.find("review")
    assert review is not None
    assert review.source == "project"  # the project's wins
    assert review.description == "Review a file (project)"
    assert review.argument_hint == "<file> [focus]"
    assert review.allowed_tools == ("Bash(git diff:*)", "Read")
    assert catalog.find("component").description == "Make a component. (project:frontend)"  # type: ignore[union-attr]
    problems = "\n".join(catalog.problems)
    assert "bad.md: `allowed-tools` must be a list" in problems
    assert "empty.md: the prompt is empty" in problems
    assert "command /review in" in problems
    assert "the first one is used" in problems


def test_expansion_of_arguments_and_file_references(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    catalog = discover_commands([root], home)
    expansion = catalog.expand('/review src/app.py "error handling"')
    assert expansion is not None
    assert expansion.prompt == (
        "Review @src/app.py with a focus on error handling.\n"
        'All arguments: src/app.py "error handling"'
    )
    assert expansion.files == ("src/app.py",)
    plain = catalog.expand("/explain main loop")
    assert plain is not None
    assert plain.prompt == "Explain the code.\n\nARGUMENTS: main loop"
    assert catalog.expand("fix the bug") is None
    assert catalog.expand("/usr/bin/python crashes") is None  # a path, not a command
    with pytest.raises(UnknownCommand) as raised:
        catalog.expand("/deploy now")
    assert "unknown command /deploy (known commands: /component, /review, /explain" in str(
        raised.value
    )


def test_allowed_tools_need_a_trusted_source(dirs: tuple[Path, Path]) -> None:
    root, home = dirs
    expansion = discover_commands([root], home).expand("/review src/app.py x")
    assert expansion is not None
    trusted = command_run(expansion, root, trusted_project=True)
    assert [r.text for r in trusted.grants] == ["Bash(git diff:*)", "Read"]
    assert "allows for this run, without asking: Bash(git diff:*), Read" in trusted.notes[-1]
    untrusted = command_run(expansion, root, trusted_project=False)
    assert untrusted.grants == ()
    assert "are held back: this workspace is not trusted" in untrusted.notes[0]
    assert "agentls trust" in untrusted.notes[0]


async def test_a_command_run_attaches_files_through_the_pipeline_and_grants_for_one_run(
    api: ScriptedMessagesServer, tmp_path: Path, dirs: tuple[Path, Path]
) -> None:
    root, home = dirs
    write(
        root / ".claude" / "commands" / "leak.md",
        "---\nallowed-tools: Read\n---\nUse @.env and @src/app.py\n",
    )
    catalog = discover_commands([root], home)
    rules, _ = parse_rules({"ask": ["run_command(git push:*)"]}, "user", root=root)
    policy = RulePolicy(RuleSet(rules))
    api.extend(
        tool_turn(("run_command", {"command": "touch built.txt"})),  # not read-only: asks
        text_turn("Reviewed."),
        tool_turn(("run_command", {"command": "touch built.txt"})),
        text_turn("Again."),
    )
    from agentls.tools import builtin_tools

    session = make_session(api, root, tools=builtin_tools())
    session.config.permissions = policy
    expansion = catalog.expand("/leak")
    assert expansion is not None
    events = EventLog()
    run = command_run(expansion, root, trusted_project=True)
    result = await session.run(expansion.prompt, events=events, command=run)
    assert result.status == "completed"
    first = api.requests[0].json
    sent = "\n".join(b.get("text", "") for b in first["messages"][0]["content"])
    assert "hunter2" not in sent  # the secret file was refused by the pipeline's own step
    assert "[@.env was not attached: Permission denied for read_file" in sent
    assert '<attached-file path="src/app.py">' in sent
    assert "def main():" in sent
    notices = [e.message for e in events.of("notice")]
    assert any("@.env was not attached" in n for n in notices)
    # `Read` is granted; run_command is not, so it still needs approval (none here)
    tool_result = api.requests[1].json["messages"][-1]["content"][0]
    assert tool_result["is_error"]
    assert "needs the user's approval" in tool_result["content"]
    # the model override
    review = catalog.expand("/review src/app.py style")
    assert review is not None
    api.extend(text_turn("ok"))
    await session.run(review.prompt, command=command_run(review, root, trusted_project=True))
    assert api.requests[-1].json["model"] == "claude-haiku-5-0"
    assert policy._grants[session.id] == []  # revoked when the run ended


async def test_grants_never_beat_ask_or_deny_rules(
    api: ScriptedMessagesServer, tmp_path: Path, dirs: tuple[Path, Path]
) -> None:
    root, home = dirs
    write(
        root / ".claude" / "commands" / "push.md",
        "---\nallowed-tools: Bash(git push:*), Bash(rm:*)\n---\nPush it.\n",
    )
    rules, _ = parse_rules({"ask": ["Bash(git push:*)"], "deny": ["Bash(rm:*)"]}, "user", root=root)
    policy = RulePolicy(RuleSet(rules))
    api.extend(
        tool_turn(
            ("run_command", {"command": "git push origin main"}),
            ("run_command", {"command": "rm -rf build"}),
        ),
        text_turn("done"),
    )
    from agentls.tools import builtin_tools

    session = make_session(api, root, tools=builtin_tools())
    session.config.permissions = policy
    expansion = discover_commands([root], home).expand("/push")
    assert expansion is not None
    await session.run(expansion.prompt, command=command_run(expansion, root, trusted_project=True))
    push, rm = api.requests[1].json["messages"][-1]["content"]
    assert push["is_error"]
    assert "asks for approval" in push["content"]
    assert rm["is_error"]
    assert "denies it" in rm["content"]


async def test_a_grant_allows_for_its_run_and_not_after(tmp_path: Path) -> None:
    from agentls.agent.framework.context import ToolContext
    from agentls.tools import RunCommand
    from agentls.workspace import ChangeSet, Workspace

    policy = RulePolicy()
    ctx = ToolContext(session_id="s", workspace=Workspace([tmp_path]), changes=ChangeSet())
    tool = RunCommand()
    call = tool.parse_input({"command": "git diff HEAD"})
    assert policy.evaluate(tool, call, ctx).behavior == "ask"
    grants, _ = parse_rules({"allow": ["Bash(git diff:*)"]}, "cmd", root=tmp_path)
    revoke = policy.grant("s", grants)
    assert policy.evaluate(tool, call, ctx).behavior == "allow"
    other = ToolContext(session_id="other", workspace=ctx.workspace, changes=ChangeSet())
    assert policy.evaluate(tool, call, other).behavior == "ask"  # that session only
    assert policy.evaluate(tool, tool.parse_input({"command": "git push"}), ctx).behavior == "ask"
    revoke()
    assert policy.evaluate(tool, call, ctx).behavior == "ask"
