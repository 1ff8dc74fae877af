"""Language servers in the sandbox: basedpyright with and without bubblewrap, in one run.

The same `LanguageServerPool` (agentls's source 2) on the same project, once with the
workspace's sandbox on (the server in bubblewrap: project read-only, network off) and
once off, alternating so machine load hits both alike:

- cold: the first `find_references` (start, initialize, the project read, the answer);
- warm: `textDocument/references` at every target, p50 and p95 over the rounds.

Target (issue 27): sandboxed ≤ 1.10× unsandboxed, cold and warm.

The project is agentls's own `server/` folder (about 400 Python files), or `--root`.

    python bench/langserver_sandbox_bench.py [--targets 30] [--rounds 3] [--repeats 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from pathlib import Path
from typing import Any

from agentls.codeintel.model import Document, Overlay, Pos
from agentls.langservers import LanguageServerPool
from agentls.sandbox import SandboxConfig, SandboxService, SandboxSettings, probe
from agentls.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent / "server"
DEF = re.compile(r"^    def ([a-z]\w+)\(self")


def targets(root: Path, count: int) -> list[tuple[Path, int, int]]:
    """(file, 0-based line, column) of the first `count` method definitions."""
    found: list[tuple[Path, int, int]] = []
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            match = DEF.match(line)
            if match:
                found.append((path, number, match.start(1)))
                break
        if len(found) >= count:
            break
    return found


async def one_pass(
    root: Path, chosen: list[tuple[Path, int, int]], sandboxed: bool, rounds: int
) -> dict[str, Any]:
    workspace = Workspace([root])
    sandbox = SandboxService(SandboxConfig(SandboxSettings(enabled=sandboxed)))
    pool = LanguageServerPool(workspace, sandbox=sandbox)
    warm: list[float] = []
    try:
        first = True
        cold = 0.0
        for _ in range(rounds + 1):
            for path, line, column in chosen:
                doc = Document(path, path.read_text(encoding="utf-8"), "python")
                started = time.perf_counter()
                answer = await pool.references(doc, Pos(line, column), Overlay(), True)
                elapsed = time.perf_counter() - started
                assert answer is not None, f"no answer at {path}:{line}"
                assert answer.value, f"no references at {path}:{line}"
                if first:
                    cold, first = elapsed, False
                else:
                    warm.append(elapsed)
        status = pool.status()
    finally:
        await pool.aclose()
        workspace.close()
    python = next(e for e in status if e.get("language") == "python")
    want = "bwrap" if sandboxed else "off"
    assert str(python.get("sandbox", "")).startswith(want), python
    return {"cold": cold, "warm": warm}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def main_async(args: argparse.Namespace) -> None:
    found = probe()
    if found.backend != "bwrap":
        raise SystemExit(f"no bubblewrap here: {found.reason}")
    chosen = targets(args.root, args.targets)
    results: dict[bool, dict[str, list[float]]] = {
        flag: {"cold": [], "warm": []} for flag in (True, False)
    }
    for repeat in range(args.repeats):
        order = (True, False) if repeat % 2 == 0 else (False, True)
        for sandboxed in order:
            one = await one_pass(args.root, chosen, sandboxed, args.rounds)
            results[sandboxed]["cold"].append(one["cold"])
            results[sandboxed]["warm"].extend(one["warm"])
    print(f"load average: {os.getloadavg()}; {len(chosen)} targets in {args.root}")
    rows = []
    for label, flag in (("sandboxed", True), ("unsandboxed", False)):
        r = results[flag]
        cold = statistics.median(r["cold"])
        warm50 = statistics.median(r["warm"])
        rows.append((label, cold, warm50, p95(r["warm"])))
        print(
            f"{label:12} cold {cold:6.2f} s  warm p50 {warm50 * 1000:7.1f} ms  "
            f"p95 {p95(r['warm']) * 1000:7.1f} ms"
        )
    (_, sc, s50, s95), (_, uc, u50, u95) = rows
    print(
        f"ratio sandboxed/unsandboxed: cold {sc / uc:.3f}, warm p50 {s50 / u50:.3f}, "
        f"warm p95 {s95 / u95:.3f} (target ≤ 1.10)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--targets", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
