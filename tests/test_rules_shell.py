"""Compound shell commands: an allow rule for one command never lets another one through."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.agent.rules.shell import split_command
from agentls.tools.run_command import RunCommand, RunCommandInput
from agentls.workspace import Workspace
from tests.shadow_support import make_ctx

BYPASSES = [
    "npm test && rm -rf ~",
    "npm test || rm -rf ~",
    "npm test; rm -rf ~",
    "npm test | rm -rf ~",
    "npm test & rm -rf ~",
    "npm test $(rm -rf ~)",
    'npm test "$(rm -rf ~)"',
    "npm test `rm -rf ~`",
    "npm test\nrm -rf ~",
    "npm test\r\nrm -rf ~",
    "(rm -rf ~) && npm test",
    "{ rm -rf ~; } && npm test",
    "npm test <(rm -rf ~)",
    "npm test > ~/.bashrc",
    "npm test ${X:-$(rm -rf ~)}",
    "if npm test; then rm -rf ~; fi",
    "for x in 1; do rm -rf ~; done; npm test",
    "f() { rm -rf ~; }; npm test",
    'bash -c "rm -rf ~" && npm test',
    "eval 'rm -rf ~'; npm test",
    "npm test 'unterminated",
    "X=$(rm -rf ~) npm test",
    "npm test <<EOF\n$(rm -rf ~)\nEOF",
]


def _policy(tmp_path: Path, **lists: list[str]) -> RulePolicy:
    rules, problems = parse_rules(dict(lists), "test", root=tmp_path)
    assert not problems
    return RulePolicy(RuleSet(rules))


def _verdict(policy: RulePolicy, command: str, tmp_path: Path) -> str:
    tool = RunCommand()
    ctx = make_ctx(Workspace([tmp_path]))
    parsed = RunCommandInput(command=command)
    return policy.evaluate(tool, parsed, ctx).behavior


def test_the_plain_command_is_allowed(tmp_path: Path) -> None:
    policy = _policy(tmp_path, allow=["run_command(npm test:*)"])
    assert _verdict(policy, "npm test", tmp_path) == "allow"
    assert _verdict(policy, "npm test -- --watch=false", tmp_path) == "allow"
    assert _verdict(policy, "npm test 2>&1", tmp_path) == "allow"  # a descriptor dup writes nothing


@pytest.mark.parametrize("command", BYPASSES)
def test_an_allow_prefix_does_not_cover_a_second_command(tmp_path: Path, command: str) -> None:
    policy = _policy(tmp_path, allow=["Bash(npm test:*)"])
    assert _verdict(policy, command, tmp_path) == "ask", command


@pytest.mark.parametrize("command", [c for c in BYPASSES if "rm -rf" in c])
def test_a_deny_rule_catches_the_hidden_part(tmp_path: Path, command: str) -> None:
    policy = _policy(tmp_path, allow=["run_command"], deny=["run_command(rm:*)"])
    assert _verdict(policy, command, tmp_path) == "deny", command


@pytest.mark.parametrize(
    "command",
    ["sudo rm -rf /", "/bin/rm -rf /", "env X=1 rm -rf /", "timeout 5 rm -rf /", 'r""m -rf /'],
)
def test_deny_sees_through_wrappers_and_quotes(tmp_path: Path, command: str) -> None:
    policy = _policy(tmp_path, allow=["run_command"], deny=["run_command(rm:*)"])
    assert _verdict(policy, command, tmp_path) == "deny"


def test_wrappers_never_make_an_allow_match(tmp_path: Path) -> None:
    policy = _policy(tmp_path, allow=["run_command(npm test:*)"])
    assert _verdict(policy, "sudo npm test", tmp_path) == "ask"
    assert _verdict(policy, "PATH=/tmp/evil npm test", tmp_path) == "ask"


def test_every_part_allowed_allows_the_whole(tmp_path: Path) -> None:
    policy = _policy(tmp_path, allow=["run_command(npm test:*)", "run_command(npm run lint)"])
    assert _verdict(policy, "npm run lint && npm test -- -x", tmp_path) == "allow"


def test_the_splitter_lists_each_simple_command() -> None:
    split = split_command("a 1 && b 2 | c; d $(e `f`)")
    assert [p.text for p in split.parts] == ["a 1", "b 2", "c", "d $(e `f`)", "e `f`", "f"]
    assert split.complete
    broken = split_command("echo 'x")
    assert not broken.complete
