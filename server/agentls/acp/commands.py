"""The slash commands an ACP client offers (`available_commands_update`) and what they run.

- `/accept`, `/reject` (whole or by hunk), `/rewind`: the session's staged edits and turns
  (handled by the agent itself, `docs/review.md`);
- custom commands (`.claude/commands/*.md`, `.agentls/commands/*.md`, the user's): expanded
  by the core (`agentls.agent.claude.prompt_commands`), `allowed-tools` only where their source
  is trusted, as in the LSP host;
- skills (`.claude/skills/*/SKILL.md`, …): `/name args` asks the agent to load the skill
  with its `skill` tool and follow it for `args`.

The commands and skills are the runtime's (`AgentRuntime.commands`, `AgentRuntime.skills`),
the same catalogs the LSP host lists and the sessions load: this module only shapes them
for ACP and never discovers them itself (tests/test_host_parity.py).

A `/word` that names none of these is an ordinary prompt (a path, say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from agentls.agent.claude.prompt_commands import command_run

if TYPE_CHECKING:
    from agentls.agent.claude.prompt_commands import CommandRun
    from agentls.runtime.runtime import AgentRuntime

STAGED_COMMANDS = ("/accept", "/reject")
BUILTIN = [
    AvailableCommand(
        name="accept",
        description="Write the edits this session has staged (or hunks: /accept 1 3)",
    ),
    AvailableCommand(
        name="rewind",
        description="List the turns, or go back to the end of one (/rewind 2)",
    ),
    AvailableCommand(
        name="reject",
        description="Discard the staged edits (or hunks, saying why: /reject 2 too risky)",
    ),
]
_INVOCATION = re.compile(r"^/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+(.*))?$", re.DOTALL)


@dataclass(frozen=True)
class Expanded:
    prompt: str
    command: CommandRun | None = None


def available_commands(runtime: AgentRuntime) -> tuple[list[AvailableCommand], list[str]]:
    """`/accept`, `/reject`, the runtime's custom commands, then its skills; and the files
    skipped."""
    found = list(BUILTIN)
    names = {c.name for c in found}
    commands = runtime.commands()
    skills = runtime.skills(runtime.workspace)
    for command in commands.commands:
        if command.name in names:
            continue
        names.add(command.name)
        found.append(
            AvailableCommand(
                name=command.name,
                description=command.description,
                input=_hint(command.argument_hint),
            )
        )
    for skill in skills.skills:
        if skill.name in names:
            continue
        names.add(skill.name)
        found.append(
            AvailableCommand(
                name=skill.name, description=f"{skill.description} (skill)", input=_hint("task")
            )
        )
    return found, [*commands.problems, *skills.problems]


def _hint(text: str | None) -> AvailableCommandInput | None:
    if not text:
        return None
    return AvailableCommandInput(root=UnstructuredCommandInput(hint=text))


def expand(request: str, prompt: str, runtime: AgentRuntime, *, trusted: bool) -> Expanded:
    """The prompt to run for `request` (the user's words) and the command it came from.

    `prompt` is what runs when `request` names no command (the words and what goes with
    them); a command's expansion replaces the words and keeps the rest."""
    match = _INVOCATION.match(request.strip())
    if match is None:
        return Expanded(prompt)
    name, arguments = match.group(1), (match.group(2) or "").strip()
    rest = prompt[len(request) :] if prompt.startswith(request) else ""
    catalog = runtime.commands()
    if catalog.find(name) is not None:
        expansion = catalog.expand(request)
        assert expansion is not None
        run = command_run(expansion, runtime.workspace.roots[0], trusted_project=trusted)
        return Expanded(expansion.prompt + rest, run)
    skill = runtime.skills(runtime.workspace).find(name)
    if skill is not None:
        task = arguments or "the task the skill describes"
        text = f"Load the `{skill.name}` skill with the skill tool, then follow it for: {task}"
        return Expanded(text + rest)
    return Expanded(prompt)
