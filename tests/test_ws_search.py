"""Globs and the search engine's building blocks (literal prefilter, line mapping)."""

from __future__ import annotations

import re

import pytest

from agentls.workspace.globs import GlobError, PathGlob
from agentls.workspace.patterns import build_prefilter, compile_regex, starts_with_literal
from agentls.workspace.search import candidate_lines, matching_lines


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("src/**/test_*.py", "lib/test_a.py", False),
        ("*.{ts,tsx}", "view.tsx", True),
        ("*.{ts,tsx}", "view.js", False),
        ("file?.[ch]", "file1.c", True),
        ("file?.[!ch]", "file1.c", False),
        ("docs/**", "docs/a/b.md", True),
    ],
)
def test_list_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert PathGlob.compile(pattern, rg_style=False).matches(path) is expected


def test_rg_style_glob_matches_names_at_any_depth_and_negates() -> None:
    assert PathGlob.compile("*.py", rg_style=True).matches("src/deep/a.py")
    assert not PathGlob.compile("!*.py", rg_style=True).matches("src/a.py")
    assert PathGlob.compile("!*.py", rg_style=True).matches("src/a.js")


@pytest.mark.parametrize("bad", ["*.{ts", "[abc"])
def test_malformed_globs_raise(bad: str) -> None:
    with pytest.raises(GlobError):
        PathGlob.compile(bad, rg_style=False)


@pytest.mark.parametrize(
    ("pattern", "needles"),
    [
        ("def parse_args", ("def parse_args",)),
        (r"class \w+Error", ("class ",)),
        ("TODO|FIXME", ("TODO", "FIXME")),
        (r"foo\.bar", ("foo.bar",)),
        ("colou?r", ("colo",)),
        ("ab{0,2}cdef", ("cdef",)),
        ("x+yz", ("yz",)),
        (r"(foo|bar)baz", ("baz",)),
        (r"a|.*", ()),
        ("(?x) a b", ()),
        (r"\x41BCD", ("BCD",)),
    ],
)
def test_prefilter_extracts_required_literals(pattern: str, needles: tuple[str, ...]) -> None:
    assert build_prefilter(pattern, ignore_case=False).needles == needles


PROBES = [
    "colour color colr",
    "def parse_args(argv):",
    "class ValueError2Error(Exception)",
    "FIXME later",
    "K-elvin ſtraße İstanbul",
    "日本語のテキスト 😀 emoji",
    "foo.bar fooxbar",
    "aaa\nbbb\r\nccc",
]
PATTERNS = [
    "colou?r",
    r"class \w+Error",
    "TODO|FIXME",
    "kelvin",
    "STRASSE|straße",
    "istanbul",
    "テキスト",
    r"foo\.bar",
    "b+\r?$",
    r"(?i)EMOJI",
    "[0-9]{2,}",
]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("ignore_case", [False, True])
def test_prefilter_never_rejects_a_real_match(pattern: str, ignore_case: bool) -> None:
    prefilter = build_prefilter(pattern, ignore_case=ignore_case)
    regex = compile_regex(pattern, ignore_case=ignore_case)
    for text in PROBES:
        if regex.search(text):
            assert prefilter.may_match(text.encode()), (pattern, text)
            assert prefilter.may_match_text(text), (pattern, text)


def test_prefilter_rules_out_files_without_the_literal() -> None:
    prefilter = build_prefilter("parse_args", ignore_case=True)
    assert not prefilter.may_match(b"nothing to see here")
    assert prefilter.may_match(b"x = PARSE_ARGS()")


def test_matching_lines_reports_each_line_once() -> None:
    text = "a foo foo\nbar\r\nfoo end\n"
    assert matching_lines(re.compile("foo", re.M), text) == [(1, "a foo foo"), (3, "foo end")]
    assert matching_lines(re.compile("^", re.M), "x\ny\n") == [(1, "x"), (2, "y")]
    assert matching_lines(re.compile("bar$", re.M), text) == []
    assert matching_lines(compile_regex("bar$|d$", ignore_case=False), text) == [
        (2, "bar"),
        (3, "foo end"),
    ]
    assert matching_lines(compile_regex("[$]", ignore_case=False), "a$\nb\n") == [(1, "a$")]
    assert matching_lines(re.compile("o\nbar", re.M), text) == []


def test_matches_never_span_lines() -> None:
    text = "x = 1\n\n    return None\nreturn\nNone\n"
    regex = compile_regex(r"^\s+return None$", ignore_case=False)
    assert matching_lines(regex, text) == [(3, "    return None")]
    assert matching_lines(compile_regex(r"return\s+None", ignore_case=False), text) == [
        (3, "    return None")
    ]


SOURCE = """import os
class ParseError(Exception):
    def parse(self, text):  # TODO: tabs
        return self.helper(text) if text else None

\tself.other(1)
FIXME = 'done'   \r
"""


@pytest.mark.parametrize(
    "pattern",
    [
        r"\bself\.\w+\(",
        r"class \w+Error",
        "TODO|FIXME",
        r"^\s+return",
        r"done'\s*$",
        "text",
        r"\w+Error",
    ],
)
@pytest.mark.parametrize("ignore_case", [False, True])
def test_candidate_lines_agree_with_whole_text(pattern: str, ignore_case: bool) -> None:
    regex = compile_regex(pattern, ignore_case=ignore_case)
    prefilter = build_prefilter(pattern, ignore_case=ignore_case)
    assert prefilter.needles
    unicode_source = "# ünïcödé 😀\n" + SOURCE.replace("text", "tëxt, text")
    for data in (SOURCE.encode(), b"# bad \xff\xfe bytes\n" + unicode_source.encode()):
        text = data.decode("utf-8", errors="replace")
        expected = matching_lines(regex, text)
        assert expected
        assert candidate_lines(regex, data, prefilter) == expected
        assert candidate_lines(regex, data, prefilter, 1) == expected[:1]


def test_starts_with_literal() -> None:
    assert starts_with_literal("import")
    assert starts_with_literal(r"\.venv")
    assert not starts_with_literal(r"\bself")
    assert not starts_with_literal("a|b")
    assert not starts_with_literal("[ab]c")
