"""Ranking a query over records and segments: filters, stages, and the final order.

Order: category (exact > prefix > word > fuzzy), then match quality, then a case-exact
match, then files open in the editor, then shorter names, then kind (types before members),
then name and path for a stable result. Stages run in category order and stop as soon as
one fills the limit, so a common prefix query never pays for the fuzzy scan.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path

from agentls.index.extract import R_CONTAINER
from agentls.index.languages import language_for
from agentls.index.matching import (
    EXACT,
    FUZZY,
    PREFIX,
    WORD,
    ParsedQuery,
    classify,
    lower,
    word_pattern,
)
from agentls.index.model import Symbol, SymbolKind
from agentls.index.records import FileRecord, Packed
from agentls.index.segment import Accept, Segment
from agentls.index.worker import parse_file

KindFilter = str | SymbolKind | Iterable[str | SymbolKind] | None
_Key = tuple[int, int, int, int, int, int, str, str, int]
_IMPL = SymbolKind.IMPL.code
FILL_BUDGET = 256
"""Word-stage candidates examined at most to fill places after prefix matches."""
_MARGIN = 10
"""Candidates a stage collects beyond the places it can fill: within a category, a longer
name with a better match quality may still outrank the shortest ones."""
FUZZY_BUDGET_S = 0.004
"""Time the fuzzy scan may take over all segments; it scans shortest names first."""
FUZZY_FALLBACK = 5
"""Fuzzy matches are a fallback: looked for only while fewer than this many names matched
by words and none exactly or by prefix. A query that starts some name is being typed as a
name; letters-in-order matches would rank below its hits anyway and mostly add noise (the
editor's own fuzzy filter still applies to what we return)."""
_KIND_RANK = {
    k.code: rank
    for rank, group in enumerate(
        (
            (SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE, SymbolKind.TRAIT),
            (SymbolKind.ENUM, SymbolKind.TYPE, SymbolKind.MODULE, SymbolKind.NAMESPACE),
            (SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR, SymbolKind.MACRO),
        )
    )
    for k in group
}
"""Kinds not listed rank last (3): fields, variables, constants, members."""


def kind_codes(kind: KindFilter) -> frozenset[int] | None:
    if kind is None:
        return None
    kinds = [kind] if isinstance(kind, str) else list(kind)
    return frozenset(SymbolKind(k).code for k in kinds)


def overlay_records(overlay: Mapping[Path, str | bytes | None]) -> list[FileRecord]:
    out = []
    for path, text in overlay.items():
        if text is None or language_for(path) is None:
            continue
        data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
        out.append(FileRecord(path, -1, len(data), _parse_cached(str(path), data)))
    return out


@lru_cache(maxsize=64)
def _parse_cached(path: str, data: bytes) -> Packed:
    """Staged files are searched again on every query of a session: parse each text once."""
    return parse_file(path, data)


def acceptor(
    kinds: frozenset[int] | None,
    prefix: str | None,
    qualifier: str,
    hidden: frozenset[str],
    excluded: Callable[[str], bool] | None = None,
) -> Accept:
    """The filter of one query. `hidden`: paths the query's overlay replaces; `excluded`:
    paths that must never be shown (secret files, see `SymbolIndex.excluded`)."""

    def accept(rec: FileRecord, row: int, kind: int) -> bool:
        if not rec.alive or kind == _IMPL:
            return False
        if hidden and rec.path_str in hidden:
            return False
        if excluded is not None and excluded(rec.path_str):
            return False
        if kinds is not None and kind not in kinds:
            return False
        if prefix is not None and not rec.path_str.startswith(prefix):
            return False
        if qualifier:
            container = str(rec.row(row)[R_CONTAINER]).lower()
            return container == qualifier or container.endswith("." + qualifier)
        return True

    return accept


def listing(records: list[tuple[FileRecord, Accept]], limit: int) -> list[Symbol]:
    """Definitions in path and document order (queries that only filter)."""
    out: list[Symbol] = []
    for rec, accept in sorted(records, key=lambda item: item[0].path_str):
        for row in range(len(rec)):
            if accept(rec, row, rec.kinds[row]):
                out.append(rec.symbol(row))
                if len(out) >= limit:
                    return out
    return out


class Ranker:
    """Collects candidates stage by stage and stops once a stage fills the limit."""

    def __init__(self, q: ParsedQuery, opened: set[str]) -> None:
        self.q = q
        self.opened = opened
        self.found: dict[tuple[int, int], tuple[_Key, FileRecord]] = {}

    def add(self, rec: FileRecord, row: int, category: int, quality: int) -> None:
        ident = (id(rec), row)
        if ident in self.found:
            return
        name = rec.names[row]
        key: _Key = (
            category,
            quality,
            0 if self.q.raw in name else 1,
            0 if rec.path_str in self.opened else 1,
            len(name),
            _KIND_RANK.get(rec.kinds[row], 3),
            name,
            rec.path_str,
            row,
        )
        self.found[ident] = (key, rec)

    def count_upto(self, category: int) -> int:
        return sum(1 for key, _ in self.found.values() if key[0] <= category)

    def scan_records(self, records: Iterable[FileRecord], accept: Accept) -> None:
        q = self.q
        for rec in records:
            if not rec.alive:
                continue
            kinds = rec.kinds
            for row, name in enumerate(rec.names):
                if not accept(rec, row, kinds[row]):
                    continue
                hit = classify(q, name, lower(name))
                if hit is not None:
                    self.add(rec, row, *hit)

    def search_segments(self, segments: list[Segment], accept: Accept, limit: int) -> None:
        q = self.q
        found = self.found

        def fresh(rec: FileRecord, row: int, kind: int) -> bool:
            return (id(rec), row) not in found and accept(rec, row, kind)

        cap = limit + _MARGIN
        for seg in segments:
            for e in seg.prefix(q.lower, cap, fresh):
                rec, row = seg.recs[e], seg.rows[e]
                self.add(rec, row, EXACT if len(rec.names[row]) == len(q.lower) else PREFIX, 0)
        strong = self.count_upto(PREFIX)
        if strong >= limit:
            return
        self._word_stage(segments, fresh, limit - strong + _MARGIN, strong > 0)
        if not self._wants_fuzzy(limit):
            return
        deadline = time.perf_counter() + FUZZY_BUDGET_S
        pattern = q.subsequence()
        for seg in segments:
            self._classify_all(seg, seg.scan(pattern, cap, fresh, deadline))

    def _wants_fuzzy(self, limit: int) -> bool:
        """Whether the fuzzy fallback runs (see FUZZY_FALLBACK)."""
        return not self.count_upto(PREFIX) and self.count_upto(WORD) < min(limit, FUZZY_FALLBACK)

    def _word_stage(self, segments: list[Segment], fresh: Accept, cap: int, filling: bool) -> None:
        """Word-start matches from the inverted word index (a scan for very common words).

        Candidates are the entries that have a word starting with the rarest query word;
        with several words, their order is then checked on the word forms. When `filling`
        (some names already start with the query) the stage only fills the remaining places,
        so it examines a bounded number of candidates (the shortest names); otherwise all.
        """
        qwords = tuple(w for w in self.q.words if w)
        if not qwords:
            return
        for seg in segments:
            hits = seg.word_hits(qwords, cap, fresh, FILL_BUDGET if filling else None)
            if hits is None:
                hits = seg.scan(word_pattern(qwords), cap, fresh)
            self._classify_all(seg, hits)

    def _classify_all(self, seg: Segment, entries: list[int]) -> None:
        q = self.q
        for e in entries:
            rec, row = seg.recs[e], seg.rows[e]
            name = rec.names[row]
            hit = classify(q, name, lower(name))
            if hit is not None:
                self.add(rec, row, *hit)

    def best(self, limit: int) -> list[Symbol]:
        items = list(self.found.values())
        if not self._wants_fuzzy(limit):
            items = [item for item in items if item[0][0] != FUZZY]
        ranked = sorted(items, key=lambda item: item[0])[:limit]
        return [rec.symbol(key[-1]) for key, rec in ranked]
