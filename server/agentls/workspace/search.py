"""Regex search over the layered view (see `patterns` for how a pattern is analysed).

Files are read as raw bytes with plain `os` calls (the per-file cost dominates a search of
many small files); binary files are skipped; the prefilter rules most files out before any
decoding. Matches are reported once per line, for the line where the match starts, like
grep and rg.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentls.workspace.patterns import (
    Prefilter,
    build_prefilter,
    compile_regex,
    starts_with_literal,
)
from agentls.workspace.textio import SNIFF_BYTES, looks_binary, split_lines
from agentls.workspace.view import LayeredView


@dataclass
class FileHits:
    """Matches in one file: matching line numbers and texts (terminators dropped)."""

    path: str
    lines: list[tuple[int, str]]
    text: str = field(repr=False, default="")
    """The file's whole text, kept only when context lines are wanted."""


def matching_lines(
    regex: re.Pattern[str], text: str, limit: int | None = None
) -> list[tuple[int, str]]:
    """Each line in which the regex matches, once, in order, like grep and rg.

    Matching is per line: a match never spans a line break (`\\s` does not eat the
    newline, `$` matches before "\\r\\n" too). The regex runs over the whole text (fast)
    and only a match that crosses a line break is re-checked within its own line.
    """
    found: list[tuple[int, str]] = []
    line_no = 1
    counted_to = 0
    pos = 0
    size = len(text)
    while pos <= size:
        match = regex.search(text, pos)
        if match is None:
            break
        start = match.start()
        if start == size and (size == 0 or text[-1] == "\n"):
            break
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        if line_end == -1:
            line_end = size
        if match.end() > line_end and regex.search(text, start, line_end) is None:
            pos = line_end + 1
            continue
        line_no += text.count("\n", counted_to, line_start)
        counted_to = line_start
        line = text[line_start:line_end]
        found.append((line_no, line[:-1] if line.endswith("\r") else line))
        if limit is not None and len(found) >= limit:
            break
        pos = line_end + 1
    return found


def candidate_lines(
    regex: re.Pattern[str],
    text: str,
    data: bytes,
    haystack: bytes,
    needles: Sequence[bytes],
    limit: int | None = None,
) -> list[tuple[int, str]]:
    """`matching_lines`, running the regex only on lines that contain a needle.

    `data` is the file's bytes and `text` their decoding; `haystack` is `data` as the
    prefilter sees it (maybe ASCII-lowercased, same offsets). Same results as
    `matching_lines`, since a match never spans lines and always contains a needle.
    """
    ascii_only = len(text) == len(data)
    found: list[tuple[int, str]] = []
    line_no = 1
    counted_to = 0
    char_at = 0
    for start, end in _needle_lines(haystack, needles):
        if ascii_only:
            first, last = start, end
        else:
            # Line starts follow a "\\n", which no UTF-8 sequence contains, so decoding
            # piecewise at line starts yields exactly the whole-file decoding's lengths.
            char_at += len(data[counted_to:start].decode("utf-8", errors="replace"))
            first = char_at
            last = first + len(data[start:end].decode("utf-8", errors="replace"))
        line_no += data.count(b"\n", counted_to, start)
        counted_to = start
        if regex.search(text, first, last) is None:
            continue
        line = text[first:last]
        found.append((line_no, line[:-1] if line.endswith("\r") else line))
        if limit is not None and len(found) >= limit:
            break
    return found


def _needle_lines(haystack: bytes, needles: Sequence[bytes]) -> Iterator[tuple[int, int]]:
    """(start, end) of each line holding a needle, in order, each line once."""
    size = len(haystack)

    def lines_of(needle: bytes) -> Iterator[tuple[int, int]]:
        pos = haystack.find(needle)
        while pos != -1:
            start = haystack.rfind(b"\n", 0, pos) + 1
            end = haystack.find(b"\n", pos)
            if end == -1:
                end = size
            yield start, end
            pos = haystack.find(needle, end + 1) if end < size else -1

    if len(needles) == 1:
        yield from lines_of(needles[0])
    else:
        yield from sorted({span for needle in needles for span in lines_of(needle)})


@dataclass
class SearchOutcome:
    hits: list[FileHits] = field(default_factory=list)
    truncated: bool = False
    """Stopped at the result limit; more matches exist."""
    files_searched: int = 0
    skipped_large: list[str] = field(default_factory=list)
    cancelled: bool = False


@dataclass(frozen=True)
class SearchRequest:
    """A compiled search. Build it with `SearchRequest.build` (that raises `re.error`)."""

    regex: re.Pattern[str]
    prefilter: Prefilter
    max_results: int
    mode: Literal["content", "files", "count"] = "content"
    """content: the limit counts matching lines; files/count: it counts files."""
    keep_text: bool = False
    """Keep each matching file's text (for context lines)."""
    max_file_bytes: int = 10 * 1024 * 1024
    scan_lines: bool = False
    """Run the regex only on lines holding a needle (see `starts_with_literal`)."""

    @classmethod
    def build(
        cls,
        pattern: str,
        *,
        ignore_case: bool = False,
        max_results: int = 200,
        mode: Literal["content", "files", "count"] = "content",
        keep_text: bool = False,
        max_file_bytes: int = 10 * 1024 * 1024,
    ) -> SearchRequest:
        return cls(
            compile_regex(pattern, ignore_case=ignore_case),
            build_prefilter(pattern, ignore_case=ignore_case),
            max_results,
            mode,
            keep_text,
            max_file_bytes,
            ignore_case or not starts_with_literal(pattern),
        )


def run_search(
    view: LayeredView,
    files: Sequence[str],
    request: SearchRequest,
    should_stop: Callable[[], bool] | None = None,
) -> SearchOutcome:
    """Search `files` in order through `view`; binary files are skipped silently."""
    outcome = SearchOutcome()
    budget = request.max_results
    content = request.mode == "content"
    for index, path in enumerate(files):
        if should_stop is not None and index % 256 == 0 and should_stop():
            outcome.cancelled = True
            break
        limit = budget + 1 if content else 1 if request.mode == "files" else None
        found = _search_file(view, path, request, outcome, limit)
        if found is None:
            continue
        lines, text = found
        if not lines:
            continue
        if content and len(lines) > budget:
            lines = lines[:budget]
            outcome.truncated = True
        outcome.hits.append(FileHits(path, lines, text if request.keep_text else ""))
        budget -= len(lines) if content else 1
        if outcome.truncated:
            break
        if budget <= 0:
            outcome.truncated = _any_match(view, files[index + 1 :], request)
            break
    return outcome


def _any_match(view: LayeredView, files: Sequence[str], request: SearchRequest) -> bool:
    """Whether any of `files` matches, so "more results exist" is only said when true."""
    scratch = SearchOutcome()
    for path in files:
        found = _search_file(view, path, request, scratch, 1)
        if found is not None and found[0]:
            return True
    return False


def _search_file(
    view: LayeredView, path: str, request: SearchRequest, outcome: SearchOutcome, limit: int | None
) -> tuple[list[tuple[int, str]], str] | None:
    """Matching lines of one file (and its text when wanted); None when skipped."""
    if view.overlays(path):
        source = view.source(path)
        if source is None:
            return None
        if isinstance(source, str):
            if not request.prefilter.may_match_text(source):
                return None
            return matching_lines(request.regex, source, limit), source
        path = source.path
    outcome.files_searched += 1
    data = _read_text_bytes(path, request.max_file_bytes, outcome)
    if data is None:
        return None
    prefilter = request.prefilter
    haystack = prefilter.haystack(data)
    found = prefilter.found_in(haystack)
    if not found and not prefilter.trapped(data):
        return None
    text = data.decode("utf-8", errors="replace")
    if found and request.scan_lines and prefilter.raw_needles:
        needles = prefilter.raw_needles
        return candidate_lines(request.regex, text, data, haystack, needles, limit), text
    return matching_lines(request.regex, text, limit), text


_WHOLE_READ = 64 * 1024


def _read_text_bytes(path: str, cap: int, outcome: SearchOutcome) -> bytes | None:
    """The file's bytes, or None for binary, unreadable or oversized files.

    Raw `os` calls: `open()` builds two Python objects per file, which dominates a search
    over many small files. Small files are read in one call; larger ones head first, so a
    big binary (a .so, an image) costs one small read.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > cap:
            outcome.skipped_large.append(path)
            return None
        if size <= _WHOLE_READ:
            data = os.read(fd, size + 1)
            if looks_binary(data):
                return None
        else:
            data = os.read(fd, SNIFF_BYTES)
            if looks_binary(data):
                return None
            data += os.read(fd, size)
        while len(data) > size:  # the file grew while being read: take the rest too
            more = os.read(fd, _WHOLE_READ)
            if not more:
                break
            data += more
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def context_groups(
    text: str, line_numbers: list[int], context: int
) -> list[list[tuple[int, str, bool]]]:
    """Matching lines with `context` lines around them, merged into contiguous groups.

    Each entry is (line number, text, is_match).
    """
    lines = split_lines(text)
    matches = set(line_numbers)
    groups: list[list[tuple[int, str, bool]]] = []
    last = 0
    for number in line_numbers:
        start = max(1, number - context)
        end = min(len(lines), number + context)
        if groups and start <= last + 1:
            group = groups[-1]
            start = last + 1
        else:
            group = []
            groups.append(group)
        group.extend((n, lines[n - 1], n in matches) for n in range(start, end + 1))
        last = max(last, end)
    return groups
