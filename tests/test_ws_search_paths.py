"""The search engine's fast paths give exactly the answers of the plain reference.

The reference is `matching_lines` with the text regex over the file's whole lossy-UTF-8
decoding. `run_search` takes shortcuts (a bytes regex on pure-ASCII files, needle lines,
needle-anchored matching, a literal-prefix jump, decoding only candidate lines, one read
per file); every file kind below goes through them and must agree in every output mode.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Literal

import pytest

from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.patterns import (
    build_prefilter,
    compile_ascii_regex,
    compile_regex,
    is_line_local,
    literal_prefix,
)
from agentls.workspace.search import SearchRequest, matching_lines, run_search
from tests.ws_support import make_tree

Mode = Literal["content", "files", "count"]

LONG_LINE = "var a=1;" + "x" * 3000 + ";self.run(1);self.x=2;TODO;" + "é" * 10 + "self.go()\n"

FILES: dict[str, bytes] = {
    "ascii.py": (
        b"import os\nclass ParseError(Exception):\n    def parse(self, text):  # TODO\n"
        b"        return self.helper(text)\n\n    return None\n\tself.other (1)\n"
        b"FIXME = 'done'   \nx_never1 = unicode_thing\nSELF.UP(2)\n"
    ),
    "crlf.py": b"import sys\r\n    return None\r\nclass KeyError2Error:\r\nend = 1\r\n",
    "seps.txt": b"a\x1cb\nreturn\x1fNone\n  \x1d return None\nfoo\x0cbar\x0bbaz\n",
    "utf8.py": (
        "# ünïcödé 😀 self.emoji(1)\nimport 日本語\nclass 错误Error: pass\n"
        "    return None  # 世界\ncafé = 'Unicode'  # TODO\nİmport x\n"
        "ſelf.strange(1)\nstraße STRASSE\n\u212aelvin kelvin\n\u00a0return None\n"
        "x\u2003return None\n  return None\u3000\n"
    ).encode(),
    "bad.txt": (
        b"caf\xe9 self.bad(1)\n\xff\xfe import junk\n\xe3\x81self.cut(2)\n"
        b"trunc \xe2\x82\n  return None\n\xc3 unicode \xc3\n"
    ),
    "traps.txt": "unİcode only\nplain unicode\nUNıCODE\nKelvin \u212aELVIN\n".encode(),
    "long.min.js": LONG_LINE.encode(),
    "big.py": b"# filler\n" * 9000 + b"def parse_args():\n    return None\nimport late\n",
    "noeol.txt": b"last self.line(1) unicode",
    "empty.txt": b"",
}

PATTERNS = [
    "def parse_args",
    r"class \w+Error",
    "TODO|FIXME",
    "import",
    "zzzqqq_never",
    r"[a-z]+_never\d",
    "unicode",
    r"\bself\.\w+\(",
    r"^\s+return None$",
    r"\s",
    r"\S+$",
    r"[\s]+return",
    r"[^\s]None",
    r"return\sNone",
    r"\w+Error",
    r"(?<=\t)self",
    r"\Aimport",
    r"(?-m:^)import",
    "é",
    "世界|😀",
    r"caf.",
    "kelvin",
    "straße",
    r"(?i)İmport",
    r"(?a)\s+return",
    r"\u00e9",
    r"\x1c",
    "^",
    "$",
    "x*",
    r"\d+\)",
    r"self\.\w+\(\d\)$",
    r"\bend\b",
    r"colou?r|None$",
]


def reference(pattern: str, ignore_case: bool, data: bytes) -> list[tuple[int, str]]:
    regex = compile_regex(pattern, ignore_case=ignore_case)
    return matching_lines(regex, data.decode("utf-8", errors="replace"))


def search(root: Path, pattern: str, ignore_case: bool, mode: Mode, **kw: int) -> dict[str, object]:
    ws = Workspace([root])
    view = ws.view(ChangeSet())
    request = SearchRequest.build(
        pattern, ignore_case=ignore_case, max_results=100_000, mode=mode, keep_text=True, **kw
    )
    outcome = run_search(view, view.file_strs(), request)
    found: dict[str, object] = {}
    for hit in outcome.hits:
        name = Path(hit.path).name
        found[name] = hit.lines if mode == "content" else hit.count
        assert hit.text == (root / name).read_bytes().decode("utf-8", errors="replace")
    return found


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tree(tmp_path_factory.mktemp("corpus"), FILES)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("ignore_case", [False, True])
def test_every_path_agrees_with_the_reference(
    corpus: Path, pattern: str, ignore_case: bool
) -> None:
    expected = {
        name: lines
        for name, data in FILES.items()
        if (lines := reference(pattern, ignore_case, data))
    }
    assert search(corpus, pattern, ignore_case, "content") == expected
    counts = {name: len(lines) for name, lines in expected.items()}
    assert search(corpus, pattern, ignore_case, "count") == counts
    assert search(corpus, pattern, ignore_case, "files") == dict.fromkeys(expected, 1)


def test_a_line_matching_only_through_a_case_fold_letter_is_found(corpus: Path) -> None:
    """A file with the plain needle on one line and only İ/ı on another: both lines."""
    found = search(corpus, "unicode", True, "content")
    assert found["traps.txt"] == [(1, "unİcode only"), (2, "plain unicode"), (3, "UNıCODE")]
    assert search(corpus, "kelvin", True, "count")["traps.txt"] == 1


ALPHABET = "ab_ \t\r\n\x0b\x0c\x1c\x1d\x1e\x1f019.(){}$^KkSsIi-"
FUZZ_PATTERNS = [
    r"\s",
    r"\S\s",
    r"[\s_]+",
    r"[^\s]+$",
    r"\w\b",
    r"\B\d",
    r"(?i)k+",
    r"(?i)[^ks]",
    r"^\s*$",
    r"a\s*b",
    r"\.\(",
    r"\$|\^",
    r"[a-z]{2,}",
]


@pytest.mark.parametrize("pattern", FUZZ_PATTERNS)
def test_bytes_twin_matches_like_the_text_regex_on_random_ascii(pattern: str) -> None:
    rng = random.Random(pattern)
    text_regex = compile_regex(pattern, ignore_case=False)
    twin = compile_ascii_regex(pattern, ignore_case=False)
    assert twin is not None
    for _ in range(300):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
        data = text.encode()
        by_text = [m.span() for m in text_regex.finditer(text)]
        by_bytes = [m.span() for m in twin.finditer(data)]
        assert by_text == by_bytes, (pattern, text)


@pytest.mark.parametrize(
    "pattern", ["é", r"\u00e9", r"\N{BULLET}", "(?u)x", r"(?a)\s", r"[\S]", r"[a\Sb]"]
)
def test_no_bytes_twin_when_it_could_differ(pattern: str) -> None:
    assert compile_ascii_regex(pattern, ignore_case=False) is None


def test_bytes_twin_widens_spaces_like_str_isspace() -> None:
    twin = compile_ascii_regex(r"a\sb[\s]c\S", ignore_case=False)
    assert twin is not None
    assert twin.search(b"a\x1cb\x1fcd")
    assert not twin.search(b"a\x1cb\x1fc\x1e")


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [
        ("import", "import"),
        (r"class \w+Error", "class "),
        (r"foo\.bar", "foo.bar"),
        ("colou?r", "colo"),
        ("ab{0,2}c", "a"),
        ("ab+c", "ab"),
        (r"abc\d", "abc"),
        (r"\bfoo", ""),
        ("a|b", ""),
        ("(?i)abc", ""),
    ],
)
def test_literal_prefix(pattern: str, prefix: str) -> None:
    assert literal_prefix(pattern) == prefix


@pytest.mark.parametrize(
    ("pattern", "ignore_case", "anchored"),
    [
        (r"\bself\.\w+\(", False, True),
        ("TODO|FIXME", False, True),
        (r"^\bdef ", False, True),
        ("Self", True, True),
        (r"^\s+return None$", False, False),
        (r"x+yz", False, False),
        (r"\w+Error", False, False),
        (r"\bfoo|\w+bar", False, False),
        ("ÉSelf", True, False),
    ],
)
def test_needle_anchoring(pattern: str, ignore_case: bool, anchored: bool) -> None:
    assert build_prefilter(pattern, ignore_case=ignore_case).anchored is anchored


def test_line_locality() -> None:
    assert is_line_local(r"\bself\.\w+\(")
    assert is_line_local(r"^\s+x$")
    assert not is_line_local(r"\Aimport")
    assert not is_line_local(r"(?<=a)b")
    assert not is_line_local(r"(?<!a)b")
    assert not is_line_local(r"(?-m:^)b")


def test_large_files_binary_heads_and_the_size_cap(tmp_path: Path) -> None:
    body = b"x = 1\n" * 20_000  # 120 KB: sized and read whole after the first read
    make_tree(
        tmp_path,
        {
            "big.txt": body + b"needle at the end\n",
            "big.bin": b"\0needle\n" + body,
            "small.txt": b"needle\n",
            "small.bin": b"needle\0!",
        },
    )
    assert search(tmp_path, "needle", False, "content") == {
        "big.txt": [(20_001, "needle at the end")],
        "small.txt": [(1, "needle")],
    }
    ws = Workspace([tmp_path])
    view = ws.view(ChangeSet())
    request = SearchRequest.build("needle", max_file_bytes=7)
    outcome = run_search(view, view.file_strs(), request)
    assert [Path(h.path).name for h in outcome.hits] == ["small.txt"]
    skipped = sorted(Path(p).name for p in outcome.skipped_large)
    assert skipped == ["big.bin", "big.txt", "small.bin"]


def test_overlay_text_is_searched_and_counted(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": "old\n", "b.py": "needle\n"})
    ws = Workspace([tmp_path])
    ws.set_buffer(tmp_path / "a.py", "needle 😀\nx\nneedle\n", 1)
    view = ws.view(ChangeSet())
    files = view.file_strs()
    content = run_search(view, files, SearchRequest.build("needle"))
    assert [(Path(h.path).name, h.lines) for h in content.hits] == [
        ("a.py", [(1, "needle 😀"), (3, "needle")]),
        ("b.py", [(1, "needle")]),
    ]
    count = run_search(view, files, SearchRequest.build("needle", mode="count"))
    assert [(Path(h.path).name, h.count) for h in count.hits] == [("a.py", 2), ("b.py", 1)]


def test_content_limit_cuts_inside_a_file_and_says_more_exist(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.txt": "hit\n" * 5, "b.txt": "hit\n"})
    ws = Workspace([tmp_path])
    view = ws.view(ChangeSet())
    outcome = run_search(view, view.file_strs(), SearchRequest.build("hit", max_results=3))
    assert [(h.count, len(h.lines)) for h in outcome.hits] == [(3, 3)]
    assert outcome.truncated
    files = run_search(view, view.file_strs(), SearchRequest.build("hit", mode="files"))
    assert [h.count for h in files.hits] == [1, 1] and not files.truncated


def test_reference_regex_is_what_the_tool_compiles() -> None:
    """The reference above is the tool's own text regex, not a re-derivation."""
    assert SearchRequest.build("a$").regex.pattern == compile_regex("a$", ignore_case=False).pattern
    assert re.compile("a$", re.M).pattern == "a$"
