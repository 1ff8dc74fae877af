"""Symbol queries on RE2 (issue 27) against Python's `re`, in the same run.

`search_symbols` runs the query's word-order and fuzzy patterns over a blob of word forms.
They moved from `re` to RE2 so a hostile query cannot backtrack; this measures what that
costs on ordinary queries (a ratio to `re` on the same blob) and what it saves on the
hostile one (on names short enough that `re` finishes: with 32 words it takes minutes).

    python bench/symbol_query_engines.py [--names N]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import time

from agentls.index.matching import ascii_blob, fuzzy_pattern, word_pattern, wordform

WORDS = [
    "get",
    "set",
    "user",
    "service",
    "http",
    "response",
    "code",
    "item",
    "cart",
    "total",
    "load",
    "save",
    "parse",
    "read",
]


def blob(names: int, rng: random.Random) -> str:
    forms = (
        wordform("_".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))))
        for _ in range(names)
    )
    return "\n" + "\n".join(forms)


def count(search: object, text: object) -> tuple[int, float]:
    began, hits, pos = time.perf_counter(), 0, 0
    while (m := search(text, pos)) is not None:  # type: ignore[operator]
        hits += 1
        pos = m.end() + 1
    return hits, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=200_000)
    args = parser.parse_args()
    text = blob(args.names, random.Random(7))
    data = ascii_blob(text)
    print(f"{args.names} names, {len(text) / 1e6:.1f} MB of word forms, load {os.getloadavg()}")
    for query in [("user", "serv"), ("get", "http", "code"), ("cart",), ("zz",)]:
        python = re.compile("[^\\n]*".join(re.escape(w.capitalize()) for w in query))
        count(python.search, text), count(word_pattern(query).search, data)  # warm up
        n1, t_re = count(python.search, text)
        n2, t_re2 = count(word_pattern(query).search, data)
        assert n1 == n2, (query, n1, n2)
        print(
            f"word {' '.join(query)!r}: {n1} hits, re {t_re * 1e3:.1f} ms, "
            f"RE2 {t_re2 * 1e3:.1f} ms, RE2/re {t_re2 / t_re:.2f}"
        )
    for fuzzy in ["usrsrv", "ghc", "qqq"]:
        _, t_re2 = count(fuzzy_pattern(fuzzy).search, data)
        print(f"fuzzy {fuzzy!r}: RE2 {t_re2 * 1e3:.1f} ms")
    hostile = "\n" + "\n".join(["Zz" + "A" * 22] * 20)  # 32 As: re takes minutes
    words = ("a",) * 10 + ("zz",)
    python = re.compile("[^\\n]*".join(re.escape(w.capitalize()) for w in words))
    _, t_re = count(python.search, hostile)
    _, t_re2 = count(word_pattern(words).search, ascii_blob(hostile))
    print(
        f"hostile 'a a a a a a a a a a zz' on 20 names of 22 words: re {t_re:.2f} s, "
        f"RE2 {t_re2 * 1e3:.2f} ms ({t_re / t_re2:.0f}x)"
    )


if __name__ == "__main__":
    main()
