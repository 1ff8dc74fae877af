"""The first grep in a new server against ripgrep (issue 33: 430 ms vs rg's 63–73 ms, the
first grep walked the tree cold before rg started). Target: ≤ 2× rg.

Each start spawns `agentls serve --stdio` in the corpus as `agentls tool` does (index on
demand, no file watching: the server polls the disk), sends `initialized`, waits until the
host answers a `read_file` call (it is ready: the first grep does not also wait for the
host's imports), then times the grep through `workspace/executeCommand` `agentls.tool`,
with the server's CPU during it (from /proc). After each start, the same pattern by
`rg -n` over the same file set (`grep_bench.rg_user_args`), so the two sides alternate.
Reported: medians of each side, their ratio, and the load.

    python bench/grep_first.py [--corpus DIR] [--starts 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests' helpers

from tests.process_support import end_process

from agentls.workspace import Workspace
from cli_latency import RawClient, env_for, start_server
from conditions import Conditions
from grep_bench import (
    DEFAULT_CORPUS,
    Case,
    children_cpu,
    corpus_and_ripgrep,
    rg_user_args,
    rg_walk_flags,
)

TARGET = 2.0
PATTERNS = (Case("QuerySet"), Case(r"class \w+Error"), Case("WebGLRenderer"))
"""Sparse content searches (the kind whose cost the walk dominated), taken in turn."""


def first_grep(root: Path, env: dict[str, str], case: Case) -> tuple[float, float]:
    """(wall, server CPU) seconds of the first grep of a fresh server, once it is ready."""
    proc = start_server(root, env)
    try:
        client = RawClient(proc)
        caps = {"experimental": {"agentls": {"indexOnDemand": True}}}  # as `agentls tool`
        init = {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps}
        client.request("initialize", init)
        client.send({"method": "initialized", "params": {}})
        read = {"name": "read_file", "input": {"path": probe_file(root), "limit": 1}}
        client.request("workspace/executeCommand", {"command": "agentls.tool", "arguments": [read]})
        grep = {"name": "grep", "input": {"pattern": case.pattern}}
        cpu = cpu_with_children(proc.pid)
        start = time.perf_counter()
        answer = client.request(
            "workspace/executeCommand", {"command": "agentls.tool", "arguments": [grep]}
        )
        wall = time.perf_counter() - start
        used = cpu_with_children(proc.pid) - cpu
        if not answer or answer.get("is_error"):
            raise SystemExit(f"grep failed: {answer}")
        client.request("shutdown")
        client.send({"method": "exit"})
        proc.wait(60)
    finally:
        end_process(proc)
    return wall, used


def cpu_with_children(pid: int) -> float:
    """CPU seconds of a process and its waited-for children (the server's rg runs)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def probe_file(root: Path) -> str:
    """A small file of the corpus, for the call that waits until the host is ready."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".py", ".ts", ".js", ".md")):
                return os.path.relpath(os.path.join(folder, name), root)
    raise SystemExit(f"no source file in {root}")


def rg_once(command: list[str]) -> tuple[float, float]:
    cpu = children_cpu()
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=False)
    return time.perf_counter() - start, children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument(
        "--base", type=Path, help="also time the server from this `server/` folder (A/B)"
    )
    args = parser.parse_args()
    root, engine = corpus_and_ripgrep(args.corpus)
    walk = rg_walk_flags(Workspace([root]))
    cond = Conditions.start()
    ours: list[tuple[float, float]] = []
    base: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="agentls-grep-first-") as tmp:
        env = env_for(Path(tmp))
        for index in range(args.starts):
            case = PATTERNS[index % len(PATTERNS)]
            cond.sample()
            ours.append(first_grep(root, env, case))
            if args.base is not None:
                base_env = env | {"PYTHONPATH": str(args.base.resolve())}
                base.append(first_grep(root, base_env, case))
                print(f"  base: {base[-1][0] * 1000:7.1f} ms (CPU {base[-1][1] * 1000:5.0f} ms)")
            theirs.append(rg_once(rg_user_args(engine.path, walk, case, root)))
            print(
                f"start {index + 1}: {case.label:24} first grep {ours[-1][0] * 1000:7.1f} ms "
                f"(server CPU {ours[-1][1] * 1000:5.0f} ms)  rg {theirs[-1][0] * 1000:6.1f} ms "
                f"(CPU {theirs[-1][1] * 1000:5.0f} ms)",
                flush=True,
            )
    wall = statistics.median(w for w, _ in ours)
    rg_wall = statistics.median(w for w, _ in theirs)
    cpu = statistics.median(c for _, c in ours)
    rg_cpu = statistics.median(c for _, c in theirs)
    ratio = wall / rg_wall
    print(cond.report())
    if base:
        base_wall = statistics.median(w for w, _ in base)
        base_cpu = statistics.median(c for _, c in base)
        print(
            f"base ({args.base}): median {base_wall * 1000:.0f} ms = {base_wall / rg_wall:.2f}x "
            f"rg wall, CPU {base_cpu * 1000:.0f} ms; this tree: {wall * 1000:.0f} ms, "
            f"CPU {cpu * 1000:.0f} ms"
        )
    print(
        f"first grep in a new server: median {wall * 1000:.0f} ms vs rg {rg_wall * 1000:.0f} ms "
        f"= {ratio:.2f}x wall ({cpu / max(rg_cpu, 1e-6):.2f}x CPU), {args.starts} starts; "
        f"target <= {TARGET:.0f}x: {'met' if ratio <= TARGET else 'NOT met'}{cond.mark()}"
    )


if __name__ == "__main__":
    main()
