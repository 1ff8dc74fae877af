"""The index over time: builds (in-process and with worker processes), incremental edits,
the persistent cache (warm start without parsing), partial answers during a build, huge or
generated files, and syntax errors."""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.index import SymbolIndex, outline, syntax_errors


def write_tree(root: Path, count: int, header: str = "") -> list[Path]:
    paths = []
    for i in range(count):
        path = root / f"pkg{i % 7}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{header}class Model{i}:\n    def save_{i}(self): pass\n")
        paths.append(path)
    return paths


def read(path: Path) -> bytes:
    return path.read_bytes()


def cached_tree(tmp_path: Path, count: int) -> tuple[list[Path], Path]:
    """A tree of `count` modules indexed once into a cache file: (files, cache path)."""
    files = write_tree(tmp_path / "src", count)
    cache = tmp_path / "index.sqlite"
    first = SymbolIndex(cache)
    assert first.build(files, read, workers=1).parsed_files == count
    first.close()
    return files, cache


def test_build_indexes_files_and_drops_vanished_ones(tmp_path: Path) -> None:
    files = write_tree(tmp_path, 20)
    index = SymbolIndex(None)
    state = index.build(files, read, workers=1)
    assert (state.files, state.symbols, state.ready, state.building) == (20, 40, True, False)
    assert index.is_ready
    assert [s.name for s in index.search("Model13").symbols] == ["Model13"]
    files[13].unlink()
    state = index.build([p for p in files if p.exists()], read, workers=1)
    assert state.files == 19
    assert index.search("Model13").symbols == []


def test_edit_is_queryable_at_once_and_replaces_old_symbols(tmp_path: Path) -> None:
    files = write_tree(tmp_path, 5)
    index = SymbolIndex(None)
    index.build(files, read, workers=1)
    index.update_file(files[0], "class Renamed:\n    pass\n", 1, 20)
    assert [s.name for s in index.search("Renamed").symbols] == ["Renamed"]
    assert index.search("Model0").symbols == []
    assert [s.name for s in index.document_symbols(files[0])] == ["Renamed"]
    index.remove_file(files[1])
    assert index.search("Model1").symbols == []
    assert index.document_symbols(files[1]) == []
    assert index.state.files == 4


def test_each_edit_of_a_500_line_file_is_queryable_at_once(tmp_path: Path) -> None:
    """Edit-to-queryable *time* is measured in bench/index_bench.py, not here."""
    files = write_tree(tmp_path, 200)
    index = SymbolIndex(None)
    index.build(files, read, workers=1)
    big = "".join(f"def func_{i}(a, b):\n    return a + b\n\n" for i in range(166))
    for n in range(5):
        text = big + f"class Edited{n}:\n    pass\n"
        index.update_file(files[0], text, n, len(text))
        assert [s.name for s in index.search(f"Edited{n}").symbols] == [f"Edited{n}"]
        if n:
            assert index.search(f"Edited{n - 1}").symbols == []


def test_warm_start_loads_unchanged_files_without_parsing(tmp_path: Path) -> None:
    files, cache = cached_tree(tmp_path, 30)

    files[3].write_text("class Changed:\n    pass\n")
    warm = SymbolIndex(cache)
    state = warm.build(files, read, workers=1)
    assert (state.cached_files, state.parsed_files, state.files) == (29, 1, 30)
    assert [s.name for s in warm.search("Changed").symbols] == ["Changed"]
    # its entry in the saved structure is stale: only Model30..39 start with "Model3"
    assert "Model3" not in {s.name for s in warm.search("Model3").symbols}
    assert warm.search("Model7").symbols[0].name == "Model7"
    outline = warm.document_symbols(files[7])
    assert [(s.name, [c.name for c in s.children]) for s in outline] == [("Model7", ["save_7"])]
    warm.close()


def test_edits_are_persisted_and_unsaved_text_is_reparsed_next_time(tmp_path: Path) -> None:
    files = write_tree(tmp_path / "src", 3)
    cache = tmp_path / "index.sqlite"
    index = SymbolIndex(cache)
    index.build(files, read, workers=1)
    files[0].write_text("class Saved: pass\n")
    st = files[0].stat()
    index.update_file(files[0], files[0].read_bytes(), st.st_mtime_ns, st.st_size)
    index.update_file(files[1], "class Unsaved: pass\n", -1, -1)  # an editor buffer
    index.close()

    again = SymbolIndex(cache)
    state = again.build(files, read, workers=1)
    assert (state.cached_files, state.parsed_files) == (2, 1)
    assert [s.name for s in again.search("Saved").symbols] == ["Saved"]
    assert again.search("Unsaved").symbols == []  # the disk file was re-parsed
    again.close()


def test_a_broken_cache_file_only_disables_persistence(tmp_path: Path) -> None:
    cache = tmp_path / "index.sqlite"
    cache.write_bytes(b"this is not a database" * 100)
    files = write_tree(tmp_path / "src", 2)
    index = SymbolIndex(cache)
    assert index.build(files, read, workers=1).files == 2
    index.close()


def test_queries_during_the_first_build_are_partial(tmp_path: Path) -> None:
    files = write_tree(tmp_path, 40)
    gate = threading.Event()
    seen: list[Path] = []

    def slow_read(path: Path) -> bytes:
        seen.append(path)
        if len(seen) > 10:
            gate.wait(5)
        return path.read_bytes()

    index = SymbolIndex(None)
    thread = index.start_build(files, slow_read, workers=1)
    deadline = time.monotonic() + 5
    while len(seen) <= 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    during = index.search("Model", limit=100)
    assert during.partial
    assert index.state.building
    assert not index.is_ready
    gate.set()
    thread.join(10)
    after = index.search("Model", limit=100)
    assert not after.partial
    assert len(after.symbols) == 40
    assert len(during.symbols) < 40


def test_parallel_build_with_worker_processes(tmp_path: Path) -> None:
    # Comments go first: tree-sitter-python is quadratic in comments after an indented block.
    filler = "# padding so the build is big enough for worker processes\n" * 700
    files = write_tree(tmp_path, 60, filler)  # ~2.5 MB of source in total
    index = SymbolIndex(None)
    state = index.build(files, read, workers=2)
    assert state.files == 60
    assert state.parsed_files == 60
    assert state.symbols == 60 * 2
    assert [s.name for s in index.search("Model59").symbols] == ["Model59"]
    assert [c.name for c in index.document_symbols(files[59])[0].children] == ["save_59"]


def test_worker_processes_read_the_disk_and_skip_vanished_files(tmp_path: Path) -> None:
    filler = "# padding so the build is big enough for worker processes\n" * 700
    files = write_tree(tmp_path, 60, filler)
    gone = files[10]
    index = SymbolIndex(None)

    def listing() -> Iterator[Path]:
        for path in files:
            yield path
            if path == files[-1]:
                gone.unlink()  # listed and stat'ed, gone before a worker reads it

    state = index.build(listing(), workers=2)  # no `read`: the workers read the files
    assert state.parsed_files == 59
    assert state.symbols == 59 * 2
    assert gone not in index
    assert files[11] in index
    assert [s.name for s in index.search("save_42").symbols] == ["save_42"]


def test_huge_and_minified_files_are_skipped(tmp_path: Path) -> None:
    huge = tmp_path / "huge.py"
    huge.write_text("x = 1\n" * 400_000)  # 2.4 MB
    minified = tmp_path / "bundle.js"
    minified.write_text(";".join(f"function f{i}(){{return {i}}}" for i in range(3000)))
    normal = tmp_path / "ok.py"
    normal.write_text("def fine(): pass\n")
    index = SymbolIndex(None)
    state = index.build([huge, minified, normal], read, workers=1)
    assert (state.files, state.skipped_files, state.symbols) == (3, 2, 1)
    assert index.document_symbols(minified) == []
    assert syntax_errors(huge, huge.read_bytes()) == []


def test_unsupported_files_are_ignored(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# class Foo")
    index = SymbolIndex(None)
    assert index.build([notes], read, workers=1).files == 0
    index.update_file(notes, "class Foo: pass", 0, 1)
    assert index.state.files == 0


def test_syntax_errors_report_error_and_missing_nodes() -> None:
    problems = syntax_errors(Path("a.py"), "def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    assert problems
    assert problems[0].line == 3
    assert "syntax error" in problems[0].message
    missing = syntax_errors(Path("a.c"), "int main() { return 0 }\n")
    assert missing == [(0, 21, "syntax error: missing ';'")]
    assert syntax_errors(Path("a.py"), "x = 1\n") == []
    assert syntax_errors(Path("a.txt"), "((((") == []
    # Columns are code points.
    (problem, *_) = syntax_errors(Path("u.js"), 'const s = "ééé"; let = ;\n')
    assert problem.line == 0
    assert problem.col <= 22


def test_an_index_that_started_empty_finds_later_definitions(tmp_path: Path) -> None:
    index = SymbolIndex(None)
    index.build([], read, workers=1)
    assert index.search("anything").symbols == []
    target = tmp_path / "late.py"
    text = "def farewell():\n    pass\n"
    index.update_file(target, text, 1, len(text))
    assert [s.name for s in index.search("farew").symbols] == ["farewell"]


def test_edits_reparse_incrementally_and_match_a_fresh_parse() -> None:
    """Each edit re-parses from the previous tree; the outline must equal a fresh parse's,
    whatever was inserted or deleted where (multi-byte text included)."""
    rng = random.Random(4)
    path = Path("/ws/edited.py")
    pieces = [
        "class Café:\n    def naïve(self):\n        return '😀'\n",
        "def 函数():\n    x = 1\n",
        "CONST = 3\n",
        "@decorator\nclass Decorated:\n    field = 'ü'\n",
        "    def orphan(self): pass\n",
        "def broken(:\n",
        "\r\n",
    ]
    text = "".join(pieces)
    index = SymbolIndex(None)
    index.update_file(path, text, -1, len(text))
    for _ in range(150):
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.6:
            text = text[:at] + rng.choice(pieces) + text[at:]
        else:
            text = text[:at] + text[at + rng.randrange(1, 40) :]
        index.update_file(path, text, -1, len(text))
        assert index.document_symbols(path) == outline(path, text)
    assert index.search("Café").symbols or "class Café" not in text


def test_warm_start_reuses_the_saved_structure_and_answers_like_a_cold_build(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The second start reuses the saved search structure; files changed, deleted or added
    since must still be answered exactly as a fresh build over the final tree would."""
    files, cache = cached_tree(tmp_path, 40)
    src = tmp_path / "src"

    files[3].write_text("class Changed:\n    def save_3(self): pass\n")  # same method name
    files[5].unlink()
    added = src / "pkg0" / "added.py"
    added.write_text("class AddedModel:\n    pass\n")
    final = [p for p in files if p.exists()] + [added]
    with caplog.at_level(logging.INFO, logger="agentls.index.symbol_index"):
        warm = SymbolIndex(cache)
        warm.build(final, read, workers=1)
    assert "reused the saved search structure" in caplog.text
    cold = SymbolIndex(None)
    cold.build(final, read, workers=1)

    def answers(index: SymbolIndex, query: str) -> list[tuple[str, str, str]]:
        return [(s.name, str(s.path), s.container) for s in index.search(query, limit=200).symbols]

    for query in (
        "Model3",
        "Model5",
        "Model",
        "save_3",
        "save",
        "Changed",
        "AddedModel",
        "mdl",
        "sv5",
    ):
        assert answers(warm, query) == answers(cold, query), query
    assert "Model5" not in {name for name, _, _ in answers(warm, "Model5")}
    assert answers(warm, "Changed")[0][0] == "Changed"
    exact = [s.container for s in warm.search("save_3").symbols if s.name == "save_3"]
    assert exact == ["Changed"]  # only the new one
    warm.close()


def test_an_unusable_saved_structure_is_rebuilt(tmp_path: Path) -> None:
    files, cache = cached_tree(tmp_path, 12)
    with sqlite3.connect(cache) as db:
        db.execute("UPDATE segment SET data = ?", (b"\x00garbage",))
    again = SymbolIndex(cache)
    assert again.build(files, read, workers=1).parsed_files == 0
    assert [s.name for s in again.search("Model11").symbols] == ["Model11"]
    again.close()
    with sqlite3.connect(cache) as db:  # the rebuilt structure was saved again
        (data,) = db.execute("SELECT data FROM segment").fetchone()
    assert data != b"\x00garbage"
