"""The workspace's `.mcp.json`: its servers, and where each stands with the user.

A server of the file starts only once approved. In order: disabled anywhere
(`disabledMcpjsonServers`, `disabledServers`) → off; approved by a standing answer (our
settings or Claude Code's user-level keys, see `agentls.mcp.claude`), by the
`agentls.mcp` command (one server, this content) or by the user's answer about the whole
file (this content, `agentls.mcp.approval`) → starts; declined → off; else it waits.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Literal

from agentls.mcp.approval import ApprovalStore, ProjectFileRequest, file_digest
from agentls.mcp.claude import ProjectSwitches
from agentls.mcp.config import ConfigProblem, ServerSpec, parse_servers, read_json_file

HOW_TO_APPROVE = (
    "approve them with `--allow-mcp` (all) or `--allow-mcp=NAME` on the command line, the "
    '`agentls.mcp` command with {"action": "approve"} in the editor, or list them in '
    "`enabledMcpjsonServers` in ~/.claude/settings.json"
)

ProjectState = Literal["approved", "needs-approval", "denied", "disabled"]


class ProjectFile:
    """The workspace's `.mcp.json` and where its approval stands."""

    def __init__(self, path: Path, data: bytes, servers: dict[str, ServerSpec]) -> None:
        self.path = path
        self.servers = servers
        self.request = ProjectFileRequest(
            path,
            file_digest(data),
            tuple((name, spec.describe()) for name, spec in sorted(servers.items())),
        )
        self.decision: bool | None = None
        """The answer about the whole file (remembered, or asked this time)."""
        self.asked = False

    def request_for(self, names: Sequence[str]) -> ProjectFileRequest:
        """The question about some of its servers (the others are decided already)."""
        wanted = set(names)
        servers = tuple(entry for entry in self.request.servers if entry[0] in wanted)
        return ProjectFileRequest(self.path, self.request.sha256, servers)


def project_state(
    project: ProjectFile | None,
    name: str,
    switches: ProjectSwitches,
    approvals: ApprovalStore,
    disabled_servers: Collection[str],
) -> tuple[ProjectState, str]:
    """Where a server of `.mcp.json` stands, and why."""
    if project is None or name not in project.servers:
        return "needs-approval", "not a server of the workspace's .mcp.json"
    disabled = switches.disabled.get(name)
    if name in disabled_servers:
        disabled = "disabledServers in agentls settings (mcp)"
    if disabled:
        return "disabled", f"disabled by {disabled}"
    approved = switches.approval_of(name)
    if approved:
        return "approved", f"approved by {approved}"
    if name in approvals.approved_servers(project.path, project.request.sha256):
        return "approved", "approved with the agentls.mcp command"
    if project.decision:
        return "approved", f"you approved {project.path}"
    if project.decision is False:
        return "denied", f"you declined {project.path}; {HOW_TO_APPROVE}"
    return (
        "needs-approval",
        f"{project.path} has not been approved yet; its servers start only after you "
        f"approve them (they can run programs on this machine): {HOW_TO_APPROVE}",
    )


def read_project(
    path: Path, env: Mapping[str, str]
) -> tuple[ProjectFile | None, list[ConfigProblem]]:
    """The file at `path` with its servers parsed (`${VAR}` from `env`); None when it does
    not exist. An unreadable or malformed file is a problem to report, never an error."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        return None, [ConfigProblem("*", "project", f"{path}: cannot read ({exc})")]
    data, problem = read_json_file(path)
    if problem:
        return None, [ConfigProblem("*", "project", problem)]
    parsed = parse_servers(data, "project", env, str(path))
    return ProjectFile(path, raw, parsed.servers), parsed.problems
