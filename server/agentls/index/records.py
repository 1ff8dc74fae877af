"""One indexed file: its symbols packed compactly, unpacked into `Symbol`s on demand.

A large workspace holds hundreds of thousands of definitions; keeping each as a Python object
would cost ~500 bytes apiece. A record keeps only the names (the search structures need
them) plus one marshalled blob with a per-row offset table, so a search result decodes just
its own row (~1 µs) and an outline decodes one file. The same packed form is what worker
processes send back and what the SQLite store persists, so nothing is converted twice.
"""

from __future__ import annotations

import marshal
from array import array
from pathlib import Path
from typing import NamedTuple

from agentls.index.extract import R_KIND, R_NAME, R_PARENT, Row
from agentls.index.matching import wordform
from agentls.index.model import KINDS_BY_CODE, Position, Range, Symbol

_MARSHAL_VERSION = 4


class Packed(NamedTuple):
    """A file's symbols as plain data: picklable, marshallable, storable."""

    skipped: str
    """Why the file was not parsed ("" when it was)."""
    names: str
    """Symbol names joined by newlines (names never contain one)."""
    kinds: bytes
    offsets: bytes
    """`array('I')` bytes: start of each row in `rows`, plus the end."""
    rows: bytes
    wordforms: str
    """Per name, its words capitalised and joined (`get_http` → `GetHttp`), newline-joined:
    the word-start matcher looks for "User…Serv" in these (see segment.py)."""


def pack(rows: list[Row], skipped: str = "") -> Packed:
    offsets = array("I", [0])
    parts: list[bytes] = []
    pos = 0
    for row in rows:
        data = marshal.dumps(row, _MARSHAL_VERSION)
        parts.append(data)
        pos += len(data)
        offsets.append(pos)
    return Packed(
        skipped,
        "\n".join(r[R_NAME] for r in rows),
        bytes(r[R_KIND] for r in rows),
        offsets.tobytes(),
        b"".join(parts),
        "\n".join(wordform(r[R_NAME]) for r in rows),
    )


class FileRecord:
    """The indexed state of one file. Replaced, never mutated, except for `alive`."""

    __slots__ = (
        "alive",
        "kinds",
        "mtime_ns",
        "names",
        "offsets",
        "path",
        "path_str",
        "rows",
        "seq",
        "size",
        "skipped",
        "wordforms",
    )

    def __init__(self, path: Path, mtime_ns: int, size: int, packed: Packed) -> None:
        self.path = path
        self.path_str = str(path)
        self.mtime_ns = mtime_ns
        self.size = size
        self.skipped = packed.skipped
        self.names: tuple[str, ...] = tuple(packed.names.split("\n")) if packed.kinds else ()
        self.kinds = packed.kinds
        self.offsets = array("I")
        self.offsets.frombytes(packed.offsets)
        self.rows = packed.rows
        self.wordforms = packed.wordforms
        self.alive = True
        self.seq = 0
        """Install order in the index (set by the index; lets compaction run unlocked)."""

    def __len__(self) -> int:
        return len(self.kinds)

    def packed(self) -> Packed:
        return Packed(
            self.skipped,
            "\n".join(self.names),
            self.kinds,
            self.offsets.tobytes(),
            self.rows,
            self.wordforms,
        )

    def row(self, i: int) -> Row:
        row: Row = marshal.loads(self.rows[self.offsets[i] : self.offsets[i + 1]])
        return row

    def symbol(self, i: int) -> Symbol:
        """Symbol `i` without children (search results are flat)."""
        return _symbol(self.path, self.row(i), ())

    def outline(self) -> list[Symbol]:
        """All symbols as a tree in document order (rows list parents before children)."""
        rows = [self.row(i) for i in range(len(self))]
        children: list[list[Symbol]] = [[] for _ in rows]
        roots: list[Symbol] = []
        for i in range(len(rows) - 1, -1, -1):
            row = rows[i]
            sym = _symbol(self.path, row, tuple(reversed(children[i])))
            parent = row[R_PARENT]
            (children[parent] if parent >= 0 else roots).append(sym)
        roots.reverse()
        return roots


def _symbol(path: Path, row: Row, children: tuple[Symbol, ...]) -> Symbol:
    name, kind, container, _, sl, sc, el, ec, nsl, nsc, nel, nec, line = row
    # tuple.__new__ skips the NamedTuples' Python-level __new__: this runs per search result.
    new = tuple.__new__
    full = new(Range, (new(Position, (sl, sc)), new(Position, (el, ec))))
    sel = new(Range, (new(Position, (nsl, nsc)), new(Position, (nel, nec))))
    return new(Symbol, (name, KINDS_BY_CODE[kind], path, container, full, sel, line, children))
