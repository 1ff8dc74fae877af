"""Ignore rules: `.gitignore` / `.ignore` files (nested too) plus always-skipped folders.

Listing and searching must skip what the user never wants the agent to wade through
(dependencies, build output, VCS metadata), and must do it fast: the walk prunes an
ignored folder without entering it, and compiled rules are cached per folder until an
ignore file's mtime, size or inode changes. Semantics follow git: a deeper ignore file
overrides a shallower one, `.ignore` overrides `.gitignore` in the same folder, later lines
override earlier ones, and a file inside an ignored folder cannot be re-included.

Repeated walks of an unchanged tree are cheap: folder listings come from a `DirCache`
(one `stat` per folder re-validates them, see `dircache`), and each folder's ignore
decisions are kept beside its listing together with the chain of compiled rules they were
made with. Compiled rules are replaced by a new object whenever an ignore file that
applies changes (its own folder's, an ancestor's, `.git/info/exclude`), so a decision made
with another chain is made again; ignore files edited in place in the same mtime tick as
they were read are caught by the same racy-timestamp rule as folders.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import re2
from pathspec import GitIgnoreSpec

from agentls.workspace import changefeed
from agentls.workspace.dircache import RACY_WINDOW_NS, DirCache, Entry, Listing
from agentls.workspace.globs import backtracks_little

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


@dataclass(frozen=True, eq=False)
class _Spec:
    """The rules of one folder's ignore files; patterns are relative to `base`.

    Compared by identity (`eq=False`): the walk's cached decisions are valid for the exact
    rule objects they were made with, and a chain of them compares with `==` in C.

    Most paths match no rule, and pathspec finds that out by trying every rule in turn (a
    typical 50-line .gitignore made a walk ten times slower). `quick` answers "might any
    rule match?" with at most two regex calls; only then is pathspec asked for the verdict.
    """

    base: str
    spec: GitIgnoreSpec
    quick: _Quick | None = None

    @classmethod
    def of(cls, base: str, lines: list[str]) -> _Spec:
        spec = GitIgnoreSpec.from_lines(lines, backend="re2")
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

    by_name: re.Pattern[str] | re2._Regexp[str] | None
    by_path: re.Pattern[str] | re2._Regexp[str] | None

    @classmethod
    def of(cls, spec: GitIgnoreSpec) -> _Quick | None:
        names: list[str] = []
        paths: list[str] = []
        flags: set[int] = set()
        linear = False
        for pattern in spec.patterns:
            regex = getattr(pattern, "regex", None)
            if getattr(pattern, "include", None) is None or regex is None:
                continue
            source = regex.pattern
            if not isinstance(source, str) or not source.startswith("^"):
                return None
            body = _NAMED_GROUP.sub("(?:", source[1:])
            flags.add(regex.flags)
            linear = linear or not _cheap(str(getattr(pattern, "pattern", "**/**/*/*")))
            rest = body[len(_ANY_DIRS) :] if body.startswith(_ANY_DIRS) else None
            if rest is not None and "/" not in _strip_dir_mark(rest).replace("[^/]", ""):
                names.append(rest)
            else:
                paths.append(body)
        if len(flags) > 1:
            return None
        flag = flags.pop() if flags else 0
        try:
            if linear:
                return cls(_alternation_re2(names), _alternation_re2(paths))
            return cls(_alternation(names, flag), _alternation(paths, flag))
        except (re.error, re2.error):
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


def _alternation_re2(bodies: list[str]) -> re2._Regexp[str] | None:
    if not bodies:
        return None
    options = re2.Options()
    options.log_errors = False
    return re2.compile("|".join(f"(?:{b})" for b in bodies), options)


def _cheap(line: str) -> bool:
    """Whether Python's `re` runs this ignore line's regex in near-linear time. A line
    without an inner `/` matches at any depth (pathspec prefixes `(?:.+/)?`, one more `**`)."""
    text = line.strip().removeprefix("!").rstrip("/")
    if "/" in text:
        return backtracks_little(text.lstrip("/"))
    return backtracks_little("**/" + text)


_Chain = tuple[_Spec, ...]

WARM_UP_JOIN_S = 60.0
"""How long a walk waits for a warm-up of its root before walking on its own (a walk that
long would have taken as long again beside it)."""

_Remembered = tuple[int, "changefeed.Stamp", tuple[str, ...]]
"""A root's last complete walk: the feed's generation and the stamp it held for."""

_Signature = tuple[tuple[str, int, int, int], ...]
"""(name, mtime_ns, size, inode) of each ignore file of a folder."""


@dataclass(frozen=True)
class _RulesEntry:
    """A folder's compiled rules and what they were compiled from."""

    signature: _Signature
    lines: tuple[str, ...]
    spec: _Spec | None
    trusted: bool
    """False when a file was read in its mtime tick (an in-place edit could go unseen)."""


class _Picked(NamedTuple):
    """A folder's entries that survive the ignore rules of `chain` (the walk's decisions).

    Valid for the listing it is stored with and for this chain: `chain` holds the rule
    objects themselves, and a change to an ignore file makes a new rule object.
    """

    chain: _Chain
    files: tuple[str, ...]
    dirs: tuple[str, ...]
    """Paths of the sub-folders to enter, last first (the walk's stack order)."""
    virtualenvs: tuple[str, ...]
    """Those of `dirs` whose name alone cannot say (a `venv`): checked on every walk."""


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
        self._marker_dirs = frozenset(name for name in self.skip_dirs if name in _MARKERS)
        self._cache: dict[str, _RulesEntry] = {}
        self._dirs: DirCache[_Picked] = DirCache(IGNORE_FILES, forgotten=self._forget_rules)
        self._feeds: dict[str, changefeed.ChangeFeed | None] = {}
        self._remembered: dict[str, _Remembered] = {}
        self._feed_lock = threading.Lock()
        self._warming: dict[str, threading.Event] = {}

    def close(self) -> None:
        """Release the change feeds (their inotify descriptors)."""
        with self._feed_lock:
            feeds, self._feeds = self._feeds, {}
            self._remembered.clear()
        for feed in feeds.values():
            if feed is not None:
                feed.close()

    def __del__(self) -> None:
        for feed in getattr(self, "_feeds", {}).values():
            if feed is not None:
                feed.close()

    @property
    def cached_dirs(self) -> int:
        """How many folder listings the walk cache holds (bounded by the tree)."""
        return len(self._dirs)

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

    def _skips_by_name(self, name: str) -> bool:
        """`skips_dir` for names whose answer does not depend on the folder's content."""
        if name.endswith(".egg-info"):
            return True
        return name in self.skip_dirs and name not in _MARKERS

    def _spec_of(self, folder: str, present: Callable[[str], bool] | None = None) -> _Spec | None:
        """The compiled rules of `folder`, cached while its ignore files keep their mtime,
        size and inode, and were not read in their mtime tick (racy: read them again).

        The same `_Spec` object comes back as long as the rules are unchanged, which is
        what keeps the walk's cached decisions valid. `present` says which names the folder
        has (the walk already listed it), which saves a stat for each absent ignore file.
        """
        names = [n for n in IGNORE_FILES if present is None or present(n)]
        if folder in self._root_strs:
            names.insert(0, _GIT_EXCLUDE)
        signature = _signature(folder, names)
        cached = self._cache.get(folder)
        if cached is not None and cached.trusted and cached.signature == signature:
            return cached.spec
        if not signature and cached is None:
            return None
        read_at = time.time_ns()
        lines = _read_lines(folder, [name for name, _, _, _ in signature])
        if cached is not None and cached.lines == lines:
            spec = cached.spec
        else:
            spec = _compile(folder, lines)
        trusted = all(mtime < read_at - RACY_WINDOW_NS for _, mtime, _, _ in signature)
        self._cache[folder] = _RulesEntry(signature, lines, spec, trusted)
        return spec

    def _forget_rules(self, folder: str) -> None:
        """The walk cache dropped `folder` (it is gone): drop its compiled rules too."""
        self._cache.pop(folder, None)

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

        A folder's files come before its sub-folders' files. Symbolic links are not
        followed (neither files nor folders), so a walk cannot leave the workspace. With
        `respect=False` only VCS folders are skipped (the caller asked for an ignored folder
        explicitly). Listings and decisions come from the walk cache when still valid; the
        result is the same as without it.
        """
        top_str = str(top)
        self._join_warm_up(self._root_of(top_str))
        if respect and top_str in self._root_strs:
            yield from self._walk_root(top_str)
            return
        yield from self._walk(top_str, respect=respect)

    def warm_up(self) -> None:
        """Walk every root once, to its end, so that the first real walk is served from
        the change feed (or, without one, from a filled walk cache) instead of reading
        every folder cold: run in the background when a server starts (issue 33: the
        first grep in a new server walked cold before ripgrep could start). A walk that
        starts meanwhile waits for this one (`_join_warm_up`) instead of walking too."""
        for root in sorted(self._root_strs):
            if any(
                other != root and root.startswith(other.rstrip(os.sep) + os.sep)
                for other in self._root_strs
            ):
                continue  # inside another root: that root's walk lists it
            done = threading.Event()
            with self._feed_lock:
                if root in self._warming:
                    continue
                self._warming[root] = done
            try:
                for _ in self._walk_root(root):
                    pass
            finally:
                with self._feed_lock:
                    self._warming.pop(root, None)
                done.set()

    def _join_warm_up(self, root: str | None) -> None:
        """Wait (at most `WARM_UP_JOIN_S`) for a warm-up walk of `root` in another
        thread: the same folders read twice at once would cost both walks time."""
        with self._feed_lock:
            done = self._warming.get(root) if root is not None else None
        if done is not None:  # `warm_up` walks by `_walk_root`, so never waits for itself
            done.wait(WARM_UP_JOIN_S)

    def _feed(self, root: str) -> changefeed.ChangeFeed | None:
        with self._feed_lock:
            if root not in self._feeds:
                self._feeds[root] = changefeed.ChangeFeed.open(root)
            return self._feeds[root]

    def _walk_root(self, root: str) -> Iterator[str]:
        """A root's walk, served again while its change feed saw nothing (see
        `changefeed`): no folder `stat`s for an unchanged tree. Remembered only when every
        folder entered was watched, the walk ran to its end, no event arrived meanwhile and
        no folder's verdict depends on its content (a `venv` candidate)."""
        feed = self._feed(root)
        if feed is None:
            yield from self._walk(root, respect=True)
            return
        generation = feed.generation()
        stamp = changefeed.stamp(root)
        known = self._remembered.get(root)
        if known is not None and stamp is not None and known[:2] == (generation, stamp):
            yield from known[2]
            return
        watched = [
            feed.watch(os.path.join(root, ".git"), optional=True),
            feed.watch(os.path.dirname(os.path.join(root, _GIT_EXCLUDE)), optional=True),
        ]
        watched.append(_only_here(root, (_GIT_EXCLUDE,), optional=True))
        files: list[str] = []
        for path in self._walk(root, respect=True, feed=feed, watched=watched):
            files.append(path)
            yield path
        if all(watched) and stamp is not None and feed.generation() == generation:
            self._remembered[root] = (generation, stamp, tuple(files))

    def _walk(
        self,
        top_str: str,
        *,
        respect: bool,
        feed: changefeed.ChangeFeed | None = None,
        watched: list[bool] | None = None,
    ) -> Iterator[str]:
        root = self._root_of(top_str) or top_str
        chain = self._chain_above(top_str, root) if respect and top_str != root else ()
        if respect and top_str == root and self._extra_on:
            chain = (self._extra[root],)
        stack: list[tuple[str, _Chain]] = [(top_str, chain)]
        while stack:
            folder, chain = stack.pop()
            if feed is not None and watched is not None and not feed.watch(folder):
                watched.append(False)
            entry = self._dirs.get(folder)
            if entry is None:
                continue
            if watched is not None and entry.listing.present:
                watched.append(_only_here(folder, entry.listing.present))
            if respect:
                if entry.listing.present or folder in self._root_strs:
                    spec = self._spec_of(folder, entry.listing.present.__contains__)
                    if spec is not None:
                        chain = (*chain, spec)
                picked = self._picked(entry, chain)
                yield from picked.files
                subdirs = picked.dirs
                if picked.virtualenvs:
                    if watched is not None:
                        watched.append(False)  # a venv's verdict looks inside it
                    subdirs = tuple(
                        p for p in subdirs if p not in picked.virtualenvs or not self._is_venv(p)
                    )
            else:
                yield from entry.listing.files
                subdirs = tuple(p for n, p in reversed(entry.listing.dirs) if n not in VCS_DIRS)
            stack.extend([(sub, chain) for sub in subdirs])

    def _is_venv(self, path: str) -> bool:
        """The part of `skips_dir` that looks inside the folder, so is never cached."""
        return self.skips_dir(os.path.basename(path), path)

    def _picked(self, entry: Entry[_Picked], chain: _Chain) -> _Picked:
        """The folder's decisions under `chain`: the cached ones if made with this chain
        (the same rule objects; `_Spec` compares by identity)."""
        picked = entry.derived
        if picked is not None and picked.chain == chain:
            return picked
        picked = self._decide_listing(entry.listing, chain)
        entry.derived = picked
        return picked

    def _decide_listing(self, listing: Listing, chain: _Chain) -> _Picked:
        """Apply the skip names and the ignore rules to every entry of a listing."""
        files = listing.files
        if chain:
            kept = tuple(p for p in files if not _decide(chain, p, False))
            files = files if len(kept) == len(files) else kept
        dirs = [
            (name, path)
            for name, path in reversed(listing.dirs)
            if name not in VCS_DIRS
            and not self._skips_by_name(name)
            and not (chain and _decide(chain, path, True))
        ]
        venvs = tuple([path for name, path in dirs if name in self._marker_dirs]) if dirs else ()
        return _Picked(chain, files, tuple([path for _, path in dirs]), venvs)


def _only_here(folder: str, names: Iterable[str], *, optional: bool = False) -> bool:
    """Whether the ignore files `names` of `folder` can change only through this folder:
    regular files with one link. An edit through a symbolic link's target or another hard
    link sends no event to the folder's watch (see `changefeed`)."""
    for name in names:
        try:
            st = os.lstat(os.path.join(folder, name))
        except FileNotFoundError:
            if optional:
                continue
            return False
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return False
    return True


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


def _signature(folder: str, names: list[str]) -> _Signature:
    """(name, mtime_ns, size, inode) of those of `names` that exist in `folder`."""
    signature: list[tuple[str, int, int, int]] = []
    for name in names:
        try:
            st = os.stat(os.path.join(folder, name))
        except OSError:
            continue
        signature.append((name, st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(signature)


def _read_lines(folder: str, names: list[str]) -> tuple[str, ...]:
    lines: list[str] = []
    for name in names:
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                lines.extend(fh.read().splitlines())
        except OSError:
            continue
    return tuple(lines)


def _compile(folder: str, lines: tuple[str, ...]) -> _Spec | None:
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    return _Spec.of(folder, list(lines))
