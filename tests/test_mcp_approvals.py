"""Who may approve a workspace's `.mcp.json`, tested as an attacker would.

A cloned repository controls its `.mcp.json` and every other file inside it; none of them
may start a server without the user's approval. Each server here is a program that only
leaves a marker file when it is started, so "not started" is a fact on disk, not a status.
The user may approve through their own places: our `mcp` settings (user-only; the CLI's
`--allow-mcp`), `~/.claude/settings.json`, the workspace's own entry in `~/.claude.json`,
the approval prompt, or the `agentls.mcp` command (remembered for the file's content).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.mcp import ApprovalStore, McpManager, Notice, ProjectFileRequest
from agentls.mcp.project import HOW_TO_APPROVE


def marker_server(marker: Path) -> dict[str, Any]:
    """A stdio "server" that only proves it ran (it exits at once: a failed start)."""
    code = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('started')"
    return {"command": sys.executable, "args": ["-c", code, str(marker)]}


class Repo:
    """A workspace with a `.mcp.json` of two servers, `good` and `evil`, and a home."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "repo"
        self.home = tmp_path / "home"
        self.root.mkdir()
        self.home.mkdir()
        self.markers = {name: tmp_path / f"{name}.started" for name in ("good", "evil")}
        self.write_project()
        self.notices: list[Notice] = []

    def write_project(self, **extra_args: str) -> None:
        servers = {name: marker_server(path) for name, path in self.markers.items()}
        for name, arg in extra_args.items():
            servers[name]["args"].append(arg)
        (self.root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))

    def write(self, relative: str, data: object, *, under_home: bool = False) -> None:
        path = (self.home if under_home else self.root) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))

    def manager(self, config: dict[str, Any] | None = None, **kw: Any) -> McpManager:
        kw.setdefault("approvals", ApprovalStore(self.home / "approvals.json"))
        return McpManager.from_config(
            self.root,
            config,
            user_config=self.home / "user-mcp.json",
            home=self.home,
            notify=self.notices.append,
            **kw,
        )

    async def run(self, config: dict[str, Any] | None = None, **kw: Any) -> dict[str, str]:
        """Start what the manager starts; {server: state}."""
        manager = self.manager(config, **kw)
        try:
            await manager.start()
            return {s["name"]: s["state"] for s in manager.status()}
        finally:
            await manager.aclose()

    def started(self) -> set[str]:
        return {name for name, path in self.markers.items() if path.exists()}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


async def test_an_unapproved_project_file_starts_nothing_and_says_how_to_approve(
    repo: Repo,
) -> None:
    states = await repo.run()
    assert repo.started() == set()
    assert states == {"evil": "needs-approval", "good": "needs-approval"}
    warnings = [n.text for n in repo.notices if n.level == "warning"]
    assert any("need your approval" in w and HOW_TO_APPROVE in w for w in warnings)
    assert any("evil" in w and "-c" in w for w in warnings)  # what would run is named


@pytest.mark.parametrize("file", [".claude/settings.json", ".claude/settings.local.json"])
@pytest.mark.parametrize(
    "keys",
    [
        {"enableAllProjectMcpServers": True},
        {"enabledMcpjsonServers": ["good", "evil"]},
    ],
)
async def test_the_repositorys_claude_files_cannot_approve_its_servers(
    repo: Repo, file: str, keys: dict[str, Any]
) -> None:
    repo.write(file, keys)
    states = await repo.run()
    assert repo.started() == set()
    assert set(states.values()) == {"needs-approval"}
    assert any("ignored" in n.text and file in n.text for n in repo.notices)


async def test_another_projects_entry_in_claude_json_does_not_approve(repo: Repo) -> None:
    parent = str(repo.root.parent)
    sibling = str(repo.root) + "-other"  # same prefix, another folder
    repo.write(
        ".claude.json",
        {
            "projects": {
                parent: {"enableAllProjectMcpServers": True},
                sibling: {"enabledMcpjsonServers": ["good", "evil"]},
            }
        },
        under_home=True,
    )
    await repo.run()
    assert repo.started() == set()


async def test_the_users_claude_code_files_approve_by_name(repo: Repo) -> None:
    repo.write(".claude/settings.json", {"enabledMcpjsonServers": ["good"]}, under_home=True)
    states = await repo.run()
    assert repo.started() == {"good"}
    assert states["evil"] == "needs-approval"


async def test_the_workspaces_claude_json_entry_approves_and_a_repository_may_disable(
    repo: Repo,
) -> None:
    repo.write(
        ".claude.json",
        {"projects": {str(repo.root): {"enableAllProjectMcpServers": True}}},
        under_home=True,
    )
    repo.write(".claude/settings.local.json", {"disabledMcpjsonServers": ["evil"]})
    states = await repo.run()
    assert repo.started() == {"good"}  # disabling only tightens: honoured from anywhere
    assert states["evil"] == "disabled"


async def test_read_claude_settings_off_ignores_their_approvals(repo: Repo) -> None:
    repo.write(".claude/settings.json", {"enableAllProjectMcpServers": True}, under_home=True)
    await repo.run(read_claude_settings=False)
    assert repo.started() == set()


async def test_our_settings_approve_named_servers_and_disabled_wins(repo: Repo) -> None:
    await repo.run({"enabledMcpjsonServers": ["good"]})  # what `--allow-mcp=good` sends
    assert repo.started() == {"good"}
    repo.markers["good"].unlink()
    states = await repo.run(
        {"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["evil"]}
    )
    assert repo.started() == {"good"}
    assert states["evil"] == "disabled"


async def test_a_server_approved_by_command_is_remembered_for_this_content_only(
    repo: Repo,
) -> None:
    manager = repo.manager()
    try:
        assert await manager.approve("good") == ["good"]
        assert repo.started() == {"good"}
        with pytest.raises(LookupError, match="not a server of"):
            await manager.approve("nope")
    finally:
        await manager.aclose()
    repo.markers["good"].unlink()
    await repo.run()  # the same file: remembered
    assert repo.started() == {"good"}
    repo.markers["good"].unlink()
    repo.write_project(good="--now-doing-something-else")  # a pull changed the command
    states = await repo.run()
    assert repo.started() == set()
    assert states["good"] == "needs-approval"


async def test_the_prompt_is_asked_only_about_undecided_servers(repo: Repo) -> None:
    asked: list[ProjectFileRequest] = []

    async def approve(request: ProjectFileRequest) -> bool:
        asked.append(request)
        return False

    await repo.run({"enabledMcpjsonServers": ["good"]}, approve_project_file=approve)
    assert [name for name, _ in asked[0].servers] == ["evil"]
    assert repo.started() == {"good"}  # the "no" is about the rest


async def test_local_scope_servers_of_this_workspace_start_without_a_prompt(
    repo: Repo, tmp_path: Path
) -> None:
    local = tmp_path / "local.started"
    other = tmp_path / "other.started"
    repo.write(
        ".claude.json",
        {
            "projects": {
                str(repo.root): {"mcpServers": {"mine": marker_server(local)}},
                str(repo.root.parent): {"mcpServers": {"theirs": marker_server(other)}},
            }
        },
        under_home=True,
    )
    states = await repo.run()
    assert local.exists()
    assert not other.exists()
    assert "mine" in states
    assert "theirs" not in states
    assert repo.started() == set()  # the project's servers still wait
    await repo.run({"claudeCodeLocalConfig": False})
    local.unlink()
    await repo.run({"claudeCodeLocalConfig": False})
    assert not local.exists()


async def test_a_malformed_project_file_is_reported_and_starts_nothing(repo: Repo) -> None:
    (repo.root / ".mcp.json").write_text('{"mcpServers": {"good": ')
    states = await repo.run({"enableAllProjectMcpServers": True})
    assert repo.started() == set()
    assert states == {"*": "invalid-config"}
    assert any("invalid JSON" in n.text for n in repo.notices)
