"""The allow rules agentls offers after a call was asked for or denied.

Two places show them: "allow for this session" (what the prompt says it would remember;
an ACP client may save it as "always allow"), and the denial the model and the user read
when nobody can be asked ("add an allow rule such as …"). Either way the text is a rule the
user may paste into their settings, so it must be one the rule parser accepts and one
that allows exactly this call, no more:

- a shell command: one exact rule per simple command (`run_command(npm test)`); a part
  whose text would parse as a prefix or a wildcard (`ls *`, `x:*`) cannot be written
  exactly, so nothing is offered for that line;
- a path tool: `tool(//absolute/path)`, gitignore specials escaped; a path reached
  through a symbolic link would need two paths in one rule, so nothing is offered;
- an MCP tool: the tool itself (`mcp__server__tool`); MCP rules take no specifier;
- anything else: the tool name.

Every text is checked by parsing it back (`parse_rule`) and matching the call with the
parsed rule; one that fails is not offered. The remembered rule itself matches exactly
(the paths as written and resolved, the command parts as written).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from agentls.agent.rules.rule import COMMAND_TOOLS, Rule, Subject, parse_rule
from agentls.agent.rules.shell import CommandPart, ShellSplit

__all__ = ["is_valid_suggestion", "session_rules"]

SOURCE = "allowed for this session"
_GITIGNORE_SPECIAL = re.compile(r"([\\*?\[\]!#])")


def session_rules(subject: Subject, source: str = SOURCE) -> tuple[Rule, ...]:
    """What "allow for this session" remembers for a call (empty: only "allow once")."""
    if subject.command is not None:
        return _command_rules(subject, source)
    if subject.tool.startswith("mcp__"):
        return _checked(Rule("allow", subject.tool, source, tools=(subject.tool,)), subject)
    if subject.domains:  # web_fetch: the hosts of this call
        return (Rule.exact_domains(subject.tool, subject.domains, source),)
    if subject.paths:
        return _path_rules(subject, source)
    return _checked(Rule.exact(subject.tool, None, source), subject)


def is_valid_suggestion(text: str, subject: Subject) -> bool:
    """Whether `text` parses as an allow rule that allows this call and nothing broader
    for a command (an exact command, not a prefix or a wildcard)."""
    rule, _ = parse_rule(text, "allow", "suggestion", root=Path("/"), home=Path("/nonexistent"))
    if rule is None or not rule.covers_tool(subject.tool):
        return False
    if subject.command is not None:
        matcher = rule.command
        if matcher is None or getattr(matcher, "exact", None) is None:
            return False  # a prefix or wildcard allows more than this call
        parts = subject.command.parts
        return bool(parts) and all(matcher.matches(part.text) for part in parts)
    if subject.paths:
        return rule.matches_path_all(subject)
    return rule.tool_wide


def _checked(rule: Rule, subject: Subject) -> tuple[Rule, ...]:
    return (rule,) if is_valid_suggestion(rule.text, subject) else ()


def _command_rules(subject: Subject, source: str) -> tuple[Rule, ...]:
    split = subject.command
    assert split is not None
    if not split.complete or split.writes or not split.parts:
        return ()
    rules: list[Rule] = []
    for part in split.parts:
        rule = Rule.exact(subject.tool, part.text, source)
        one = Subject(subject.tool, command=_single(split, part))
        if not is_valid_suggestion(rule.text, one):
            return ()
        rules.append(rule)
    return tuple(dict.fromkeys(rules))


def _single(split: ShellSplit, part: CommandPart) -> ShellSplit:
    return replace(split, parts=(part,))


def _path_rules(subject: Subject, source: str) -> tuple[Rule, ...]:
    paths = sorted({*subject.paths, *subject.real_paths})
    if len(paths) != 1 or subject.tool in COMMAND_TOOLS:
        return ()  # a symbolic link: no single path rule covers both ends
    text = f"{subject.tool}(//{escape_path(paths[0].lstrip('/'))})"
    rule = replace(Rule.exact_paths(subject.tool, paths, source), text=text)
    return _checked(rule, subject)


def escape_path(path: str) -> str:
    """A literal path as a gitignore pattern (`*`, `?`, `[`, `!`, `#`, `\\` escaped)."""
    escaped = _GITIGNORE_SPECIAL.sub(r"\\\1", path)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return escaped
