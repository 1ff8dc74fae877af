"""Globs, and grep's regex dialect: what is refused, and how RE2 is made to read a pattern
the way ripgrep does."""

from __future__ import annotations

import time

import pytest

from agentls.workspace.globs import GlobError, PathGlob, backtracks_little, glob_re2, glob_regex
from agentls.workspace.regex_dialect import (
    MAX_PATTERN_CHARS,
    PatternError,
    check_pattern,
    compile_re2,
    re2_pattern,
)
from agentls.workspace.search import context_groups


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
    "pattern",
    ["*a*a*a*a*a*a*a*a*b", "**/**/**/**/**/**/x", "{*a,b}*a*a*a*a*c", "x*?*?*?*?*?*y"],
)
def test_a_hostile_glob_matches_in_linear_time(pattern: str) -> None:
    glob = PathGlob.compile(pattern, rg_style=True)
    names = ["a" * 2000, "a/" * 1000 + "y", "x" + "?" * 3000]
    began = time.process_time()
    assert not any(glob.matches(name) for name in names)
    assert time.process_time() - began < 2.0  # Python's `re` takes minutes on these


@pytest.mark.parametrize(
    "pattern",
    [
        "*.py",
        "**/*.py",
        "src/**/test_*.py",
        "*.{ts,tsx}",
        "file?.[ch]",
        "file?.[!ch]",
        "docs/**",
        "*_*_*.py",
        "**/a/**/b*c*",
        "{src,lib}/**/*.{js,mjs}",
        "[*]x*y*",
        "a\\*b*c",
        "**",
        "*",
    ],
)
def test_both_engines_agree(pattern: str) -> None:
    paths = [
        "a.py", "src/a.py", "src/deep/test_a.py", "view.tsx", "file1.c", "file1.h", "file1.x",
        "docs/a/b.md", "x_y_z.py", "q/a/r/b_c", "a/b_xc", "lib/m/n.mjs", "src/x.js", "*x_y",
        "a*b_c", "ab_c", "", "dir/", "é/ü.py",
    ]  # fmt: skip
    python, linear = glob_regex(pattern), glob_re2(pattern)
    for path in paths:
        assert (python.match(path) is not None) == (linear.fullmatch(path) is not None), path


def test_which_globs_run_on_pythons_engine() -> None:
    for simple in ["*.py", "**/*.py", "src/**/test_*.py", "a/*/b*.c", "docs/**", "[ab]?.c"]:
        assert backtracks_little(simple), simple
    # any brace: overlapping alternatives multiply (`{a,a,a,a}` sixteen times, then `b`)
    for hostile in ["*a*b", "**/x/**/y", "{a*,b}", "{a/b,c}*", "*?*", "*.{ts,tsx}", "{a,a}b"]:
        assert not backtracks_little(hostile), hostile


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"foo(?=bar)", "look-ahead `(?=...)` at position 3"),
        (r"foo(?!bar)", "negative look-ahead"),
        (r"(?<=\t)self", "look-behind `(?<=...)` at position 0"),
        (r"(?<!x)y", "negative look-behind"),
        (r"(a)\1", "back-reference `\\1` at position 3"),
        (r"(?P<q>a)(?P=q)", "back-reference `(?P=name)`"),
        (r"(?<q>a)\k<q>", "back-reference `\\k<name>`"),
        (r"(?>a+)b", "atomic group"),
        (r"a++b", "possessive quantifier at position 1"),
        (r"end\Z", "`\\Z` (matching is per line: write `$` for a line end)"),
        (r"\Aimport", "`\\A` (matching is per line: write `^` for a line start)"),
        (r"\Qa.b\E", "quoting"),
    ],
)
def test_constructs_without_a_linear_algorithm_are_refused_by_name(
    pattern: str, construct: str
) -> None:
    with pytest.raises(PatternError) as caught:
        check_pattern(pattern)
    message = str(caught.value)
    assert construct in message
    assert "linear time" in message
    assert "RE2/Rust" in message


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("foo(bar", "missing ), unterminated subpattern at position 3"),
        ("foo)bar", "unbalanced parenthesis at position 3"),
        ("[abc", "unterminated character set at position 0"),
        ("abc\\", "trailing backslash"),
    ],
)
def test_structural_errors_name_the_position(pattern: str, problem: str) -> None:
    with pytest.raises(PatternError, match="Invalid regex") as caught:
        check_pattern(pattern)
    assert problem in str(caught.value)
    assert "escape it with a backslash" in str(caught.value)


def test_named_groups_classes_and_flags_are_accepted() -> None:
    for pattern in [r"(?<name>a)", r"(?P<name>a)", r"[(?=]", r"\(\?=", r"(?i)abc", r"[\]]x"]:
        check_pattern(pattern)
        compile_re2(pattern, ignore_case=False)


def test_a_huge_pattern_is_refused_at_once_with_the_limit() -> None:
    pattern = "a" * (10 * 1024 * 1024)
    began = time.process_time()
    with pytest.raises(PatternError) as caught:
        check_pattern(pattern)
    assert time.process_time() - began < 1.0
    assert f"at most {MAX_PATTERN_CHARS:,}" in str(caught.value)
    assert len(str(caught.value)) < 500


def test_re2_rejections_are_pattern_errors() -> None:
    with pytest.raises(PatternError, match="Invalid regex"):
        compile_re2("a{2,1}", ignore_case=False)
    with pytest.raises(PatternError, match="invalid repetition size"):
        compile_re2("((a{100}){100}){100}", ignore_case=False)


def test_translation_gives_re2_ripgreps_meaning() -> None:
    assert re2_pattern(r"a$") == "(?m)a$"
    assert re2_pattern(r"[$.]") == "(?m)[$.]"
    assert re2_pattern(r"a.b") == "(?m)a[^\\r\\n]b"
    assert re2_pattern(r"(?s)a.b") == "(?m)(?s)a.b"
    assert re2_pattern(r"\u00e9\u{1F600}") == "(?m)\\x{00e9}\\x{1F600}"
    assert re2_pattern(r"\d") == "(?m)\\p{Nd}"


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (r"^\d+$", "٣٤٥", True),  # Arabic-Indic digits: \d is Unicode
        (r"^\w+$", "straße", True),
        (r"^\w+$", "日本語", True),
        (r"a\sb", "a\u3000b", True),
        (r"a\sb", "a\nb", False),  # never across a line break
        (r"x.y", "x\ry", False),  # `.` never matches "\r" (rg --crlf)
        (r"(?i)kelvin", "\u212aelvin", True),
        (r"(?i)STRASSE", "straße", False),  # simple case folding, like rg
    ],
)
def test_re2_twin_matches_like_ripgrep(pattern: str, text: str, matches: bool) -> None:
    regex = compile_re2(pattern, ignore_case=False)
    assert (regex.search(text.encode()) is not None) is matches


def test_pathological_patterns_run_in_linear_time() -> None:
    regex = compile_re2(r"(a+)+$", ignore_case=False)
    small = b"a" * 2_000 + b"b\n"
    began = time.process_time()
    assert regex.search(small) is None
    assert regex.search(small * 500) is None  # 1 MB
    assert time.process_time() - began < 2.0


def test_context_groups_merge_overlapping_ranges() -> None:
    shown = {n: f"line {n}" for n in range(1, 11)}
    groups = context_groups(shown, [2, 4, 9], 1)
    assert [[n for n, _, _ in g] for g in groups] == [[1, 2, 3, 4, 5], [8, 9, 10]]
    assert [m for _, _, m in groups[0]] == [False, True, False, True, False]
