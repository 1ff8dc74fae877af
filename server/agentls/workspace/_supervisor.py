"""Runs one command so that its whole process tree dies with agentls (Linux only).

Why a separate program: a process group dies with its run, but not with the server — when
agentls is killed (`kill -9`, an editor crash), nobody is left to kill the group, and
processes that called `setsid` left the group anyway. This supervisor sits between
agentls and the command:

- `PR_SET_PDEATHSIG`: the kernel signals it when agentls dies, and it kills the tree;
- `PR_SET_CHILD_SUBREAPER`: orphaned descendants (daemons, `setsid` children) are
  re-parented to it instead of to PID 1, so it can still find and kill them;
- when the command exits, every descendant still running is killed, and the supervisor
  exits with the command's status (or dies of the same signal).

Polite stop signals sent to the process group (SIGINT, SIGTERM) reach the command; the
supervisor itself ignores them and follows the command. Runs as
`python -I -S _supervisor.py PARENT_PID -- ARGV...`: the standard library only, no
site-packages, so it starts in ~15 ms. The sandboxed path (bubblewrap) does not need it:
its PID namespace gives the same guarantee.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PARENT_DIED = signal.SIGUSR2
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def descendants(root: int) -> list[int]:
    """Pids below `root`, from /proc (parents before their children)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def kill_tree() -> None:
    """SIGKILL every descendant; repeated because a dying tree may still fork."""
    for _ in range(5):
        pids = descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap()


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def on_parent_death(signum: int, frame: object) -> None:
    kill_tree()
    os._exit(128 + signal.SIGKILL)


def ignore(signum: int, frame: object) -> None:
    """Stop signals are for the command (same group); a handler, not SIG_IGN, so the
    command does not inherit an ignored disposition through exec."""


def start(argv: list[str]) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"agentls: cannot run {argv[0]!r}: {exc.strerror}\n".encode())
        os._exit(127)
    return pid


def wait_for(child: int) -> int:
    """Reap until `child` exits (adopted orphans are reaped on the way)."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 0
        if pid == child:
            return status


def finish(status: int) -> None:
    kill_tree()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(os.waitstatus_to_exitcode(status))


def main() -> None:
    parent, separator, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    if separator != "--" or not argv:
        sys.stderr.write("usage: _supervisor.py PARENT_PID -- ARGV...\n")
        sys.exit(2)
    libc = ctypes.CDLL(None, use_errno=True)
    signal.signal(PARENT_DIED, on_parent_death)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, int(PARENT_DIED), 0, 0, 0)
    if os.getppid() != parent:  # agentls died before the death signal was armed
        sys.exit(128 + signal.SIGKILL)
    for sig in FORWARDED:
        signal.signal(sig, ignore)
    finish(wait_for(start(argv)))


if __name__ == "__main__":
    main()
