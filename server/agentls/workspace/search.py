"""Regex search over the layered view (see `patterns` for how a pattern is analysed).

The cost of searching a workspace is mostly per byte and per file, so each step avoids
work the answer does not need:

- files are read as raw bytes with plain `os` calls; binary files are skipped;
- the prefilter rules most files out with a C-speed substring test, before any decoding;
- a pure-ASCII file (most source files) is searched as bytes with the regex's bytes twin,
  which matches exactly where the text regex would, so it is never decoded;
- with a needle and no literal start, the regex runs only on the lines holding a needle,
  and a non-ASCII file then decodes just those lines;
- line numbers and line texts are only worked out for content output.

Matches are reported once per line, for the line where the match starts, like grep and rg.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import AnyStr, Literal

from agentls.workspace.patterns import (
    Prefilter,
    build_prefilter,
    compile_ascii_regex,
    compile_regex,
    is_line_local,
    literal_prefix,
    starts_with_literal,
)
from agentls.workspace.textio import looks_binary, split_lines
from agentls.workspace.view import LayeredView

Span = tuple[int, int]
"""A matching line as (an offset in the line, the line's end before its "\\n"): where the
line starts and whether it ends in "\\r" are only worked out for content output."""


@dataclass
class FileHits:
    """The matching lines of one file."""

    path: str
    lines: list[tuple[int, str]]
    """Line numbers and texts (terminators dropped); empty in files and count modes, which
    do not need them."""
    count: int
    """How many lines match (up to the search's limit)."""
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
    return _numbered_lines(text, _line_spans(regex, text, "\n", limit, ""))


def _line_spans(
    regex: re.Pattern[AnyStr], text: AnyStr, newline: AnyStr, limit: int | None, prefix: AnyStr
) -> list[Span]:
    """`matching_lines` as spans, for text or (with the bytes twin) ASCII bytes. Every
    match starts with `prefix` (see `literal_prefix`), if given: the search jumps there."""
    found: list[Span] = []
    search = regex.search
    find = text.find
    pos = 0
    size = len(text)
    while pos <= size:
        if prefix:
            pos = find(prefix, pos)
            if pos == -1:
                break
        match = search(text, pos)
        if match is None:
            break
        start, end = match.span()
        if start == size and (size == 0 or text.endswith(newline)):
            break
        line_end = find(newline, start)
        if line_end == -1:
            line_end = size
        if end > line_end and search(text, start, line_end) is None:
            pos = line_end + 1
            continue
        found.append((start, line_end))
        if limit is not None and len(found) >= limit:
            break
        pos = line_end + 1
    return found


def candidate_lines(
    regex: re.Pattern[str],
    data: bytes,
    prefilter: Prefilter,
    limit: int | None = None,
) -> list[tuple[int, str]]:
    """`matching_lines` of `data` decoded, running the regex only on lines with a needle.

    Same results as `matching_lines` for a line-local pattern (see `is_line_local`), since
    a match never spans lines and always contains a needle. Only those lines are decoded;
    a line's own decoding equals its part of the whole file's, as lines start after a
    "\\n", which no UTF-8 sequence contains.
    """
    spans = _decoded_needle_spans(regex, data, prefilter.haystack(data), prefilter, limit)
    return _numbered_lines(data, spans)


def _decoded_needle_spans(
    regex: re.Pattern[str],
    data: bytes,
    haystack: bytes,
    prefilter: Prefilter,
    limit: int | None,
) -> list[Span]:
    """Needle lines of `data` where the text regex matches the line's own decoding."""
    needles = prefilter.raw_needles

    def matches(start: int, end: int) -> bool:
        line = data[start:end].decode("utf-8", errors="replace")
        if prefilter.anchored:
            return _decoded_anchored(regex, line, data, haystack, needles, start, end)
        return regex.search(line) is not None

    return _needle_spans(haystack, needles, matches, limit)


def _needle_spans(
    haystack: bytes,
    needles: Sequence[bytes],
    matches: Callable[[int, int], bool],
    limit: int | None,
) -> list[Span]:
    """The lines holding a needle for which `matches(start, end)` holds, up to `limit`."""
    found: list[Span] = []
    for start, end in _needle_lines(haystack, needles):
        if matches(start, end):
            found.append((start, end))
            if limit is not None and len(found) >= limit:
                break
    return found


def _decoded_anchored(
    regex: re.Pattern[str],
    line: str,
    data: bytes,
    haystack: bytes,
    needles: Sequence[bytes],
    start: int,
    end: int,
) -> bool:
    """Whether a match starts at a needle in `line` (the decoding of `data[start:end]`).

    A needle begins with an ASCII or lead byte, so decoding the bytes up to it gives its
    offset in `line`, whatever bytes precede it.
    """
    match = regex.match
    for needle in needles:
        at = haystack.find(needle, start, end)
        done, chars = start, 0
        while at != -1:
            chars += len(data[done:at].decode("utf-8", errors="replace"))
            done = at
            if match(line, chars) is not None:
                return True
            at = haystack.find(needle, at + 1, end)
    return False


def _ascii_needle_spans(
    regex: re.Pattern[bytes],
    data: bytes,
    haystack: bytes,
    prefilter: Prefilter,
    limit: int | None,
) -> list[Span]:
    """Needle lines of pure-ASCII `data` where the bytes twin matches, searched in place
    (so even a lookbehind sees the text before the line, as in `matching_lines`)."""
    needles = prefilter.raw_needles

    def matches(start: int, end: int) -> bool:
        if prefilter.anchored:
            return _ascii_anchored(regex, data, haystack, needles, start, end)
        return regex.search(data, start, end) is not None

    return _needle_spans(haystack, needles, matches, limit)


def _ascii_anchored(
    regex: re.Pattern[bytes],
    data: bytes,
    haystack: bytes,
    needles: Sequence[bytes],
    start: int,
    end: int,
) -> bool:
    """Whether a match starts at a needle in `data[start:end]`. Trying only there beats a
    search of the line, which tries every position (slow on a long minified line)."""
    match = regex.match
    for needle in needles:
        at = haystack.find(needle, start, end)
        while at != -1:
            if match(data, at, end) is not None:
                return True
            at = haystack.find(needle, at + 1, end)
    return False


def _needle_lines(haystack: bytes, needles: Sequence[bytes]) -> Iterator[Span]:
    """(start, end) of each line holding a needle, in order, each line once."""
    size = len(haystack)

    def lines_of(needle: bytes) -> Iterator[Span]:
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


def _numbered_lines(unit: str | bytes, spans: list[Span]) -> list[tuple[int, str]]:
    """(line number, text) of each span of `unit` (text, or bytes decoded as lossy UTF-8)."""
    if isinstance(unit, str):
        return [(n, unit[s:e]) for n, s, e in _located(unit, spans, "\n", "\r")]
    return [
        (n, unit[s:e].decode("utf-8", errors="replace"))
        for n, s, e in _located(unit, spans, b"\n", b"\r")
    ]


def _located(
    unit: AnyStr, spans: list[Span], newline: AnyStr, cr: AnyStr
) -> Iterator[tuple[int, int, int]]:
    """(line number, start, end) of each span's line, the end before a closing "\\r".

    The spans are in order, so newlines are counted once across them.
    """
    line_no = 1
    counted_to = 0
    for at, end in spans:
        line_no += unit.count(newline, counted_to, at)
        counted_to = at
        start = unit.rfind(newline, 0, at) + 1
        yield line_no, start, end - 1 if unit.endswith(cr, start, end) else end


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
    ascii_regex: re.Pattern[bytes] | None = None
    """`regex`'s bytes twin for pure-ASCII files (see `compile_ascii_regex`), if it has one."""
    line_local: bool = False
    """The regex gives the same answer on a line cut out of its file (see `is_line_local`)."""
    prefix: str = ""
    """Literal text every match starts with, when matching is case-sensitive."""

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
            compile_ascii_regex(pattern, ignore_case=ignore_case),
            is_line_local(pattern),
            "" if ignore_case else literal_prefix(pattern),
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
        hit = _search_file(view, path, request, outcome, limit, numbered=content)
        if hit is None:
            continue
        if content and hit.count > budget:
            hit.lines = hit.lines[:budget]
            hit.count = budget
            outcome.truncated = True
        outcome.hits.append(hit)
        budget -= hit.count if content else 1
        if outcome.truncated:
            break
        if budget <= 0:
            outcome.truncated = _any_match(view, files[index + 1 :], request)
            break
    return outcome


def _any_match(view: LayeredView, files: Sequence[str], request: SearchRequest) -> bool:
    """Whether any of `files` matches, so "more results exist" is only said when true."""
    scratch = SearchOutcome()
    return any(
        _search_file(view, path, request, scratch, 1, numbered=False) is not None for path in files
    )


def _search_file(
    view: LayeredView,
    path: str,
    request: SearchRequest,
    outcome: SearchOutcome,
    limit: int | None,
    *,
    numbered: bool,
) -> FileHits | None:
    """The file's matching lines (numbered and with texts when `numbered`); None when it
    has none or is skipped."""
    disk = path
    if view.overlays(path):
        source = view.source(path)
        if source is None:
            return None
        if isinstance(source, str):
            if not request.prefilter.may_match_text(source):
                return None
            spans = _line_spans(request.regex, source, "\n", limit, request.prefix)
            return _hits(path, source, spans, request.keep_text)
        disk = source.path
    outcome.files_searched += 1
    data = _read_text_bytes(disk, request.max_file_bytes, outcome)
    if data is None:
        return None
    found = _search_bytes(request, data, limit)
    if found is None:
        return None
    unit, spans = found
    if not spans:
        return None
    hits = FileHits(path, _numbered_lines(unit, spans) if numbered else [], len(spans))
    if request.keep_text:
        hits.text = unit if isinstance(unit, str) else unit.decode("utf-8", errors="replace")
    return hits


def _hits(path: str, text: str, spans: list[Span], keep_text: bool) -> FileHits | None:
    """An overlay text's hits (always numbered: buffers are few and already decoded)."""
    if not spans:
        return None
    return FileHits(path, _numbered_lines(text, spans), len(spans), text if keep_text else "")


def _search_bytes(
    request: SearchRequest, data: bytes, limit: int | None
) -> tuple[bytes | str, list[Span]] | None:
    """The matching spans of a file's bytes, and what they index: the bytes themselves, or
    their decoding when the file had to be decoded whole. None when the prefilter rules the
    file out."""
    prefilter = request.prefilter
    haystack = prefilter.haystack(data)
    found = prefilter.found_in(haystack)
    if not found and not prefilter.trapped(haystack):
        return None
    needles = prefilter.raw_needles
    scan = found and request.scan_lines and bool(needles) and not prefilter.folding(haystack)
    twin = request.ascii_regex
    if twin is not None and data.isascii():
        if scan:
            return data, _ascii_needle_spans(twin, data, haystack, prefilter, limit)
        return data, _line_spans(twin, data, b"\n", limit, request.prefix.encode())
    if scan and request.line_local:
        return data, _decoded_needle_spans(request.regex, data, haystack, prefilter, limit)
    text = data.decode("utf-8", errors="replace")
    return text, _line_spans(request.regex, text, "\n", limit, request.prefix)


_WHOLE_READ = 64 * 1024


def _read_text_bytes(path: str, cap: int, outcome: SearchOutcome) -> bytes | None:
    """The file's bytes, or None for binary, unreadable or oversized files.

    Raw `os` calls: `open()` builds two Python objects per file, which dominates a search
    over many small files. The first read takes most files whole without asking their size
    (a stat per file is measurable); a larger file is sized then, and read whole (one
    buffer, no joining) only when within the cap and its head shows no NUL, so a big binary
    costs one small read.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, _WHOLE_READ)
        whole = len(data) < _WHOLE_READ
        size = len(data) if whole else os.fstat(fd).st_size
        if size > cap:
            outcome.skipped_large.append(path)
            return None
        if looks_binary(data):
            return None
        if whole:
            return data
        data = os.pread(fd, size + 1, 0)
        return data if len(data) <= size else _read_on(fd, data)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_on(fd: int, head: bytes) -> bytes:
    """`head` and the rest of a file that grew while it was being read."""
    os.lseek(fd, len(head), os.SEEK_SET)
    chunks = [head]
    while more := os.read(fd, _WHOLE_READ):
        chunks.append(more)
    return b"".join(chunks)


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
