"""In which order a cold build parses files: what users ask about first comes first.

A cold build of a large workspace takes seconds, and queries arrive meanwhile. Parsing
largest-first (good for balancing two workers) put multi-megabyte `.d.ts` bundles before
the project's own code. The order is now:

0. documents open in the editor;
1. files modified recently (the code being worked on);
2. the project's own source;
3. vendored, generated and declaration files (`vendor/`, `third_party/`, `dist/`, `.d.ts`,
   `*_pb2.py`, `.min.js`, bundles, anything over `LARGE_BYTES`).

Within a tier, newer files first, then path order. Queries that arrive before their files'
turn still get complete exact and prefix answers (see `SymbolIndex.candidates`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

RECENT_NS = 7 * 24 * 3600 * 1_000_000_000
"""Files modified this recently count as being worked on."""
LARGE_BYTES = 512_000
"""Source files this large are almost always generated or bundled."""

_VENDORED_DIRS = frozenset(
    {
        "vendor",
        "vendors",
        "vendored",
        "third_party",
        "third-party",
        "thirdparty",
        "external",
        "externals",
        "extern",
        "deps",
        "generated",
        "__generated__",
        "gen",
        "dist",
        "build",
        "out",
        "node_modules",
        "bower_components",
        "site-packages",
        "Pods",
    }
)
_GENERATED_SUFFIXES = (
    ".d.ts",
    ".d.mts",
    ".d.cts",
    ".min.js",
    ".bundle.js",
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    ".pb.go",
    ".pb.cc",
    ".pb.h",
    ".g.dart",
    ".designer.cs",
    ".generated.cs",
    ".generated.ts",
)

OPEN, RECENT, SOURCE, VENDORED = range(4)


def tier(
    path: str, mtime_ns: int, size: int, opened: frozenset[str], now_ns: int, base: int = 0
) -> int:
    """The file's tier; `base`: length of the folder prefix the workspace's files share
    (only folders below it count: a project inside `~/build/` is not vendored)."""
    if path in opened:
        return OPEN
    if is_vendored(path[base:], size):
        return VENDORED
    if now_ns - mtime_ns <= RECENT_NS:
        return RECENT
    return SOURCE


def is_vendored(path: str, size: int) -> bool:
    """Vendored, generated or a declaration bundle: indexed last."""
    if size > LARGE_BYTES or path.endswith(_GENERATED_SUFFIXES):
        return True
    parts = path.split(os.sep)
    return any(part in _VENDORED_DIRS for part in parts[:-1])


def build_order(
    files: Iterable[tuple[str, int, int]], opened: Iterable[str] = ()
) -> list[tuple[str, int, int]]:
    """(path, mtime_ns, size) entries in parse order (see the module docstring)."""
    entries = list(files)
    if not entries:
        return []
    now = time.time_ns()
    first = frozenset(opened)
    base = len(os.path.commonpath([f[0] for f in entries])) if len(entries) > 1 else 0
    return sorted(entries, key=lambda f: (tier(f[0], f[1], f[2], first, now, base), -f[1], f[0]))
