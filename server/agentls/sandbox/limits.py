"""Resource limits of one sandboxed run: memory, process count, file size.

Two mechanisms, because neither works everywhere:

- **rlimits**, set inside the sandbox by util-linux's `prlimit` just before the command:
  `RLIMIT_DATA` (memory per process), `RLIMIT_FSIZE` (largest file written) and
  `RLIMIT_NPROC` (processes). Set inside the new user namespace, `RLIMIT_NPROC` counts
  only the run's own processes — but the kernel never enforces it for root, so:
- **a cgroup per run** where this process may create one (root, or a delegated cgroup v2
  subtree): `pids.max` and the memory limit cover the whole tree, root included. The run
  is moved into it by a one-line shell wrapper before `bwrap` starts, so not even its
  first fork escapes. cgroup v1 (separate `pids` and `memory` hierarchies) and v2 are
  both handled.

`doctor` and `agentls.status` report which of the two are in force.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentls.sandbox.settings import SandboxLimits

__all__ = [
    "CgroupSupport",
    "RunCgroup",
    "cgroup_support",
    "prlimit_argv",
    "run_cgroup",
    "wrap_in_cgroup",
]

log = logging.getLogger(__name__)

_MOVE_SCRIPT = (
    'for p; do [ "$p" = -- ] && break; echo $$ > "$p" || exit 125; shift; done; shift; exec "$@"'
)
"""Moves the shell into each cgroup (its `cgroup.procs` paths come first), then execs the
command, so every process of the run starts inside."""


@dataclass(frozen=True)
class CgroupSupport:
    """Where per-run cgroups can be made (parents), or why not."""

    version: int = 0
    pids_parent: Path | None = None
    memory_parent: Path | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.pids_parent is not None

    def describe(self) -> str:
        if not self.ok:
            return f"per-process rlimits only ({self.reason})"
        memory = " and memory" if self.memory_parent is not None else ""
        return f"a cgroup v{self.version} per run (process count{memory}) plus rlimits"


_support: CgroupSupport | None = None


def cgroup_support() -> CgroupSupport:
    """Detected once per process."""
    global _support
    if _support is None:
        _support = _detect()
    return _support


def _detect() -> CgroupSupport:
    try:
        mounts = _cgroup_mounts()
        own = _own_cgroups()
    except OSError as exc:
        return CgroupSupport(reason=f"cgroups cannot be read ({exc})")
    if "pids" in mounts:
        pids = _writable_parent(mounts["pids"], own.get("pids", "/"))
        memory = (
            _writable_parent(mounts["memory"], own.get("memory", "/"))
            if "memory" in mounts
            else None
        )
        if pids is not None:
            return CgroupSupport(1, pids, memory)
    if "_v2" in mounts:
        base = Path(mounts["_v2"]) / own.get("", "/").lstrip("/")
        controllers = _read(base / "cgroup.subtree_control").split()
        if "pids" in controllers and os.access(base, os.W_OK):
            return CgroupSupport(2, base, base if "memory" in controllers else None)
        return CgroupSupport(
            reason="no delegated cgroup v2 subtree with the pids controller (needs root or "
            "systemd delegation)"
        )
    return CgroupSupport(reason="no writable pids cgroup (needs root)")


def _cgroup_mounts() -> dict[str, str]:
    """controller → mount point (v1), and `_v2` → the unified mount."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or not tail:
            continue
        point = fields[4]
        if tail[0] == "cgroup2":
            found.setdefault("_v2", point)
        elif tail[0] == "cgroup" and len(tail) > 2:
            for option in tail[2].split(","):
                if option in ("pids", "memory"):
                    found.setdefault(option, point)
    return found


def _own_cgroups() -> dict[str, str]:
    """controller → this process's cgroup path (`""` for v2)."""
    own: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            own[name] = path
    return own


def _writable_parent(mount: str, own: str) -> Path | None:
    base = Path(mount) / own.lstrip("/")
    if base.is_dir() and os.access(base, os.W_OK) and (base / "cgroup.procs").exists():
        return base
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


class RunCgroup:
    """One run's cgroup(s); `procs` are the files the wrapper writes its pid into."""

    def __init__(self, support: CgroupSupport, limits: SandboxLimits) -> None:
        self.support = support
        self.limits = limits
        self.dirs: list[Path] = []

    def create(self) -> list[Path]:
        """Make the cgroup(s) and set the limits; returns the `cgroup.procs` files."""
        name = f"agentls-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        memory_bytes = self.limits.memory_mb * 1024 * 1024
        pids_dir = self._make(self.support.pids_parent, name)
        if pids_dir is None:
            return []
        _write(pids_dir / "pids.max", str(self.limits.processes))
        memory_parent = self.support.memory_parent
        if memory_parent is not None:
            memory_dir = pids_dir if memory_parent == self.support.pids_parent else None
            memory_dir = memory_dir or self._make(memory_parent, name)
            if memory_dir is not None:
                self._limit_memory(memory_dir, memory_bytes)
        return [d / "cgroup.procs" for d in self.dirs]

    def _make(self, parent: Path | None, name: str) -> Path | None:
        if parent is None:
            return None
        path = parent / name
        try:
            path.mkdir()
        except OSError as exc:
            log.warning("cannot create the cgroup %s: %s", path, exc)
            return None
        self.dirs.append(path)
        return path

    def _limit_memory(self, path: Path, limit: int) -> None:
        if self.support.version == 2:
            _write(path / "memory.max", str(limit))
            _write(path / "memory.swap.max", "0")
        else:
            _write(path / "memory.limit_in_bytes", str(limit))
            _write(path / "memory.memsw.limit_in_bytes", str(limit))

    def remove(self) -> None:
        """Kill whatever is left inside, then delete the cgroup(s)."""
        for path in reversed(self.dirs):
            deadline = time.monotonic() + 2.0
            while True:
                for pid in _pids(path):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                try:
                    path.rmdir()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        log.warning("cannot remove the cgroup %s", path)
                        break
                    time.sleep(0.01)
        self.dirs.clear()


def _pids(path: Path) -> list[int]:
    return [int(p) for p in _read(path / "cgroup.procs").split() if p.isdigit()]


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        log.debug("cannot write %s to %s: %s", value, path, exc)


def wrap_in_cgroup(procs: list[Path], argv: list[str]) -> list[str]:
    """`argv` started from inside the cgroups whose `cgroup.procs` files are `procs`."""
    if not procs:
        return argv
    return ["/bin/sh", "-c", _MOVE_SCRIPT, "sh", *(str(p) for p in procs), "--", *argv]


def prlimit_argv(limits: SandboxLimits) -> list[str]:
    """util-linux `prlimit` setting the per-process limits, as a command prefix (empty when
    `prlimit` is missing: the cgroup, where there is one, still limits the run)."""
    program = shutil.which("prlimit")
    if program is None:
        return []
    memory = limits.memory_mb * 1024 * 1024
    size = limits.file_size_mb * 1024 * 1024
    return [
        program,
        f"--data={memory}",
        f"--fsize={size}",
        f"--nproc={limits.processes}",
        "--core=0",
        "--",
    ]


@contextlib.contextmanager
def run_cgroup(limits: SandboxLimits) -> Iterator[RunCgroup | None]:
    """A cgroup for one run where supported (else None); removed afterwards."""
    support = cgroup_support()
    if not support.ok:
        yield None
        return
    group = RunCgroup(support, limits)
    try:
        yield group
    finally:
        group.remove()
