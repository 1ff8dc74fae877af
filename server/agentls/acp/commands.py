"""The slash commands an ACP client offers (`available_commands_update`) and what they run.

- `/accept`, `/reject` (whole or by hunk), `/rewind`: the session's staged edits and turns
  (handled by the agent itself, `docs/review.md`);
- custom commands (`.claude/commands/*.md`, `.agentls/commands/*.md`, the user's): expanded
  by the core (`agentls.agent.claude.prompt_commands`), `allowed-tools` only where their source
  is trusted, as in the LSP host;
- skills (`.claude/skills/*/SKILL.md`, …): `/name args` asks the agent to load the skill
  with its `skill` tool and follow it for `args`.

A `/word` that names none of these is an ordinary prompt (a path, say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from agentls.agent.claude.plugins import commands_with_plugins
from agentls.agent.claude.prompt_commands import command_run
from agentls.agent.claude.skills import discover_skills

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentls.agent.claude.prompt_commands import CommandRun

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


def available_commands(roots: Sequence[Path]) -> tuple[list[AvailableCommand], list[str]]:
    """`/accept`, `/reject`, the custom commands, then the skills; and the files skipped."""
    found = list(BUILTIN)
    names = {c.name for c in found}
    commands = commands_with_plugins(roots)
    skills = discover_skills(roots)
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


def expand(request: str, prompt: str, roots: Sequence[Path], *, trusted: bool) -> Expanded:
    """The prompt to run for `request` (the user's words) and the command it came from.

    `prompt` is what runs when `request` names no command (the words and what goes with
    them); a command's expansion replaces the words and keeps the rest."""
    match = _INVOCATION.match(request.strip())
    if match is None:
        return Expanded(prompt)
    name, arguments = match.group(1), (match.group(2) or "").strip()
    rest = prompt[len(request) :] if prompt.startswith(request) else ""
    catalog = commands_with_plugins(roots)
    if catalog.find(name) is not None:
        expansion = catalog.expand(request)
        assert expansion is not None
        run = command_run(expansion, roots[0], trusted_project=trusted)
        return Expanded(expansion.prompt + rest, run)
    skill = discover_skills(roots).find(name)
    if skill is not None:
        task = arguments or "the task the skill describes"
        text = f"Load the `{skill.name}` skill with the skill tool, then follow it for: {task}"
        return Expanded(text + rest)
    return Expanded(prompt)
