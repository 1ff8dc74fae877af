"""Which files hold secrets, and scrubbing credential values out of text.

Why here (workspace layer) and not in the permission policy: the policy sees only the
path a call names (`read_file(.env)`), but `grep` over a folder or `list_files` walks
many files the model never named. Those tools must skip secret files themselves, so the
matcher lives where they can reach it without importing agent code.

Patterns are globs in the workspace's own dialect (`*` within a path segment, `**`
across segments). A pattern without `/` matches a file name at any depth; a pattern
with `/` matches any trailing run of path segments (so `.aws/credentials` matches
`~/.aws/credentials` and `deploy/.aws/credentials`). Inside a workspace root only the
part below the root is matched, so a project that happens to live under `~/.azure/`
is not wholly secret. Matching ignores case: on macOS and Windows `.ENV` opens `.env`, and
elsewhere a file named `.ENV` is no less secret.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import re2

from agentls import credentials
from agentls.workspace.globs import GlobError, backtracks_little, glob_re2, glob_regex

__all__ = [
    "DEFAULT_SECRET_EXCEPTIONS",
    "DEFAULT_SECRET_PATTERNS",
    "Redactor",
    "SecretMatcher",
    "credential_values",
]

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    ".aws/credentials",
    ".aws/config",
    ".config/gcloud/**",
    "application_default_credentials.json",
    ".azure/**",
    ".docker/config.json",
    ".kube/config",
    ".ssh/**",
    ".gnupg/**",
    ".terraform.d/credentials.tfrc.json",
    "secrets.yml",
    "secrets.yaml",
    "*.tfvars",
)
"""Denied to read/grep by default. Users extend or replace the list in the `secrets` setting."""

DEFAULT_SECRET_EXCEPTIONS: tuple[str, ...] = (
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    "*.pub",
)
"""Templates that document which variables exist without values, and public keys: the
model needs those to configure a project, and they are committed on purpose."""

_MIN_CREDENTIAL_CHARS = 8
"""Shorter values are not redacted: replacing e.g. "test" everywhere would garble output."""


class _Glob(NamedTuple):
    """One secret glob: `regex` (Python's `re`, fast per call) when the glob cannot make it
    backtrack much, else `linear` (RE2). A project may add secret patterns, and a glob like
    `*a*a*a*a*a*a*b` against a long file name would keep `re` busy for minutes."""

    raw: str
    regex: re.Pattern[str] | None
    linear: re2._Regexp[str] | None

    def fullmatch(self, text: str) -> bool:
        if self.linear is not None:
            return self.linear.fullmatch(text) is not None
        return self.regex is not None and self.regex.match(text) is not None


def _compile(patterns: Iterable[str], problems: list[str], what: str) -> list[_Glob]:
    compiled: list[_Glob] = []
    for raw in patterns:
        text = str(raw).strip().removeprefix("./")
        if text.endswith("/"):
            text = text.rstrip("/") + "/**"  # a folder pattern: everything in it
        if not text or text == "/**":
            continue
        try:
            # case-blind: on macOS and Windows `.ENV` opens `.env`
            if backtracks_little(text):
                regex = re.compile(glob_regex(text).pattern, re.IGNORECASE)
                compiled.append(_Glob(str(raw), regex, None))
            else:
                compiled.append(_Glob(str(raw), None, glob_re2(text, ignore_case=True)))
        except GlobError as exc:
            problems.append(f"{what} pattern {raw!r} is invalid ({exc}); ignored")
    return compiled


@dataclass
class SecretMatcher:
    """Decides whether a path is a secret file (exceptions win over patterns).

    `deny_reads` optionally adds the user's deny rules for reading tools
    (`Read(./private/**)`): walkers call `blocks_reading`, which checks both, so a folder
    search never shows what an explicit read of the same file would be denied.
    """

    patterns: Sequence[str] = DEFAULT_SECRET_PATTERNS
    exceptions: Sequence[str] = DEFAULT_SECRET_EXCEPTIONS
    roots: Sequence[Path] = ()
    problems: list[str] = field(default_factory=list)
    deny_reads: Callable[[str], str | None] | None = None
    """Given an absolute path, the text of a deny rule that forbids reading it, or None."""

    def __post_init__(self) -> None:
        self._patterns = _compile(self.patterns, self.problems, "secret")
        self._exceptions = _compile(self.exceptions, self.problems, "secret exception")
        roots = sorted({os.path.normpath(str(r)) for r in self.roots}, key=len, reverse=True)
        self._root_prefixes = [(r, r.rstrip(os.sep) + os.sep) for r in roots]
        self._first_root = os.path.normpath(str(self.roots[0])) if self.roots else None
        self._any_pattern = _Combined(self._patterns)
        self._any_exception = _Combined(self._exceptions)
        self._blocked: dict[str, bool] = {}
        """`blocks_reading(path, resolve=False)` answers: they depend on the path string
        alone (the rules never change; new settings make a new matcher), and grep asks
        again for every file of the workspace on every search."""

    @property
    def enabled(self) -> bool:
        return bool(self._patterns)

    def match(self, path: Path | str, *, resolve: bool = True) -> str | None:
        """The pattern that makes `path` secret, or None.

        With `resolve`, an absolute path's symlink target is checked too: a link named
        `notes.txt` pointing at `.env` is still a secret. Walks that never follow links
        may pass `resolve=False` to save a system call per file.
        """
        if not self._any_pattern:
            return None
        text = os.path.normpath(os.fspath(path))
        found = self._match_one(text)
        if found is None and resolve and os.path.isabs(text):
            real = os.path.realpath(text)
            if real != text:
                found = self._match_one(real)
        return found

    def is_secret(self, path: Path | str, *, resolve: bool = True) -> bool:
        """Whether `path` (absolute or root-relative) matches a secret-file pattern."""
        return self.match(path, resolve=resolve) is not None

    def reading_blocked_by(self, path: Path | str, *, resolve: bool = True) -> str | None:
        """Why tools must not show `path`'s contents (a secret pattern or a deny rule)."""
        found = self.match(path, resolve=resolve)
        if found is not None:
            return f"secret-file pattern `{found}`"
        if self.deny_reads is None:
            return None
        text = os.path.normpath(os.fspath(path))
        if not os.path.isabs(text) and self._first_root is not None:
            text = os.path.join(self._first_root, text)
        rule = self.deny_reads(text)
        if rule is None and resolve:
            real = os.path.realpath(text)
            if real != text:
                rule = self.deny_reads(real)
        return None if rule is None else f"deny rule `{rule}`"

    def blocks_reading(self, path: Path | str, *, resolve: bool = True) -> bool:
        """What grep and listing tools call per file: skip it when True."""
        if resolve:
            return self.reading_blocked_by(path, resolve=True) is not None
        key = os.fspath(path)
        known = self._blocked.get(key)
        if known is None:
            known = self.reading_blocked_by(key, resolve=False) is not None
            if len(self._blocked) >= _MEMO_PATHS:
                self._blocked.clear()
            self._blocked[key] = known
        return known

    def readable(self, paths: Iterable[str]) -> list[str]:
        """`paths` less those `blocks_reading(path, resolve=False)` refuses, in order: grep
        filters every file of the workspace on every search, and a call per path cost
        more than the remembered answers it looks up."""
        known = self._blocked
        kept: list[str] = []
        for path in paths:
            blocked = known.get(path)
            if blocked is None:
                blocked = self.blocks_reading(path, resolve=False)
            if not blocked:
                kept.append(path)
        return kept

    def _match_one(self, text: str) -> str | None:
        parts = self._relevant_parts(text)
        if not parts or not self._any_pattern.hits(parts):
            return None  # the common case: one or two regex calls per path
        if self._any_exception.hits(parts):
            return None
        for glob in self._patterns:
            for suffix in _suffixes(parts):
                if glob.fullmatch(suffix):
                    return glob.raw
        return None

    def _relevant_parts(self, text: str) -> list[str]:
        if os.path.isabs(text):
            for root, prefix in self._root_prefixes:
                if text == root:
                    return []
                if text.startswith(prefix):
                    text = text[len(prefix) :]
                    break
        return [p for p in text.replace(os.sep, "/").split("/") if p not in ("", ".")]


class _Combined:
    """All globs as two regexes: file-name globs against the last segment, globs with a
    `/` against any trailing run of segments. Walks call this once per file. Globs that
    need RE2 (`_Glob.linear`) are tried one by one after those two."""

    def __init__(self, compiled: list[_Glob]) -> None:
        quick = [g for g in compiled if g.regex is not None]
        names = [g.regex.pattern.removesuffix("\\Z") for g in quick if g.regex and "/" not in g.raw]
        paths = [g.regex.pattern.removesuffix("\\Z") for g in quick if g.regex and "/" in g.raw]
        flags = re.IGNORECASE
        self.names = re.compile(f"(?:{'|'.join(names)})\\Z", flags) if names else None
        self.paths = re.compile(f"(?:^|/)(?:{'|'.join(paths)})\\Z", flags) if paths else None
        self.linear = [g for g in compiled if g.linear is not None]

    def __bool__(self) -> bool:
        return self.names is not None or self.paths is not None or bool(self.linear)

    def hits(self, parts: list[str]) -> bool:
        if self.names is not None and self.names.match(parts[-1]):
            return True
        if self.paths is not None and self.paths.search("/".join(parts)) is not None:
            return True
        return any(
            glob.fullmatch(suffix)
            for glob in self.linear
            for suffix in ((parts[-1],) if "/" not in glob.raw else _suffixes(parts))
        )


def _suffixes(parts: list[str]) -> Iterable[str]:
    """`a/b/c` → `c`, `b/c`, `a/b/c`: a pattern may match any trailing run of segments."""
    for start in range(len(parts) - 1, -1, -1):
        yield "/".join(parts[start:])


_MEMO_PATHS = 200_000
"""Paths whose `blocks_reading` answer a matcher remembers (cleared when full)."""


def credential_values(
    env: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()
) -> list[str]:
    """The agent's own credentials (API key, auth token) worth redacting, longest first.

    Without `env`: the environment plus the credentials held in memory (`agentls.credentials`)."""
    source = credentials.environ() if env is None else env
    values = {source.get("ANTHROPIC_API_KEY", ""), source.get("ANTHROPIC_AUTH_TOKEN", "")}
    values.update(v for v in extra if v)
    values.update(credentials.secret_values())  # an apiKeyHelper's key, header values
    return sorted((v for v in values if len(v) >= _MIN_CREDENTIAL_CHARS), key=len, reverse=True)


@dataclass(frozen=True)
class Redactor:
    """Replaces known credential values in text with a marker.

    Defence in depth: the key should never reach a tool's output in the first place (the
    child environment is scrubbed), but a file or a command may still print it.
    """

    values: tuple[str, ...] = ()
    marker: str = "[REDACTED: agent credential]"

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()
    ) -> Redactor:
        return cls(tuple(credential_values(env, extra)))

    def contains(self, text: str) -> bool:
        return any(v in text for v in self.values)

    def redact(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, self.marker)
        return text

    def scrub_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """A copy of `env` without variables whose value contains a credential."""
        return {k: v for k, v in env.items() if not any(c in v for c in self.values)}
