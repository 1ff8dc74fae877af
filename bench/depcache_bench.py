"""Cold index with dependencies shared across workspaces (issue 33, item 5).

Two workspaces hold the same own code (Django from `fetch_corpus.py`) and the same
dependencies (`node_modules/three`, `node_modules/@types/node`, `node_modules/typescript`,
linked from the corpus). Measured in one run, A/B interleaved, the load recorded:

- first workspace: cold index of everything, the shared dependency cache empty;
- second workspace: cold index of everything, its dependencies in the shared cache (filled
  by the first): it parses only its own code;
- project files only: cold index of the own code vs universal-ctags on exactly those files
  (like for like), and ctags over everything.

Builds are in process with 2 worker processes and no per-workspace SQLite cache, like
`index_bench.py` (which measures the warm start).

    python bench/depcache_bench.py [--corpus DIR] [--rounds N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentls.index import SymbolIndex
from agentls.index.depcache import DepCache
from conditions import Conditions
from index_bench import DEFAULT_CORPUS, corpus_files, cpu_seconds, time_ctags

DEPENDENCIES = {"three": "three", "types-node": "@types/node", "typescript": "typescript"}
OWN = "django"


def workspace(root: Path, corpus: Path) -> tuple[list[Path], list[Path]]:
    """A workspace of links into the corpus: (own files, dependency files)."""
    (root / "node_modules" / "@types").mkdir(parents=True)
    (root / OWN).symlink_to(corpus / OWN)
    for name, target in DEPENDENCIES.items():
        (root / "node_modules" / target).symlink_to(corpus / name)
    own = [root / OWN / p.relative_to(corpus / OWN) for p in corpus_files(corpus / OWN)]
    deps = [
        root / "node_modules" / target / p.relative_to(corpus / name)
        for name, target in DEPENDENCIES.items()
        for p in corpus_files(corpus / name)
    ]
    return own, deps


def timed_build(files: list[Path], shared: DepCache | None) -> tuple[float, float, SymbolIndex]:
    """(wall, CPU incl. workers) of a cold build, and the index (closed by the caller)."""
    index = SymbolIndex(None, shared)
    cpu = cpu_seconds()
    start = time.perf_counter()
    index.build(files, workers=2)
    wall = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    index.flush()  # the first workspace shares its dependencies (not timed: a later flush)
    return wall, cpu, index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    corpus: Path = args.corpus.expanduser()
    if not (corpus / OWN).is_dir():
        raise SystemExit(f"no corpus at {corpus}: run bench/fetch_corpus.py first")
    cond = Conditions.start()
    work = Path(tempfile.mkdtemp(prefix="agentls-depcache-"))
    try:
        run(work, corpus, cond, args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, corpus: Path, cond: Conditions, rounds: int) -> None:
    own_a, deps_a = workspace(work / "a", corpus)
    own_b, deps_b = workspace(work / "b", corpus)
    print(f"workspace: {len(own_a)} own files, {len(deps_a)} dependency files")
    times: dict[str, list[tuple[float, float]]] = {}
    shared_counts: list[tuple[int, int]] = []

    def record(name: str, wall: float, cpu: float) -> None:
        times.setdefault(name, []).append((wall, cpu))

    def first_and_second() -> None:
        cache = DepCache(Path(tempfile.mkdtemp(dir=work, prefix="deps-")))
        wall, cpu, index = timed_build(own_a + deps_a, cache)
        assert index.state.shared_files == 0, index.state
        index.close()
        record("first workspace", wall, cpu)
        wall, cpu, index = timed_build(own_b + deps_b, cache)
        state = index.state
        # vendored files inside the own code (Django's bundled JS) are shared as well
        assert state.parsed_files + state.shared_files == len(own_b) + len(deps_b), state
        assert state.shared_files >= len(deps_b), state
        shared_counts.append((state.parsed_files, state.shared_files))
        index.close()
        record("second workspace", wall, cpu)

    def own_only() -> None:
        wall, cpu, index = timed_build(own_a, None)
        index.close()
        record("own files only", wall, cpu)
        ctags = time_ctags(own_a)
        if ctags is not None:
            record("ctags, own files", *ctags)
        ctags = time_ctags(own_a + deps_a)
        if ctags is not None:
            record("ctags, everything", *ctags)

    for _ in cond.interleave(first_and_second, own_only, rounds):
        pass
    print(f"second workspace: (parsed, from the shared cache) = {shared_counts[-1]}")
    report(times, cond.mark())
    print(cond.report())


def report(times: dict[str, list[tuple[float, float]]], mark: str) -> None:
    def med(name: str, i: int) -> float:
        return statistics.median(t[i] for t in times[name])

    for name, values in times.items():
        walls = ", ".join(f"{w:.2f}" for w, _ in values)
        print(f"{name}: wall {walls} s (median {med(name, 0):.2f}), CPU {med(name, 1):.2f} s")
    print(
        f"second / first workspace: {med('second workspace', 0) / med('first workspace', 0):.2f}x"
        f" wall, {med('second workspace', 1) / med('first workspace', 1):.2f}x CPU{mark}"
    )
    if "ctags, own files" in times:
        print(
            "own files only / ctags on them: "
            f"{med('own files only', 0) / med('ctags, own files', 0):.2f}x wall, "
            f"{med('own files only', 1) / med('ctags, own files', 1):.2f}x CPU{mark}"
        )
        print(
            f"second workspace / ctags on everything: "
            f"{med('second workspace', 0) / med('ctags, everything', 0):.2f}x wall{mark}"
        )


if __name__ == "__main__":
    main()
