"""An immutable search structure over the names of a set of file records.

Entries are sorted by (length, lowercase name), which serves every stage at once:
- exact/prefix: one bisect per name length into `keys` (each key is `chr(len) + lowercase`),
  so results come out shortest first and a scan can stop after a few hundred hits;
- word/fuzzy: the names' word forms (`GetHttpCode`: capitals mark word starts) joined by
  newlines in the same order form one string that a regex scans in C; the first hits are
  again the shortest names, so a bounded scan keeps the best ones.

Segments are never modified. The index adds new ones for changed files and merges them
(LSM-style); a replaced file's entries stay in place but are skipped because its record is
no longer `alive`.
"""

from __future__ import annotations

import heapq
import re
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from operator import itemgetter
from typing import Any

from agentls.workspace.index.matching import lower
from agentls.workspace.index.records import FileRecord

_CHUNK = 65_536
"""Characters of word forms scanned between two looks at the clock (deadline scans)."""
_MAX_WORDS = 256
"""A query word that starts more distinct words than this is looked up by scanning."""
_FORM_WORD = re.compile(r"[A-Z][a-z]*|[0-9]+")

Accept = Callable[[FileRecord, int, int], bool]
"""(record, row index, kind code) → whether a candidate passes the query's filters."""


class Segment:
    __slots__ = (
        "_postings",
        "keys",
        "kinds",
        "lengths",
        "records",
        "recs",
        "rows",
        "wordforms",
        "wstarts",
    )

    def __init__(self, records: Iterable[FileRecord]) -> None:
        self.records: list[FileRecord] = [r for r in records if r.alive and len(r)]
        names: list[str] = []
        forms: list[str] = []
        recs: list[FileRecord] = []
        rows: list[int] = []
        kinds = bytearray()
        for rec in self.records:
            n = len(rec)
            names.extend(rec.names)
            forms.append(rec.wordforms)
            recs.extend([rec] * n)
            rows.extend(range(n))
            kinds += rec.kinds
        joined = "\n".join(names)
        low_joined = joined.lower()
        if len(low_joined) == len(joined):
            lows = low_joined.split("\n") if names else []
        else:
            lows = [lower(n) for n in names]
        wordforms = "\n".join(forms).split("\n") if names else []
        keys = [chr(len(low)) + low for low in lows]
        order = sorted(range(len(keys)), key=keys.__getitem__)
        self.keys: list[str] = _permute(keys, order)
        self.recs: list[FileRecord] = _permute(recs, order)
        self.rows = array("I", _permute(rows, order))
        self.kinds = bytes(_permute(kinds, order))
        sorted_forms: list[str] = _permute(wordforms, order)
        self.wordforms = "\n" + "\n".join(sorted_forms)
        self.wstarts = _line_starts(self.wordforms, len(sorted_forms))
        self.lengths = sorted({len(k) - 1 for k in self.keys})
        self._postings: tuple[list[str], list[array[int]]] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def prefix(self, low: str, cap: int, accept: Accept) -> list[int]:
        """Entries whose lowercase name starts with `low` (equal ones first), shortest first."""
        out: list[int] = []
        keys, n = self.keys, len(self.keys)
        recs, rows, kinds = self.recs, self.rows, self.kinds
        lengths = self.lengths
        for length in lengths[bisect_left(lengths, len(low)) :]:
            key = chr(length) + low
            i = bisect_left(keys, key)
            while i < n and keys[i].startswith(key):
                if accept(recs[i], rows[i], kinds[i]):
                    out.append(i)
                    if len(out) >= cap:
                        return out
                i += 1
        return out

    def scan(
        self,
        pattern: re.Pattern[str],
        cap: int,
        accept: Accept,
        deadline: float | None = None,
    ) -> list[int]:
        """Entries whose word form matches `pattern`, shortest names first, at most `cap`.

        With a `deadline` (a `time.perf_counter()` value) the scan goes chunk by chunk and
        stops when time is up: the shortest names, scanned first, are the likeliest hits.
        """
        blob, starts = self.wordforms, self.wstarts
        n = len(starts)
        out: list[int] = []
        if not n:
            return out
        search = pattern.search
        recs, rows, kinds = self.recs, self.rows, self.kinds
        chunk_start, end = 0, len(blob)
        while chunk_start < end and len(out) < cap:
            if deadline is None:
                chunk_end = end
            else:
                if chunk_start and time.perf_counter() > deadline:
                    break
                e = bisect_right(starts, chunk_start + _CHUNK) - 1
                chunk_end = starts[e] if chunk_start < starts[e] else end
            pos = chunk_start
            while len(out) < cap:
                m = search(blob, pos, chunk_end)
                if m is None:
                    break
                e = bisect_right(starts, m.start()) - 1
                if accept(recs[e], rows[e], kinds[e]):
                    out.append(e)
                pos = starts[e + 1] if e + 1 < n else end
            chunk_start = chunk_end
        return out

    def word_starts(self, word: str, cap: int, accept: Accept) -> list[int] | None:
        """Entries with a word starting with `word` (a capitalised query word), shortest
        first, from the inverted word index; None when `word` is too common to be worth it."""
        keys, lists = self.postings()
        lo = bisect_left(keys, word)
        hi = bisect_left(keys, word + "\x7f", lo)
        if hi - lo > _MAX_WORDS:
            return None
        out: list[int] = []
        last = -1
        recs, rows, kinds = self.recs, self.rows, self.kinds
        for e in heapq.merge(*lists[lo:hi]):
            if e == last:
                continue
            last = e
            if accept(recs[e], rows[e], kinds[e]):
                out.append(e)
                if len(out) >= cap:
                    break
        return out

    def wordform(self, e: int) -> str:
        start = self.wstarts[e]
        end = self.wstarts[e + 1] - 1 if e + 1 < len(self.wstarts) else len(self.wordforms)
        return self.wordforms[start:end]

    def postings(self) -> tuple[list[str], list[array[int]]]:
        """The inverted word index: sorted capitalised words and, per word, its entries.

        Built on first use (or by the index right after a build, off the query path).
        """
        built = self._postings
        if built is None:
            index: dict[str, list[int]] = {}
            findall = _FORM_WORD.findall
            for e, form in enumerate(self.wordforms[1:].split("\n") if len(self) else ()):
                for w in findall(form):
                    entries = index.get(w)
                    if entries is None:
                        index[w] = [e]
                    elif entries[-1] != e:
                        entries.append(e)
            keys = sorted(index)
            built = self._postings = (keys, [array("I", index[k]) for k in keys])
        return built


def _permute(items: Sequence[Any], order: list[int]) -> list[Any]:
    if len(order) < 2:
        return [items[i] for i in order]
    return list(itemgetter(*order)(items))


def _line_starts(blob: str, n: int) -> array[int]:
    """Offsets of the `n` lines of `blob` ("\\n" + lines joined by "\\n").

    Names contain no line-breaking characters (extraction collapses whitespace), so
    `splitlines` agrees with the "\\n" joins; it keeps the loop in C.
    """
    if n == 0:
        return array("I")
    starts = array("I", accumulate(map(len, blob.splitlines(True)), initial=0))
    return starts[1 : n + 1]
