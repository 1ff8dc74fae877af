"""Custom commands in Claude Code's format: `/name args` expands a Markdown prompt file.

Files: `.claude/commands/**/*.md` and `.agentls/commands/**/*.md` in each workspace root
(project commands), `~/.claude/commands/**/*.md` (user commands); the file name is the
command's name, a subfolder only groups (it shows in the description, as in Claude Code).
Front matter (all optional): `description`, `argument-hint`, `allowed-tools`, `model`.
The body may use `$ARGUMENTS` (everything after the name), `$1` … `$9` (the arguments
one by one, shell-quoted words) and `@path` references to workspace files.

What a command may do, and what not:
- `@path` files are attached when the run starts by calling `read_file` through the
  pipeline: secret files, deny rules, ask rules and hooks apply exactly as to the
  model's own reads, and a path outside the workspace is refused. An attachment that is
  refused is left out and the run says why.
- `allowed-tools` are allow rules for that run only, and only where the user trusts the
  command's source: always for user commands, for project commands once the workspace is
  trusted (`agentls.agent.trust` counts them among the settings it holds back, as the
  project's own `.claude/settings.json` allow rules). They
  never override a deny or ask rule, plan mode, secret files or the sandbox, and the run
  announces them. A rule that cannot be parsed is reported and ignored.
- Claude Code's `!`command`` lines are not run (the text stays as it is).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentls.agent.frontmatter import FrontMatterError, read_markdown, text_field, tools_field
from agentls.agent.rules import Rule, parse_rules

CommandSource = Literal["project", "user"]
MAX_COMMANDS = 500
MAX_ATTACHMENTS = 20
_INVOCATION = re.compile(r"^/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+(.*))?$", re.DOTALL)
_POSITIONAL = re.compile(r"\$([1-9])")
_FILE_REF = re.compile(r"(?<![\w@/`$])@((?:[\w.-]+/)*[\w.-]*[\w-](?:\.[\w-]+)?)")


class UnknownCommand(ValueError):
    """A prompt named a command that does not exist; the message lists the known ones."""


@dataclass(frozen=True)
class CustomCommand:
    name: str
    description: str
    path: Path
    source: CommandSource
    body: str
    argument_hint: str | None = None
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None
    group: str = ""
    """The subfolder it came from (`frontend` for `commands/frontend/test.md`)."""


@dataclass(frozen=True)
class Expansion:
    """A prompt after `/name args` was expanded."""

    command: CustomCommand
    prompt: str
    files: tuple[str, ...] = ()
    """`@path` references, attached through `read_file` when the run starts."""


@dataclass
class CommandCatalog:
    commands: list[CustomCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def find(self, name: str) -> CustomCommand | None:
        return next((c for c in self.commands if c.name == name), None)

    def expand(self, prompt: str) -> Expansion | None:
        """The expansion of a `/name args` prompt; None for any other prompt;
        `UnknownCommand` for a name that is not a command."""
        match = _INVOCATION.match(prompt.strip())
        if match is None:
            return None
        name, arguments = match.group(1), (match.group(2) or "").strip()
        command = self.find(name)
        if command is None:
            known = ", ".join(f"/{c.name}" for c in self.commands) or "none"
            raise UnknownCommand(
                f"unknown command /{name} (known commands: {known}). Custom commands are "
                "Markdown files in .claude/commands/, .agentls/commands/ or "
                "~/.claude/commands/; to send a prompt that starts with '/', begin it with "
                "a space"
            )
        text = substitute(command.body, arguments)
        return Expansion(command, text, file_references(text))


def substitute(body: str, arguments: str) -> str:
    """`$ARGUMENTS` and `$1`…`$9`; with neither in the body, the arguments are appended."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    used = "$ARGUMENTS" in body or _POSITIONAL.search(body) is not None
    text = body.replace("$ARGUMENTS", arguments)
    text = _POSITIONAL.sub(
        lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "", text
    )
    if arguments and not used:
        text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
    return text.strip()


def file_references(text: str) -> tuple[str, ...]:
    """The `@path` references of an expanded prompt (e.g. `@src/app.py`), in order."""
    found = [m.group(1) for m in _FILE_REF.finditer(text)]
    paths = [p for p in found if "/" in p or "." in p]
    return tuple(dict.fromkeys(paths))[:MAX_ATTACHMENTS]


def command_bases(roots: Sequence[Path], home: Path) -> list[tuple[Path, CommandSource]]:
    bases: list[tuple[Path, CommandSource]] = []
    for root in roots:
        bases.append((root / ".claude" / "commands", "project"))
        bases.append((root / ".agentls" / "commands", "project"))
    bases.append((home / ".claude" / "commands", "user"))
    return bases


def discover_commands(roots: Sequence[Path], home: Path | None = None) -> CommandCatalog:
    catalog = CommandCatalog()
    for base, source in command_bases(roots, home or Path.home()):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.md")):
            if len(catalog.commands) >= MAX_COMMANDS:
                catalog.problems.append(f"more than {MAX_COMMANDS} commands; the rest skipped")
                return catalog
            command = _load(path, base, source, catalog)
            if command is None:
                continue
            earlier = catalog.find(command.name)
            if earlier is not None:
                catalog.problems.append(
                    f"command /{command.name} in {path} is also defined in {earlier.path}; "
                    "the first one is used"
                )
                continue
            catalog.commands.append(command)
    return catalog


def _load(
    path: Path, base: Path, source: CommandSource, catalog: CommandCatalog
) -> CustomCommand | None:
    name = path.stem
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:-]*", name):
        catalog.problems.append(f"command file {path}: {name!r} is not a command name; skipped")
        return None
    if path.is_symlink() and not path.resolve().is_file():
        catalog.problems.append(f"command file {path} is a broken link; skipped")
        return None
    try:
        data, body = read_markdown(path)
        description = text_field(data, "description")
        hint = text_field(data, "argument-hint")
        model = text_field(data, "model")
        tools = tools_field(data)
    except FrontMatterError as exc:
        catalog.problems.append(f"command file {path}: {exc}; skipped")
        return None
    if not body.strip():
        catalog.problems.append(f"command file {path}: the prompt is empty; skipped")
        return None
    group = "/".join(path.parent.relative_to(base).parts)
    where = f"{source}:{group}" if group else source
    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    text = description or first[:120]
    return CustomCommand(
        name=name,
        description=f"{text} ({where})",
        path=path,
        source=source,
        body=body.strip(),
        argument_hint=hint,
        allowed_tools=tools,
        model=model or None,
        group=group,
    )


@dataclass(frozen=True)
class CommandRun:
    """What a run started by a custom command adds to the run (see `AgentLoop`)."""

    name: str
    files: tuple[str, ...] = ()
    model: str | None = None
    grants: tuple[Rule, ...] = ()
    """`allowed-tools` as allow rules for this run (empty for an untrusted source)."""
    notes: tuple[str, ...] = ()
    """What the run announces (the grants, rules that were ignored and why)."""


def command_run(expansion: Expansion, root: Path, *, trusted_project: bool) -> CommandRun:
    """The run of an expanded command: its grants only where its source is trusted."""
    command = expansion.command
    notes: list[str] = []
    grants: list[Rule] = []
    if command.allowed_tools:
        if command.source == "project" and not trusted_project:
            notes.append(
                f"/{command.name}: its allowed-tools ({', '.join(command.allowed_tools)}) are "
                "held back: this workspace is not trusted, so every tool call asks as usual. "
                "Trust the workspace to apply them (`agentls trust`, `--trust`, or the "
                "editor's trust question)"
            )
        else:
            rules, problems = parse_rules(
                {"allow": list(command.allowed_tools)},
                f"allowed-tools of {command.path}",
                root=root,
            )
            grants = rules
            notes.extend(problems)
            if rules:
                notes.append(
                    f"/{command.name} allows for this run, without asking: "
                    + ", ".join(r.text for r in rules)
                    + f" (allowed-tools of {command.path}; deny and ask rules still apply)"
                )
    return CommandRun(command.name, expansion.files, command.model, tuple(grants), tuple(notes))
