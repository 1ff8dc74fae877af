"""lint through the tool vs the same linters run directly, and the shadow-sync cost of a
project with a large node_modules.

Part 1 — the TypeScript fixture (tests/fixtures/checks/ts, eslint + tsc from
scripts/deps/checks.sh): the `lint` tool on `src/` and `test/` (detection, shadow sync,
eslint and tsc, parsing) against the same two commands run directly in the project, in the
same run. The tool runs the two linters concurrently, so the reference is both commands
run concurrently too (the sequential sum is printed as well). Target: tool ≤ 1.2× direct
plus the shadow sync. Wall-clock time on a shared machine is noisy, so the CPU time (user +
system) of each side is measured too: the linters' processes plus, for the tool, agentls's
own work (sync, detection, parsing) — a ratio the machine's load does not move.

Part 2 — a project with a node_modules of `--node-mb` MB (default 300; synthetic packages)
and a few thousand source files: the first sync of the shadow copy, then a sync after one
source file changed (target ≤ 1 s), and what copying node_modules would cost instead.

    python bench/lint_bench.py [--repeats 3] [--node-mb 300] [--skip-copy]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.tools.lint import LintInput, LintTool
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "checks" / "ts"
LOCK = REPO / "tests" / "fixtures" / "checks" / "npm" / "package-lock.json"


def npm_tools() -> Path:
    key = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
    base = Path(os.environ.get("AGENTLS_TOOLS_DIR", Path.home() / ".cache" / "agentls-tools"))
    folder = base / f"checks-npm-{key}" / "node_modules"
    if not folder.is_dir():
        raise SystemExit(f"npm tools missing in {folder}: run bash scripts/deps/checks.sh")
    return folder


def ts_project(folder: Path) -> Path:
    project = folder / "ts"
    shutil.copytree(FIXTURE, project)
    modules = project / "node_modules"
    modules.mkdir()
    for entry in npm_tools().iterdir():
        if entry.name not in (".vite", ".cache"):
            (modules / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return project


DIRECT = (
    ["node_modules/.bin/eslint", "-f", "json", "src/math.ts", "src/total.ts", "test/math.test.ts"],
    ["node_modules/.bin/tsc", "--noEmit", "--pretty", "false", "-p", "tsconfig.json"],
)


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_direct(project: Path) -> tuple[float, float, float]:
    """(both commands concurrently, both one after the other) in seconds, and the CPU
    seconds of one run of both."""
    cpu = _cpu(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    procs = [subprocess.Popen(c, cwd=project, stdout=subprocess.DEVNULL) for c in DIRECT]
    for proc in procs:
        proc.wait()
    concurrent = time.perf_counter() - started
    cpu = _cpu(resource.RUSAGE_CHILDREN) - cpu
    started = time.perf_counter()
    for command in DIRECT:
        subprocess.run(command, cwd=project, stdout=subprocess.DEVNULL, check=False)
    return concurrent, time.perf_counter() - started, cpu


async def run_tool(tool: LintTool, ctx: ToolContext) -> tuple[float, float]:
    """Wall seconds and CPU seconds (the linters' and agentls's own) of one lint call."""
    cpu = _cpu(resource.RUSAGE_CHILDREN) + _cpu(resource.RUSAGE_SELF)
    started = time.perf_counter()
    output = await tool.call(LintInput(paths=["src", "test"]), ctx)
    elapsed = time.perf_counter() - started
    cpu = _cpu(resource.RUSAGE_CHILDREN) + _cpu(resource.RUSAGE_SELF) - cpu
    assert not output.is_error, output.content
    assert '"TS2345"' in str(output.content), output.content
    return elapsed, cpu


async def part_lint(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = ts_project(Path(tmp))
        registry = ShadowRegistry(base_dir=Path(tmp) / "shadows")
        workspace = Workspace([project])
        ctx = ToolContext(session_id="bench", workspace=workspace, changes=ChangeSet())
        tool = LintTool(shadows=registry)
        first, _ = await run_tool(tool, ctx)  # the first sync copies the project
        run_direct(project)  # warm both sides' file caches
        tools, tool_cpu, syncs, concurrent, sequential, direct_cpu = [], [], [], [], [], []
        for _ in range(repeats):
            wall, cpu = await run_tool(tool, ctx)
            tools.append(wall)
            tool_cpu.append(cpu)
            started = time.perf_counter()
            await registry.get("bench", workspace).sync(ctx.changes)
            syncs.append(time.perf_counter() - started)
            both, one_by_one, cpu = run_direct(project)
            concurrent.append(both)
            sequential.append(one_by_one)
            direct_cpu.append(cpu)
        registry.close()
    t_tool, t_sync = statistics.median(tools), statistics.median(syncs)
    t_direct, t_seq = statistics.median(concurrent), statistics.median(sequential)
    c_tool, c_direct = statistics.median(tool_cpu), statistics.median(direct_cpu)
    print("lint on the TypeScript fixture (eslint + tsc), median of", repeats)
    print(f"  tool, first call (first shadow sync)   {first:7.3f} s")
    print(f"  tool, later calls                      {t_tool:7.3f} s")
    print(f"    of which the shadow sync             {t_sync:7.3f} s")
    print(f"  direct, eslint and tsc concurrently    {t_direct:7.3f} s")
    print(f"  direct, eslint then tsc                {t_seq:7.3f} s")
    ratio = (t_tool - t_sync) / t_direct
    print(f"  ratio (tool - sync) / direct, wall     {ratio:7.2f}x   (target <= 1.20x)")
    print(f"  CPU: tool {c_tool:.2f} s, direct {c_direct:.2f} s   ratio {c_tool / c_direct:.2f}x")
    print(f"  load average while measuring           {os.getloadavg()[0]:7.1f}")


def make_node_modules(root: Path, megabytes: int) -> int:
    """Synthetic packages: 10 files of 20 KiB each; returns the number of files."""
    chunk = os.urandom(20 * 1024)
    packages = megabytes * 1024 // (10 * 20)
    for index in range(packages):
        package = root / "node_modules" / f"pkg-{index:05d}" / "lib"
        package.mkdir(parents=True)
        for number in range(10):
            (package / f"m{number}.js").write_bytes(chunk)
    (root / "node_modules" / ".bin").mkdir()
    return packages * 10


def make_sources(root: Path, count: int) -> None:
    for index in range(count):
        folder = root / "src" / f"mod{index // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{index}.ts").write_text(f"export const value{index} = {index};\n" * 20)
    (root / "package.json").write_text('{"name": "big"}\n')


def part_sync(megabytes: int, skip_copy: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "big"
        started = time.perf_counter()
        files = make_node_modules(root, megabytes)
        make_sources(root, 3000)
        made = time.perf_counter() - started
        registry = ShadowRegistry(base_dir=Path(tmp) / "shadows")
        workspace = Workspace([root])
        shadow = registry.get("bench", workspace)
        started = time.perf_counter()
        shadow.sync_blocking()
        first = time.perf_counter() - started
        later = []
        for index in range(5):
            (root / "src" / "mod000" / "file0.ts").write_text(f"export const v = {index};\n")
            started = time.perf_counter()
            shadow.sync_blocking()
            later.append(time.perf_counter() - started)
        linked = len(os.listdir(shadow.shadow_root() / "node_modules"))
        copy = None
        if not skip_copy:
            started = time.perf_counter()
            shutil.copytree(root / "node_modules", Path(tmp) / "copied")
            copy = time.perf_counter() - started
        registry.close()
    print(
        f"shadow sync, {megabytes} MB node_modules ({files} files), 3000 sources "
        f"(made in {made:.0f} s)"
    )
    print(f"  first sync                             {first:7.3f} s   ({linked} links)")
    print(
        f"  sync after a change (median of 5)      {statistics.median(later):7.3f} s"
        "   (target <= 1 s)"
    )
    if copy is not None:
        print(f"  copying node_modules instead           {copy:7.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--node-mb", type=int, default=300)
    parser.add_argument("--skip-copy", action="store_true")
    args = parser.parse_args()
    asyncio.run(part_lint(args.repeats))
    part_sync(args.node_mb, args.skip_copy)


if __name__ == "__main__":
    main()
