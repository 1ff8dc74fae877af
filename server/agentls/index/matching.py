"""How a query matches a name, and how well.

Four categories, best first: EXACT (case-insensitive equality), PREFIX, WORD (each query word
starts a word of the name, in order: "user serv" and "UserServ" both hit `UserService` and
`user_service`), FUZZY (the query's letters appear in order). Within a category a smaller
`quality` is better; the index breaks remaining ties by case, open files and name length.

The same rules are applied two ways: `classify` checks one name (for small sets), and
`word_pattern`/`ParsedQuery.subsequence` build regexes that the segments run over a
newline-joined blob of all names, so the scan over 100k+ names happens in a C regex engine.

That engine is RE2, never Python's `re`: the query comes from the user or the model, and
`User[^\n]*Serv[^\n]*…` backtracks polynomially in the line length per query word on `re`
(`search_symbols "a a a a a a a a a a zz"` pegged the server for minutes). Word forms are
ASCII (see `wordform`), so the blob is searched as ASCII bytes and byte offsets are
character offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import re2

EXACT, PREFIX, WORD, FUZZY = 0, 1, 2, 3

WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
"""Words of an identifier: `getHTTPResponse_code` → get, HTTP, Response, code."""

_QUALIFIER_RE = re.compile(r"^(.+?)(?:\.|::|#|->)([^.:#>]+)$")
_DROP_FOR_FUZZY = re.compile(r"[^0-9a-z]+")


def lower(name: str) -> str:
    """Lowercase with the same length as `name`, so blob offsets agree in both cases."""
    low = name.lower()
    if len(low) == len(name):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in name)


@lru_cache(maxsize=16_384)
def words(name: str) -> tuple[str, ...]:
    """The lowercase words of an identifier (cached: ranking asks for the same names)."""
    return tuple(w.lower() for w in WORD_RE.findall(name))


@dataclass(frozen=True)
class ParsedQuery:
    """A search query split into what each matching stage needs."""

    raw: str
    lower: str
    words: tuple[str, ...]
    fuzzy: str
    qualifier: str
    """Lowercase container filter from "Outer.name" / "Outer::name" ("" when absent)."""

    @property
    def empty(self) -> bool:
        return not self.lower

    def subsequence(self) -> re2._Regexp[bytes]:
        """The fuzzy pattern, run over word forms (see `fuzzy_pattern`)."""
        return fuzzy_pattern(self.fuzzy)


def parse_query(query: str) -> ParsedQuery:
    text = query.strip()
    qualifier = ""
    m = _QUALIFIER_RE.match(text)
    if m and m.group(2).strip():
        qualifier = ".".join(p for p in re.split(r"\.|::|#|->", m.group(1).lower()) if p)
        text = m.group(2).strip()
    low = lower(text)
    return ParsedQuery(
        raw=text,
        lower=low,
        words=words(text) or ((low,) if low else ()),
        fuzzy=_DROP_FOR_FUZZY.sub("", low),
        qualifier=qualifier,
    )


def classify(q: ParsedQuery, name: str, low: str) -> tuple[int, int] | None:
    """(category, quality) of `name` for `q`, or None when it does not match at all."""
    ql = q.lower
    if low == ql:
        return EXACT, 0
    if low.startswith(ql):
        return PREFIX, 0
    wq = word_quality(q.words, name)
    if wq is not None:
        return WORD, wq
    fq = fuzzy_quality(q.fuzzy, wordform(name))
    return None if fq is None else (FUZZY, fq)


def word_quality(qwords: tuple[str, ...], name: str) -> int | None:
    """Each query word starts a word of `name`, in order; fewer skipped words is better."""
    nwords = words(name)
    j = skipped = 0
    for qw in qwords:
        while j < len(nwords) and not nwords[j].startswith(qw):
            j += 1
            skipped += 1
        if j == len(nwords):
            return None
        j += 1
    return 2 * skipped + (len(nwords) - len(qwords))


def fuzzy_quality(fuzzy: str, form: str) -> int | None:
    """Penalty of the leftmost letters-in-order match in a word form, or None.

    Per query letter: 0 when it follows the previous one, 1 at a word start (a capital or
    digit in the word form), 3 elsewhere; +1 unless the match starts the name; long names
    cost a little more.

    The match is the one `fuzzy_pattern` finds, computed with `str.find` instead of a regex
    (every new query would compile one): each letter is the first occurrence after the
    previous one, and only the first capital can start a match, since a later start only
    finds each following letter later, or not at all.
    """
    if not fuzzy:
        return None
    start = form.find(fuzzy[0].upper())
    if start < 0:
        return None
    penalty = 0 if start == 0 else 1
    prev = start
    for c in fuzzy[1:]:
        i = _next_letter(form, c, prev + 1)
        if i < 0:
            return None
        if i != prev + 1:
            penalty += 1 if not form[i].islower() else 3
        prev = i
    return penalty + (len(form) - len(fuzzy)) // 8


def _next_letter(form: str, c: str, pos: int) -> int:
    """First index ≥ `pos` of `c` in either case (`c` is a lowercase letter or a digit)."""
    low = form.find(c, pos)
    if c.isalpha():
        up = form.find(c.upper(), pos, low if low >= 0 else len(form))
        if up >= 0:
            return up
    return low


def words_in_order(form: str, capitalised: tuple[str, ...]) -> bool:
    """Whether the capitalised query words start words of `form`, in order: what
    `word_pattern` matches, without compiling it (for a few candidates)."""
    pos = 0
    for w in capitalised:
        i = form.find(w, pos)
        if i < 0:
            return False
        pos = i + len(w)
    return True


@lru_cache(maxsize=16_384)
def wordform(name: str) -> str:
    """The name's words capitalised and joined: `get_HTTP_code` → `GetHttpCode`.

    Capitals then mark exactly the word starts, which lets one case-sensitive regex over a
    blob of word forms find word-start matches (see `word_pattern`, `fuzzy_pattern`).
    Cached: the same names come back with every re-parse of an edited file.
    """
    return "".join(w.capitalize() for w in WORD_RE.findall(name))


def _linear(pattern: str) -> re2._Regexp[bytes]:
    """RE2 over the ASCII word-form blob; a non-ASCII pattern can never match it."""
    options = re2.Options()
    options.log_errors = False
    if not pattern.isascii():
        pattern = "[^\\x00-\\x7f]"  # matches no byte of an ASCII blob
    return re2.compile(pattern.encode("ascii"), options)


def ascii_blob(text: str) -> bytes:
    """A word-form blob as bytes of the same length (a stray non-ASCII character, from an
    older cache, becomes `?`), for the patterns below."""
    return text.encode("ascii", "replace")


@lru_cache(maxsize=256)
def fuzzy_pattern(fuzzy: str) -> re2._Regexp[bytes]:
    """The query's letters in order within one word form, the first at a word start.

    `hrc` → `H[^\\nrR]*[rR][^\\ncC]*[cC]`: each step skips to the next occurrence of the
    next letter without backtracking, and anchoring the first letter to a capital (a word
    start) keeps the scan to a few attempts per line.
    """
    if not fuzzy:
        return _linear("[^\\x00-\\x7f]")
    parts = [re.escape(fuzzy[0].upper())]
    for c in fuzzy[1:]:
        both = re.escape(c) + (re.escape(c.upper()) if c.isalpha() else "")
        parts.append(f"[^\\n{both}]*[{both}]")
    return _linear("".join(parts))


@lru_cache(maxsize=256)
def word_pattern(qwords: tuple[str, ...]) -> re2._Regexp[bytes]:
    """Query words as word starts in a blob of word forms: ("user", "serv") → `User.*Serv`.

    In a word form (`records.wordform`) every word starts with the only capital letter, so a
    word-start match is a plain case-sensitive search that begins with a literal. Only
    whether (and on which line) it matches counts, so the gaps are greedy.
    """
    return _linear("[^\\n]*".join(re.escape(w.capitalize()) for w in qwords if w))
