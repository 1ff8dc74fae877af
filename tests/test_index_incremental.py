"""Incremental re-extraction after an edit gives exactly the rows a full extraction gives.

An edit re-extracts only the top-level statements it touches and keeps (shifted) the rows
before and after them (`index/incremental.py`). Here every language's sample file takes a
few hundred random edits, each building on the last as typing does: characters typed or
deleted mid-word, lines split and joined, definitions pasted, blocks cut, unbalanced
brackets and quotes (broken syntax that tree-sitter recovers from), non-ASCII text. After
every edit the rows must equal a fresh parse-and-extract of the same text, row for row
(names, kinds, containers, parents, ranges, line text).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentls.index.extract import extract_rows
from agentls.index.languages import language_for
from agentls.index.reparse import RecentTrees

FIXTURES = Path(__file__).parent / "fixtures" / "index"
SAMPLES = sorted(p for p in FIXTURES.iterdir() if language_for(p) is not None)

SNIPPETS = [
    "x",
    "_",
    " ",
    "\n",
    "\n\n",
    "(",
    ")",
    "{",
    "}",
    '"',
    "'",
    ";",
    ":",
    "\n    ",
    "é",
    "名前",
    "def typed(a):\n    return a\n",
    "class Typed:\n    field = 1\n\n    def m(self): pass\n",
    "function typed() { return 1; }\n",
    "const TYPED = 1;\n",
    "fn typed() {}\n",
    "func Typed() {}\n",
    "int typed(void) { return 0; }\n",
    "public void typed() {}\n",
    "struct Typed { int a; };\n",
    "TYPED_CONST = 2\n",
]


def random_edit(text: str, rng: random.Random) -> str:
    """One edit at a random place: insert a snippet, delete a few characters or a line,
    or move a block of lines."""
    pos = rng.randrange(len(text) + 1)
    action = rng.random()
    if action < 0.45:
        return text[:pos] + rng.choice(SNIPPETS) + text[pos:]
    if action < 0.75:
        return text[:pos] + text[pos + rng.randint(1, 12) :]
    lines = text.splitlines(keepends=True)
    if len(lines) < 4:
        return text + rng.choice(SNIPPETS)
    i = rng.randrange(len(lines) - 2)
    j = min(len(lines), i + rng.randint(1, 6))
    block, rest = lines[i:j], lines[:i] + lines[j:]
    k = rng.randrange(len(rest) + 1)
    if action < 0.85:
        block = []  # a cut
    return "".join(rest[:k] + block + rest[k:])


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_rows_after_random_edits_equal_a_full_extraction(sample: Path) -> None:
    spec = language_for(sample)
    assert spec is not None
    rng = random.Random(sample.name)
    trees = RecentTrees()
    key = str(sample)
    text = sample.read_text(encoding="utf-8")
    for step in range(200):
        data = text.encode("utf-8")
        assert trees.rows(key, spec, data) == extract_rows(spec, data), (step, text)
        # back to sound syntax now and then
        text = sample.read_text(encoding="utf-8") if step % 50 == 49 else random_edit(text, rng)


def test_appends_and_renames_in_a_big_file_keep_every_row() -> None:
    """The edits of bench/edit_stall.py: appends at the end, renames in the middle and
    inserts near the top of a large module, each checked against a full extraction."""
    import argparse

    source = Path(argparse.__file__)
    spec = language_for(source)
    assert spec is not None
    trees = RecentTrees()
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    rng = random.Random(33)
    for n in range(60):
        defs = [i for i, line in enumerate(lines) if line.startswith(("def ", "    def "))]
        i = rng.choice(defs)
        if n % 3 == 0:
            lines.append(f"def appended_{n}(): pass\n")
        elif n % 3 == 1:
            lines[i] = lines[i].replace("def ", f"def renamed_{n}_", 1)
        else:
            lines.insert(i, f"def inserted_{n}(): pass\n")
        data = "".join(lines).encode("utf-8")
        assert trees.rows("argparse.py", spec, data) == extract_rows(spec, data), n
