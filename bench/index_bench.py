"""Benchmark building the symbol index on a real corpus (fetch it with bench/fetch_corpus.py).

Measures in one run, on exactly the files both index (the index skips files over 2 MB and
minified ones; they are left out for ctags too, which spends much of its time on them):
- cold index (2 worker processes, empty cache) vs universal-ctags: wall and CPU ratios;
- warm start (unchanged files loaded from the SQLite cache) vs cold;
- memory: traced Python memory held by a loaded index, and the RSS growth of this process.

Request latencies as users see them (workspace/symbol, documentSymbol, edit → queryable,
the tools) are in bench/lsp_index_bench.py; time to the first correct answer in
bench/ttfa.py; recall against ctags in bench/recall_bench.py.

    python bench/index_bench.py [--corpus DIR] [--repeat N] [--single]

The machine may be shared: the load average is printed with the results, and `--repeat`
takes the best of N runs for the cold/ctags/warm timings.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

from agentls.index import SymbolIndex, language_for
from agentls.index.extract import skip_reason
from conditions import Conditions

DEFAULT_CORPUS = Path.home() / ".cache" / "agentls-bench" / "corpus"
CTAGS_LANGUAGES = "Python,JavaScript,TypeScript,Go,Rust,Java,C,C++,C#,Ruby,PHP"


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (ctags, index workers).

    The machine may be shared; CPU time is less sensitive to other load than wall time.
    """
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def corpus_files(root: Path) -> list[Path]:
    """Files both index: a grammar, and not skipped by the index as huge or minified."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and language_for(p) is not None and skip_reason(p.read_bytes()) is None
    )


def time_ctags(files: list[Path]) -> tuple[float, float] | None:
    """(wall, CPU) seconds for universal-ctags over `files`, or None without it."""
    ctags = shutil.which("ctags")
    if ctags is None:
        return None
    version = subprocess.run([ctags, "--version"], capture_output=True, text=True).stdout
    if "Universal Ctags" not in version:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "files.txt"
        listing.write_text("\n".join(str(p) for p in files))
        cpu = cpu_seconds()
        start = time.perf_counter()
        subprocess.run(
            [
                ctags,
                f"--languages={CTAGS_LANGUAGES}",
                "-f",
                str(Path(tmp) / "tags"),
                "-L",
                str(listing),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.perf_counter() - start, cpu_seconds() - cpu


def build(files: list[Path], cache: Path | None, workers: int) -> tuple[float, float, SymbolIndex]:
    """(wall, CPU incl. workers) seconds of a build, and the index."""
    index = SymbolIndex(cache)
    cpu = cpu_seconds()
    start = time.perf_counter()
    index.build(files, workers=workers)
    return time.perf_counter() - start, cpu_seconds() - cpu, index


def timed_builds(
    files: list[Path], cache: Path, repeat: int
) -> tuple[list[tuple[float, float]], list[tuple[float, float]], list[tuple[float, float]]]:
    """(ctags, cold, warm) (wall, CPU) timings, interleaved `repeat` times."""
    ctags_times, cold_times, warm_times = [], [], []
    for _ in range(max(1, repeat)):
        ctags = time_ctags(files)
        if ctags is not None:
            ctags_times.append(ctags)
        for suffix in ("", "-wal", "-shm"):
            Path(str(cache) + suffix).unlink(missing_ok=True)
        wall, cpu, index = build(files, cache, workers=2)
        cold_times.append((wall, cpu))
        index.close()
        wall, cpu, index = build(files, cache, workers=2)
        warm_times.append((wall, cpu))
        assert index.state.parsed_files == 0, index.state
        index.close()
    return ctags_times, cold_times, warm_times


def bench_memory(files: list[Path], cache: Path) -> None:
    gc.collect()
    tracemalloc.start()
    loaded = SymbolIndex(cache)
    loaded.build(files, workers=2)
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    per = current / max(1, loaded.state.symbols)
    print(
        f"memory: a loaded index holds {current / 1e6:.1f} MB of Python objects "
        f"({per:.0f} B/symbol); peak while loading {peak / 1e6:.1f} MB"
    )
    loaded.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=1, help="best of N for cold/ctags/warm")
    parser.add_argument("--single", action="store_true", help="also time a 1-process build")
    args = parser.parse_args()
    root: Path = args.corpus.expanduser()
    if not root.is_dir():
        raise SystemExit(f"no corpus at {root}: run bench/fetch_corpus.py first")
    files = corpus_files(root)
    total_bytes = sum(p.stat().st_size for p in files)
    total_lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"corpus: {root}: {len(files)} files, {total_lines:,} lines, {total_bytes / 1e6:.1f} MB")
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    cond = Conditions.start()

    workdir = Path(tempfile.mkdtemp(prefix="agentls-bench-"))
    cache = workdir / "index.sqlite"
    rss_before = rss_mb()
    ctags_times, cold_times, warm_times = timed_builds(files, cache, args.repeat)
    (cold, cold_cpu), (warm, warm_cpu) = min(cold_times), min(warm_times)
    print(f"cold build (2 workers): {cold:.2f} s wall, {cold_cpu:.2f} s CPU")
    if ctags_times:
        ctags, ctags_cpu = min(ctags_times)
        print(
            f"universal-ctags, same files: {ctags:.2f} s wall, {ctags_cpu:.2f} s CPU"
            f"  -> cold/ctags ratio {cold / ctags:.2f}x wall, {cold_cpu / ctags_cpu:.2f}x CPU"
            f"{cond.mark()}"
        )
    else:
        print("universal-ctags not found (apt-get install universal-ctags): ctags ratio skipped")
    if args.single:
        single, single_cpu, single_index = build(files, None, workers=1)
        single_index.close()
        print(
            f"cold build (1 process, no cache): {single:.2f} s wall, {single_cpu:.2f} s CPU"
            f"  -> 2 workers speed-up {single / cold:.2f}x"
        )
    print(
        f"warm start (cache, 0 files parsed): {warm:.3f} s wall, {warm_cpu:.3f} s CPU"
        f"  -> warm/cold ratio {warm / cold:.3f}"
    )

    _, _, index = build(files, cache, workers=2)
    state = index.state
    print(f"index: {state.files} files, {state.symbols:,} symbols, {state.skipped_files} skipped")
    index.close()
    print(f"process RSS grew {rss_mb() - rss_before:.0f} MB over the builds above")
    bench_memory(files, cache)
    print(cond.report())
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
