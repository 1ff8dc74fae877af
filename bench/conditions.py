"""What every benchmark records about the machine it ran on (issue 33, item 6).

Figures are ratios against a reference measured in the same run, with A and B interleaved;
the 1-minute load is sampled around each pair and a figure taken above `COMPARABLE_LOAD`
is marked as not comparable (on 2 cores a load of 3 doubles wall times, and not evenly).

The agentls package is byte-compiled first, as `pip install` does: with
`PYTHONDONTWRITEBYTECODE=1` (set on the bench machine) a source checkout is otherwise
compiled again by every spawned interpreter, ~360 modules, which cost the first tool call
and the CLI 0.3–0.6 s of CPU that no installed copy pays. `AGENTLS_BENCH_NO_BYTECODE=1`
measures that case instead.

    from conditions import Conditions      # bench/ is the script's folder
    cond = Conditions.start()
    for a, b in cond.interleave(run_a, run_b, 20): ...
    print(cond.report())
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

COMPARABLE_LOAD = 1.5
"""Above this 1-minute load (2 cores), figures are reported but marked not comparable."""

T = TypeVar("T")
U = TypeVar("U")


def load() -> float:
    return os.getloadavg()[0]


def tool_version(command: list[str]) -> str:
    """The first line of `command --version`, or why there is none."""
    if shutil.which(command[0]) is None and not os.path.exists(command[0]):
        return f"{command[0]}: not installed"
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
    except OSError as exc:
        return f"{command[0]}: {exc}"
    return (out.stdout or out.stderr).splitlines()[0].strip() if out.stdout or out.stderr else ""


def versions() -> dict[str, str]:
    """ripgrep (the one agentls uses) and universal-ctags, as the benches compare to them."""
    from agentls.workspace.ripgrep import find_ripgrep

    rg = find_ripgrep()
    return {
        "rg": rg.describe() if rg is not None else "rg: not found",
        "ctags": tool_version(["ctags", "--version"]),
        "cores": str(os.cpu_count()),
    }


def ensure_bytecode() -> str:
    """Byte-compile the agentls package in place (`__pycache__`, git-ignored) unless told not
    to; says which, for the report."""
    if os.environ.get("AGENTLS_BENCH_NO_BYTECODE") == "1":
        return "agentls bytecode: none (AGENTLS_BENCH_NO_BYTECODE=1: compiled at every start)"
    spec = importlib.util.find_spec("agentls")
    folders = list(spec.submodule_search_locations or []) if spec else []
    done = all(compileall.compile_dir(f, quiet=1, workers=1) for f in folders)
    return f"agentls bytecode: {'compiled, as pip installs it' if done else 'compile FAILED'}"


@dataclass
class Conditions:
    loads: list[float] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    bytecode: str = ""

    @classmethod
    def start(cls) -> Conditions:
        cond = cls(bytecode=ensure_bytecode())
        cond.sample()
        return cond

    def sample(self) -> float:
        value = load()
        self.loads.append(value)
        return value

    @property
    def max_load(self) -> float:
        return max(self.loads) if self.loads else load()

    @property
    def comparable(self) -> bool:
        return self.max_load <= COMPARABLE_LOAD

    def interleave(
        self, a: Callable[[], T], b: Callable[[], U], rounds: int
    ) -> Iterator[tuple[T, U]]:
        """A then B, B then A, …: `rounds` pairs, the load sampled before each."""
        for i in range(rounds):
            self.sample()
            if i % 2 == 0:
                first_a = a()
                yield first_a, b()
            else:
                second_b = b()
                yield a(), second_b

    def mark(self) -> str:
        """A suffix for every figure: empty when comparable."""
        return "" if self.comparable else f" [NOT COMPARABLE: load up to {self.max_load:.1f}]"

    def report(self) -> str:
        self.sample()
        info = versions()
        lines = [
            f"load (1 min): start {self.loads[0]:.2f}, max {self.max_load:.2f}, "
            f"end {self.loads[-1]:.2f}; comparable (≤ {COMPARABLE_LOAD}): "
            f"{'yes' if self.comparable else 'NO'}",
            f"versions: {info['rg']}; {info['ctags']}; {info['cores']} cores",
        ]
        if self.bytecode:
            lines.append(self.bytecode)
        return "\n".join(lines)
