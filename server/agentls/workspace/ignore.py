"""Ignore rules: `.gitignore` / `.ignore` files (nested too) plus always-skipped folders.

Listing and searching must skip what the user never wants the agent to wade through
(dependencies, build output, VCS metadata), and must do it fast: the walk prunes an
ignored folder without entering it, and compiled rules are cached per folder until the
ignore file's mtime or size changes. Semantics follow git: a deeper ignore file overrides
a shallower one, `.ignore` overrides `.gitignore` in the same folder, later lines override
earlier ones, and a file inside an ignored folder cannot be re-included.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", "_darcs"})
"""Version-control metadata: skipped even when the user asks for an ignored folder."""

DEFAULT_SKIP_DIRS = VCS_DIRS | frozenset(
    {
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".eggs",
        "dist",
        "build",
        "target",
        ".gradle",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".parcel-cache",
        ".turbo",
        ".terraform",
        ".direnv",
        "htmlcov",
    }
)
"""Dependency, cache and build folders skipped by name at any depth, like rg's defaults."""

_MARKERS = {"venv": ("pyvenv.cfg", os.path.join("bin", "activate"), "Scripts")}
"""Names skipped only when one of these exists inside (the name alone is ambiguous)."""

IGNORE_FILES = (".gitignore", ".ignore")
_GIT_EXCLUDE = os.path.join(".git", "info", "exclude")


@dataclass(frozen=True)
class _Spec:
    """The rules of one folder's ignore files; patterns are relative to `base`.

    Most paths match no rule, and pathspec finds that out by trying every rule in turn (a
    typical 50-line .gitignore made a walk ten times slower). `quick` answers "might any
    rule match?" with at most two regex calls; only then is pathspec asked for the verdict.
    """

    base: str
    spec: GitIgnoreSpec
    quick: _Quick | None = None

    @classmethod
    def of(cls, base: str, lines: list[str]) -> _Spec:
        spec = GitIgnoreSpec.from_lines(lines)
        return cls(base, spec, _Quick.of(spec))


_NAMED_GROUP = re.compile(r"\(\?P<[^>]+>")
_ANY_DIRS = "(?:.+/)?"


@dataclass(frozen=True)
class _Quick:
    """All rules of a spec folded into two regexes.

    Rules like `*.pyc` or `build/` (any depth, no inner `/`) match one path component, and
    a walk has already pruned ignored parents, so they are tried on the entry's own name.
    The rest are tried on the relative path.
    """

    by_name: re.Pattern[str] | None
    by_path: re.Pattern[str] | None

    @classmethod
    def of(cls, spec: GitIgnoreSpec) -> _Quick | None:
        names: list[str] = []
        paths: list[str] = []
        flags: set[int] = set()
        for pattern in spec.patterns:
            regex = getattr(pattern, "regex", None)
            if getattr(pattern, "include", None) is None or regex is None:
                continue
            source = regex.pattern
            if not isinstance(source, str) or not source.startswith("^"):
                return None
            body = _NAMED_GROUP.sub("(?:", source[1:])
            flags.add(regex.flags)
            rest = body[len(_ANY_DIRS) :] if body.startswith(_ANY_DIRS) else None
            if rest is not None and "/" not in _strip_dir_mark(rest).replace("[^/]", ""):
                names.append(rest)
            else:
                paths.append(body)
        if len(flags) > 1:
            return None
        flag = flags.pop() if flags else 0
        try:
            return cls(_alternation(names, flag), _alternation(paths, flag))
        except re.error:
            return None

    def may_match(self, rel: str, name: str) -> bool:
        """`rel`/`name` end with "/" for folders."""
        if self.by_name is not None and self.by_name.match(name) is not None:
            return True
        return self.by_path is not None and self.by_path.match(rel) is not None


def _strip_dir_mark(body: str) -> str:
    for mark in ("(?:(?:/)|$)", "(?:/)", "/"):
        if body.endswith(mark):
            return body[: -len(mark)]
    return body


def _alternation(bodies: list[str], flags: int) -> re.Pattern[str] | None:
    if not bodies:
        return None
    return re.compile("|".join(f"(?:{b})" for b in bodies), flags)


_Chain = tuple[_Spec, ...]


class IgnoreRules:
    """Decides what listing and search skip, for a set of roots."""

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        extra_patterns: Iterable[str] = (),
        skip_dirs: Iterable[str] = DEFAULT_SKIP_DIRS,
    ) -> None:
        self.roots = list(roots)
        self.skip_dirs = frozenset(skip_dirs) | VCS_DIRS
        lines = [p for p in extra_patterns if p.strip()]
        self._extra = {str(r): _Spec.of(str(r), lines) for r in self.roots}
        self._extra_on = bool(lines)
        self._root_strs = frozenset(str(r) for r in self.roots)
        self._cache: dict[str, tuple[tuple[tuple[str, int, int], ...], _Spec | None]] = {}

    def _root_of(self, path: str) -> str | None:
        for root in self.roots:
            text = str(root)
            if path == text or path.startswith(text.rstrip(os.sep) + os.sep):
                return text
        return None

    def skips_dir(self, name: str, path: str) -> bool:
        """Whether a folder is skipped by name (a `venv` only when it is a virtualenv:
        CPython's `Lib/venv` and typeshed's `stdlib/venv` are source)."""
        if name.endswith(".egg-info"):
            return True
        if name not in self.skip_dirs:
            return False
        markers = _MARKERS.get(name)
        return markers is None or any(os.path.exists(os.path.join(path, m)) for m in markers)

    def _spec_of(self, folder: str, present: Callable[[str], bool] | None = None) -> _Spec | None:
        """The compiled rules of `folder` (cached by the ignore files' mtime and size).

        `present` says which names the folder has (the walk already listed it), which saves
        a stat for each absent ignore file.
        """
        names = [n for n in IGNORE_FILES if present is None or present(n)]
        if folder in self._root_strs:
            names.insert(0, _GIT_EXCLUDE)
        signature: list[tuple[str, int, int]] = []
        for name in names:
            try:
                st = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            signature.append((name, st.st_mtime_ns, st.st_size))
        key = tuple(signature)
        cached = self._cache.get(folder)
        if cached is not None and cached[0] == key:
            return cached[1]
        spec = _load_spec(folder, [name for name, _, _ in signature])
        self._cache[folder] = (key, spec)
        return spec

    def _chain_above(self, folder: str, root: str) -> _Chain:
        """Specs of `root` down to the parent of `folder` (not `folder` itself)."""
        chain: list[_Spec] = []
        if self._extra_on:
            chain.append(self._extra[root])
        current = root
        rel = folder[len(root) :].strip(os.sep)
        for part in rel.split(os.sep) if rel else []:
            spec = self._spec_of(current)
            if spec is not None:
                chain.append(spec)
            current = os.path.join(current, part)
        return tuple(chain)

    def is_ignored(self, path: Path, is_dir: bool | None = None) -> bool:
        """Whether listing and search skip `path` (itself or through an ignored folder).

        Paths outside the roots are not ignored (they are refused elsewhere).
        """
        text = str(path)
        root = self._root_of(text)
        if root is None or text == root:
            return False
        chain: _Chain = (self._extra[root],) if self._extra_on else ()
        current = root
        parts = text[len(root) :].strip(os.sep).split(os.sep)
        for index, part in enumerate(parts):
            spec = self._spec_of(current)
            if spec is not None:
                chain = (*chain, spec)
            current = os.path.join(current, part)
            last = index == len(parts) - 1
            folder = True if not last else (os.path.isdir(current) if is_dir is None else is_dir)
            if folder and self.skips_dir(part, current):
                return True
            if _decide(chain, current, folder):
                return True
        return False

    def walk(self, top: Path | str, *, respect: bool = True) -> Iterator[str]:
        """Files under `top`, depth first in name order; ignored folders are never entered.

        Symbolic links are not followed (neither files nor folders), so a walk cannot leave
        the workspace. With `respect=False` only VCS folders are skipped (the caller asked
        for an ignored folder explicitly).
        """
        top_str = str(top)
        root = self._root_of(top_str) or top_str
        chain = self._chain_above(top_str, root) if respect and top_str != root else ()
        if respect and top_str == root and self._extra_on:
            chain = (self._extra[root],)
        stack: list[tuple[str, _Chain]] = [(top_str, chain)]
        while stack:
            folder, chain = stack.pop()
            try:
                with os.scandir(folder) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            if respect:
                names = {e.name for e in entries}
                spec = self._spec_of(folder, names.__contains__)
                if spec is not None:
                    chain = (*chain, spec)
            subdirs: list[str] = []
            for entry in entries:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    if entry.name in VCS_DIRS:
                        continue
                    if respect and (
                        self.skips_dir(entry.name, entry.path) or _decide(chain, entry.path, True)
                    ):
                        continue
                    subdirs.append(entry.path)
                elif entry.is_file():
                    if respect and _decide(chain, entry.path, False):
                        continue
                    yield entry.path
            stack.extend((sub, chain) for sub in reversed(subdirs))


def _decide(chain: _Chain, path: str, is_dir: bool) -> bool:
    """Deepest spec with an opinion wins (git's precedence across nested ignore files).

    Only valid for a path whose parent folders were already checked (walk order).
    """
    name = path[path.rfind(os.sep) + 1 :]
    if is_dir:
        name += "/"
    for spec in reversed(chain):
        rel = path[len(spec.base) + 1 :]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if is_dir:
            rel += "/"
        if spec.quick is not None and not spec.quick.may_match(rel, name):
            continue
        result = spec.spec.check_file(rel)
        if result.include is not None:
            return result.include
    return False


def _load_spec(folder: str, names: list[str]) -> _Spec | None:
    lines: list[str] = []
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                lines.extend(fh.read().splitlines())
        except OSError:
            continue
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    return _Spec.of(folder, lines)
