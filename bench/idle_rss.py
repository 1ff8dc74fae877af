"""Idle server memory (issue 33): RSS of `agentls serve` on a 2-file project once it is
ready and quiet, against a bare pygls server in the same run (the floor any pygls server
pays), and what each subsystem's imports add (RSS, in a fresh interpreter importing them in
the server's order). Target: idle RSS ≤ 70 MB.

Memory hardly depends on the machine's load, but the load is recorded as for every bench.

    python bench/idle_rss.py [--starts 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from conditions import Conditions
from lsp_index_bench import server_pid, start, stop, wait_ready
from lsp_latency import TRIVIAL_SERVER, env_for

TARGET_MB = 70.0
SUBSYSTEMS = (
    "pygls.server",
    "agentls.lsp.serve",
    "pydantic",
    "agentls.config",
    "agentls.workspace",
    "agentls.index",
    "agentls.host",
    "agentls.tools",
    "agentls.runtime.runtime",
    "agentls.agent.safety",
)
"""Imported in this order, as the server does (`agentls.lsp.lifecycle`)."""
_IMPORTS = """
import importlib, sys
def rss():
    with open('/proc/self/status') as fh:
        return next(int(l.split()[1]) / 1024 for l in fh if l.startswith('VmRSS'))
prev = rss()
print(f"{'interpreter':28} {prev:6.1f} MB")
for name in sys.argv[1:]:
    importlib.import_module(name)
    now = rss()
    print(f"{name:28} +{now - prev:5.1f} MB")
    prev = now
print(f"{'all':28} {prev:6.1f} MB, {len(sys.modules)} modules")
"""


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) / 1024 for line in fh if line.startswith("VmRSS:"))


def make_project(folder: Path) -> Path:
    root = folder / "project"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    return helper()\n", encoding="utf-8")
    (root / "helper.py").write_text("def helper():\n    return 1\n", encoding="utf-8")
    return root


async def idle_rss(command: list[str], root: Path, env: dict[str, str], agentls: bool) -> float:
    client = await start(command, root, env)
    try:
        if agentls:
            await wait_ready(client)
        else:
            await asyncio.sleep(2.0)
        return rss_mb(server_pid(client))
    finally:
        await stop(client)


async def main(starts: int) -> None:
    cond = Conditions.start()
    with tempfile.TemporaryDirectory(prefix="agentls-idle-rss-") as tmp:
        folder = Path(tmp)
        root = make_project(folder)
        env = env_for(folder)
        ours, bare = [], []
        for _ in range(starts):  # interleaved
            cond.sample()
            ours.append(await idle_rss([sys.executable, "-m", "agentls", "serve"], root, env, True))
            bare.append(await idle_rss([sys.executable, "-c", TRIVIAL_SERVER], root, env, False))
    print(cond.report())
    mark = cond.mark()
    print(
        f"idle RSS, agentls serve: median {statistics.median(ours):.1f} MB "
        f"(runs {', '.join(f'{v:.1f}' for v in ours)}); bare pygls server "
        f"{statistics.median(bare):.1f} MB; target ≤ {TARGET_MB:.0f} MB: "
        f"{'met' if statistics.median(ours) <= TARGET_MB else 'NOT met'}{mark}"
    )


def breakdown() -> None:
    print("what each subsystem's imports add (fresh interpreter, server order):")
    subprocess.run([sys.executable, "-c", _IMPORTS, *SUBSYSTEMS], check=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=3)
    asyncio.run(main(parser.parse_args().starts))
    breakdown()
