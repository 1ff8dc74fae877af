"""One line per figure of an idle-suite run (`bench/idle_suite.sh`) against its target.

Reads the benches' outputs in a results folder and prints, for each figure the README's
performance table shows, the measured value, the target and whether it is met, with the
bench's own "not comparable" mark (load above 1.5) when it set one.

    python bench/idle_summary.py bench/results/idle-<time>
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


@dataclass(frozen=True)
class Figure:
    bench: str
    label: str
    pattern: str
    """A regex whose groups are the numbers `judge` takes."""
    target: str
    judge: Callable[[list[float]], bool] | None = None
    show: Callable[[list[float]], str] = lambda v: f"{v[0]:g}"


FIGURES = (
    Figure(
        "cli_latency",
        "agentls tool read_file, direct",
        rf"read_file, direct: median {NUMBER} ms",
        "≤ 300 ms",
        lambda v: v[0] <= 300,
        lambda v: f"{v[0]:g} ms",
    ),
    Figure(
        "cli_latency",
        "agentls tool read_file --reuse",
        rf"--reuse \(server running\): median {NUMBER} ms",
        "≤ 300 ms",
        lambda v: v[0] <= 300,
        lambda v: f"{v[0]:g} ms",
    ),
    Figure(
        "cli_latency",
        "first tool call after initialize, over later calls",
        r"first tool call after initialize: \+(-?[0-9]+(?:\.[0-9]+)?) ms",
        "≤ +50 ms",
        lambda v: v[0] <= 50,
        lambda v: f"+{v[0]:g} ms",
    ),
    Figure(
        "idle_rss",
        "idle server RSS",
        rf"idle RSS, agentls serve: median {NUMBER} MB.*?bare pygls server {NUMBER} MB",
        "≤ 70 MB",
        lambda v: v[0] <= 70,
        lambda v: f"{v[0]:g} MB (bare pygls {v[1]:g} MB)",
    ),
    Figure(
        "edit_stall",
        "edit -> queryable, p50 / p99",
        rf"edit -> queryable\s+p50\s+{NUMBER} ms\s+p99\s+{NUMBER} ms",
        "p99 ≤ 20 ms",
        lambda v: v[1] <= 20,
        lambda v: f"{v[0]:g} / {v[1]:g} ms",
    ),
    Figure(
        "edit_stall",
        "edits over 50 ms",
        rf"stalls over 50 ms: {NUMBER}",
        "none",
        lambda v: v[0] == 0,
        lambda v: f"{v[0]:g}",
    ),
    Figure(
        "grep_first",
        "first grep in a new server vs rg",
        rf"first grep in a new server: median {NUMBER} ms vs rg {NUMBER} ms = {NUMBER}x",
        "≤ 2×",
        lambda v: v[2] <= 2,
        lambda v: f"{v[2]:g}× ({v[0]:g} vs {v[1]:g} ms)",
    ),
    Figure(
        "grep_bench",
        "grep vs rg, median over the patterns",
        rf"wall ratio median {NUMBER}x.*?worst {NUMBER}x.*?CPU ratio median {NUMBER}x",
        "≤ 1.1×",
        lambda v: v[0] <= 1.1,
        lambda v: f"{v[0]:g}× wall (worst {v[1]:g}×), {v[2]:g}× CPU",
    ),
    Figure(
        "index_bench",
        "cold index vs ctags, whole corpus (in process)",
        rf"cold/ctags ratio {NUMBER}x wall, {NUMBER}x CPU",
        "— (README: was 3.2×)",
        None,
        lambda v: f"{v[0]:g}× wall, {v[1]:g}× CPU",
    ),
    Figure(
        "depcache_bench",
        "cold index, project files only vs ctags",
        rf"own files only / ctags on them: {NUMBER}x wall, {NUMBER}x CPU",
        "≤ 1.5× wall",
        lambda v: v[0] <= 1.5,
        lambda v: f"{v[0]:g}× wall, {v[1]:g}× CPU",
    ),
    Figure(
        "depcache_bench",
        "second workspace, same dependencies / first",
        rf"second / first workspace: {NUMBER}x wall, {NUMBER}x CPU",
        "dependencies cached (< 1×)",
        lambda v: v[0] < 1,
        lambda v: f"{v[0]:g}× wall, {v[1]:g}× CPU",
    ),
)


def summarise(folder: Path) -> list[str]:
    lines = []
    for figure in FIGURES:
        path = folder / f"{figure.bench}.txt"
        text = path.read_text(errors="replace") if path.exists() else ""
        found = re.search(figure.pattern, text)
        head = f"{figure.bench:15} {figure.label:50}"
        if found is None:
            why = "TIME LIMIT" if "TIME LIMIT" in text else "no figure (see the output)"
            lines.append(f"{head} NOT MEASURED: {why}; target {figure.target}")
            continue
        values = [float(g) for g in found.groups()]
        verdict = "" if figure.judge is None else "met" if figure.judge(values) else "NOT met"
        mark = " [not comparable: load > 1.5]" if "NOT COMPARABLE" in text else ""
        lines.append(f"{head} {figure.show(values)}; target {figure.target}: {verdict}{mark}")
    return lines


if __name__ == "__main__":
    print("\n".join(summarise(Path(sys.argv[1]))))
