"""Reading files as text: binary sniffing, strict or lossy UTF-8, size caps, line paging.

Kept apart from `Workspace` so the rules for "what counts as a text file" live in one place
and the tools, the search engine and the shadow copy all agree on them. Text is never
normalised: CRLF stays CRLF and a BOM stays in the string, so a staged edit round-trips
byte for byte.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from agentls.errors import WorkspaceError

SNIFF_BYTES = 8192
"""How much of a file is checked for NUL bytes to decide it is binary (like git and rg)."""

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are never read whole; read_file pages through them instead."""

_CHUNK = 1024 * 1024


def looks_binary(head: bytes) -> bool:
    """A NUL byte near the start marks a binary file (UTF-16 text included, on purpose)."""
    return head.find(b"\0", 0, SNIFF_BYTES) != -1  # no slice: no 8 KB copy per file


def binary_reason(head: bytes) -> str:
    """Why a file is treated as binary, phrased for the model."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "is UTF-16 encoded text, which agentls cannot read or edit (only UTF-8)"
    return "is a binary file (it contains NUL bytes), so it cannot be read or edited as text"


def human_size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size} bytes"


def decode_utf8(data: bytes, display: str, *, lossy: bool) -> tuple[str, bool]:
    """Decode UTF-8; on bad bytes raise a clear error, or (lossy) replace them with U+FFFD.

    Returns the text and whether anything was replaced.
    """
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError as exc:
        if lossy:
            return data.decode("utf-8", errors="replace"), True
        bad = data[exc.start : exc.start + 1].hex()
        raise WorkspaceError(
            f"{display} is not valid UTF-8 text (byte 0x{bad} at offset {exc.start}); it may "
            "use another encoding such as Latin-1 or Windows-1252. read_file can show it with "
            "replacement characters, but it cannot be edited safely as text."
        ) from None


@dataclass(frozen=True)
class DiskText:
    """A file read from disk as text."""

    text: str
    lossy: bool
    """True when undecodable bytes were replaced (only with `lossy=True`)."""


def stat_file(path: Path, display: str) -> os.stat_result:
    """`os.stat` that turns the usual failures into messages the model can act on."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise WorkspaceError(f"File not found: {display}") from None
    except NotADirectoryError:
        raise WorkspaceError(
            f"File not found: {display} (a parent of it is a file, not a folder)"
        ) from None
    except OSError as exc:
        raise WorkspaceError(f"Cannot read {display}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise WorkspaceError(
            f"{display} is a directory, not a file; use list_files to see what it contains"
        )
    return st


class FileTooLargeError(WorkspaceError):
    """The file is over the whole-file cap; `path` is the disk file (readers may page it)."""

    def __init__(self, path: Path, display: str, size: int, cap: int) -> None:
        super().__init__(
            f"{display} is {human_size(size)}, larger than the {human_size(cap)} limit for "
            "reading a whole file. Page through it with read_file (offset/limit), or search "
            "it with grep."
        )
        self.path = path
        self.size = size


def read_disk_text(path: Path, display: str, *, max_bytes: int, lossy: bool) -> DiskText:
    """Read a whole text file: refuses directories, binary files and files over `max_bytes`."""
    st = stat_file(path, display)
    if st.st_size > max_bytes:
        raise FileTooLargeError(path, display, st.st_size, max_bytes)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WorkspaceError(f"Cannot read {display}: {exc.strerror or exc}") from None
    if looks_binary(data):
        raise WorkspaceError(f"{display} {binary_reason(data)}")
    text, replaced = decode_utf8(data, display, lossy=lossy)
    return DiskText(text, replaced)


def newline_of(text: str) -> str:
    """The file's dominant line ending: "\\r\\n" when most line breaks are CRLF, else "\\n"."""
    crlf = text.count("\r\n")
    if not crlf:
        return "\n"
    return "\r\n" if crlf * 2 >= text.count("\n") else "\n"


def with_newlines(text: str, newline: str) -> str:
    """Rewrite every line break in `text` to `newline` (used to keep a CRLF file CRLF)."""
    unified = text.replace("\r\n", "\n")
    return unified if newline == "\n" else unified.replace("\n", newline)


def split_lines(text: str) -> list[str]:
    """Lines without their terminators, split on "\\n" only (as git, grep and rg count them).

    A trailing "\\r" is dropped so CRLF files show clean lines; a final newline does not
    start an extra empty line. For lines that keep their endings, split the way LSP counts
    them, see `merge.lines_with_endings`.
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@dataclass(frozen=True)
class LinePage:
    """A window of lines read from a file too large to load whole."""

    lines: list[str]
    """The window's lines (terminators dropped), each already cut to the caller's limit."""
    cut: list[bool]
    """Whether each line was cut to `max_line_bytes`, so the caller can mark it."""
    total_lines: int
    lossy: bool


def page_lines(
    path: Path,
    display: str,
    first: int,
    count: int,
    *,
    max_line_bytes: int,
    max_window_bytes: int = 1024 * 1024,
) -> LinePage:
    """Lines `first`..`first+count-1` (1-based) of a file, streamed in 1 MB chunks.

    Memory stays bounded however large the file is: each line is kept to `max_line_bytes`
    and the window ends early once `max_window_bytes` are kept (the caller sees fewer
    lines and pages on). The whole file is scanned once, so the total line count is exact.
    """
    window = _Window(first, first + count - 1, max_line_bytes, max_window_bytes)
    ends_with_newline = True
    size = 0
    try:
        with path.open("rb") as fh:
            head = True
            while chunk := fh.read(_CHUNK):
                if head and looks_binary(chunk):
                    raise WorkspaceError(f"{display} {binary_reason(chunk)}")
                head = False
                size += len(chunk)
                ends_with_newline = chunk.endswith(b"\n")
                window.feed(chunk)
    except OSError as exc:
        raise WorkspaceError(f"Cannot read {display}: {exc.strerror or exc}") from None
    total = window.finish(size, ends_with_newline=ends_with_newline)
    return _decode_page(window.kept, window.lengths, total, display)


class _Window:
    """The state of `page_lines`'s scan: the line it is on and the window's lines so far.

    Lines before `first` are counted without being kept, lines of the window are kept up to
    `max_line_bytes` each (their full length is recorded), lines after `last` are counted.
    """

    def __init__(self, first: int, last: int, max_line_bytes: int, max_window_bytes: int):
        self.first, self.last = first, last
        self.max_line_bytes, self.max_window_bytes = max_line_bytes, max_window_bytes
        self.line_no = 1
        self.current: bytearray | None = bytearray() if first == 1 else None
        self.current_len = 0
        self.kept: list[bytearray] = []
        self.lengths: list[int] = []
        self.kept_bytes = 0

    def feed(self, chunk: bytes) -> None:
        if self.line_no > self.last:
            self.line_no += chunk.count(b"\n")
            return
        start = self._skip_to_first(chunk)
        if start is not None:
            self._keep_lines(chunk, start)

    def finish(self, size: int, *, ends_with_newline: bool) -> int:
        """Keep an unterminated last line of the window; the file's total line count."""
        total = 0 if size == 0 else (self.line_no - 1 if ends_with_newline else self.line_no)
        if (
            self.current is not None
            and not ends_with_newline
            and size
            and self.line_no <= self.last
        ):
            self.kept.append(self.current)
            self.lengths.append(self.current_len)
        return total

    def _skip_to_first(self, chunk: bytes) -> int | None:
        """Where the window starts in `chunk` (None: not in this chunk yet)."""
        if self.line_no >= self.first:
            return 0
        newlines = chunk.count(b"\n")
        if self.line_no + newlines < self.first:
            self.line_no += newlines
            return None
        start = 0
        while self.line_no < self.first:
            start = chunk.find(b"\n", start) + 1
            self.line_no += 1
        self.current = bytearray()
        self.current_len = 0
        return start

    def _keep_lines(self, chunk: bytes, start: int) -> None:
        while True:
            nl = chunk.find(b"\n", start)
            self._extend(chunk, start, len(chunk) if nl == -1 else nl)
            if nl == -1:
                return
            self._end_line()
            start = nl + 1
            if self.line_no > self.last:
                self.line_no += chunk.count(b"\n", start)
                return

    def _extend(self, chunk: bytes, start: int, end: int) -> None:
        if self.current is not None:
            room = self.max_line_bytes - len(self.current)
            if room > 0:
                self.current += chunk[start : min(end, start + room)]
            self.current_len += end - start

    def _end_line(self) -> None:
        if self.current is not None:
            self.kept.append(self.current)
            self.lengths.append(self.current_len)
            self.kept_bytes += len(self.current)
            if self.kept_bytes >= self.max_window_bytes:
                self.last = self.line_no  # the window is full: it ends here
        self.line_no += 1
        self.current_len = 0
        self.current = bytearray() if self.first <= self.line_no <= self.last else None


def _decode_page(kept: list[bytearray], lengths: list[int], total: int, display: str) -> LinePage:
    """The kept lines as text: cut ones trimmed to whole characters, a CR end dropped."""
    lossy = False
    lines: list[str] = []
    cut: list[bool] = []
    for raw, full in zip(kept, lengths, strict=True):
        was_cut = full > len(raw)
        if was_cut:
            raw = _trim_partial_utf8(raw)
        elif raw.endswith(b"\r"):
            del raw[-1]
        text, replaced = decode_utf8(bytes(raw), display, lossy=True)
        lossy = lossy or replaced
        lines.append(text)
        cut.append(was_cut)
    return LinePage(lines, cut, total, lossy)


def _trim_partial_utf8(raw: bytearray) -> bytearray:
    """Drop a multi-byte character cut in half at the end, so cutting is not "lossy"."""
    for back in range(1, min(4, len(raw)) + 1):
        byte = raw[-back]
        if byte & 0xC0 == 0x80:
            continue
        if byte >= 0xC0:
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            if needed > back:
                return raw[:-back]
        break
    return raw


def number_line(number: int, text: str) -> str:
    """`cat -n` style: the number right-aligned in six columns, a tab, the text."""
    return f"{number:>6}\t{text}"
