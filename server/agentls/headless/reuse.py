"""`agentls tool --reuse`: call a tool through a running server for the same workspace.

Why: a direct `agentls tool` starts `agentls serve`, initializes it and shuts it down on
every call; each Python process also spends ~0.4 s importing pygls and lsprotocol. A script
that calls many tools pays that every time. With `--reuse` (or `AGENTLS_TOOL_SERVER=1`)
the CLI sends the call to a per-user, per-workspace tool server
(`agentls.headless.toolserver`) over a Unix socket, starting one on demand; it exits after
`AGENTLS_TOOL_SERVER_IDLE` seconds without a call (default 600).

This module is the client and is kept lean on purpose: the standard library only (no
pygls, lsprotocol, pydantic or rich), JSON-RPC as one JSON line each way.

Where the socket lives, and what is refused (the CLI then warns and runs the call the
direct way, so a refusal never loses the call):

- `$XDG_RUNTIME_DIR/agentls/`, else `$XDG_CACHE_HOME/agentls/run/` (`~/.cache/…`): a
  folder that must be a real directory (never followed through a symlink), owned by this
  user, with no access for group or others;
- the socket itself must be a socket (not a symlink) owned by this user, and the process
  answering on it must run as this user (`SO_PEERCRED`);
- one socket per workspace *and* per start-up conditions: its name is a hash of the
  workspace's real path, `--allow-mcp`, the Python and agentls version and the
  environment the server would inherit, so a call never reaches a server started for
  another workspace or with other settings;
- a lock file serializes the start: concurrent first calls start one server; a socket
  nobody answers on (a dead server) is replaced.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

ENABLE_VAR = "AGENTLS_TOOL_SERVER"
IDLE_VAR = "AGENTLS_TOOL_SERVER_IDLE"
DEFAULT_IDLE = 600.0
START_SECONDS = 120.0
"""How long a client waits for a server it started (a loaded machine is slow)."""
HELLO = "agentls-tool-server"
PROTOCOL = 1
_KEY_PREFIXES = ("AGENTLS_", "ANTHROPIC_", "XDG_", "CLAUDE_")
_KEY_NAMES = ("HOME", "PATH", "VIRTUAL_ENV", "PYTHONPATH", "LANG", "LC_ALL", "SHELL")
_NOT_KEYED = (ENABLE_VAR, IDLE_VAR, "AGENTLS_CREDENTIALS_FD", "XDG_RUNTIME_DIR")
_SUN_PATH = 107


class Refused(Exception):
    """The socket (or its folder) is not safe to use; the message says why."""


class NoServer(Exception):
    """Nothing answers on the socket (absent, or a dead server's leftover)."""


def wanted(flag: bool, env: Mapping[str, str]) -> bool:
    """`--reuse`, or `AGENTLS_TOOL_SERVER` set to a true value."""
    return flag or env.get(ENABLE_VAR, "").strip().lower() in ("1", "true", "yes", "on")


def idle_seconds(env: Mapping[str, str]) -> float:
    raw = env.get(IDLE_VAR, "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_IDLE
    except ValueError:
        value = DEFAULT_IDLE
    return value if value > 0 else DEFAULT_IDLE


# -- where ------------------------------------------------------------------------------


def socket_folder(env: Mapping[str, str]) -> Path:
    """The per-user folder of the sockets, created 0700 when missing; raises `Refused`
    when it is a symlink, not ours, or open to others."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        folder = Path(runtime) / "agentls"
    else:
        cache = env.get("XDG_CACHE_HOME", "")
        base = Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache"
        (base / "agentls").mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = base / "agentls" / "run"
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise Refused(f"cannot create {folder}: {exc.strerror}") from exc
    check_private_folder(folder)
    return folder


def check_private_folder(folder: Path) -> None:
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{folder} is a symlink")
    if not stat.S_ISDIR(info.st_mode):
        raise Refused(f"{folder} is not a folder")
    if info.st_uid != os.getuid():
        raise Refused(f"{folder} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o077:
        raise Refused(
            f"{folder} is open to other users (mode {stat.S_IMODE(info.st_mode):o}); "
            f"`chmod 700 {folder}` if it is yours"
        )


def server_key(workspace: Path, allow_mcp: list[str] | None, env: Mapping[str, str]) -> str:
    """What a server is started with, hashed: a server is reused only for the same."""
    from agentls import __version__

    keyed = {
        k: v
        for k, v in env.items()
        if (k.startswith(_KEY_PREFIXES) or k in _KEY_NAMES) and k not in _NOT_KEYED
    }
    material = {
        "uid": os.getuid(),
        "workspace": str(workspace),
        "allow_mcp": sorted(allow_mcp or []),
        "python": sys.executable,
        "version": __version__,
        "protocol": PROTOCOL,
        "env": sorted(keyed.items()),
    }
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8"))
    return digest.hexdigest()[:24]


def socket_path(workspace: Path, allow_mcp: list[str] | None, env: Mapping[str, str]) -> Path:
    path = socket_folder(env) / f"tool-{server_key(workspace, allow_mcp, env)}.sock"
    if len(os.fsencode(path)) > _SUN_PATH:
        raise Refused(f"the socket path {path} is too long for a Unix socket")
    return path


# -- connecting -------------------------------------------------------------------------


def _check_socket(path: Path) -> None:
    """Raises `NoServer` when absent, `Refused` when it is not our own socket."""
    try:
        info = os.lstat(path)
    except FileNotFoundError as exc:
        raise NoServer from exc
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{path} is a symlink")
    if not stat.S_ISSOCK(info.st_mode):
        raise Refused(f"{path} is not a socket")
    if info.st_uid != os.getuid():
        raise Refused(f"{path} belongs to another user (uid {info.st_uid})")


def connect(path: Path) -> socket.socket:
    """A connection to our own server on `path`, its greeting read."""
    _check_socket(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.fsencode(path))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
            raise NoServer from exc
        raise
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        sock.close()
        raise Refused(f"the server on {path} runs as another user (uid {uid})")
    greeting = _read_line(sock)
    if not greeting.startswith(HELLO.encode()):
        sock.close()
        raise NoServer  # closed before it greeted: an exiting server; start another
    return sock


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end (Linux; None where the system cannot say:
    the private folder is then the only check)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    uid: int = struct.unpack("3i", creds)[1]
    return uid


def _read_line(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        if b"\n" in chunk:
            head, _, _ = chunk.partition(b"\n")
            chunks.append(head)
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def connect_or_start(path: Path, start: list[str], env: Mapping[str, str]) -> socket.socket:
    """Connect, or start the server under the lock (one start for concurrent callers)."""
    try:
        return connect(path)
    except NoServer:
        pass
    import fcntl

    lock = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return connect(path)  # another caller started it while we waited
        except NoServer:
            pass
        _unlink_stale(path)
        return _start(path, start, env)
    finally:
        os.close(lock)  # releases the lock


def _unlink_stale(path: Path) -> None:
    try:
        _check_socket(path)
    except NoServer:
        return
    os.unlink(path)  # ours and nobody answers (checked under the lock)


def _start(path: Path, command: list[str], env: Mapping[str, str]) -> socket.socket:
    import subprocess

    log = path.with_suffix(".log")
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=dict(env),
            start_new_session=True,  # detached: it outlives this command
            close_fds=True,
        )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        try:
            return connect(path)
        except NoServer:
            pass
        if proc.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-1500:]
            raise OSError(f"the tool server exited ({proc.returncode}): {tail.strip()}")
        time.sleep(0.02)
    raise OSError(f"the tool server did not start within {START_SECONDS:.0f} s (log: {log})")


class ToolParams(TypedDict):
    """The `tool` request's params, as `toolserver._checked` reads them."""

    workspace: str
    name: str
    input: dict[str, object]
    apply: bool
    trust: bool


def request(sock: socket.socket, params: ToolParams) -> dict[str, object]:
    """One JSON-RPC call; the answer's result, or `OSError` for the error."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tool", "params": params}
    with sock:
        sock.sendall(json.dumps(message).encode("utf-8") + b"\n")
        raw = _read_all(sock)
    if not raw.strip():
        raise OSError("the tool server closed the connection without an answer")
    answer = json.loads(raw)
    if not isinstance(answer, dict):
        raise OSError(f"the tool server answered {raw[:200]!r}")
    if "error" in answer:
        error = answer["error"]
        said = error.get("message") if isinstance(error, dict) else None
        raise OSError(str(said or error))
    result = answer.get("result")
    if not isinstance(result, dict):
        raise OSError("the tool server's answer has no result")
    return result


# -- the command --------------------------------------------------------------------------


def parse_input(raw_input: str) -> dict[str, object] | None:
    """The tool input as `agentls tool` takes it (None: told the user, exit 2)."""
    try:
        tool_input = json.loads(raw_input) if raw_input.strip() else {}
    except json.JSONDecodeError as exc:
        sys.stderr.write(f"agentls tool: the input is not valid JSON: {exc}\n")
        return None
    if not isinstance(tool_input, dict):
        sys.stderr.write("agentls tool: the input must be a JSON object\n")
        return None
    return tool_input


def print_result(result: Mapping[str, object], diff: str, *, apply: bool, as_json: bool) -> int:
    """`agentls tool`'s output and exit code (the direct and the reused path alike)."""
    if as_json:
        sys.stdout.write(json.dumps({**result, "diff": diff}, ensure_ascii=False, indent=2) + "\n")
    else:
        content = result.get("content")
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        stream = sys.stderr if result.get("is_error") else sys.stdout
        stream.write(text.rstrip("\n") + "\n")
        if diff:
            sys.stdout.write(diff)
            if not apply:
                sys.stderr.write("(dry run: nothing written; use --apply to write the change)\n")
    return 1 if result.get("is_error") else 0


def run_reused(
    name: str,
    raw_input: str,
    workspace: Path,
    *,
    apply: bool = False,
    as_json: bool = False,
    allow_mcp: list[str] | None = None,
    trust: bool = False,
) -> int | None:
    """`agentls tool` through a tool server; None: run it the direct way instead (the
    socket was refused, with a warning on stderr)."""
    if not workspace.is_dir():
        sys.stderr.write(f"agentls: workspace {workspace} is not a folder\n")
        return 1
    root = workspace.resolve()
    tool_input = parse_input(raw_input)
    if tool_input is None:
        return 2
    from agentls import credentials

    env = credentials.environ()
    params: ToolParams = {
        "workspace": str(root),
        "name": name,
        "input": tool_input,
        "apply": apply,
        "trust": trust,
    }
    try:
        if not hasattr(socket, "AF_UNIX") or not hasattr(os, "getuid"):
            raise Refused("this system has no Unix sockets")
        path = socket_path(root, allow_mcp, env)
        command = [sys.executable, "-m", "agentls.headless.toolserver", "--socket", str(path)]
        command += ["--workspace", str(root), "--idle", str(idle_seconds(env))]
        command += ["--allow-mcp-json", json.dumps(allow_mcp or [])]
        answer = request(connect_or_start(path, command, env), params)
    except Refused as exc:
        sys.stderr.write(f"agentls: not reusing a tool server: {exc}; running directly\n")
        return None
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"agentls: {exc}\n")
        return 1
    sys.stderr.write(str(answer.get("stderr") or ""))
    if answer.get("error"):
        sys.stderr.write(f"agentls: {answer['error']}\n")
        return 1
    diff = str(answer.get("diff") or "")
    result = answer.get("result")
    if not isinstance(result, dict):
        sys.stderr.write("agentls: the tool server's answer has no tool result\n")
        return 1
    return print_result(result, diff, apply=apply, as_json=as_json)
