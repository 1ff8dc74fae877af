"""Regex search over the layered view: ripgrep for files on disk, RE2 for the overlay.

The caller lists the files (ignore rules, secret rules and the session's view applied);
this module finds their matching lines:

- files whose content is on disk go to ripgrep as one argument list (`ripgrep.py`);
- files the overlay has (unsaved editor buffers, staged edits, staged renames) are searched
  in-process with RE2 (`regex_dialect.py`), and replace their disk versions;
- without a usable ripgrep, disk files are searched with RE2 too (same dialect).

Both engines run in linear time and release the GIL, so a search never stalls the server's
event loop. Results are merged in path order, the order the caller listed the files in, and
the result limit is applied across them exactly as before: matching lines in content mode,
files in files/count mode. Matches are reported once per line, for the line where the match
starts; a UTF-8 byte-order mark is not part of the first line; `$` also matches before
"\\r\\n" (rg's `--crlf`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from agentls.workspace import ripgrep
from agentls.workspace.regex_dialect import check_pattern, compile_re2, uses_word_boundary
from agentls.workspace.textio import looks_binary, split_lines
from agentls.workspace.view import LayeredView

if TYPE_CHECKING:
    import re2

Mode = Literal["content", "files", "count"]
Engine = ripgrep.Ripgrep | None

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass
class FileHits:
    """The matching lines of one file."""

    path: str
    lines: list[tuple[int, str]]
    """Line numbers and texts (terminators dropped); empty in files and count modes."""
    count: int
    """How many lines match (up to the search's limit)."""
    shown: dict[int, str] = field(repr=False, default_factory=dict)
    """Lines around the matches by number, kept only when context lines are wanted."""


@dataclass
class SearchOutcome:
    hits: list[FileHits] = field(default_factory=list)
    truncated: bool = False
    """Stopped at the result limit; more matches exist."""
    files_searched: int = 0
    skipped_large: list[str] = field(default_factory=list)
    """Files over the size cap, left out (only by the in-process engine: rg streams)."""
    cancelled: bool = False


@dataclass(frozen=True)
class SearchRequest:
    """A checked search. Build it with `SearchRequest.build` (raises `PatternError`)."""

    pattern: str
    regex: re2._Regexp[str]
    """The RE2 twin of the pattern, for overlay text (and disk files without rg)."""
    ignore_case: bool = False
    max_results: int = 200
    mode: Mode = "content"
    """content: the limit counts matching lines; files/count: it counts files."""
    context: int = 0
    """Lines of context wanted around each match (content mode)."""
    max_file_bytes: int = 10 * 1024 * 1024
    """Files larger than this are skipped by the in-process engine (read whole)."""
    word_boundary: bool = False
    """The pattern uses `\\b`/`\\B` (see `_search_with_rg_stdin`)."""

    @classmethod
    def build(
        cls,
        pattern: str,
        *,
        ignore_case: bool = False,
        max_results: int = 200,
        mode: Mode = "content",
        context: int = 0,
        max_file_bytes: int = 10 * 1024 * 1024,
    ) -> SearchRequest:
        check_pattern(pattern)
        regex = compile_re2(pattern, ignore_case=ignore_case)
        context = context if mode == "content" else 0
        return cls(
            pattern,
            regex,
            ignore_case,
            max_results,
            mode,
            context,
            max_file_bytes,
            uses_word_boundary(pattern),
        )

    @property
    def per_file_limit(self) -> int | None:
        """Matching lines worth finding in one file: one more than can be shown."""
        if self.mode == "content":
            return self.max_results + 1
        return 1 if self.mode == "files" else None


def run_search(
    view: LayeredView,
    files: Sequence[str],
    request: SearchRequest,
    should_stop: Callable[[], bool] | None = None,
    *,
    engine: Engine | Literal["auto"] = "auto",
) -> SearchOutcome:
    """Search `files` (sorted) through `view`; binary files are skipped silently.

    `engine`: the rg to use, None for the in-process engine only, "auto" to find one.
    Raises `ripgrep.RgError` when rg refuses the pattern.
    """
    rg = ripgrep.find_ripgrep() if engine == "auto" else engine
    return _Search(view, files, request, should_stop, rg).run()


def run_search_listing(
    view: LayeredView,
    guess: Sequence[str],
    list_files: Callable[[], list[str]],
    request: SearchRequest,
    should_stop: Callable[[], bool] | None = None,
    *,
    engine: Engine | Literal["auto"] = "auto",
) -> tuple[list[str], SearchOutcome]:
    """`run_search` over the files `list_files` returns, started before they are known.

    `guess` is what an earlier listing of the same files gave: ripgrep starts on it at
    once, and the files are listed meanwhile (the workspace walk costs about a tenth of a
    sparse search; this way it runs beside rg instead of before it). The outcome is the
    guessed search's when the listing is exactly `guess`, else (files were added, removed
    or hidden since) that search is dropped and the listed files are searched: the answer
    is always the search of the listed files. Returns them with the outcome.
    """
    rg = ripgrep.find_ripgrep() if engine == "auto" else engine
    search = _Search(view, guess, request, should_stop, rg)
    with search.started():
        files = list_files()
        if files == guess:
            return files, search.run()
    return files, _Search(view, files, request, should_stop, rg).run()


class _Search:
    """One search of a file list: overlay files by RE2, disk files by rg (or RE2)."""

    def __init__(
        self,
        view: LayeredView,
        files: Sequence[str],
        request: SearchRequest,
        should_stop: Callable[[], bool] | None,
        rg: ripgrep.Ripgrep | None,
    ) -> None:
        self.view = view
        self.files = files
        self.request = request
        self.should_stop = should_stop
        self.rg = rg
        self.overlay = [path for path in files if view.overlays(path)] if view.has_overlay else []
        self.disk = [path for path in files if not view.overlays(path)] if self.overlay else files
        self.runs: ripgrep.RgSearch | None = None
        self._plan: _Plan | None = None

    @property
    def plan(self) -> _Plan:
        """How rg's first pass runs (decided once, by a look at a sample of the files)."""
        if self._plan is None:
            self._plan = _plan(self.disk, self.request)
        return self._plan

    @contextlib.contextmanager
    def started(self) -> Iterator[None]:
        """rg runs from here on; leaving the block stops what was not read."""
        if self.rg is not None:
            self.runs = _rg_runs(self.rg, self.disk, self.request, self.plan, self.should_stop)
            self.runs.start()
        try:
            yield
        finally:
            if self.runs is not None:
                self.runs.close()

    def run(self) -> SearchOutcome:
        outcome = SearchOutcome(files_searched=len(self.files))
        found: dict[str, _Found] = {}
        for path in self.overlay:
            hit = _search_overlay(self.view, path, self.request, outcome, self.rg)
            if hit is not None:
                found[path] = hit
        if self.rg is not None:
            runs = self.runs or _rg_runs(
                self.rg, self.disk, self.request, self.plan, self.should_stop
            )
            with runs:
                _search_with_rg(self.rg, runs, self.request, self.plan, found, outcome)
        else:
            _search_in_process(self.disk, self.request, found, outcome, self.should_stop)
        _select(found, self.request, outcome)
        return outcome


class _Found:
    """A file's matches before selection: counted now, lines materialised on demand."""

    def __init__(
        self,
        path: str,
        count: int,
        load: Callable[[], _Lines],
        *,
        rg: bool = True,
        check_binary: bool = False,
    ) -> None:
        self.path = path
        self.count = count
        self._load = load
        self.rg = rg
        """Found by rg on disk (a first pass may have stopped early), not by RE2."""
        self._binary: bool | None = None if check_binary else False

    def lines(self) -> _Lines:
        return self._load()

    @property
    def binary(self) -> bool:
        """A file rg counted without judging it (`--count` over named files): binary by its
        head, read only when the answer would show the file."""
        if self._binary is None:
            self._binary = _is_binary(self.path)
        return self._binary


_Lines = tuple[list[tuple[int, str]], dict[int, str]]


@dataclass(frozen=True)
class _Plan:
    """How rg's first pass over the disk files runs."""

    peek: int | None
    """rg's `--max-count`: matching lines per file worth reporting in this pass."""
    first_chunk: int | None
    """Files in the first rg run, which runs alone (None: one run for all)."""


def _plan(disk: Sequence[str], request: SearchRequest) -> _Plan:
    """A pattern that matches in many files fills the result limit early: peek at a few
    lines per file and search a first chunk alone (`_first_chunk`). Any other search is
    one rg run that reports every line it may show: a first chunk run alone, a second
    rg run after it and a third for the shown files that had more than the peek cost a
    sparse search a fifth of its wall time (issue 33), each start and each run's tail on
    one core serialised. Which kind a search is, a sample of the files says
    (`_looks_sparse`); a wrong guess costs time, never a different answer."""
    full = request.per_file_limit
    first = _first_chunk(len(disk), request)
    dense = _Plan(min(PEEK, request.max_results + 1) if request.mode == "content" else full, first)
    return _Plan(full, None) if _looks_sparse(disk, first, request) else dense


PROBE_FILES = 64
"""Files sampled (evenly through the list) to guess whether a search is sparse."""
PROBE_BYTES = 8 * 1024
"""Bytes read of each sampled file."""
PROBE_BUDGET_S = 0.002
"""The sample stops after this long (a costly pattern: `.{400,}`), judged on what it read."""
PROBE_MIN = 8
"""Files sampled at least (a slow filesystem: the budget is spent on the first ones)."""
SPARSE_UNITS = 4
"""A search without a first chunk (a shorter list) is sparse when the sample predicts fewer
result units than this many times the limit (rg then prints little beyond what is shown)."""


def _looks_sparse(disk: Sequence[str], first: int | None, request: SearchRequest) -> bool:
    """Whether the result units (lines, or files) that RE2 finds in the heads of an even
    sample of the first chunk's files (all files without one), scaled to all of them,
    stay under half the limit (with a first chunk: it would not fill the limit, so
    searching it alone gains nothing) or under `SPARSE_UNITS` × the limit (without one). Matches
    often cluster in one part of a tree, so the sample is where the question is. A short
    list is never sampled (reading it would cost as much as searching it)."""
    count = first or len(disk)
    if count < 4 * PROBE_FILES:
        return False
    units = probed = 0
    per_file = PEEK if request.mode == "content" else 1
    give_up = time.perf_counter() + PROBE_BUDGET_S
    for index in range(PROBE_FILES):
        if probed >= PROBE_MIN and time.perf_counter() > give_up:
            break
        probed += 1
        try:
            with open(disk[index * count // PROBE_FILES], "rb") as fh:
                data = fh.read(PROBE_BYTES)
        except OSError:
            continue
        if not looks_binary(data):
            units += len(_line_spans(request.regex, data, per_file))
    if first:  # a wrong "sparse" costs more (up to rg's whole search) than a wrong "dense"
        return 2 * units * count < request.max_results * probed
    return units * count < SPARSE_UNITS * request.max_results * probed


def _rg_runs(
    rg: ripgrep.Ripgrep,
    disk: Sequence[str],
    request: SearchRequest,
    plan: _Plan,
    should_stop: Callable[[], bool] | None,
) -> ripgrep.RgSearch:
    """The rg runs of a search's first pass over the disk files (see `_search_with_rg`)."""
    return ripgrep.search(
        rg,
        request.pattern,
        disk,
        ignore_case=request.ignore_case,
        max_count=plan.peek,
        context=request.context,
        should_stop=should_stop,
        first_chunk=plan.first_chunk,
        count_only=request.mode == "count",
    )


def _search_with_rg(
    rg: ripgrep.Ripgrep,
    runs: ripgrep.RgSearch,
    request: SearchRequest,
    plan: _Plan,
    found: dict[str, _Found],
    outcome: SearchOutcome,
) -> None:
    """Read `runs` (rg over the disk files, chunk by chunk in path order); stop once the
    chunks so far hold more than the limit (later files could not be shown).

    A dense content search looks at no more than `PEEK` lines per file first, and asks
    again, for the files the answer shows, only where that was not enough: a pattern that
    matches most lines of most files would otherwise have rg print every one of them as
    JSON (`_plan`).
    Count mode uses rg's own `--count`; rg does not judge named files binary there, so
    the files the answer would show are checked by their head (`_Found.binary`)."""
    count_only = request.mode == "count"
    for run in runs:
        if run.cancelled:
            outcome.cancelled = True
            return
        for hit in run.files:
            found[hit.path] = _Found(hit.path, hit.count, hit.lines, check_binary=count_only)
        last = max((h.path for h in run.files), default="")
        if last and _units_up_to(found, last, request) > request.max_results:
            break
    peek = plan.peek
    if request.mode == "content" and peek is not None and peek < request.max_results + 1:
        _complete_shown(rg, request, found, peek)


PEEK = 8
"""Matching lines per file rg reports in a content search's first pass."""


def _complete_shown(
    rg: ripgrep.Ripgrep, request: SearchRequest, found: dict[str, _Found], peek: int
) -> None:
    """Ask rg again, with the full per-file limit, for the files the answer will show
    whose first pass stopped at `peek` lines (they may hold more)."""
    budget = request.max_results + 1
    capped: list[str] = []
    for path in sorted(found):
        if budget <= 0:
            break
        hit = found[path]
        if hit.count >= peek and hit.rg:
            capped.append(path)
        budget -= hit.count
    if not capped:
        return
    for run in ripgrep.search(
        rg,
        request.pattern,
        capped,
        ignore_case=request.ignore_case,
        max_count=request.max_results + 1,
        context=request.context,
    ):
        for again in run.files:
            found[again.path] = _Found(again.path, again.count, again.lines)


def _is_binary(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return looks_binary(fh.read(8192))
    except OSError:
        return True


FIRST_CHUNK_MIN = 1000
"""Files in the first rg run of a large search (an eighth of them, at least this many): a
pattern that matches everywhere fills the result limit there and the rest of the tree is
never searched; any other search pays one more process start."""


def _first_chunk(files: int, request: SearchRequest) -> int | None:
    if files < 4 * FIRST_CHUNK_MIN:
        return None
    return max(FIRST_CHUNK_MIN, files // 8)


def _units_up_to(found: Mapping[str, _Found], last: str, request: SearchRequest) -> int:
    """Result units (lines, or files) found in files up to `last` in path order; in count
    mode counted in path order only until they exceed the limit (binary files need a
    look at their head)."""
    if request.mode == "content":
        return sum(f.count for path, f in found.items() if path <= last)
    if request.mode == "files":
        return sum(1 for path in found if path <= last)
    units = 0
    for path in sorted(p for p in found if p <= last):
        units += not found[path].binary
        if units > request.max_results:
            break
    return units


def _search_in_process(
    disk: Sequence[str],
    request: SearchRequest,
    found: dict[str, _Found],
    outcome: SearchOutcome,
    should_stop: Callable[[], bool] | None,
) -> None:
    """The engine without rg: every disk file read and searched with RE2."""
    for index, path in enumerate(disk):
        if should_stop is not None and index % 256 == 0 and should_stop():
            outcome.cancelled = True
            return
        data = _read_disk(path, request.max_file_bytes, outcome)
        if data is not None:
            hit = _search_bytes(path, data, request)
            if hit is not None:
                found[path] = hit


def _search_overlay(
    view: LayeredView,
    path: str,
    request: SearchRequest,
    outcome: SearchOutcome,
    rg: ripgrep.Ripgrep | None,
) -> _Found | None:
    source = view.source(path)
    if source is None:
        return None  # deleted in this session
    if isinstance(source, str):
        data: bytes | None = source.encode("utf-8", "surrogatepass")
    else:
        data = _read_disk(source.path, request.max_file_bytes, outcome)  # a staged rename
    if data is None:
        return None
    if rg is not None and request.word_boundary and not data.isascii():
        return _search_with_rg_stdin(rg, path, data, request)
    return _search_bytes(path, data, request)


def _search_with_rg_stdin(
    rg: ripgrep.Ripgrep, path: str, data: bytes, request: SearchRequest
) -> _Found | None:
    """Non-ASCII text and a `\\b` in the pattern: RE2's word boundary is ASCII-only, so
    rg (fed the text on stdin) decides, exactly as it does for files on disk."""
    hit = ripgrep.search_text(
        rg,
        request.pattern,
        data,
        ignore_case=request.ignore_case,
        max_count=request.per_file_limit,
        context=request.context,
    )
    return None if hit is None else _Found(path, hit.count, hit.lines, rg=False)


def _search_bytes(path: str, data: bytes, request: SearchRequest) -> _Found | None:
    """RE2 over one file's bytes: a BOM stripped and "\\r\\n" made "\\n" first, so the
    lines, their numbers and `$` are what rg's `--crlf` search sees."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if b"\r\n" in data:
        data = data.replace(b"\r\n", b"\n")
    spans = _line_spans(request.regex, data, request.per_file_limit)
    if not spans:
        return None

    def lines() -> _Lines:
        return _numbered(data, spans, request.context)

    return _Found(path, len(spans), lines, rg=False)


def _line_spans(regex: re2._Regexp[str], data: bytes, limit: int | None) -> list[tuple[int, int]]:
    """(match start, line end) of each line where the regex matches, once per line, up to
    `limit`. The regex never matches a newline (RE2's `never_nl`), so a match lies within
    its line; searching on from the next line finds the next matching line."""
    found: list[tuple[int, int]] = []
    size = len(data)
    ends_with_newline = data.endswith(b"\n")
    search = regex.search
    pos = 0
    while pos <= size:
        match = search(data, pos)
        if match is None:
            break
        start = match.start()
        if start == size and (size == 0 or ends_with_newline):
            break  # an empty match after the final newline is not a line
        line_end = data.find(b"\n", start)
        if line_end == -1:
            line_end = size
        found.append((start, line_end))
        if limit is not None and len(found) >= limit:
            break
        pos = line_end + 1
    return found


def _numbered(data: bytes, spans: list[tuple[int, int]], context: int) -> _Lines:
    """Matching lines as (number, text), and with `context` the lines around them."""
    matches: list[tuple[int, str]] = []
    line_no = 1
    counted_to = 0
    for at, end in spans:
        line_no += data.count(b"\n", counted_to, at)
        counted_to = at
        start = data.rfind(b"\n", 0, at) + 1
        matches.append((line_no, _decode_line(data[start:end])))
    shown: dict[int, str] = {}
    if context:
        all_lines = split_lines(data.decode("utf-8", errors="replace"))
        for number, _ in matches:
            for n in range(max(1, number - context), min(len(all_lines), number + context) + 1):
                shown[n] = all_lines[n - 1]
    return matches, shown


def _decode_line(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    return text[:-1] if text.endswith("\r") else text


def _read_disk(path: str, cap: int, outcome: SearchOutcome) -> bytes | None:
    """A disk file's bytes for the in-process engine; None for binary, unreadable or
    oversized files (those are listed in `skipped_large`). UTF-16 with a BOM is read as
    text, like rg does."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > cap:
                outcome.skipped_large.append(path)
                return None
            data = fh.read(cap + 1)
    except OSError:
        return None
    if data.startswith(_UTF16_BOMS):
        try:
            return data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            return None
    return None if looks_binary(data) else data


def _select(found: dict[str, _Found], request: SearchRequest, outcome: SearchOutcome) -> None:
    """Apply the result limit over the files in path order."""
    budget = request.max_results
    content = request.mode == "content"
    for path in sorted(found):
        hit = found[path]
        if hit.binary:
            continue
        if budget <= 0:
            outcome.truncated = True
            return
        count = hit.count
        lines: list[tuple[int, str]] = []
        shown: dict[int, str] = {}
        if content:
            lines, shown = hit.lines()
            count = len(lines)
            if count > budget:
                lines, count = lines[:budget], budget
                outcome.truncated = True
        outcome.hits.append(FileHits(path, lines, count, shown))
        budget -= count if content else 1
        if outcome.truncated:
            return


def context_groups(
    shown: Mapping[int, str], line_numbers: Iterable[int], context: int
) -> list[list[tuple[int, str, bool]]]:
    """Matching lines with `context` lines around them, merged into contiguous groups.

    Each entry is (line number, text, is_match); `shown` holds the lines that exist near
    the matches (a range stops at the file's ends).
    """
    numbers = list(line_numbers)
    matches = set(numbers)
    groups: list[list[tuple[int, str, bool]]] = []
    last = 0
    for number in numbers:
        start = max(1, number - context)
        end = number + context
        if groups and start <= last + 1:
            group = groups[-1]
            start = last + 1
        else:
            group = []
            groups.append(group)
        group.extend((n, shown[n], n in matches) for n in range(start, end + 1) if n in shown)
        last = max(last, end)
    return groups
