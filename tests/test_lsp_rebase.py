"""The pure parts of the edit conversion: line hunks, rebase, line endings."""

from __future__ import annotations

from agentls.lsp.edits import line_hunks, lines_with_endings, match_line_endings, rebase, shows_edit


def test_lines_split_the_way_lsp_counts_them() -> None:
    assert lines_with_endings("a\r\nb\rc\nd") == ["a\r\n", "b\r", "c\n", "d"]
    assert lines_with_endings("form\x0cfeed\u2028x\n") == ["form\x0cfeed\u2028x\n"]
    assert lines_with_endings("") == []


def test_hunks_are_whole_lines_and_minimal() -> None:
    assert line_hunks("a\nb\nc\n", "a\nB\nc\n") == [(1, 2, ["B\n"])]
    assert line_hunks("a\nb\n", "a\nb\nc\n") == [(2, 2, ["c\n"])]


def test_rebase_merges_changes_that_do_not_touch() -> None:
    base = "1\n2\n3\n4\n5\n"
    assert rebase(base, "1\n2\n3\n4\nFIVE\n", "ONE\n2\n3\n4\n5\n") == "ONE\n2\n3\n4\nFIVE\n"


def test_rebase_refuses_only_changes_that_share_a_line() -> None:
    base = "1\n2\n3\n"
    assert rebase(base, "1\nTWO\n3\n", "1\ntwo\n3\n") is None
    # adjacent lines both apply (issue 20 item 15: line 10 by the agent, 11 by the user)
    assert rebase(base, "1\nTWO\n3\n", "1\n2\nthree\n") == "1\nTWO\nthree\n"
    assert rebase(base, "1\nTWO\n3\n", "one\n2\n3\n") == "one\nTWO\n3\n"
    assert rebase(base, "1\n2\nmid\n3\n", "1\n2\n3\n") == "1\n2\nmid\n3\n"


def test_rebase_of_insertions_and_deletions_next_to_the_users_change() -> None:
    base = "a\nb\nc\nd\n"
    # the agent inserts before c, the user changes c: both
    assert rebase(base, "a\nb\nnew\nc\nd\n", "a\nb\nC\nd\n") == "a\nb\nnew\nC\nd\n"
    # the agent deletes b, the user changes c: both
    assert rebase(base, "a\nc\nd\n", "a\nb\nC\nd\n") == "a\nC\nd\n"
    # both insert at the same point: their order would be a guess
    assert rebase(base, "a\nX\nb\nc\nd\n", "a\nY\nb\nc\nd\n") is None
    # an insertion inside a range the user replaced
    assert rebase(base, "a\nb\nX\nc\nd\n", "a\nB\nC\nd\n") is None
    # the same change on both sides applies once
    assert rebase(base, "a\nB\nc\nd\n", "a\nB\nc\nD\n") == "a\nB\nc\nD\n"


def test_an_applied_edit_is_recognised_when_the_user_types_on_the_next_line() -> None:
    before = "1\n2\n3\n"
    expected = "1\nTWO\n3\n"
    assert shows_edit(before, expected, "1\nTWO\nthree\n")
    assert not shows_edit(before, expected, "1\n2\nthree\n")  # the editor skipped it
    assert not shows_edit("1\n2\n3\n", "1\n3\n", "1\n2\n3\nx\n")  # a skipped deletion


def test_crlf_files_stay_crlf() -> None:
    assert match_line_endings("a\r\nb\r\n", "a\nb\nc\n") == "a\r\nb\r\nc\r\n"
    assert match_line_endings("a\nb\n", "x\r\n") == "x\r\n"
    assert match_line_endings("mixed\r\nlf\n", "a\nb\n") == "a\nb\n"
