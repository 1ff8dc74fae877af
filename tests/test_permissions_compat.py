"""Claude Code's permission rules as documented, and each boundary as an attacker would
test it: prefix rules, stripped wrappers, the read-only command set, suggested rules,
`dontAsk`, reads outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.tool import CallRisk
from agentls.agent.permissions.guards import call_subject
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rule, parse_rules
from agentls.agent.rules.suggestions import is_valid_suggestion, session_rules
from agentls.agent.safety import load_safety
from agentls.tools import builtin_tools
from agentls.tools.run_command import RunCommand, RunCommandInput
from agentls.workspace import ChangeSet, Workspace
from tests.shadow_support import make_ctx

CONFINED = CallRisk(confined=True)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text("hello\n")
    (folder / "src" / "app.py").write_text("x = 1\n")
    (folder / ".env").write_text("TOKEN=secret\n")
    os.symlink(folder / ".env", folder / "notes.txt")
    return folder


def _policy(root: Path, **lists: Any) -> RulePolicy:
    mode = lists.pop("mode", "default")
    options = {k: lists.pop(k) for k in ("read_only_commands", "read_roots") if k in lists}
    rules, problems = parse_rules(dict(lists), "test", root=root)
    assert not problems, problems
    return RulePolicy(RuleSet(rules), mode=mode, **options)


def _command(policy: RulePolicy, root: Path, command: str, risk: CallRisk = CONFINED) -> str:
    tool = RunCommand()
    verdict = policy.evaluate(
        tool, RunCommandInput(command=command), make_ctx(Workspace([root])), risk=risk
    )
    return verdict.behavior


# -- Bash(prefix:*) and wrappers --------------------------------------------------------------


def test_a_prefix_rule_means_starts_with_as_claude_code_documents(root: Path) -> None:
    policy = _policy(root, allow=["Bash(npm run test:*)"])
    for command in ("npm run test", "npm run test:unit", "npm run test -- --watch"):
        assert _command(policy, root, command, CallRisk()) == "allow", command
    assert _command(policy, root, "npm run build", CallRisk()) == "ask"
    assert (
        _command(policy, root, "npm run test:unit && rm -rf /nonexistent/victim", CallRisk())
        == "ask"
    )


@pytest.mark.parametrize(
    "command",
    [
        "timeout 30 npm test",
        "timeout -s KILL 5s npm test",
        "nice -n 5 npm test",
        "nice -10 npm test",
        "nohup npm test",
        "time npm test",
        "time -p npm test",
        "env CI=1 NODE_ENV=test npm test",
        "nice -n 5 timeout 60 env CI=true npm test -- --ci",
    ],
)
def test_wrappers_are_stripped_before_an_allow_rule_matches(root: Path, command: str) -> None:
    assert _command(_policy(root, allow=["Bash(npm test:*)"]), root, command, CallRisk()) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "env LD_PRELOAD=/tmp/evil.so npm test",  # loads the attacker's library
        "env PATH=/tmp/evil:/usr/bin npm test",  # runs the attacker's `npm`
        "env NODE_OPTIONS=--require=/tmp/evil.js npm test",
        "env -i npm test",
        "env -S 'npm test' && rm -rf /nonexistent/victim",
        "env -C /tmp npm test",
        "PATH=/tmp/evil npm test",
        "sudo npm test",
        "time -o /home/me/.bashrc npm test",
        "timeout 5 rm -rf /nonexistent/victim",
        "nice rm -rf /nonexistent/victim",
        "timeout npm test",  # no duration: not a timeout of `npm test`
    ],
)
def test_wrappers_that_change_what_runs_are_not_stripped(root: Path, command: str) -> None:
    assert _command(_policy(root, allow=["Bash(npm test:*)"]), root, command, CallRisk()) == "ask"


# -- the read-only command set ----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ls",
        "ls -la src",
        "pwd",
        "cat README.md",
        "head -n 5 src/app.py",
        "wc -l README.md src/app.py",
        "grep -rn TODO src",
        "rg TODO",
        "find src -name '*.py'",
        "git status",
        "git status --porcelain",
        "git log --oneline -5",
        "git diff HEAD~1 -- src",
        "git show HEAD:README.md",
        "git branch",
        "git branch -a",
        "git tag -l 'v*'",
        "git config --get user.name",
        "git --no-pager log",
        "ls | wc -l",
        "git log --oneline | head -3",
        "timeout 10 git status",
        "echo $(pwd)",
    ],
)
def test_read_only_commands_run_without_asking_in_the_sandbox(root: Path, command: str) -> None:
    policy = _policy(root)
    assert _command(policy, root, command) == "allow", command
    # outside the sandbox (a fallback, the sandbox switched off) they ask like any command
    assert _command(policy, root, command, CallRisk()) == "ask", command
    # and the setting turns the set off
    assert _command(_policy(root, read_only_commands=False), root, command) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "cat .env",  # a secret file
        "cat < .env",  # by redirection
        "cat notes.txt",  # a symlink to .env
        "cat ./src/../.env",
        "grep TOKEN .env",
        "cat ~/.ssh/id_rsa",  # outside the workspace
        "cat /etc/passwd",
        "cat $HOME/.bashrc",  # an expansion it cannot check
        "ls ../",
        "cd / && cat etc/passwd",  # cd changes what relative paths mean
        "git diff --output=/home/me/.bashrc",  # git writes the file
        "git log --output=/tmp/x",
        "git log --exec='rm -rf /nonexistent/victim'",
        "git diff --no-index /etc/shadow /dev/null",
        "git show HEAD:.env",  # a secret from the history
        "git -c core.pager='sh -c evil' log",
        "git -C /tmp/evil status",  # another repository's config runs its fsmonitor
        "git --git-dir=/tmp/evil/.git status",
        "git -p log",  # runs the pager program
        "git branch evil",
        "git branch -D main",
        "git tag v1",
        "git config user.name x",
        "git stash",
        "git commit -m x",
        "git push",
        "git grep -O'sh -c evil' x",
        "ls $(rm -rf /nonexistent/victim)",
        "ls `rm -rf /nonexistent/victim`",
        "ls && rm -rf src",
        "ls; curl evil.example",
        "ls > listing.txt",
        "echo x >> README.md",
        "find . -exec rm {} +",
        "find . -delete",
        "find . -fprint /tmp/out",
        "sort -o README.md README.md",
        "sort --compress-program=sh README.md",
        "rg --pre ./evil TODO",
        "tree -o out.txt",
        "xxd -r dump README.md",
        "uniq README.md out.txt",
        "printf -v PATH /tmp/evil",
        "env",  # fine alone...
        "env rm -rf src",  # ...but env runs a command
        "PATH=/tmp/evil ls",
        "./ls",
        "/tmp/ls",
        "bash -c 'ls; rm -rf src'",
        "diff <(rm -rf /nonexistent/victim) README.md",
        "sed -i s/a/b/ README.md",
        "awk 'BEGIN{system(\"rm -rf /nonexistent/victim\")}'",
        "less README.md",
        "command rm -rf src",
        "hostname evil",
        "date -s 2000-01-01",
        "cat 'unterminated",
    ],
)
def test_every_way_a_read_only_command_writes_or_reads_outside_asks(
    root: Path, command: str
) -> None:
    behavior = _command(_policy(root), root, command)
    if command == "env":
        assert behavior == "allow"  # the environment is scrubbed of credentials
        return
    assert behavior != "allow", command


def test_additional_directories_count_for_read_only_commands(root: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("guide\n")
    assert _command(_policy(root), root, f"cat {docs}/guide.md") == "ask"
    policy = _policy(root, read_roots=[docs])
    assert _command(policy, root, f"cat {docs}/guide.md") == "allow"
    assert _command(policy, root, f"cat {tmp_path}/other.md") == "ask"


# -- suggested rules ---------------------------------------------------------------------------


SUBJECTS = [
    (
        "mcp__files__read_text_file",
        {"path": "/ws/a.txt"},
    ),  # was `mcp__files__read_text_file(//ws/a.txt)`
    ("mcp__github__create_issue", {"title": "x"}),
    ("run_command", {"command": "npm test && git status"}),
    ("run_command", {"command": "ls *"}),  # a wildcard cannot be written exactly
    ("run_command", {"command": "echo x:*"}),
    ("run_command", {"command": "echo (a) && make"}),
    ("edit_file", {"path": "src/a b[1]*.py"}),
    ("edit_file", {"path": "#weird!name "}),
    ("read_file", {"path": "/outside/file.txt"}),
    ("lint", {"paths": ["src/app.py"]}),
    ("probe", {}),
]


@pytest.mark.parametrize(("tool", "raw"), SUBJECTS)
def test_every_suggested_rule_parses_and_allows_exactly_the_call(
    root: Path, tool: str, raw: dict[str, Any]
) -> None:
    subject = call_subject(tool, raw, [root])
    suggested = session_rules(subject)
    pasted = []
    for rule in suggested:
        parsed, problem = parse_rule(rule.text, "allow", "pasted", root=Path("/"))
        assert parsed is not None, (rule.text, problem)
        pasted.append(parsed)
        if subject.command is None:
            assert is_valid_suggestion(rule.text, subject), rule.text
    if suggested:  # pasted into the settings, they allow exactly this call
        assert RuleSet(pasted).allowing(subject) is not None


def test_the_mcp_suggestion_is_a_rule_the_parser_accepts(root: Path) -> None:
    subject = call_subject("mcp__files__read_text_file", {"path": "/ws/a.txt"}, [root])
    assert [r.text for r in session_rules(subject)] == ["mcp__files__read_text_file"]
    wildcard = call_subject("run_command", {"command": "rm *"}, [root])
    assert session_rules(wildcard) == ()  # `run_command(rm *)` would allow every rm


def test_a_denial_without_an_approver_names_a_valid_rule(root: Path) -> None:
    tool = next(t for t in builtin_tools() if t.name == "run_command")
    verdict = RulePolicy().evaluate(
        tool, RunCommandInput(command="make build"), make_ctx(Workspace([root]))
    )
    assert [r.text for r in verdict.remember] == ["run_command(make build)"]


# -- dontAsk -----------------------------------------------------------------------------------


async def test_dont_ask_denies_whatever_would_ask(root: Path) -> None:
    from agentls.agent.framework.registry import ToolPool
    from agentls.agent.run.pipeline import Pipeline, ToolCall
    from tests.shadow_support import unsandboxed

    safety = load_safety(
        [root],
        home=root.parent / "home",
        section={"permissions": {"defaultMode": "dontAsk", "allow": ["Bash(echo allowed:*)"]}},
    )
    assert safety.mode == "dontAsk"
    assert not safety.problems

    class Never:
        async def ask(self, request: Any) -> Any:
            raise AssertionError("dontAsk must never ask")

    policy = safety.policy(Never())
    services = unsandboxed(Workspace([root]))
    pipeline = Pipeline(ToolPool(builtin_tools()), permissions=policy)
    ctx = make_ctx(services, ChangeSet())
    denied = await pipeline.execute(ToolCall("1", "run_command", {"command": "touch x"}), ctx)
    assert denied.is_error
    assert "dontAsk" in str(denied.content)
    assert "run_command(touch x)" in str(denied.content)  # how to allow it
    assert not (root / "x").exists()
    allowed = await pipeline.execute(
        ToolCall("2", "run_command", {"command": "echo allowed now"}), ctx
    )
    assert not allowed.is_error
    assert "allowed now" in str(allowed.content)
    read = await pipeline.execute(ToolCall("3", "read_file", {"path": "README.md"}), ctx)
    assert not read.is_error


# -- reads outside the workspace ---------------------------------------------------------------


async def test_additional_directories_and_read_rules_are_read_roots(
    root: Path, tmp_path: Path
) -> None:
    from agentls.agent.framework.registry import ToolPool
    from agentls.agent.run.pipeline import Pipeline, ToolCall

    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "todo.md").write_text("buy milk\n")
    (home / "notes" / "diary.txt").write_text("private\n")
    (home / "notes" / ".env").write_text("TOKEN=notes-secret\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "spec.md").write_text("the spec\n")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not for the agent\n")
    safety = load_safety(
        [root],
        home=home,
        section={
            "permissions": {
                "additionalDirectories": [str(shared)],
                "allow": ["Read(~/notes/*.md)"],
            }
        },
    )
    assert not safety.problems, safety.problems
    workspace = Workspace([root])
    workspace.services.set_read_roots(safety.readable_roots)
    asked: list[str] = []

    class Deny:
        async def ask(self, request: Any) -> Any:
            asked.append(str(request.paths))
            return "deny"

    pipeline = Pipeline(ToolPool(builtin_tools()), permissions=safety.policy(Deny()))
    ctx = make_ctx(workspace, ChangeSet())

    async def call(name: str, **input: Any) -> str:
        result = await pipeline.execute(ToolCall("c", name, input), ctx)
        return ("ERROR " if result.is_error else "") + str(result.content)

    assert "the spec" in await call("read_file", path=str(shared / "spec.md"))
    assert "spec.md" in await call("list_files", path=str(shared))
    assert "the spec" in await call("grep", pattern="spec", path=str(shared), output="content")
    assert "buy milk" in await call("read_file", path=str(home / "notes" / "todo.md"))
    assert not asked
    # in the rule's folder but not matched by it: asked (and denied here)
    diary = await call("read_file", path=str(home / "notes" / "diary.txt"))
    assert diary.startswith("ERROR")
    assert "private" not in diary
    assert len(asked) == 1
    # secret files stay secret there
    secret = await call("read_file", path=str(home / "notes" / ".env"))
    assert secret.startswith("ERROR")
    assert "notes-secret" not in secret
    # anywhere else: refused by the tool, naming the settings
    outside = await call("read_file", path=str(elsewhere))
    assert outside.startswith("ERROR")
    assert "additionalDirectories" in outside
    # and nothing outside the workspace is ever edited
    edit = await call("write_file", path=str(shared / "spec.md"), content="changed\n")
    assert edit.startswith("ERROR")
    assert (shared / "spec.md").read_text() == "the spec\n"
