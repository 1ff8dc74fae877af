"""Split a shell command line into the simple commands it would run, with a real grammar.

Why a grammar and not `split("&&")`: a prefix rule like `run_command(npm test:*)` must not
allow `npm test && rm -rf ~`, nor `npm test; rm …`, `npm test | sh`, `echo $(rm …)`,
backticks, newlines, subshells, `bash -c '…'`, process substitutions or commands hidden in
heredocs. tree-sitter-bash parses all of those the way bash does, so every command that
would execute shows up as one `CommandPart`, and the permission policy requires each part
to be allowed.

Fail closed: when the grammar reports an error (unbalanced quotes, an unknown construct),
the split is marked incomplete and the policy never auto-allows it (it asks instead).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "CommandPart",
    "ShellSplit",
    "allow_candidates",
    "deny_candidates",
    "dequote",
    "split_command",
    "strip_wrappers",
]

_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "redirected_statement",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "do_group",
        "negated_command",
        "case_statement",
        "command_substitution",
        "process_substitution",
    }
)
"""Nodes that only group statements: their statement children are visited instead."""

_SKIPPED = frozenset(
    {
        "comment",
        "file_redirect",
        "heredoc_redirect",
        "herestring_redirect",
        "heredoc_body",
        "heredoc_start",
        "heredoc_end",
    }
)
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_WRITE_OPERATORS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
_WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "nice",
        "ionice",
        "nohup",
        "time",
        "timeout",
        "command",
        "builtin",
        "exec",
        "stdbuf",
        "xargs",
        "chroot",
        "setsid",
        "unbuffer",
        "watch",
    }
)
"""Programs that run another program given as their arguments (for deny matching)."""
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_MAX_NESTING = 8


@dataclass(frozen=True)
class CommandPart:
    """One simple command that would run: its words (as written) joined by single spaces."""

    text: str
    words: tuple[str, ...]
    kind: str = "command"


@dataclass(frozen=True)
class ShellSplit:
    """The commands a command line would run, and whether the split can be trusted."""

    source: str
    parts: tuple[CommandPart, ...]
    complete: bool
    """False when the grammar found errors: never auto-allow such a command."""
    writes: tuple[str, ...] = ()
    """Files written by output redirections (`> file`), apart from /dev/null."""
    problems: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    """Files read by input redirections (`< file`): `cat < .env` names `.env` too."""


_local = threading.local()


def _parser() -> Parser:
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        parser = Parser(Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser


_CACHED_CHARS = 4096
"""Short command lines are cached (the policy and the tool parse the same line); long
ones (heredocs with whole files) are not, so the cache stays small."""


def split_command(command: str) -> ShellSplit:
    """Parse `command` as bash and list every simple command it contains."""
    return _split(command, 0)


def _split(command: str, depth: int) -> ShellSplit:
    if len(command) <= _CACHED_CHARS:
        return _split_cached(command, depth)
    return _split_uncached(command, depth)


@lru_cache(maxsize=256)
def _split_cached(command: str, depth: int) -> ShellSplit:
    return _split_uncached(command, depth)


def _split_uncached(command: str, depth: int) -> ShellSplit:
    source = command.encode("utf-8", "surrogateescape")
    try:
        parser = _parser()
    except ImportError:  # the grammar is a dependency; fail closed if it is missing
        whole = CommandPart(command.strip(), tuple(command.split()))
        return ShellSplit(command, (whole,), False, (), ("the shell grammar is not installed",))
    tree = parser.parse(source)
    root = tree.root_node
    collector = _Collector(source, depth)
    collector.statement(root)
    problems = list(collector.problems)
    complete = not root.has_error and not collector.problems
    if root.has_error:
        problems.append("the command does not parse as shell syntax")
    if not collector.parts and command.strip():
        complete = False
        problems.append("no command found")
    return ShellSplit(
        command,
        tuple(collector.parts),
        complete,
        tuple(collector.writes),
        tuple(problems),
        tuple(collector.reads),
    )


class _Collector:
    def __init__(self, source: bytes, depth: int) -> None:
        self.source = source
        self.depth = depth
        self.parts: list[CommandPart] = []
        self.writes: list[str] = []
        self.reads: list[str] = []
        self.problems: list[str] = []

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    def statement(self, node: Node) -> None:
        kind = node.type
        if kind in _SKIPPED:
            self.scan(node)
            return
        if kind in _CONTAINERS:
            for child in node.named_children:
                self.statement(child)
            return
        if kind in ("for_statement", "c_style_for_statement", "select_statement"):
            self.loop(node)
            return
        if kind in ("case_item", "case_statement"):
            for index, child in enumerate(node.named_children):
                if node.field_name_for_named_child(index) == "value":
                    self.scan(child)
                else:
                    self.statement(child)
            return
        if kind == "function_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body)
            return
        self.simple(node)

    def loop(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        for child in node.named_children:
            if body is not None and child.id == body.id:
                self.statement(child)
            else:
                self.scan(child)

    def simple(self, node: Node) -> None:
        if node.type == "command":
            words = [self.text(c) for c in node.named_children if c.type not in _SKIPPED]
        else:  # `export X=1`, `[[ … ]]`, a bare assignment: the statement as written
            words = self.text(node).split()
        words = [w for w in words if w.strip()] or [self.text(node)]
        text = " ".join(words)
        self.parts.append(CommandPart(text, tuple(words), node.type))
        self.scan(node)
        self.nested_shell(words)

    def scan(self, node: Node) -> None:
        """Find substitutions and redirections anywhere below `node`."""
        stack = [node]
        while stack:
            current = stack.pop()
            kind = current.type
            if kind in _SUBSTITUTIONS:
                self.statement(current)
                continue
            if kind == "file_redirect":
                self.redirect(current)
            stack.extend(reversed(current.children))

    def redirect(self, node: Node) -> None:
        operators = {c.type for c in node.children if not c.is_named}
        if "<" in operators or "<&" in operators:
            self.input_redirect(node)
        if not operators & _WRITE_OPERATORS and ">&" not in operators:
            return
        target = node.child_by_field_name("destination")
        if target is None:
            named = [c for c in node.named_children if c.type != "file_descriptor"]
            target = named[-1] if named else None
        if target is None:
            return
        text = self.text(target)
        if ">&" in operators and (text.isdigit() or text == "-"):
            return  # 2>&1: duplicates a descriptor, writes no file
        if text not in _HARMLESS_TARGETS:
            self.writes.append(text)

    def input_redirect(self, node: Node) -> None:
        target = node.child_by_field_name("destination")
        if target is None:
            return
        text = self.text(target)
        if not (text.isdigit() or text == "-"):  # `<&0` duplicates a descriptor
            self.reads.append(text)

    def nested_shell(self, words: list[str]) -> None:
        """`bash -c '…'` and `eval …` run another command line: split it too."""
        plain = _unwrap([_dequote(w) for w in words])
        if not plain:
            return
        name = plain[0].rsplit("/", 1)[-1]
        inner: str | None = None
        if name == "eval":
            inner = " ".join(plain[1:])
        elif name in _SHELLS:
            for index, word in enumerate(plain[1:-1], start=1):
                if word.startswith("-") and not word.startswith("--") and "c" in word:
                    inner = plain[index + 1]
                    break
        if inner is None:
            return
        if self.depth >= _MAX_NESTING:
            self.problems.append("shell commands nested too deeply")
            return
        nested = _split(inner, self.depth + 1)
        self.parts.extend(nested.parts)
        self.writes.extend(nested.writes)
        self.reads.extend(nested.reads)
        if not nested.complete:
            self.problems.append("a nested shell command does not parse")


def _dequote(word: str) -> str:
    """The word roughly as the shell would see it: quotes and backslashes removed."""
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        word = word[1:-1]
    return (
        word.replace('""', "").replace("''", "").replace("\\", "").replace('"', "").replace("'", "")
    )


def _unwrap(words: list[str]) -> list[str]:
    """Drop leading assignments and wrapper programs (`sudo`, `env X=1`, `timeout 5`, …)."""
    index = 0
    after_wrapper = False
    while index < len(words):
        word = words[index]
        base = word.rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(word):
            index += 1
            continue
        if base in _WRAPPERS:
            index += 1
            after_wrapper = True
            continue
        if after_wrapper and (word.startswith("-") or word.replace(".", "").isdigit()):
            index += 1
            continue
        break
    rest = words[index:]
    if rest:
        rest = [rest[0].rsplit("/", 1)[-1], *rest[1:]]
    return rest


def deny_candidates(part: CommandPart) -> list[str]:
    """Texts a deny or ask rule is matched against: as written, dequoted, and unwrapped.

    Only deny/ask use these (matching more there is safe); allow rules see `part.text`
    alone, so `sudo npm test` is never allowed by `npm test:*`.
    """
    dequoted = [_dequote(w) for w in part.words]
    candidates = [part.text, " ".join(dequoted)]
    unwrapped = _unwrap(dequoted)
    if unwrapped:
        candidates.append(" ".join(unwrapped))
    seen: list[str] = []
    for candidate in candidates:
        if candidate and candidate not in seen:
            seen.append(candidate)
    return seen


def dequote(word: str) -> str:
    """A word roughly as the program receives it (quotes and backslashes removed)."""
    return _dequote(word)


SAFE_ENV_VARIABLES: frozenset[str] = frozenset(
    {
        "CI",
        "NODE_ENV",
        "RAILS_ENV",
        "RACK_ENV",
        "APP_ENV",
        "DEBUG",
        "VERBOSE",
        "LOG_LEVEL",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "FORCE_COLOR",
        "NO_COLOR",
        "CLICOLOR",
        "TERM",
        "COLUMNS",
        "LINES",
        "LANG",
        "LANGUAGE",
        "TZ",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONIOENCODING",
        "GOOS",
        "GOARCH",
        "CGO_ENABLED",
        "GO111MODULE",
    }
)
"""Variables `env VAR=… cmd` may set and still match an allow rule for `cmd`. Only ones
that change no code path a program loads: `PATH`, `LD_PRELOAD`, `NODE_OPTIONS`,
`PYTHONPATH`, `GIT_*`, `*_OPTS` and the like make `cmd` run something else, so a command
setting them is matched as written (and so asks)."""
_LOCALE_PREFIX = "LC_"
_DURATION = re.compile(r"^\d+(\.\d+)?[smhd]?$")
_TIMEOUT_VALUE_OPTIONS = frozenset({"-s", "--signal", "-k", "--kill-after"})
_TIMEOUT_FLAGS = frozenset({"--preserve-status", "--foreground", "-v", "--verbose"})


def strip_wrappers(words: tuple[str, ...] | list[str]) -> list[str] | None:
    """`words` without leading `timeout`, `nice`, `nohup`, `time` and `env VAR=…` (safe
    variables only), as Claude Code strips them before matching a rule; None when nothing
    was stripped or a wrapper has options it cannot vouch for (`env -i`, `time -o FILE`,
    `env PATH=…`), so the command is matched as written."""
    rest = list(words)
    stripped = False
    while rest:
        name = _dequote(rest[0])
        taken = _wrapper_length(name, [_dequote(w) for w in rest[1:]])
        if taken is None:
            break
        if taken < 0:
            return None
        rest = rest[1 + taken :]
        stripped = True
    return rest if stripped and rest else None


def _wrapper_length(name: str, args: list[str]) -> int | None:
    """How many arguments of wrapper `name` precede the wrapped command; None: not a
    wrapper; -1: a wrapper used in a way that is not stripped."""
    if name == "nohup":
        return 0
    if name == "time":
        return 1 if args[:1] == ["-p"] else 0 if not args or not args[0].startswith("-") else -1
    if name == "nice":
        return _nice_length(args)
    if name == "timeout":
        return _timeout_length(args)
    if name == "env":
        count = 0
        for word in args:
            if not _ASSIGNMENT.match(word):
                break
            variable = word.split("=", 1)[0]
            if variable not in SAFE_ENV_VARIABLES and not variable.startswith(_LOCALE_PREFIX):
                return -1
            count += 1
        if count < len(args) and args[count].startswith("-"):
            return -1  # env -i, env -u X, env -S '…', env -C dir
        return count
    return None


def _nice_length(args: list[str]) -> int:
    if not args:
        return 0
    first = args[0]
    if first in ("-n", "--adjustment"):
        return 2 if len(args) > 1 and args[1].lstrip("+-").isdigit() else -1
    if first.startswith(("-n", "--adjustment=")) or (first[:1] == "-" and first[1:].isdigit()):
        value = first.removeprefix("--adjustment=").removeprefix("-n").lstrip("+-")
        return 1 if value.isdigit() else -1
    return -1 if first.startswith("-") else 0


def _timeout_length(args: list[str]) -> int:
    index = 0
    while index < len(args):
        word = args[index]
        if word in _TIMEOUT_FLAGS or word.startswith(("--signal=", "--kill-after=")):
            index += 1
        elif word in _TIMEOUT_VALUE_OPTIONS:
            index += 2
        elif word.startswith(("-s", "-k")) and len(word) > 2:
            index += 1
        elif _DURATION.match(word):
            return index + 1
        else:
            return -1
    return -1


def allow_candidates(part: CommandPart) -> list[str]:
    """Texts an allow rule is matched against: as written, and without the wrappers
    `strip_wrappers` removes (`timeout 30 npm test` is allowed by `npm test:*`)."""
    stripped = strip_wrappers(part.words)
    if stripped is None:
        return [part.text]
    return [part.text, " ".join(stripped)]
