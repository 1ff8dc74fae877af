"""Django: what `find_references` reports to the model against `rg -w`, on 10 methods.

Issue 31 re-measured agentls's answer on Django against the lines `rg -w` finds: 0.38 of
the call lines (`select_related` 0 of 262). The tool now adds the matches by name the
language server did not confirm, labelled as unconfirmed. This script measures, through
`agentls serve` (basedpyright, source 2, over stdio) from each method's `def` line:

- recall reported to the model: call lines (`name(`) in Django's .py files that the answer
  names, confirmed or unconfirmed, over all such lines (`rg -w` restricted to calls);
- the same recall on call lines in code only (Python's tokenizer: `name` then `(`; the
  `rg` lines in comments, docstrings and messages such as "select_related() after
  .values()" are no calls, and by-name matching rightly skips them);
- precision of the confirmed part: confirmed lines on which `rg -w name` matches at all
  (a line the server confirmed without the name on it would be wrong).

Corpus: the Django sdist of `bench/fetch_corpus.py` (run that first).

    python bench/django_recall.py [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentls.headless.client import ServerConnection
from code_intel_bench import CACHE, PYRIGHT, Target, agentls_split, django_root

METHODS = [
    ("django/db/models/query.py", "select_related"),
    ("django/db/models/query.py", "get_or_create"),
    ("django/db/models/query.py", "prefetch_related"),
    ("django/db/models/query.py", "bulk_create"),
    ("django/db/models/query.py", "values_list"),
    ("django/db/models/base.py", "refresh_from_db"),
    ("django/db/models/base.py", "full_clean"),
    ("django/forms/forms.py", "add_error"),
    ("django/test/testcases.py", "assertQuerySetEqual"),
    ("django/db/models/sql/query.py", "add_filter"),
]
TARGET = 0.95
MISSES = int(os.environ.get("DJANGO_RECALL_MISSES", "0"))
"""How many missed call lines to print per method (to see why they were missed)."""


def rg_lines(root: Path, name: str, calls_only: bool, kind: str = "py") -> set[tuple[str, int]]:
    """(file, line) pairs `rg -w` finds in the files of rg type `kind` (only `name(` calls if
    asked)."""
    pattern = rf"\b{re.escape(name)}\s*\(" if calls_only else name
    args = ["rg", "-n", "--no-heading", "-t", kind]
    args += ["-e", pattern] if calls_only else ["-w", "-F", "-e", pattern]
    out = subprocess.run([*args, "."], cwd=root, capture_output=True, text=True, check=False)
    found: set[tuple[str, int]] = set()
    for line in out.stdout.splitlines():
        path, number, _ = line.split(":", 2)
        found.add((path.removeprefix("./"), int(number)))
    return found


def code_calls(root: Path, lines: set[tuple[str, int]], name: str) -> set[tuple[str, int]]:
    """Of `lines`, those where `name(` is code (Python's tokenizer: a NAME token followed by
    `(`), not text in a comment, docstring or string."""
    found: set[tuple[str, int]] = set()
    for rel in {rel for rel, _ in lines}:
        with (root / rel).open("rb") as handle:
            try:
                tokens = list(tokenize.tokenize(handle.readline))
            except (tokenize.TokenError, SyntaxError):
                continue
        for token, after in itertools.pairwise(tokens):
            if token.type == tokenize.NAME and token.string == name and after.string == "(":
                found.add((rel, token.start[0]))
    return found & lines


def targets(root: Path) -> list[Target]:
    chosen: list[Target] = []
    for rel, name in METHODS:
        lines = (root / rel).read_text(encoding="utf-8").splitlines()
        pattern = re.compile(rf"^\s*(async\s+)?def\s+{name}\b")
        number = next(i for i, text in enumerate(lines, 1) if pattern.match(text))
        chosen.append(Target(name, Path(rel), number, set(), set()))
    return chosen


async def measure(root: Path) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["XDG_CACHE_HOME"] = str(CACHE / "xdg")
    env["AGENTLS_TRANSCRIPT_DIR"] = str(CACHE / "transcripts")
    slow = {
        "languageServers": {"python": {"command": [str(PYRIGHT), "--stdio"], "requestTimeout": 900}}
    }
    rows: list[dict[str, Any]] = []
    async with ServerConnection(root, env=env, initialization_options=slow) as conn:
        for target in targets(root):
            confirmed, unconfirmed = await agentls_split(conn, target)
            calls = rg_lines(root, target.name, calls_only=True)
            code = code_calls(root, calls, target.name)
            rows.append(score(root, target, (confirmed, unconfirmed), code, "py"))
    return rows


def score(
    root: Path,
    target: Target,
    answer: tuple[set[tuple[str, int]], set[tuple[str, int]]],
    code: set[tuple[str, int]],
    kind: str,
) -> dict[str, Any]:
    """One method's row: the (confirmed, unconfirmed) answer against `rg`'s call lines in
    files of rg type `kind`, and against `code` (those call lines that are code); prints it
    and the first `MISSES` missed code lines."""
    confirmed, unconfirmed = answer
    calls = rg_lines(root, target.name, calls_only=True, kind=kind)
    words = rg_lines(root, target.name, calls_only=False, kind=kind)
    reported = confirmed | unconfirmed
    row = {
        "method": f"{target.rel}:{target.line} {target.name}",
        "rg_call_lines": len(calls),
        "confirmed": len(confirmed),
        "unconfirmed": len(unconfirmed),
        "found_calls": len(calls & reported),
        "code_call_lines": len(code),
        "found_code_calls": len(code & reported),
        "found_calls_confirmed": len(calls & confirmed),
        "confirmed_with_name": len(confirmed & words),
    }
    print(row, flush=True)
    for rel, number in sorted(code - reported)[:MISSES]:
        text = (root / rel).read_text(encoding="utf-8").splitlines()[number - 1]
        print(f"   missed {rel}:{number}: {text.strip()[:100]}", flush=True)
    return row


def summarize(rows: list[dict[str, Any]], out: Path | None) -> None:
    """Print the totals over `rows` (and write them with the rows to `out` as JSON)."""
    calls = sum(r["rg_call_lines"] for r in rows)
    found = sum(r["found_calls"] for r in rows)
    confirmed_found = sum(r["found_calls_confirmed"] for r in rows)
    confirmed = sum(r["confirmed"] for r in rows)
    right = sum(r["confirmed_with_name"] for r in rows)
    recall = found / calls if calls else 0.0
    code = sum(r["code_call_lines"] for r in rows)
    found_code = sum(r["found_code_calls"] for r in rows)
    code_recall = found_code / code if code else 0.0
    precision = right / confirmed if confirmed else 0.0
    print(
        f"recall reported to the model (confirmed + unconfirmed): {found}/{calls} = "
        f"{recall:.3f} (confirmed alone: {confirmed_found / max(calls, 1):.3f}); precision of "
        f"the confirmed part: {right}/{confirmed} = {precision:.3f}; target ≥ {TARGET} each: "
        f"{'met' if recall >= TARGET and precision >= TARGET else 'not met'}"
    )
    print(
        f"recall on call lines in code (comments, docstrings and strings left out): "
        f"{found_code}/{code} = {code_recall:.3f}"
    )
    if out:
        summary = {
            "rows": rows,
            "recall": recall,
            "recall_code_calls": code_recall,
            "precision_confirmed": precision,
        }
        out.write_text(json.dumps(summary, indent=2), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    summarize(asyncio.run(measure(django_root())), args.json)


if __name__ == "__main__":
    main()
