"""Django: what `find_references` reports to the model against `rg -w`, on 10 methods.

Issue 31 re-measured agentls's answer on Django against the lines `rg -w` finds: 0.38 of
the call lines (`select_related` 0 of 262). The tool now adds the matches by name the
language server did not confirm, labelled as unconfirmed. This script measures, through
`agentls serve` (basedpyright, source 2, over stdio) from each method's `def` line:

- recall reported to the model: call lines (`name(`) in Django's .py files that the answer
  names, confirmed or unconfirmed, over all such lines (`rg -w` restricted to calls);
- precision of the confirmed part: confirmed lines on which `rg -w name` matches at all
  (a line the server confirmed without the name on it would be wrong).

Corpus: the Django sdist of `bench/fetch_corpus.py` (run that first).

    python bench/django_recall.py [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
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


def rg_lines(root: Path, name: str, calls_only: bool) -> set[tuple[str, int]]:
    """(file, line) pairs `rg -w` finds in the .py files (only `name(` calls if asked)."""
    pattern = rf"\b{re.escape(name)}\s*\(" if calls_only else name
    args = ["rg", "-n", "--no-heading", "-t", "py"]
    args += ["-e", pattern] if calls_only else ["-w", "-F", "-e", pattern]
    out = subprocess.run([*args, "."], cwd=root, capture_output=True, text=True, check=False)
    found: set[tuple[str, int]] = set()
    for line in out.stdout.splitlines():
        path, number, _ = line.split(":", 2)
        found.add((path.removeprefix("./"), int(number)))
    return found


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
            words = rg_lines(root, target.name, calls_only=False)
            reported = confirmed | unconfirmed
            rows.append(
                {
                    "method": f"{target.rel}:{target.line} {target.name}",
                    "rg_call_lines": len(calls),
                    "confirmed": len(confirmed),
                    "unconfirmed": len(unconfirmed),
                    "found_calls": len(calls & reported),
                    "found_calls_confirmed": len(calls & confirmed),
                    "confirmed_with_name": len(confirmed & words),
                }
            )
            print(rows[-1], flush=True)
            for rel, number in sorted(calls - reported)[:MISSES]:
                text = (root / rel).read_text(encoding="utf-8").splitlines()[number - 1]
                print(f"   missed {rel}:{number}: {text.strip()[:100]}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = asyncio.run(measure(django_root()))
    calls = sum(r["rg_call_lines"] for r in rows)
    found = sum(r["found_calls"] for r in rows)
    confirmed_found = sum(r["found_calls_confirmed"] for r in rows)
    confirmed = sum(r["confirmed"] for r in rows)
    right = sum(r["confirmed_with_name"] for r in rows)
    recall = found / calls if calls else 0.0
    precision = right / confirmed if confirmed else 0.0
    print(
        f"recall reported to the model (confirmed + unconfirmed): {found}/{calls} = "
        f"{recall:.3f} (confirmed alone: {confirmed_found / calls:.3f}); precision of the "
        f"confirmed part: {right}/{confirmed} = {precision:.3f}; target ≥ {TARGET} each: "
        f"{'met' if recall >= TARGET and precision >= TARGET else 'not met'}"
    )
    if args.json:
        summary = {"rows": rows, "recall": recall, "precision_confirmed": precision}
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
