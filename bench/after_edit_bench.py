"""After-edit problems report (`checks.afterEdit`, issue 30): its latency with a warm server.

A small Python project is served by `agentls serve` (basedpyright started headless, source
2). After a warm-up, each round makes one `edit_file` call (through `agentls.tool`, the
model's path) whose result carries the new-problems report, then rejects it; the reference,
measured in the same run and alternating with it, is a bare `diagnostics` tool call on the
same file. Reported: p50/p95 of each and the ratio p95(edit with report) / p95(diagnostics).
An after-edit report costs at most two diagnostics (the baseline once per file and base
text, then the staged text), so the ratio's ceiling is about 2 plus the staging work.

Target (issue 30): the report within 1.5 s p95 with a warm server on 2 cores.

`--mode lint` (`checks.afterEdit: lint`: the language server and ruff, in the checks
shadow): the reference is then what the model would call to learn the same, a
`diagnostics` call plus a `lint` call on the file.

    python bench/after_edit_bench.py [--rounds 30] [--mode diagnostics|lint] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentls.headless.client import ServerConnection

MODULES = 20


def project(root: Path) -> None:
    (root / "lib.py").write_text("def double(n: int) -> int:\n    return n * 2\n")
    for i in range(MODULES):
        (root / f"mod{i}.py").write_text(
            f"from lib import double\n\n\ndef f{i}(x: int) -> int:\n    return double(x) + {i}\n"
        )
    (root / "target.py").write_text("from lib import double\nvalue = double(2)\n")


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


async def tool(conn: ServerConnection, name: str, input: dict[str, Any]) -> tuple[float, str]:
    started = time.perf_counter()
    result = await conn.command("agentls.tool", {"name": name, "input": input})
    return time.perf_counter() - started, str(result["content"])


async def reference(conn: ServerConnection, mode: str) -> float:
    """The bare calls that tell what the report tells."""
    seconds, _ = await tool(conn, "diagnostics", {"paths": ["target.py"]})
    if mode == "lint":
        more, _ = await tool(conn, "lint", {"paths": ["target.py"]})
        seconds += more
    return seconds


async def measure(rounds: int, mode: str = "diagnostics") -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project(root)
        options = {"checks": {"afterEditSeconds": 30, "afterEdit": mode}}
        async with ServerConnection(root, initialization_options=options) as conn:
            await tool(conn, "diagnostics", {"paths": ["target.py"]})  # warm up
            edit = {"path": "target.py", "old_string": "double(2)", "new_string": 'double("2")'}
            _, first = await tool(conn, "edit_file", edit)
            await conn.command("agentls.reject", {"session": "tool"})
            edits: list[float] = []
            bare: list[float] = []
            reported = 0
            for index in range(rounds):
                order = ("edit", "bare") if index % 2 == 0 else ("bare", "edit")
                for which in order:
                    if which == "bare":
                        bare.append(await reference(conn, mode))
                        continue
                    seconds, content = await tool(conn, "edit_file", edit)
                    edits.append(seconds)
                    reported += "1 new problem: target.py:2" in content
                    await conn.command("agentls.reject", {"session": "tool"})
    return {
        "mode": mode,
        "rounds": rounds,
        "first_report": first.splitlines()[-2:] if first else [],
        "reports_with_the_problem": reported,
        "edit_p50_s": round(statistics.median(edits), 3),
        "edit_p95_s": round(p95(edits), 3),
        "reference_p50_s": round(statistics.median(bare), 3),
        "reference_p95_s": round(p95(bare), 3),
        "ratio_p95": round(p95(edits) / p95(bare), 2),
        "edit_s": [round(s, 3) for s in edits],
        "reference_s": [round(s, 3) for s in bare],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--mode", choices=("diagnostics", "lint"), default="diagnostics")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = asyncio.run(measure(args.rounds, args.mode))
    text = json.dumps(result, indent=2)
    sys.stdout.write(text + "\n")
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
