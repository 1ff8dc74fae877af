"""An index that answers right away: the cold build's order, files parsed on demand for a
query that arrives before its files' turn, and "N of M" progress."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from agentls.index import SymbolIndex
from agentls.index.priority import OPEN, RECENT, SOURCE, VENDORED, build_order, tier

DAY_NS = 24 * 3600 * 1_000_000_000


def test_tiers() -> None:
    now = time.time_ns()
    old = now - 30 * DAY_NS
    opened = frozenset({"/ws/src/open.py"})
    assert tier("/ws/src/open.py", old, 10, opened, now) == OPEN
    assert tier("/ws/src/new.py", now - DAY_NS, 10, opened, now) == RECENT
    assert tier("/ws/src/old.py", old, 10, opened, now) == SOURCE
    for vendored in (
        "/ws/lib/lib.d.ts",
        "/ws/vendor/x/y.py",
        "/ws/third_party/z.c",
        "/ws/api_pb2.py",
        "/ws/static/app.min.js",
        "/ws/build/three.module.js",
    ):
        assert tier(vendored, now, 10, opened, now) == VENDORED, vendored
    assert tier("/ws/src/huge.ts", old, 2_000_000, opened, now) == VENDORED


def test_folders_above_the_workspace_do_not_make_it_vendored() -> None:
    now = time.time_ns()
    old = now - 30 * DAY_NS
    files = [("/home/u/build/proj/a.py", old, 10), ("/home/u/build/proj/lib.d.ts", old, 10)]
    order = [path for path, _, _ in build_order(files)]
    assert order == ["/home/u/build/proj/a.py", "/home/u/build/proj/lib.d.ts"]


def test_build_order_open_recent_source_vendored() -> None:
    now = time.time_ns()
    old = now - 30 * DAY_NS
    files = [
        ("/ws/node_types/lib.dom.d.ts", now, 5_000_000),
        ("/ws/src/b_old.py", old, 100),
        ("/ws/src/a_old.py", old, 100),
        ("/ws/src/edited.py", now - DAY_NS, 100),
        ("/ws/src/editing.py", now - 1000, 100),
        ("/ws/src/open.py", old, 100),
    ]
    order = [path for path, _, _ in build_order(files, ["/ws/src/open.py"])]
    assert order == [
        "/ws/src/open.py",
        "/ws/src/editing.py",
        "/ws/src/edited.py",
        "/ws/src/a_old.py",
        "/ws/src/b_old.py",
        "/ws/node_types/lib.dom.d.ts",
    ]


def write_modules(root: Path, count: int) -> list[Path]:
    paths = []
    old = time.time() - 60 * 24 * 3600
    for i in range(count):
        path = root / "src" / f"mod{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"class Widget{i}:\n    def render_{i}(self): pass\n")
        os.utime(path, (old, old))
        paths.append(path)
    return paths


def slow_build(index: SymbolIndex, files: list[Path], gate: threading.Event) -> threading.Thread:
    """A build whose reads block until `gate` is set (after the first few files)."""
    seen: list[Path] = []

    def read(path: Path) -> bytes:
        seen.append(path)
        if len(seen) > 3:
            gate.wait(10)
        return path.read_bytes()

    return index.start_build(files, read, workers=1)


def grep_finder(literal: str, paths: list[str]) -> list[str]:
    """A stand-in for ripgrep (the registry's finder is tested over LSP)."""
    needle = literal.lower()
    return [p for p in paths if needle in Path(p).read_text().lower()]


def test_a_query_during_the_build_parses_the_files_naming_it_first(tmp_path: Path) -> None:
    files = write_modules(tmp_path, 60)
    index = SymbolIndex(None)
    index.candidates = grep_finder
    gate = threading.Event()
    thread = slow_build(index, files, gate)
    try:
        assert index._listed.wait(5)
        result = index.search("Widget57")
        assert result.partial
        assert index.state.building
        assert [s.name for s in result.symbols][:1] == ["Widget57"]
        state = index.state
        assert state.total_files == 60
        assert state.indexed_files < 60
        prefix = index.search("render_5", limit=20)
        names = {s.name for s in prefix.symbols}
        assert {f"render_{i}" for i in (5, *range(50, 60))} <= names
    finally:
        gate.set()
        thread.join(10)
    done = index.state
    assert done.ready
    assert done.indexed_files == done.total_files == 60
    assert len(index.search("Widget", limit=100).symbols) == 60


def test_without_a_finder_queries_are_partial_until_ready(tmp_path: Path) -> None:
    files = write_modules(tmp_path, 20)
    index = SymbolIndex(None)
    gate = threading.Event()
    thread = slow_build(index, files, gate)
    try:
        assert index._listed.wait(5)
        during = index.search("Widget19")
        assert during.partial
        assert not during.symbols
    finally:
        gate.set()
        thread.join(10)
    assert [s.name for s in index.search("Widget19").symbols] == ["Widget19"]


def test_a_warm_start_answers_from_the_cache_before_the_walk_confirms_it(
    tmp_path: Path,
) -> None:
    files = write_modules(tmp_path, 40)
    cache = tmp_path / "index.sqlite"
    first = SymbolIndex(cache)
    first.build(files, workers=1)
    first.close()
    files[5].write_text("class Replaced5:\n    pass\n")  # changed while the server was down
    gate = threading.Event()

    def slow_walk() -> Iterator[Path]:
        for path in files:
            yield path
            gate.wait(10)  # the walk stalls after its first file

    warm = SymbolIndex(cache)
    thread = warm.start_build(slow_walk(), workers=1)
    try:
        deadline = time.monotonic() + 5
        found: list[str] = []
        while not found and time.monotonic() < deadline:
            found = [s.name for s in warm.search("Widget33").symbols]
            time.sleep(0.01)
        assert found[:1] == ["Widget33"]
        assert warm.state.building
        assert warm.search("Widget33").partial
    finally:
        gate.set()
        thread.join(10)
    assert "Widget5" not in {s.name for s in warm.search("Widget5").symbols}
    assert [s.name for s in warm.search("Replaced5").symbols] == ["Replaced5"]
    assert warm.state.cached_files == 39
    assert warm.state.parsed_files == 1
    warm.close()
