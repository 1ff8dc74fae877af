"""Shell commands that only read: the set `run_command` may run without asking.

Claude Code runs `ls`, `cat`, `git status`… without a prompt; agentls does the same for a
documented set (docs/claude-code.md), in the sandbox only, and the setting
`runCommand.autoAllowReadOnly: false` turns it off. The permission policy calls
`read_only_problem`; a command line qualifies only when:

- it parses completely, writes no file (`>`), and every simple command in it (each part
  of `&&`, `|`, `;`, `$(…)`, `bash -c '…'`) is in the set below, used without an option
  that writes or runs code: `sort -o`, `find -exec`/`-delete`/`-fprint`, `rg --pre`,
  `git diff --output`, `git -c …`, `git -C …`, `git branch NAME`, `tree -o`, `xxd -r`, …;
- no word carries a shell expansion it cannot check (`$VAR`, `` `…` ``, `<(…)`; a
  substitution's own command is checked as a part of its own anyway) and no part starts
  with an assignment (`PATH=/tmp/x ls`); a program given by path (`./ls`) never counts;
- every file it names — arguments and `< file` — lies inside the workspace or a folder of
  `permissions.additionalDirectories`, and is not a secret file (`.env`, keys, and the
  paths of `Read` deny rules); `git show REV:PATH` is checked by its PATH;
- the call runs in the sandbox (`CallRisk.confined`), so even a read of something this
  module missed cannot reach the real workspace, `~/.ssh` or the network.

Not in the set, because they can write or run code with ordinary arguments: `sed`, `awk`,
`less`/`more` (`LESSOPEN`, `!cmd`), `tee`, `cd` (it changes what later relative paths
mean), `xargs`, `make`, interpreters, package managers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.agent.rules.shell import CommandPart, ShellSplit, dequote, strip_wrappers
from agentls.workspace.secrets import SecretMatcher

__all__ = ["READ_ONLY_COMMANDS", "READ_ONLY_GIT", "Where", "read_only_problem"]

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
EXPANSION = "\0"
"""Marks an argument whose value the shell computes (`$VAR`, `$(…)`, `` `…` ``): fine
where the argument is only printed, refused where it names a file."""
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Where:
    """What paths mean for one call: relative to `cwd`, readable inside `readable`."""

    cwd: Path
    readable: tuple[Path, ...]
    secrets: SecretMatcher
    home: Path

    def path_problem(self, text: str) -> str | None:
        """Why a file argument is not a plain read inside the readable folders."""
        if text in ("", "-"):
            return None
        if text.startswith(EXPANSION):
            return f"`{text[1:]}` uses a shell expansion whose value cannot be checked"
        if text.startswith("~"):
            if text != "~" and not text.startswith("~/"):
                return f"`{text}` names another user's home folder"
            text = str(self.home) + text[1:]
        literal = _literal_prefix(text)
        path = os.path.normpath(literal if os.path.isabs(literal) else self.cwd / literal)
        real = os.path.realpath(path)
        if not (self._inside(path) and self._inside(real)):
            return f"`{text}` is outside the workspace"
        for candidate in {path, real}:
            if self.secrets.blocks_reading(candidate, resolve=False):
                return f"`{text}` is a secret file"
        return None

    def _inside(self, path: str) -> bool:
        return any(
            path == str(r) or path.startswith(str(r).rstrip(os.sep) + os.sep) for r in self.readable
        )


def _literal_prefix(text: str) -> str:
    """The path up to its first folder with a glob character (`src/*.py` → `src`)."""
    if not _GLOB.search(text):
        return text
    kept: list[str] = []
    for piece in text.split("/"):
        if _GLOB.search(piece):
            break
        kept.append(piece)
    joined = "/".join(kept)
    return joined or ("/" if text.startswith("/") else ".")


def read_only_problem(split: ShellSplit, where: Where) -> str | None:
    """None when the command line only reads (see the module docstring); else why not."""
    if not split.complete or not split.parts:
        return "the command does not parse completely"
    if split.writes:
        return "it redirects output to a file"
    for target in split.reads:
        problem = _word_problem(target) or where.path_problem(_argument(target))
        if problem:
            return problem
    for part in split.parts:
        problem = _part_problem(part, where)
        if problem:
            return problem
    return None


def _word_problem(word: str) -> str | None:
    if word.startswith(("<(", ">(")):
        return f"`{word}` is a process substitution"
    return None


def _argument(word: str) -> str:
    """The argument as the program gets it; `EXPANSION` + the text when the shell computes
    it (single quotes keep `$` literal)."""
    single_quoted = len(word) >= 2 and word[0] == word[-1] == "'"
    if not single_quoted and ("$" in word or "`" in word):
        return EXPANSION + word
    return dequote(word)


def _part_problem(part: CommandPart, where: Where) -> str | None:
    if part.kind != "command":
        return f"`{part.text}` is not a simple command"
    words = strip_wrappers(part.words) or list(part.words)
    for word in words:
        problem = _word_problem(word)
        if problem:
            return problem
    if _ASSIGNMENT.match(words[0]):
        return f"`{part.text}` sets a variable for the command"
    name = _argument(words[0])
    if "/" in name or _GLOB.search(name) or name.startswith(EXPANSION):
        return f"`{words[0]}` is run by path or computed"
    check = READ_ONLY_COMMANDS.get(name)
    if check is None:
        return f"`{name}` is not in the read-only set"
    return check([_argument(w) for w in words[1:]], where)


Check = Callable[[list[str], Where], "str | None"]


def _split_args(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(options, positionals); everything after `--` is positional."""
    options: list[str] = []
    positionals: list[str] = []
    rest = False
    for arg in args:
        if rest or arg == "-" or not arg.startswith("-"):
            positionals.append(arg)
        elif arg == "--":
            rest = True
        else:
            options.append(arg)
    return options, positionals


def _has_option(options: Sequence[str], forbidden: Sequence[str]) -> str | None:
    """The first option in `options` that is one of `forbidden` (long: exact or
    `--x=…`; short `-x`: alone, with an attached value, or inside a cluster `-rx`)."""
    for option in options:
        for bad in forbidden:
            if bad.startswith("--"):
                if option == bad or option.startswith(bad + "="):
                    return option
            elif option == bad or (
                not option.startswith("--") and bad[1] in option[1:] and len(bad) == 2
            ):
                return option
    return None


def reader(
    forbidden: Sequence[str] = (), *, max_positional: int | None = None, paths: bool = True
) -> Check:
    """A command whose positional arguments are files it reads (when `paths`)."""

    def check(args: list[str], where: Where) -> str | None:
        options, positionals = _split_args(args)
        bad = _has_option(options, forbidden)
        if bad:
            return f"the option `{bad}` writes a file or runs a program"
        if max_positional is not None and len(positionals) > max_positional:
            return "an extra argument would be written to"
        if paths:
            for word in positionals:
                problem = where.path_problem(word)
                if problem:
                    return problem
        return None

    return check


def _exact_forms(*allowed: tuple[str, ...]) -> Check:
    """Only these argument lists (`command -v x` is fine, `command x` runs x)."""

    def check(args: list[str], where: Where) -> str | None:
        if not args or any(tuple(args[: len(form)]) == form for form in allowed):
            return None
        return f"`{' '.join(args[:1])}` is not a read-only use"

    return check


def _no_arguments(args: list[str], where: Where) -> str | None:
    return None if not args else "with arguments it runs or changes something"


def _hostname(args: list[str], where: Where) -> str | None:
    options, positionals = _split_args(args)
    if positionals or _has_option(options, ("-F", "--file", "-b", "--boot")):
        return "it would set the host name"
    return None


def _find(args: list[str], where: Where) -> str | None:
    actions = (
        *("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0"),
        *("-fprintf", "-fls", "-files0-from"),
    )
    for arg in args:
        if arg in actions:
            return f"`find {arg}` writes or runs a program"
    for arg in args:
        if arg.startswith(("-", "(", "!", ")")):
            break
        problem = where.path_problem(arg)
        if problem:
            return problem
    return None


READ_ONLY_COMMANDS: dict[str, Check] = {
    **{name: reader(paths=False) for name in ("echo", "pwd", "true", "false", "whoami")},
    **{name: reader(paths=False) for name in ("id", "uname", "nproc", "arch", "groups")},
    **{name: reader(paths=False) for name in ("basename", "dirname", "realpath", "readlink")},
    **{name: reader(paths=False) for name in ("which", "type", "seq", "sleep", "tr", "test")},
    "[": reader(paths=False),
    "printenv": reader(paths=False),
    "locale": reader(paths=False),
    "env": _no_arguments,
    "printf": reader(("-v",), paths=False),
    "date": reader(("-s", "--set"), paths=False),
    "hostname": _hostname,
    "command": _exact_forms(("-v",), ("-V",)),
    **{name: reader() for name in ("cat", "head", "tail", "nl", "tac", "rev", "fold", "cut")},
    **{name: reader() for name in ("paste", "join", "column", "expand", "unexpand", "fmt")},
    **{name: reader() for name in ("comm", "cmp", "diff", "stat", "df", "ls", "strings")},
    **{name: reader() for name in ("od", "hexdump", "cksum", "b2sum", "md5sum", "sha1sum")},
    **{name: reader() for name in ("sha224sum", "sha256sum", "sha384sum", "sha512sum")},
    **{name: reader() for name in ("grep", "egrep", "fgrep")},
    "wc": reader(("--files0-from",)),
    "du": reader(("--files0-from",)),
    "file": reader(("-C", "--compile")),
    "tree": reader(("-o", "--fromfile")),
    "sort": reader(
        ("-o", "--output", "--compress-program", "-T", "--temporary-directory", "--files0-from")
    ),
    "uniq": reader(max_positional=1),
    "xxd": reader(("-r", "-revert"), max_positional=1),
    "rg": reader(("--pre", "--hostname-bin")),
    "jq": reader(("-f", "--from-file", "--rawfile", "--slurpfile", "-L")),
    "find": _find,
}
"""Program → its check (None: read-only). The git subcommands are `READ_ONLY_GIT`."""


# -- git -------------------------------------------------------------------------------------

_GIT_GLOBAL_SAFE = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
        "--version",
    }
)
"""Global options that change nothing (`-c`, `-C`, `--git-dir`, `--work-tree`,
`--exec-path`, `-p`/`--paginate` (runs a pager program) are not among them)."""
_DIFF_WRITES = ("--output", "--ext-diff", "--no-index", "--exec")
"""`--output` writes a file, `--ext-diff` runs the configured diff program, `--no-index`
compares any two files on the system; `--exec` is no option of these, but a line that
tries one is not read-only."""
_BRANCH_CHANGES = (
    *("-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-f", "--force"),
    *("-u", "--set-upstream-to", "--unset-upstream", "--edit-description", "-t", "--track"),
)
_TAG_CHANGES = (
    *("-d", "--delete", "-a", "--annotate", "-s", "--sign", "-u", "--local-user", "-f"),
    *("--force", "-m", "--message", "-F", "--file", "-e", "--edit"),
)


def _git_reader(forbidden: Sequence[str] = ()) -> Check:
    def check(args: list[str], where: Where) -> str | None:
        options, positionals = _split_args(args)
        bad = _has_option(options, forbidden)
        if bad:
            return f"the option `{bad}` writes a file, runs a program or reads outside"
        return _git_paths(positionals, where)

    return check


def _git_paths(positionals: Sequence[str], where: Where) -> str | None:
    """Revisions and paths alike are checked as paths; `REV:PATH` by its path."""
    for word in positionals:
        if ":" in word and not word.startswith(EXPANSION):
            path = word.split(":", 1)[1].removeprefix("./") or "."
            candidate = os.path.normpath(where.cwd / path)
            if where.secrets.blocks_reading(candidate, resolve=False):
                return f"`{word}` shows a secret file from the history"
            continue
        problem = where.path_problem(word)
        if problem:
            return problem
    return None


def _git_listing(listing: Sequence[str], changing: Sequence[str]) -> Check:
    """`git branch`/`git tag`: read-only when they list (a name without `--list` creates)."""

    def check(args: list[str], where: Where) -> str | None:
        options, positionals = _split_args(args)
        bad = _has_option(options, changing)
        if bad:
            return f"`{bad}` changes the repository"
        if positionals and not any(o in listing for o in options):
            return f"`{positionals[0]}` would be created"
        return None

    return check


def _git_subcommands(*allowed: str, bare: bool = True) -> Check:
    """`git stash list`, `git remote -v`: only these sub-subcommands (or none, if `bare`)."""

    def check(args: list[str], where: Where) -> str | None:
        _, positionals = _split_args(args)
        if not positionals:
            return None if bare else "without a subcommand it changes the repository"
        if positionals[0] in allowed:
            return None
        return f"`{positionals[0]}` changes the repository"

    return check


def _git_config(args: list[str], where: Where) -> str | None:
    options, positionals = _split_args(args)
    reading = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l")
    if positionals[:1] in (["get"], ["list"]) or any(o in reading for o in options):
        bad = _has_option(options, ("--file", "-f", "--blob", "-e", "--edit", "--add"))
        return f"`{bad}` is not a plain read" if bad else None
    return "`git config` without --get/--list changes the configuration"


READ_ONLY_GIT: dict[str, Check] = {
    **{
        name: _git_reader()
        for name in ("status", "blame", "annotate", "shortlog", "describe", "rev-parse")
    },
    **{name: _git_reader() for name in ("rev-list", "ls-files", "ls-tree", "cat-file")},
    **{name: _git_reader() for name in ("merge-base", "name-rev", "count-objects", "show-ref")},
    **{name: _git_reader() for name in ("for-each-ref", "check-ignore", "check-attr", "version")},
    **{name: _git_reader(_DIFF_WRITES) for name in ("diff", "diff-tree", "diff-index")},
    **{name: _git_reader(_DIFF_WRITES) for name in ("diff-files", "show", "log", "whatchanged")},
    "grep": _git_reader(("-O", "--open-files-in-pager", "--no-index")),
    "branch": _git_listing(("-l", "--list"), _BRANCH_CHANGES),
    "tag": _git_listing(("-l", "--list"), _TAG_CHANGES),
    "remote": _git_subcommands("show", "get-url"),
    "stash": _git_subcommands("list", "show", bare=False),
    "reflog": _git_subcommands("show"),
    "worktree": _git_subcommands("list", bare=False),
    "notes": _git_subcommands("list", "show"),
    "config": _git_config,
}
"""`git SUBCOMMAND` → its check: queries of history and the working tree, never a ref,
the index of the repository, its configuration or a file outside it."""


def _git(args: list[str], where: Where) -> str | None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if args[index] not in _GIT_GLOBAL_SAFE:
            return f"`git {args[index]}` changes which repository, configuration or program"
        index += 1
    if index == len(args):
        return None  # `git --version`, `git --no-pager`
    check = READ_ONLY_GIT.get(args[index])
    if check is None:
        return f"`git {args[index]}` is not a read-only git command"
    return check(args[index + 1 :], where)


READ_ONLY_COMMANDS["git"] = _git


def git_reads_only(args: Sequence[str]) -> bool:
    """Whether `git ARGS` only reads, paths aside (for telling `git branch` from
    `git branch new-name` when deciding which runs may write the repository)."""
    anywhere = Where(
        cwd=Path("/"),
        readable=(Path("/"),),
        secrets=SecretMatcher(patterns=(), exceptions=()),
        home=Path("/"),
    )
    return _git([_argument(a) for a in args], anywhere) is None
