"""Can a sandbox run here, and if not, why and how to fix it.

Why a probe and not just `which bwrap`: bubblewrap needs user namespaces, which kernels and
distributions switch off (Debian's `kernel.unprivileged_userns_clone`, Ubuntu 24.04's
AppArmor restriction, `user.max_user_namespaces=0` in some containers). So the first
question runs `bwrap` once the way every run will, and reads its error. The answer is
cached per binary for the life of the process.

`AGENTLS_BWRAP` names the bubblewrap binary (default: `bwrap` on PATH). Pointing it at a
missing file is how to see the "bwrap is not installed" path without uninstalling (the
tests do), and at a script that fails like bwrap would, the "no user namespaces" path. It
is read from the environment only, never from (project) settings: a repository must not
be able to swap the sandbox for a program of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Literal

__all__ = ["BWRAP_ENV", "Availability", "bwrap_path", "probe", "reset_probe_cache"]

BWRAP_ENV = "AGENTLS_BWRAP"
INSTALL_FIX = "install bubblewrap: `sudo apt install bubblewrap` (Debian/Ubuntu), " + (
    "`sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)"
)
USERNS_FIX = (
    "allow unprivileged user namespaces: `sudo sysctl -w kernel.unprivileged_userns_clone=1` "
    "(Debian), `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 24.04+), "
    "or raise `user.max_user_namespaces` above 0"
)
PROBE_ARGS = (
    "--unshare-all",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
    "--",
    "true",
)
_PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class Availability:
    """The answer: which backend works, or why none does and what fixes it."""

    backend: Literal["bwrap", "seatbelt", "none"]
    program: str = ""
    reason: str = ""
    fix: str = ""
    version: str = ""

    @property
    def ok(self) -> bool:
        return self.backend != "none"

    def describe(self) -> str:
        """One plain sentence for doctor, status and tool results."""
        if self.ok:
            name = "bubblewrap" if self.backend == "bwrap" else "macOS Seatbelt (sandbox-exec)"
            version = f" {self.version}" if self.version else ""
            return f"commands, tests and linters run in a sandbox ({name}{version})"
        fix = f" Fix: {self.fix}." if self.fix else ""
        return f"no sandbox: {self.reason}.{fix}"


_cache: dict[str, Availability] = {}
_lock = threading.Lock()


def bwrap_path() -> str | None:
    """The bubblewrap binary to use (`AGENTLS_BWRAP`, else `bwrap` on PATH)."""
    configured = os.environ.get(BWRAP_ENV)
    if configured:
        return configured
    return shutil.which("bwrap")


def probe() -> Availability:
    """Whether a sandbox can run here (cached per bwrap binary)."""
    if sys.platform == "darwin":
        return _seatbelt()
    if not sys.platform.startswith("linux"):
        return Availability(
            "none",
            reason=f"there is no sandbox for {sys.platform} (only Linux and macOS)",
            fix="run agentls on Linux (or WSL 2) or macOS",
        )
    program = bwrap_path()
    key = program or ""
    with _lock:
        found = _cache.get(key)
        if found is None:
            found = _probe_bwrap(program)
            _cache[key] = found
    return found


def reset_probe_cache() -> None:
    """Forget earlier answers (after installing bubblewrap, or in tests)."""
    with _lock:
        _cache.clear()


def _probe_bwrap(program: str | None) -> Availability:
    if program is None or not os.path.isfile(program) or not os.access(program, os.X_OK):
        where = f" ({program} does not exist)" if program else ""
        reason = f"bubblewrap (bwrap) is not installed{where}"
        return Availability("none", reason=reason, fix=INSTALL_FIX)
    try:
        done = subprocess.run(
            [program, *PROBE_ARGS],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability("none", program, f"{program} could not be started ({exc})", INSTALL_FIX)
    if done.returncode != 0:
        error = " ".join(done.stderr.split())[:300] or f"exit code {done.returncode}"
        return Availability(
            "none", program, f"bubblewrap cannot create a sandbox here ({error})", USERNS_FIX
        )
    return Availability("bwrap", program, version=_version(program))


def _version(program: str) -> str:
    try:
        done = subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip().removeprefix("bubblewrap ").strip()


def _seatbelt() -> Availability:
    program = shutil.which("sandbox-exec")
    if program is None:
        return Availability(
            "none",
            reason="sandbox-exec (macOS Seatbelt) was not found",
            fix="use macOS's own /usr/bin/sandbox-exec (it ships with the system)",
        )
    return Availability("seatbelt", program)
