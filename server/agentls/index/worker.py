"""Parse files in parallel worker processes.

The tree-sitter parser holds the GIL, so threads do not help; two processes index a large
tree in ~60% of the time one needs. Files on disk are read by the workers themselves, so
the parent neither reads nor ships their bytes. The workers are plain `python -m` subprocesses that
speak length-prefixed marshal frames over stdin/stdout: no multiprocessing start-method
pitfalls inside a threaded server (fork) and no re-import of the server's `__main__` (spawn).
They import only tree-sitter and this package, and parse-and-pack, so the parent only
unpacks ready-made records. A worker that fails is dropped and its batch is parsed in the
parent, so a crash costs speed, never symbols.
"""

from __future__ import annotations

import gc
import logging
import marshal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import IO

from agentls.index.extract import extract_rows, skip_reason
from agentls.index.languages import language_for
from agentls.index.records import Packed, pack
from agentls.index.reparse import RecentTrees

log = logging.getLogger(__name__)

Batch = list[tuple[str, bytes | None]]
"""Files to parse: path and content, or None to have the worker read the file from disk."""
Results = list[tuple[str, Packed | None]]
"""Per file its symbols, or None when it could not be read (it is left out)."""
_HEADER = struct.Struct("<Q")


def parse_file(path: str, data: bytes, trees: RecentTrees | None = None) -> Packed:
    """Extract and pack one file; failures become a skipped file, never an exception.

    With `trees`, the file is re-parsed from its previous tree when it has one (edits).
    """
    spec = language_for(path)
    if spec is None:
        return pack([], "no grammar for this file type")
    reason = skip_reason(data)
    if reason:
        return pack([], reason)
    try:
        if trees is not None:
            return pack(trees.rows(path, spec, data))
        return pack(extract_rows(spec, data))
    except Exception as exc:  # a grammar bug must not take the index down
        log.warning("symbol extraction failed for %s: %s", path, exc)
        return pack([], f"parse failed: {exc}")


def parse_batch(batch: Batch) -> Results:
    return [(path, _parse_entry(path, data)) for path, data in batch]


def _parse_entry(path: str, data: bytes | None) -> Packed | None:
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:  # gone or unreadable now: a later change re-adds it
            log.debug("cannot read %s: %s", path, exc)
            return None
    return parse_file(path, data)


def _write_frame(out: IO[bytes], payload: bytes) -> None:
    out.write(_HEADER.pack(len(payload)))
    out.write(payload)
    out.flush()


def _read_frame(inp: IO[bytes]) -> bytes | None:
    head = inp.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    data = inp.read(size)
    if len(data) < size:
        return None
    return data


def run_pool(
    batches: Iterator[Batch],
    on_results: Callable[[Results], None],
    workers: int,
) -> None:
    """Parse every batch in `workers` subprocesses; `on_results` runs on pool threads."""
    lock = threading.Lock()

    def next_batch() -> Batch | None:
        with lock:
            return next(batches, None)

    def drive() -> None:
        proc = _start()
        try:
            while (batch := next_batch()) is not None:
                results = _ask(proc, batch) if proc is not None else None
                if results is None:
                    if proc is not None:
                        log.warning("symbol index worker failed; parsing in-process")
                        _stop(proc)
                        proc = None
                    results = parse_batch(batch)
                on_results(results)
        finally:
            if proc is not None:
                _stop(proc)

    threads = [threading.Thread(target=drive, name=f"index-worker-{i}") for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


WORKER_NICE = 10
"""How much lower the workers' CPU priority is than the server's (see `_worker_main`)."""


def _start() -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "agentls.index._worker_main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError as exc:
        log.warning("cannot start symbol index worker: %s", exc)
        return None


def _ask(proc: subprocess.Popen[bytes], batch: Batch) -> Results | None:
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        _write_frame(proc.stdin, marshal.dumps(batch))
        data = _read_frame(proc.stdout)
    except (OSError, ValueError):
        return None
    if data is None:
        return None
    try:
        raw = marshal.loads(data)
        return [(path, None if fields is None else Packed(*fields)) for path, fields in raw]
    except (ValueError, TypeError, EOFError):
        return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End the worker (its stdin closed is its signal to exit) and release both pipes."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """The worker process's loop (see `_worker_main`): one reply frame per request frame.

    The cyclic GC is off: a worker makes no reference cycles, and tree-sitter nodes are
    allocated by the hundred thousand, which would otherwise trigger many useless passes.
    """
    gc.disable()
    while (frame := _read_frame(inp)) is not None:
        batch: Batch = marshal.loads(frame)
        results = [(p, None if r is None else tuple(r)) for p, r in parse_batch(batch)]
        _write_frame(out, marshal.dumps(results))
