"""Custom commands in Claude Code's format: `/name args` expands a Markdown prompt file.

Files: `.claude/commands/**/*.md` and `.agentls/commands/**/*.md` in each workspace root
(project commands), `~/.claude/commands/**/*.md` (user commands); the file name is the
command's name, a subfolder only groups (it shows in the description, as in Claude Code).
Front matter (all optional): `description`, `argument-hint`, `allowed-tools`, `model`.
The body may use `$ARGUMENTS` (everything after the name), `$ARGUMENTS[N]` / `$N` (the
arguments one by one, from 0, shell-quoted words; see `substitute`) and `@path` references
to workspace files.

What a command may do, and what not:
- `@path` files are attached when the run starts by calling `read_file` through the
  pipeline: secret files, deny rules, ask rules and hooks apply exactly as to the
  model's own reads, and a path outside the workspace is refused. An attachment that is
  refused is left out and the run says why.
- `allowed-tools` are allow rules for that run only, and only where the user trusts the
  command's source: always for user commands, for project commands once the workspace is
  trusted (`agentls.agent.claude.trust` counts them among the settings it holds back, as the
  project's own `.claude/settings.json` allow rules). They
  never override a deny or ask rule, plan mode, secret files or the sandbox, and the run
  announces them. A rule that cannot be parsed is reported and ignored.
- Claude Code's `` !`command` `` lines (and ```` ```! ```` blocks) run when the run starts,
  through the pipeline as `run_command` calls: permission rules (the command's own
  `allowed-tools` grants included), hooks and the sandbox apply as to the model's
  commands; a refused one is replaced by the reason and announced.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentls.agent.claude.frontmatter import (
    FrontMatterError,
    read_markdown,
    text_field,
    tools_field,
)
from agentls.agent.claude.settings import is_model_alias, resolve_model
from agentls.agent.rules.rule import Rule, parse_rules

CommandSource = Literal["project", "user"]
MAX_COMMANDS = 500
MAX_ATTACHMENTS = 20
_INVOCATION = re.compile(r"^/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+(.*))?$", re.DOTALL)
_INDEXED = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$(\d+)(?![\w\[])")
_FILE_REF = re.compile(r"(?<![\w@/`$])@((?:[\w.-]+/)*[\w.-]*[\w-](?:\.[\w-]+)?)")
_SHELL_INLINE = re.compile(r"(?:^|(?<=\s))!`([^`\n]+)`", re.MULTILINE)
_SHELL_BLOCK = re.compile(r"^```!\s*\n(.*?)\n```[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.MULTILINE | re.DOTALL)


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
    plugin: str = ""
    """The plugin it came from (`hookify@claude-code-plugins`); its name is `plugin:name`."""


@dataclass(frozen=True)
class Expansion:
    """A prompt after `/name args` was expanded."""

    command: CustomCommand
    prompt: str
    files: tuple[str, ...] = ()
    """`@path` references, attached through `read_file` when the run starts."""
    shell: tuple[tuple[str, str], ...] = ()
    """`!`command`` lines: (the text they replace, the command), run when the run starts."""


@dataclass
class CommandCatalog:
    commands: list[CustomCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    roots: Sequence[Path] = ()
    """Where `@name` without a folder is looked up (`file_references`)."""

    def find(self, name: str) -> CustomCommand | None:
        """By name; a plugin's `/plugin:command` also answers to `/command` when no other
        command has that name (as in Claude Code)."""
        exact = next((c for c in self.commands if c.name == name), None)
        if exact is not None or ":" in name:
            return exact
        short = [c for c in self.commands if c.plugin and c.name.split(":", 1)[1] == name]
        return short[0] if len(short) == 1 else None

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
        return Expansion(command, text, file_references(text, self.roots), shell_lines(text))


def substitute(body: str, arguments: str) -> str:
    """Claude Code's rules: `$ARGUMENTS` is everything after the name, as typed;
    `$ARGUMENTS[N]` and its shorthand `$N` are the N-th argument counted from 0 (shell
    words, quotes removed); a `$N` beyond the arguments given stays as written, so
    `awk '{print $1}'` survives; with no placeholder at all, the arguments are appended."""
    words = _words(arguments)
    used = "$ARGUMENTS" in body or _INDEXED.search(body) is not None
    text = _INDEXED.sub(lambda m: _indexed(m, words), body)
    text = text.replace("$ARGUMENTS", arguments)
    if arguments and not used:
        text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
    return text.strip()


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def _indexed(match: re.Match[str], words: list[str]) -> str:
    index = int(match.group(1) or match.group(2))
    return words[index] if index < len(words) else match.group(0)


def shell_lines(text: str) -> tuple[tuple[str, str], ...]:
    """`` !`command` `` and ```` ```! ```` blocks: (the text each replaces, the command)."""
    found = [(m.group(0), m.group(1).strip()) for m in _SHELL_BLOCK.finditer(text)]
    found += [(m.group(0), m.group(1).strip()) for m in _SHELL_INLINE.finditer(text)]
    return tuple((whole, command) for whole, command in found if command)


def file_references(text: str, roots: Sequence[Path] = ()) -> tuple[str, ...]:
    """The `@path` references of an expanded prompt (e.g. `@src/app.py`), in order. Only
    what looks like a path counts: outside code (fenced blocks, `inline code`), with a
    folder (`@src/app.py`) or naming a file that exists in a root (`@README.md`), so
    `@pytest.fixture` and `@self.app.middleware` stay text."""
    prose = _CODE.sub(" ", text)
    found = [m.group(1) for m in _FILE_REF.finditer(prose)]
    paths = [p for p in found if "/" in p or ("." in p and _exists(p, roots))]
    return tuple(dict.fromkeys(paths))[:MAX_ATTACHMENTS]


def _exists(name: str, roots: Sequence[Path]) -> bool:
    return any((root / name).is_file() for root in roots)


def command_bases(roots: Sequence[Path], home: Path) -> list[tuple[Path, CommandSource]]:
    bases: list[tuple[Path, CommandSource]] = []
    for root in roots:
        bases.append((root / ".claude" / "commands", "project"))
        bases.append((root / ".agentls" / "commands", "project"))
    bases.append((home / ".claude" / "commands", "user"))
    return bases


def discover_commands(roots: Sequence[Path], home: Path | None = None) -> CommandCatalog:
    """The custom commands of the user and the project. Enabled plugins' commands come on
    top through `agent.claude.plugins.commands_with_plugins` (the plugin loader asks for workspace
    trust, and trust reads the project's commands: this module imports neither)."""
    catalog = CommandCatalog(roots=list(roots))
    for base, source in command_bases(roots, home or Path.home()):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.md")):
            if len(catalog.commands) >= MAX_COMMANDS:
                catalog.problems.append(f"more than {MAX_COMMANDS} commands; the rest skipped")
                return catalog
            command = load_command(path, base, source, catalog)
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


def load_command(
    path: Path, base: Path, source: CommandSource, catalog: CommandCatalog, where: str = ""
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
    where = where or (f"{source}:{group}" if group else source)
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
        model=resolve_model(model)[0] if model and is_model_alias(model) else model or None,
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
    shell: tuple[tuple[str, str], ...] = ()
    """`!`command`` lines, run through the pipeline (`run_command`) when the run starts."""


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
    return CommandRun(
        command.name,
        expansion.files,
        command.model,
        tuple(grants),
        tuple(notes),
        expansion.shell,
    )
