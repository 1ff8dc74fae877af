"""Permission rules in Claude Code's form: `Tool` or `Tool(specifier)`, in allow/ask/deny lists.

Why this form: users already write these in `.claude/settings.json`, so their existing
policy should just work here. Claude Code's tool names map onto ours (`Read` → read_file,
`Bash` → run_command, …). Specifiers:

- path tools: a gitignore-style pattern. `//abs/path` is absolute, `~/x` is under the home
  folder, `/x` and `./x` are anchored at the workspace root, a bare `x` follows gitignore
  (no inner slash: any depth; an inner slash: anchored at the root);
- `run_command`: an exact command, a prefix `npm run test:*` ("starts with", as Claude
  Code documents it: `npm run test`, `npm run test --watch` and `npm run test:unit`), or a
  wildcard `git * main`. Allow rules also match a command without the wrappers
  `timeout`, `nice`, `nohup`, `time` and `env VAR=…` (`shell.strip_wrappers`);
- MCP: `mcp__server` (every tool of the server), `mcp__server__*`, `mcp__server__tool`.

Safety properties: a rule that cannot be parsed is reported and dropped, never read more
broadly than written. Deny and ask rules on one file tool cover its siblings (a deny on
`read_file(.env)` also stops `grep` on it; a deny on `edit_file(x)` also stops `write_file`,
`rename_file`, `delete_file`), because widening a deny only makes things safer. A rule
without a specifier is not widened: `deny = ["notebook_edit"]` removes that one tool (the
user named a tool, not a set of files). Allow rules are never widened. For shell
commands, an allow needs *every* simple command of a compound line to match (see
`agentls.agent.rules.shell`), a deny needs any one.

Matching takes time linear in the path or command whatever the rule: rules come from a
cloned project's settings (deny and ask rules apply even before the workspace is trusted)
and paths and commands from the model, so `Bash(a*a*a*a*a*a*a*b)` or `Read(**/*a*a*a*b)`
must not freeze the server. Path patterns run on pathspec's RE2 backend, command
wildcards on RE2 (`config.regex.compile_linear`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import re2
from pathspec import GitIgnoreSpec

from agentls.agent.rules.shell import ShellSplit, allow_candidates, deny_candidates
from agentls.config.regex import RegexGroupsError, compile_linear

__all__ = [
    "CLAUDE_TOOL_NAMES",
    "COMMAND_TOOLS",
    "EDIT_TOOLS",
    "READ_TOOLS",
    "Behavior",
    "Rule",
    "RuleSet",
    "Subject",
    "claude_names_for",
    "parse_rule",
    "parse_rules",
]

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")

READ_TOOLS: tuple[str, ...] = ("read_file", "grep", "list_files")
EDIT_TOOLS: tuple[str, ...] = ("edit_file", "write_file", "rename_file", "delete_file")
EDIT_TOOLS += ("rename_symbol",)  # a language server's rename, staged like edit_file
EDIT_TOOLS += ("notebook_edit",)  # a notebook cell edit, staged like edit_file
EDIT_TOOLS += ("code_actions",)  # an applied quick fix or refactoring, staged like a rename
EDIT_TOOLS += (  # symbol-level edits, staged like edit_file
    "replace_symbol_body",
    "insert_before_symbol",
    "insert_after_symbol",
    "safe_delete_symbol",
)
COMMAND_TOOLS: frozenset[str] = frozenset({"run_command"})

CLAUDE_TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "Read": ("read_file", "grep", "list_files"),
    "Edit": ("edit_file", "write_file"),
    "MultiEdit": ("edit_file",),
    "Write": ("write_file",),
    "Bash": ("run_command",),
    "Grep": ("grep",),
    "Glob": ("list_files",),
    "LS": ("list_files",),
    # issue 15: the web tools and notebooks (`WebFetch(domain:example.com)`, see `_DomainPattern`)
    "WebFetch": ("web_fetch",),
    "WebSearch": ("web_search",),
    "NotebookEdit": ("notebook_edit",),
}
CLAUDE_TOOL_NAMES["Edit"] += ("notebook_edit",)  # Claude Code: Edit covers every file editor
"""Claude Code's names → ours, for allow rules. `Read` and `Edit` cover the tools Claude Code
applies them to (its Read rules apply to Grep/Glob/LS, its Edit rules to every editor)."""

_FAMILIES: dict[str, tuple[str, ...]] = {
    **{name: READ_TOOLS for name in READ_TOOLS if name != "list_files"},
    **{name: EDIT_TOOLS for name in EDIT_TOOLS},
}
"""Deny/ask on one of these also covers the rest of its family (widening a deny is safe)."""

NO_EQUIVALENT: frozenset[str] = frozenset(
    {
        "NotebookRead",
        "Task",
        "Agent",
        "TodoWrite",
        "TodoRead",
        "BashOutput",
        "KillShell",
        "KillBash",
        "ExitPlanMode",
        "SlashCommand",
        "Skill",
    }
)
"""Claude Code tools agentls does not have: their rules are reported and ignored."""

CLAUDE_TOOL_NAMES.update(
    {  # sub-agents, the todo list, questions and plan mode (docs/working-tools.md)
        "Task": ("task",),
        "Agent": ("task",),
        "TodoWrite": ("todo_write",),
        "AskUserQuestion": ("ask_user_question",),
        "EnterPlanMode": ("enter_plan_mode",),
        "ExitPlanMode": ("exit_plan_mode",),
    }
)
NO_EQUIVALENT = NO_EQUIVALENT - CLAUDE_TOOL_NAMES.keys()

_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.\-]*(?:__\*)?)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def claude_names_for(tool: str) -> list[str]:
    """Claude Code names that refer to our `tool` (for hook matchers written for Claude Code)."""
    names = [claude for claude, ours in CLAUDE_TOOL_NAMES.items() if ours[0] == tool]
    if tool == "read_file":
        names = ["Read"]
    return names


@dataclass(frozen=True)
class Subject:
    """What one call is about, as far as rules care.

    `paths` are absolute and normalised (symlinks not resolved); `real_paths` the same
    with symlinks resolved, so a link cannot smuggle a denied file past a path rule.
    """

    tool: str
    paths: tuple[str, ...] = ()
    real_paths: tuple[str, ...] = ()
    command: ShellSplit | None = None
    domains: tuple[str, ...] = ()
    """For web tools: the host names the call reaches (`WebFetch(domain:…)` rules)."""
    contents: tuple[str, ...] = ()
    """For folder walks (grep, list_files): a stand-in for "any file in the folder", so a
    deny rule on `secrets/**` also stops a search of `secrets`. Deny/ask only."""


class _PathPattern:
    """A compiled gitignore-style specifier with the folder it is relative to."""

    def __init__(self, spec: str, root: Path, home: Path) -> None:
        text = spec.strip()
        if text.startswith("//"):
            base, pattern = Path("/"), "/" + text[2:].lstrip("/")
        elif text == "~" or text.startswith("~/"):
            base, pattern = home, "/" + text[2:] if len(text) > 2 else "/**"
        elif text.startswith("./"):
            base, pattern = root, "/" + text[2:].lstrip("/")
        elif text.startswith("/"):
            base, pattern = root, text
        else:
            base, pattern = root, text
        if pattern in ("/", ""):
            pattern = "/**"
        self.base = os.path.normpath(str(base))
        self.pattern = pattern
        self.spec = GitIgnoreSpec.from_lines([pattern], backend="re2")

    def matches(self, path: str) -> bool:
        if self.base == os.sep:
            relative = path.lstrip(os.sep)
        else:
            if path == self.base:
                return self.pattern in ("/**", "**")
            prefix = self.base.rstrip(os.sep) + os.sep
            if not path.startswith(prefix):
                return False
            relative = path[len(prefix) :]
        return bool(relative) and self.spec.match_file(relative.replace(os.sep, "/"))


class _Exact:
    """Matches one path or command exactly (what "allow for this session" remembers)."""

    def __init__(self, *values: str) -> None:
        self.values = frozenset(values)

    def matches(self, text: str) -> bool:
        return text in self.values


class _Matcher(Protocol):
    def matches(self, text: str) -> bool: ...


DOMAIN_TOOLS: frozenset[str] = frozenset({"web_fetch", "web_search"})
"""Tools whose rules name a host: `WebFetch(domain:example.com)`."""


class _DomainPattern:
    """`domain:example.com` (that host), `domain:*.example.com` (its subdomains), `domain:*`."""

    def __init__(self, spec: str) -> None:
        text = spec.strip()
        if not text.startswith("domain:"):
            raise ValueError("the specifier must be domain:HOST (e.g. domain:example.com)")
        self.host = text[len("domain:") :].strip().rstrip(".").lower()
        if not self.host or "/" in self.host:
            raise ValueError("the specifier must be domain:HOST (e.g. domain:example.com)")

    def matches(self, host: str) -> bool:
        name = host.strip().strip("[]").rstrip(".").lower()
        if self.host == "*":
            return True
        if self.host.startswith("*."):
            return name.endswith(self.host[1:])
        return name == self.host


class _CommandPattern:
    """`cmd:*` prefix (the command starts with `cmd`), `a * b` wildcard, or an exact
    command. Raises `RegexGroupsError` for a wildcard RE2 cannot compile (too long)."""

    def __init__(self, spec: str) -> None:
        text = " ".join(spec.split())
        self.prefix: str | None = None
        self.regex: re2._Regexp[str] | None = None
        self.exact: str | None = None
        if text.endswith(":*"):
            self.prefix = text[:-2].rstrip()
        elif "*" in text:
            if text.count("*") == 1 and text.endswith(" *"):
                body = re2.escape(text[:-2]) + "(?: .*)?"
            else:
                body = ".*".join(re2.escape(p) for p in text.split("*"))
            self.regex = compile_linear("(?s)" + body)
        else:
            self.exact = text

    def matches(self, command: str) -> bool:
        text = command.strip()
        if self.prefix is not None:
            return text.startswith(self.prefix) or " ".join(text.split()).startswith(self.prefix)
        if self.regex is not None:
            return self.regex.fullmatch(text) is not None
        return text == self.exact or " ".join(text.split()) == self.exact


@dataclass(frozen=True)
class Rule:
    """One parsed rule. `tools` are our names; an MCP server rule has `mcp_prefix` instead."""

    behavior: Behavior
    text: str
    source: str
    tools: tuple[str, ...] = ()
    mcp_prefix: str | None = None
    specifier: str | None = None
    path: _Matcher | None = field(default=None, compare=False, repr=False)
    command: _Matcher | None = field(default=None, compare=False, repr=False)
    domain: _Matcher | None = field(default=None, compare=False, repr=False)

    @classmethod
    def exact(cls, tool: str, value: str | None, source: str) -> Rule:
        """An allow rule for exactly this command or path (or the whole tool when None)."""
        if value is None:
            return cls("allow", tool, source, tools=(tool,))
        text = f"{tool}({value})"
        if tool in COMMAND_TOOLS:
            return cls("allow", text, source, (tool,), None, value, command=_Exact(value))
        return cls.exact_paths(tool, [value], source)

    @classmethod
    def exact_domains(cls, tool: str, hosts: Sequence[str], source: str) -> Rule:
        """An allow rule for exactly these hosts (what "allow for this session" remembers)."""
        shown = f"domain:{hosts[0]}" if hosts else "domain:"
        return cls("allow", f"{tool}({shown})", source, (tool,), None, shown, domain=_Exact(*hosts))

    @classmethod
    def exact_paths(cls, tool: str, paths: Sequence[str], source: str) -> Rule:
        """An allow rule for exactly these absolute paths (as written and resolved)."""
        shown = ", ".join(f"//{p.lstrip('/')}" for p in paths[:1])
        return cls("allow", f"{tool}({shown})", source, (tool,), None, shown, path=_Exact(*paths))

    def __str__(self) -> str:
        return f"{self.behavior}: {self.text} ({self.source})"

    def covers_tool(self, tool: str) -> bool:
        if self.mcp_prefix is not None:
            return tool == self.mcp_prefix or tool.startswith(self.mcp_prefix + "__")
        return tool in self.tools

    @property
    def tool_wide(self) -> bool:
        return self.specifier is None

    def matches_any(self, subject: Subject) -> bool:
        """Deny/ask semantics: the rule hits if any path or any command part matches."""
        if not self.covers_tool(subject.tool):
            return False
        if self.tool_wide:
            return True
        if self.domain is not None:
            return any(self.domain.matches(d) for d in subject.domains)
        if self.command is not None and subject.command is not None:
            split = subject.command
            texts = [split.source, *(c for p in split.parts for c in deny_candidates(p))]
            return any(self.command.matches(t) for t in texts)
        if self.path is not None:
            candidates = (*subject.paths, *subject.real_paths, *subject.contents)
            return any(self.path.matches(p) for p in candidates)
        return False

    def matches_path_all(self, subject: Subject) -> bool:
        """Allow semantics for paths: every path, as written and resolved, must match."""
        if not self.covers_tool(subject.tool):
            return False
        if self.tool_wide:
            return True
        if self.domain is not None:
            return bool(subject.domains) and all(self.domain.matches(d) for d in subject.domains)
        if self.path is None or not subject.paths:
            return False
        return all(self.path.matches(p) for p in (*subject.paths, *subject.real_paths))


def parse_rule(
    text: object,
    behavior: Behavior,
    source: str,
    *,
    root: Path,
    home: Path | None = None,
    known_tools: Collection[str] | None = None,
) -> tuple[Rule | None, str | None]:
    """Parse one rule; returns (rule, None), (None, problem) or (rule, note)."""
    where = f"{source}: {behavior} rule {text!r}"
    if not isinstance(text, str):
        return None, f"{where} is not a string; ignored"
    match = _RULE.match(text)
    if match is None:
        return None, f"{where} is not of the form Tool or Tool(specifier); ignored"
    name, spec = match.group(1), match.group(2)
    if spec is not None:
        spec = spec.strip()
        if not spec:
            return None, f"{where} has an empty specifier; ignored (write {name} for all uses)"
        if spec == "*" or (name in ("Bash", "run_command") and spec == ":*"):
            spec = None
    if name in NO_EQUIVALENT:
        return None, f"{where}: agentls has no {name} tool; ignored"
    if name.startswith("mcp__"):
        return _parse_mcp_rule(text, name, spec, behavior, source, where)
    tools = _tools_for(name, behavior, specific=spec is not None)
    note = None
    if known_tools is not None and not any(t in known_tools for t in tools):
        note = f"{where}: no tool named {name} is available; the rule applies only if one appears"
    rule = Rule(behavior, text, source, tools=tools, specifier=spec)
    if spec is None:
        return rule, note
    specific, problem = _with_specifier(rule, spec, where, root, home)
    return specific, problem or note


def _parse_mcp_rule(
    text: str, name: str, spec: str | None, behavior: Behavior, source: str, where: str
) -> tuple[Rule | None, str | None]:
    """`mcp__server` (every tool of a server) or `mcp__server__tool`; no specifier."""
    if spec is not None:
        return None, f"{where}: MCP rules take no specifier; ignored"
    prefix = name.removesuffix("__*")
    parts = prefix.split("__")
    if len(parts) < 2 or not all(parts[1:]):
        return None, f"{where} is not mcp__server or mcp__server__tool; ignored"
    if len(parts) == 2:
        return Rule(behavior, text, source, mcp_prefix=prefix), None
    return Rule(behavior, text, source, tools=(prefix,)), None


def _with_specifier(
    rule: Rule, spec: str, where: str, root: Path, home: Path | None
) -> tuple[Rule | None, str | None]:
    """The rule with its specifier compiled as its tools read it: command, domain or path."""
    if any(t in COMMAND_TOOLS for t in rule.tools):
        try:
            command = _CommandPattern(spec)
        except RegexGroupsError as exc:
            return None, f"{where}: the command pattern is invalid ({exc}); ignored"
        return _with(rule, command=command), None
    if any(t in DOMAIN_TOOLS for t in rule.tools):
        try:
            return _with(rule, domain=_DomainPattern(spec)), None
        except ValueError as exc:
            return None, f"{where}: {exc}; ignored"
    try:
        pattern = _PathPattern(spec, root, home or Path.home())
    except Exception as exc:
        return None, f"{where}: the path pattern is invalid ({exc}); ignored"
    return _with(rule, path=pattern), None


def _with(rule: Rule, **changes: object) -> Rule:
    from dataclasses import replace

    return replace(rule, **changes)  # type: ignore[arg-type]


def _tools_for(name: str, behavior: Behavior, *, specific: bool) -> tuple[str, ...]:
    """The tools a rule covers. A deny/ask on some files widens to the family (the same
    files through a sibling tool); a tool-wide rule (`notebook_edit`) covers exactly the
    tools it names, so denying one tool removes that one tool."""
    ours = CLAUDE_TOOL_NAMES.get(name, (name,))
    if behavior == "allow" or not specific:
        return ours
    widened: list[str] = []
    for tool in ours:
        for member in _FAMILIES.get(tool, (tool,)):
            if member not in widened:
                widened.append(member)
    return tuple(widened)


def parse_rules(
    lists: dict[str, object] | None,
    source: str,
    *,
    root: Path,
    home: Path | None = None,
    known_tools: Collection[str] | None = None,
) -> tuple[list[Rule], list[str]]:
    """Rules from a `{"allow": [...], "ask": [...], "deny": [...]}` mapping, plus problems."""
    rules: list[Rule] = []
    problems: list[str] = []
    if not lists:
        return rules, problems
    for behavior in BEHAVIORS:
        raw = lists.get(behavior)
        if raw is None:
            continue
        if not isinstance(raw, list):
            problems.append(f"{source}: `{behavior}` must be a list of rules; ignored")
            continue
        for item in raw:
            rule, problem = parse_rule(
                item, behavior, source, root=root, home=home, known_tools=known_tools
            )
            if rule is not None:
                rules.append(rule)
            if problem:
                problems.append(problem)
    return rules, problems


@dataclass
class RuleSet:
    """Rules from every source, queried by behavior (order between sources is irrelevant:
    deny beats ask beats allow wherever each was written)."""

    rules: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def extend(self, rules: Iterable[Rule]) -> None:
        self.rules.extend(rules)

    def of(self, behavior: Behavior) -> list[Rule]:
        return [r for r in self.rules if r.behavior == behavior]

    def first_hit(self, behavior: Behavior, subject: Subject) -> Rule | None:
        """The first deny (or ask) rule that hits the call."""
        for rule in self.of(behavior):
            if rule.matches_any(subject):
                return rule
        return None

    def allowing(self, subject: Subject) -> list[Rule] | None:
        """The allow rules that together allow the call, or None.

        A shell command needs every part allowed, a complete parse and no file
        redirections; a tool-wide rule (`run_command`) allows anything of its tool.
        """
        candidates = [r for r in self.of("allow") if r.covers_tool(subject.tool)]
        if not candidates:
            return None
        wide = [r for r in candidates if r.tool_wide]
        if wide:
            return wide[:1]
        if subject.command is not None:
            split = subject.command
            if not split.complete or split.writes or not split.parts:
                return None
            used: list[Rule] = []
            for part in split.parts:
                texts = allow_candidates(part)
                rule = next(
                    (
                        r
                        for r in candidates
                        if r.command and any(r.command.matches(t) for t in texts)
                    ),
                    None,
                )
                if rule is None:
                    return None
                if rule not in used:
                    used.append(rule)
            return used
        for rule in candidates:
            if rule.matches_path_all(subject):
                return [rule]
        return None

    def read_denial(self, path: str) -> str | None:
        """The deny rule that forbids reading `path` (absolute) with grep, or None.

        Used per file by folder walks (through `SecretMatcher.deny_reads`); tool-wide
        denies are left out, they remove the tool instead.
        """
        subject = Subject("grep", (path,))
        for rule in self.of("deny"):
            if not rule.tool_wide and rule.path is not None and rule.matches_any(subject):
                return rule.text
        return None

    def denies_tool(self, tool: str) -> bool:
        """Whether a tool-wide deny rule removes `tool` from the pool altogether."""
        return any(r.tool_wide and r.covers_tool(tool) for r in self.of("deny"))

    def describe(self) -> list[str]:
        return [str(r) for r in self.rules]
