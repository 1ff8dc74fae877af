"""Streaming line pages agree with whole-file splitting at every chunk boundary."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.errors import WorkspaceError
from agentls.workspace import textio
from agentls.workspace.textio import newline_of, page_lines, split_lines, with_newlines

SAMPLES = [
    "a\nbb\n\nccc\r\nd😀d\n世界",
    "one line no newline",
    "x\n",
    "\n\n\n",
]


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1024])
def test_pages_match_split_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, chunk: int
) -> None:
    monkeypatch.setattr(textio, "_CHUNK", chunk)
    path = tmp_path / "f.txt"
    path.write_bytes(text.encode())
    expected = split_lines(text)
    for first in range(1, len(expected) + 1):
        for count in (1, 2, 5):
            page = page_lines(path, "f.txt", first, count, max_line_bytes=1000)
            assert page.total_lines == len(expected)
            assert page.lines == expected[first - 1 : first - 1 + count], (first, count)
            assert not page.lossy
            assert not any(page.cut)


def test_page_cuts_long_lines_without_splitting_characters(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(("é" * 10 + "\nok\n").encode())
    page = page_lines(path, "f.txt", 1, 2, max_line_bytes=5)
    assert page.lines == ["éé", "ok"]
    assert page.cut == [True, False]
    assert not page.lossy


def test_page_refuses_binary(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc\x00def")
    with pytest.raises(WorkspaceError, match="binary"):
        page_lines(path, "f.bin", 1, 10, max_line_bytes=100)


def test_newline_helpers() -> None:
    assert newline_of("a\r\nb\r\n") == "\r\n"
    assert newline_of("a\nb\r\nc\n") == "\n"
    assert with_newlines("a\nb\r\nc", "\r\n") == "a\r\nb\r\nc"
    assert with_newlines("a\r\nb", "\n") == "a\nb"


def test_page_window_is_bounded_in_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"0123456789\n" * 100)
    page = page_lines(path, "f.txt", 5, 50, max_line_bytes=100, max_window_bytes=35)
    assert page.lines == ["0123456789"] * 4
    assert page.total_lines == 100
