"""The pure parts of the edit conversion: line hunks, rebase, line endings."""

from __future__ import annotations

from agentls.lsp.edits import line_hunks, match_line_endings, rebase, split_lines


def test_lines_split_the_way_lsp_counts_them() -> None:
    assert split_lines("a\r\nb\rc\nd") == ["a\r\n", "b\r", "c\n", "d"]
    assert split_lines("form\x0cfeed\u2028x\n") == ["form\x0cfeed\u2028x\n"]
    assert split_lines("") == []


def test_hunks_are_whole_lines_and_minimal() -> None:
    assert line_hunks("a\nb\nc\n", "a\nB\nc\n") == [(1, 2, ["B\n"])]
    assert line_hunks("a\nb\n", "a\nb\nc\n") == [(2, 2, ["c\n"])]


def test_rebase_merges_changes_that_do_not_touch() -> None:
    base = "1\n2\n3\n4\n5\n"
    assert rebase(base, "1\n2\n3\n4\nFIVE\n", "ONE\n2\n3\n4\n5\n") == "ONE\n2\n3\n4\nFIVE\n"


def test_rebase_refuses_overlapping_or_adjacent_changes() -> None:
    base = "1\n2\n3\n"
    assert rebase(base, "1\nTWO\n3\n", "1\ntwo\n3\n") is None
    assert rebase(base, "1\nTWO\n3\n", "1\n2\nthree\n") is None  # adjacent, like git
    assert rebase(base, "1\n2\nmid\n3\n", "1\n2\n3\n") == "1\n2\nmid\n3\n"


def test_crlf_files_stay_crlf() -> None:
    assert match_line_endings("a\r\nb\r\n", "a\nb\nc\n") == "a\r\nb\r\nc\r\n"
    assert match_line_endings("a\nb\n", "x\r\n") == "x\r\n"
    assert match_line_endings("mixed\r\nlf\n", "a\nb\n") == "a\nb\n"
