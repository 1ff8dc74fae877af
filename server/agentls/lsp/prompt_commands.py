"""Custom commands (`/name args`) for `agentls.run` and `agentls.commands`.

The core discovers and expands them (`agentls.agent.claude.prompt_commands`); this module only
hands it the workspace roots and the workspace-trust decision, and shapes the
list editors show (VS Code's quick pick, Neovim's `:AgentlsRun /` completion).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from agentls.agent.claude.prompt_commands import CommandRun, command_run

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection


class CommandPayload(TypedDict):
    name: str
    description: str
    argument_hint: str | None
    source: str
    path: str
    allowed_tools: list[str]
    model: str | None


class CommandsPayload(TypedDict):
    commands: list[CommandPayload]
    problems: list[str]
    """Command files that were skipped, and why."""


def expand_command(ls: Connection, prompt: str) -> tuple[str, CommandRun | None]:
    """The prompt to run and the command it came from; `UnknownCommand` (a `ValueError`,
    so the request fails with InvalidParams naming the known commands) for `/unknown`."""
    roots = ls.host.workspace.roots
    expansion = ls.runtime.commands().expand(prompt)
    if expansion is None:
        return prompt, None
    trusted = ls.config.project_trusted  # the workspace-trust decision (agentls.lsp.trust)
    return expansion.prompt, command_run(expansion, roots[0], trusted_project=trusted)


def list_commands(ls: Connection) -> CommandsPayload:
    catalog = ls.runtime.commands()
    commands: list[CommandPayload] = [
        {
            "name": c.name,
            "description": c.description,
            "argument_hint": c.argument_hint,
            "source": c.source,
            "path": str(c.path),
            "allowed_tools": list(c.allowed_tools),
            "model": c.model,
        }
        for c in catalog.commands
    ]
    return {"commands": commands, "problems": catalog.problems}
