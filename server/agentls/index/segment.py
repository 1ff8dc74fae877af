"""An immutable search structure over the names of a set of file records.

Entries are sorted by (length, lowercase name), which serves every stage at once:
- exact/prefix: a rare prefix is found with two bisects over the entries in plain
  lowercase order (`_by_name`); a common one with one bisect per name length into the
  lowercase names (`lows`, sorted within each length), so results come out shortest first
  and the scan stops after a few hundred hits;
- word: an inverted index from each capitalised word to its entries (`postings`); a query
  takes the entries of its rarest word, shortest first, and checks the order of its other
  words on their word forms (`GetHttpCode`: capitals mark word starts);
- fuzzy: the word forms joined by newlines in entry order form one string that a regex
  scans in C; the first hits are again the shortest names, so a bounded scan keeps the
  best ones.

Segments are never modified (lookups they memoize aside). The index adds new ones for
changed files and merges them (LSM-style); a replaced file's entries stay in place but are
skipped because its record is no longer `alive`. A prepared segment is saved with the
cache (`snapshot`) and loaded on the next start (`from_snapshot`).
"""

from __future__ import annotations

import marshal
import re
import threading
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate, chain
from operator import itemgetter
from pathlib import Path
from typing import Any

import re2

from agentls.index.matching import ascii_blob, lower, word_pattern, words_in_order
from agentls.index.records import FileRecord, pack

_CHUNK = 65_536
"""Characters of word forms scanned between two looks at the clock (deadline scans)."""
_MAX_WORDS = 256
"""A query word that starts more distinct words than this is looked up by scanning."""
_FORM_WORD = re.compile(r"[A-Z][a-z]*|[0-9]+")
_FIRST_CHUNK = 256
_MAX_CHUNK = 4_096
"""Word-index candidates whose word forms are joined and matched in one regex pass."""
_MEMO_WORD = 3
"""Query words up to this long are merged even when they start very many words."""
SNAPSHOT_VERSION = 1
"""Bump when the segment layout changes (older snapshots are then rebuilt)."""
_EMPTY = pack([])
_PREMERGED_LENGTHS = (1, 2)
"""Query words this short are merged when the segment is prepared: they start hundreds of
words each, too many to merge while a query waits."""
_MEMO_MERGES = 512
"""Merged postings a segment keeps (see `Segment.word_entries`)."""
_RARE_PREFIX = 512
"""A prefix that starts at most this many names is looked up in name order and sorted."""
_LAST_CHAR = chr(0x10FFFF)

Accept = Callable[[FileRecord, int, int], bool]
"""(record, row index, kind code) → whether a candidate passes the query's filters."""


class Segment:
    __slots__ = (
        "_by_name",
        "_form_bytes",
        "_forms",
        "_length_starts",
        "_memo_lock",
        "_merged",
        "_postings",
        "_premerged",
        "_sizes",
        "kinds",
        "lengths",
        "lows",
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
        # Name order first, then a stable sort by length: (length, name) order, and the
        # name order comes for free for the rare-prefix lookup (`by_name`).
        name_order = sorted(range(len(lows)), key=lows.__getitem__)
        lengths = list(map(len, lows))
        order = sorted(name_order, key=lengths.__getitem__)
        self.lows: list[str] = _permute(lows, order)
        self.recs: list[FileRecord] = _permute(recs, order)
        self.rows = array("I", _permute(rows, order))
        self.kinds = bytes(_permute(kinds, order))
        sorted_forms: list[str] = _permute(wordforms, order)
        self.wordforms = "\n" + "\n".join(sorted_forms)
        self.wstarts = _line_starts(self.wordforms, len(sorted_forms))
        sorted_lengths: list[int] = _permute(lengths, order)
        self.lengths = sorted(set(lengths))
        self._length_starts = [bisect_left(sorted_lengths, n) for n in self.lengths]
        self._length_starts.append(len(sorted_lengths))
        entry_of = sorted(range(len(order)), key=order.__getitem__)  # inverse permutation
        self._by_name = array("I", _permute(entry_of, name_order))
        self._init_lookups()

    def _init_lookups(self) -> None:
        self._postings: tuple[list[str], list[array[int]]] | None = None
        self._forms: list[str] | None = None
        self._form_bytes: bytes | None = None
        self._merged: dict[str, array[int]] = {}
        self._premerged: dict[str, array[int]] = {}
        self._memo_lock = threading.Lock()
        self._sizes = array("I", [0])

    def __len__(self) -> int:
        return len(self.lows)

    # -- persistence ------------------------------------------------------------------------

    def snapshot(self) -> bytes:
        """The prepared segment as one blob, to skip sorting and inverting every name on
        the next start (see `from_snapshot`). Records are named by path and stat."""
        self.prepare()
        index_of = {id(r): i for i, r in enumerate(self.records)}
        keys, lists = self.postings()
        merged = list(self._premerged)
        return marshal.dumps(
            (
                SNAPSHOT_VERSION,
                [(r.path_str, r.mtime_ns, r.size, len(r)) for r in self.records],
                "\n".join(self.lows),
                array("I", map(index_of.__getitem__, map(id, self.recs))).tobytes(),
                self.rows.tobytes(),
                self.kinds,
                self.wordforms,
                self.wstarts.tobytes(),
                self.lengths,
                self._length_starts,
                self._by_name.tobytes(),
                "\n".join(keys),
                *_pack_lists(lists),
                "\n".join(merged),
                *_pack_lists([self._premerged[k] for k in merged]),
            )
        )

    @classmethod
    def from_snapshot(
        cls, data: bytes, current: Mapping[str, FileRecord]
    ) -> tuple[Segment, set[int]] | None:
        """The segment saved by `snapshot`, over the `current` records (by path). A record
        whose stat differs from the saved one (changed since) is replaced by a dead stand-in,
        so its entries are skipped. Also returns the ids of the records it covers; None when
        `data` is not a usable snapshot."""
        try:
            fields = marshal.loads(data)
            if fields[0] != SNAPSHOT_VERSION:
                return None
            seg = cls.__new__(cls)
            covered = seg._load(fields, current)
        except (EOFError, ValueError, TypeError, IndexError, KeyError):
            return None
        return seg, covered

    def _load(self, fields: tuple[Any, ...], current: Mapping[str, FileRecord]) -> set[int]:
        (_, saved, lows, rec_index, rows, kinds, wordforms, wstarts, lengths, starts, by_name,
         keys, sizes, entries, merged, merged_sizes, merged_entries) = fields  # fmt: skip
        records: list[FileRecord] = []
        covered: set[int] = set()
        for path, mtime_ns, size, count in saved:
            rec = current.get(path)
            if rec is None or (rec.mtime_ns, rec.size, len(rec)) != (mtime_ns, size, count):
                rec = _stand_in(path)
            else:
                covered.add(id(rec))
            records.append(rec)
        self.records = records
        self.lows = lows.split("\n") if lows else []
        indices = array("I")
        indices.frombytes(rec_index)
        self.recs = _permute(records, list(indices))
        self.rows = _array(rows)
        self.kinds = kinds
        self.wordforms = wordforms
        self.wstarts = _array(wstarts)
        self.lengths = lengths
        self._length_starts = starts
        self._by_name = _array(by_name)
        n = len(self.lows)
        parts = (self.recs, self.rows, kinds, self.wstarts, self._by_name)
        if any(len(part) != n for part in parts) or (starts and starts[-1] != n):
            raise ValueError("inconsistent segment snapshot")
        self._init_lookups()
        key_list = keys.split("\n") if keys else []
        lists = _unpack_lists(sizes, entries)
        self._sizes = array("I", accumulate(map(len, lists), initial=0))
        self._postings = (key_list, lists)
        names = merged.split("\n") if merged else []
        self._premerged = dict(zip(names, _unpack_lists(merged_sizes, merged_entries), strict=True))
        self.forms()  # what `prepare` built before saving: not on the first query's path
        return covered

    def prefix(self, low: str, cap: int, accept: Accept) -> list[int]:
        """Entries whose lowercase name starts with `low` (equal ones first), shortest first."""
        by_name = self._by_name
        key = self.lows.__getitem__
        lo = bisect_left(by_name, low, key=key)
        hi = bisect_left(by_name, low + _LAST_CHAR, lo, key=key)
        if hi - lo > _RARE_PREFIX:
            return self._prefix_by_length(low, cap, accept)
        out: list[int] = []
        recs, rows, kinds = self.recs, self.rows, self.kinds
        for i in sorted(by_name[lo:hi]):  # entry order: shortest first
            if accept(recs[i], rows[i], kinds[i]):
                out.append(i)
                if len(out) >= cap:
                    break
        return out

    def _prefix_by_length(self, low: str, cap: int, accept: Accept) -> list[int]:
        """`prefix` for a common prefix: per name length, shortest first, until `cap`."""
        out: list[int] = []
        lows, starts = self.lows, self._length_starts
        recs, rows, kinds = self.recs, self.rows, self.kinds
        first = bisect_left(self.lengths, len(low))
        for g in range(first, len(self.lengths)):
            i, end = bisect_left(lows, low, starts[g], starts[g + 1]), starts[g + 1]
            while i < end and lows[i].startswith(low):
                if accept(recs[i], rows[i], kinds[i]):
                    out.append(i)
                    if len(out) >= cap:
                        return out
                i += 1
        return out

    def scan(
        self,
        pattern: re2._Regexp[bytes],
        cap: int,
        accept: Accept,
        deadline: float | None = None,
    ) -> list[int]:
        """Entries whose word form matches `pattern`, shortest names first, at most `cap`.

        With a `deadline` (a `time.perf_counter()` value) the scan goes chunk by chunk and
        stops when time is up: the shortest names, scanned first, are the likeliest hits.
        """
        blob, starts = self.form_bytes(), self.wstarts
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

    def word_range(self, word: str) -> tuple[int, int, int]:
        """(first, end) of the words starting with `word` (a capitalised query word) in
        the word index, and how many postings they hold together (an upper bound on the
        entries, found without merging anything)."""
        keys, _ = self.postings()
        lo = bisect_left(keys, word)
        hi = bisect_left(keys, word + "\x7f", lo)
        return lo, hi, self._sizes[hi] - self._sizes[lo]

    def word_entries(self, word: str, first: int | None = None) -> Sequence[int]:
        """Entries (ascending: shortest names first) with a word starting with `word`; only
        the `first` ones when given.

        Full merges are kept (the oldest dropped past `_MEMO_MERGES`): typing a name issues
        the same query words over and over. The first few entries are merged from the
        first few of each list, which costs far less than a full merge of a common word.
        """
        lo, hi, _ = self.word_range(word)
        lists = self.postings()[1]
        if hi - lo == 1:
            return lists[lo][:first] if first is not None else lists[lo]
        memo = self._premerged.get(word) or self._merged.get(word)
        if memo is not None:
            return memo[:first] if first is not None else memo
        # The lists are sorted runs, which `sorted` merges cheaply; an entry with two such
        # words appears twice, and `dict.fromkeys` drops the repeat keeping the order.
        if first is not None:
            heads = chain.from_iterable(ls[:first] for ls in lists[lo:hi])
            return array("I", dict.fromkeys(sorted(heads)))[:first]
        merged = array("I", dict.fromkeys(sorted(chain.from_iterable(lists[lo:hi]))))
        with self._memo_lock:
            self._merged[word] = merged
            while len(self._merged) > _MEMO_MERGES:
                del self._merged[next(iter(self._merged))]
        return merged

    def word_hits(
        self, qwords: tuple[str, ...], cap: int, accept: Accept, budget: int | None = None
    ) -> list[int] | None:
        """Entries with words starting with the query words, in order, shortest first, at
        most `cap`.

        The rarest word gives the candidates; None when even it starts too many words to
        be worth merging (scan instead). With several words their order is checked on the
        word forms: a regex over the candidates' forms joined chunk by chunk (growing
        chunks: the first usually suffices), or `str.find`s for a first small chunk, which
        saves compiling a pattern for a query that is typed once. `budget` bounds how many
        candidates are examined (None: all).
        """
        words = tuple(w.capitalize() for w in qwords)
        ranges = [self.word_range(w) for w in words]
        best = min(range(len(words)), key=lambda i: ranges[i][2])
        lo, hi, _ = ranges[best]
        if hi - lo > _MAX_WORDS and len(words[best]) > _MEMO_WORD:
            return None
        candidates = self.word_entries(words[best], budget)
        out: list[int] = []
        recs, rows, kinds = self.recs, self.rows, self.kinds
        start, size = 0, _FIRST_CHUNK
        while start < len(candidates):
            chunk = candidates[start : start + size]
            start += size
            size = min(size * 2, _MAX_CHUNK)
            for i in self._matching(chunk, qwords if len(words) > 1 else None):
                e = chunk[i]
                if accept(recs[e], rows[e], kinds[e]):
                    out.append(e)
                    if len(out) >= cap:
                        return out
        return out

    def _matching(self, chunk: Sequence[int], qwords: tuple[str, ...] | None) -> Iterable[int]:
        """Positions in `chunk` whose word form has the query words in order (all when
        `qwords` is None)."""
        if qwords is None:
            return range(len(chunk))
        forms = self.forms()
        if len(chunk) <= _FIRST_CHUNK:
            words = tuple(w.capitalize() for w in qwords)
            return [i for i, e in enumerate(chunk) if words_in_order(forms[e], words)]
        pattern = word_pattern(qwords)
        texts = [forms[chunk[0]]] if len(chunk) == 1 else itemgetter(*chunk)(forms)
        blob = ascii_blob("\n".join(texts))
        hits: list[int] = []
        line = counted = 0
        while (m := pattern.search(blob, counted)) is not None:
            line += blob.count(b"\n", counted, m.start())
            hits.append(line)
            counted = blob.find(b"\n", m.end()) + 1
            if not counted:
                break
            line += 1
        return hits

    def prepare(self) -> None:
        """Build the lazily built lookup structures now (the index calls this right after
        a build, off the query path), with the merged entries of the shortest query words
        (see `_PREMERGED_LENGTHS`)."""
        keys, lists = self.postings()
        self.forms()
        for prefix in sorted({k[:n] for k in keys for n in _PREMERGED_LENGTHS}):
            lo, hi, _ = self.word_range(prefix)
            if hi - lo > 1:
                merged = dict.fromkeys(sorted(chain.from_iterable(lists[lo:hi])))
                self._premerged[prefix] = array("I", merged)

    def form_bytes(self) -> bytes:
        """The word-form blob as ASCII bytes, for RE2 (built on first use)."""
        built = self._form_bytes
        if built is None:
            built = self._form_bytes = ascii_blob(self.wordforms)
        return built

    def forms(self) -> list[str]:
        """Each entry's word form as its own string (built on first use)."""
        built = self._forms
        if built is None:
            built = self._forms = self.wordforms[1:].split("\n") if len(self) else []
        return built

    def postings(self) -> tuple[list[str], list[array[int]]]:
        """The inverted word index: sorted capitalised words and, per word, its entries.

        Built on first use or by `prepare`.
        """
        built = self._postings
        if built is None:
            index: dict[str, list[int]] = {}
            findall = _FORM_WORD.findall
            for e, form in enumerate(self.forms()):
                for w in findall(form):
                    entries = index.get(w)
                    if entries is None:
                        index[w] = [e]
                    elif entries[-1] != e:
                        entries.append(e)
            keys = sorted(index)
            lists = [array("I", index[k]) for k in keys]
            self._sizes = array("I", accumulate(map(len, lists), initial=0))
            built = self._postings = (keys, lists)
        return built


def _stand_in(path: str) -> FileRecord:
    """A dead record for a file whose saved entries are stale: `accept` skips them."""
    rec = FileRecord(Path(path), -1, -1, _EMPTY)
    rec.alive = False
    return rec


def _array(data: bytes) -> array[int]:
    out = array("I")
    out.frombytes(data)
    return out


def _pack_lists(lists: Sequence[array[int]]) -> tuple[bytes, bytes]:
    """Many integer arrays as (their sizes, their concatenation), both as bytes."""
    sizes = array("I", map(len, lists))
    joined = array("I")
    for part in lists:
        joined.extend(part)
    return sizes.tobytes(), joined.tobytes()


def _unpack_lists(sizes: bytes, joined: bytes) -> list[array[int]]:
    ends = list(accumulate(_array(sizes)))
    flat = _array(joined)
    if (ends[-1] if ends else 0) != len(flat):
        raise ValueError("inconsistent segment snapshot")
    return [flat[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]


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
