"""`agentls tool --reuse`: a tool server kept running per user and workspace (issue 33).

The CLI runs as a real subprocess; the tool server it starts is a real detached process
with a real `agentls serve` behind it. Every test uses its own runtime folder
(`XDG_RUNTIME_DIR`, short: a Unix socket path has at most 107 bytes) and kills whatever
was started from it in teardown, so no server outlives a test.

The security tests are written as an attacker: a forged tool server waits on the socket
path the CLI would use and answers every call with FORGED; each check (folder owner and
mode, symlinks, the socket's owner, one socket per workspace, trust re-checked) is what
keeps the CLI away from it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.headless.reuse import HELLO, server_key
from tests.cli_support import cli_env, run_cli, write_tree

FORGED = "FORGED by another user"


@pytest.fixture
def runtime() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="agls-", dir="/tmp"))
    folder.chmod(0o700)
    try:
        yield folder
    finally:
        leftovers = _stop_everything(folder)
        shutil.rmtree(folder, ignore_errors=True)
        assert leftovers == [], f"processes still running after SIGKILL: {leftovers}"


def _started_from(folder: Path) -> list[int]:
    """Processes (tool servers, their language servers) whose environment names `folder`."""
    marker = f"XDG_RUNTIME_DIR={folder}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if marker in (entry / "environ").read_bytes().split(b"\0") and _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _stop_everything(folder: Path) -> list[int]:
    for signum, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
        pids = _started_from(folder)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signum)
        deadline = time.monotonic() + grace
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if _alive(p)]
            time.sleep(0.1)
    return _started_from(folder)


def _env(tmp_path: Path, runtime: Path, **extra: str) -> dict[str, str]:
    env = cli_env(None, tmp_path / "state", XDG_RUNTIME_DIR=str(runtime), **extra)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")  # the trust store
    env.setdefault("AGENTLS_TOOL_SERVER_IDLE", "120")
    return env


def _project(root: Path, text: str = "def a():\n    return 1\n") -> Path:
    return write_tree(root, {"a.py": text, "b.py": "import a\n"})


def _tool(project: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    done = run_cli("tool", *args, "-w", str(project), env=env)
    return done.code, done.stdout, done.stderr


def _read(project: Path, env: dict[str, str], *extra: str) -> tuple[int, str, str]:
    return _tool(project, env, "read_file", '{"path": "a.py"}', *extra)


def _expected_socket(runtime: Path, project: Path, env: dict[str, str]) -> Path:
    return runtime / "agentls" / f"tool-{server_key(project.resolve(), None, env)}.sock"


def _servers(runtime: Path) -> list[int]:
    """Tool server processes started from this runtime folder."""
    return [p for p in _started_from(runtime) if b"toolserver" in _cmdline(p)]


def _cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


# -- correctness --------------------------------------------------------------------------


def test_reuse_gives_the_direct_output_and_exit_codes(tmp_path: Path, runtime: Path) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    direct = _read(project, env)
    assert direct[0] == 0
    assert "return 1" in direct[1]
    assert _read(project, env, "--reuse") == direct
    [server] = _servers(runtime)
    assert _read(project, env, "--reuse") == direct
    assert _servers(runtime) == [server]  # the second call reused it
    missing = ("read_file", '{"path": "nope.py"}')
    direct_error = _tool(project, env, *missing)
    assert direct_error[0] == 1
    assert "nope.py" in direct_error[2]
    assert _tool(project, env, *missing, "--reuse") == direct_error
    as_json = ("read_file", '{"path": "a.py"}', "--json")
    assert _tool(project, env, *as_json, "--reuse") == _tool(project, env, *as_json)
    bad = _tool(project, env, "read_file", "{nope", "--reuse")
    assert bad[0] == 2
    assert "not valid JSON" in bad[2]


def test_the_environment_variable_turns_it_on(tmp_path: Path, runtime: Path) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime, AGENTLS_TOOL_SERVER="1")
    code, out, _ = _read(project, env)
    assert code == 0
    assert "return 1" in out
    assert len(_servers(runtime)) == 1
    path = _expected_socket(runtime, project, env)
    assert path.is_socket()
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_a_dry_run_edit_through_the_reused_server_writes_nothing(
    tmp_path: Path, runtime: Path
) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    edit = ("edit_file", json.dumps({"path": "a.py", "old_string": "1", "new_string": "2"}))
    code, out, err = _tool(project, env, *edit, "--reuse")
    assert code == 0, err
    assert "+    return 2" in out
    assert "dry run" in err
    assert (project / "a.py").read_text() == "def a():\n    return 1\n"
    code, out, _ = _read(project, env, "--reuse")  # the next call sees nothing staged
    assert code == 0
    assert "return 1" in out
    assert "staged" not in out
    code, out, err = _tool(project, env, *edit, "--reuse", "--apply")
    assert code == 0, err
    assert (project / "a.py").read_text() == "def a():\n    return 2\n"


def test_the_server_exits_when_idle_and_leaves_nothing(tmp_path: Path, runtime: Path) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime, AGENTLS_TOOL_SERVER_IDLE="1")
    assert _read(project, env, "--reuse")[0] == 0
    started = _started_from(runtime)
    assert started, "no tool server was started"
    deadline = time.monotonic() + 60
    while _started_from(runtime) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _started_from(runtime) == []  # the tool server and its language server
    assert not _expected_socket(runtime, project, env).exists()
    assert _read(project, env, "--reuse")[0] == 0  # and the next call starts a new one


# -- an attacker's forged server --------------------------------------------------------


class Forged:
    """A tool server someone else planted: answers every call with FORGED."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.calls = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        answer = {"content": FORGED, "is_error": False}
        response = {"jsonrpc": "2.0", "id": 1, "result": {"result": answer, "diff": ""}}
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.calls += 1
            with conn:
                conn.sendall(f"{HELLO} 1\n".encode())
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    conn.recv(1 << 16)
                    conn.sendall(json.dumps(response).encode() + b"\n")

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.sock.close()


@contextlib.contextmanager
def forged(path: Path) -> Iterator[Forged]:
    server = Forged(path)
    try:
        yield server
    finally:
        server.close()


def _refused(project: Path, env: dict[str, str], fake: Forged) -> None:
    code, out, err = _read(project, env, "--reuse")
    assert FORGED not in out
    assert fake.calls == 0
    assert "not reusing a tool server" in err
    assert code == 0
    assert "return 1" in out


def test_a_world_writable_socket_folder_is_refused(tmp_path: Path, runtime: Path) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    folder = runtime / "agentls"
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)  # anyone could have put a socket here
    with forged(_expected_socket(runtime, project, env)) as fake:
        _refused(project, env, fake)


def test_another_users_socket_folder_is_refused(tmp_path: Path, runtime: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    folder = runtime / "agentls"
    folder.mkdir(mode=0o700)
    with forged(_expected_socket(runtime, project, env)) as fake:
        os.chown(folder, 65534, 65534)
        _refused(project, env, fake)


def test_another_users_socket_is_refused(tmp_path: Path, runtime: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a socket to another user needs root")
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    (runtime / "agentls").mkdir(mode=0o700)
    path = _expected_socket(runtime, project, env)
    with forged(path) as fake:
        os.chown(path, 65534, 65534)
        _refused(project, env, fake)


def test_a_symlinked_socket_folder_is_refused(tmp_path: Path, runtime: Path) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    elsewhere = Path(tempfile.mkdtemp(prefix="agls-x-", dir="/tmp"))
    try:
        (runtime / "agentls").symlink_to(elsewhere)
        with forged(_expected_socket(runtime, project, env)) as fake:
            _refused(project, env, fake)
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


def test_a_symlinked_socket_is_refused(tmp_path: Path, runtime: Path) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    (runtime / "agentls").mkdir(mode=0o700)
    elsewhere = Path(tempfile.mkdtemp(prefix="agls-x-", dir="/tmp"))
    try:
        with forged(elsewhere / "s") as fake:
            _expected_socket(runtime, project, env).symlink_to(elsewhere / "s")
            _refused(project, env, fake)
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


# -- one server per workspace and trust state ---------------------------------------------


def test_a_server_for_workspace_a_never_answers_for_b(tmp_path: Path, runtime: Path) -> None:
    a = _project(tmp_path / "a", "A = 'workspace a'\n")
    b = _project(tmp_path / "b", "B = 'workspace b'\n")
    env = _env(tmp_path, runtime)
    code, out, _ = _read(a, env, "--reuse")
    assert code == 0
    assert "workspace a" in out
    code, out, _ = _read(b, env, "--reuse")
    assert code == 0
    assert "workspace b" in out
    assert "workspace a" not in out
    assert len(_servers(runtime)) == 2
    # a request that names B, sent to A's socket by hand, is refused by A's server
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(_expected_socket(runtime, a, env)))
        sock.settimeout(60)
        params = {"workspace": str(b.resolve()), "name": "read_file", "input": {"path": "a.py"}}
        request = {"jsonrpc": "2.0", "id": 1, "method": "tool", "params": params}
        sock.sendall(json.dumps(request).encode() + b"\n")
        raw = b""
        while chunk := sock.recv(1 << 16):
            raw += chunk
    answer = json.loads(raw.split(b"\n", 1)[1])
    assert "workspace a" not in raw.decode()
    assert "workspace b" not in raw.decode()
    assert "serves" in answer["error"]["message"]


HOOKED = {
    "hooks": {
        "PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "touch hook-ran"}]}]
    }
}


def test_a_reused_server_follows_the_trust_answer(tmp_path: Path, runtime: Path) -> None:
    """The workspace's own hook runs only while it is trusted: revoking trust takes effect
    on the next reused call, as on a fresh server (and trusting it, too)."""
    project = _project(tmp_path / "p")
    write_tree(project, {".claude/settings.json": json.dumps(HOOKED)})
    env = _env(tmp_path, runtime)
    marker = project / "hook-ran"
    assert run_cli("trust", "-w", str(project), env=env).code == 0
    assert _read(project, env, "--reuse")[0] == 0
    assert marker.exists(), "the trusted workspace's hook did not run"
    marker.unlink()
    assert run_cli("trust", "--revoke", "-w", str(project), env=env).code == 0
    code, out, _ = _read(project, env, "--reuse")
    assert code == 0
    assert "return 1" in out
    assert not marker.exists(), "a reused server ran the hook of a workspace no longer trusted"
    code, _, err = _read(project, env, "--reuse", "--trust")
    assert code == 0
    assert "trusted" in err
    assert marker.exists()


def test_a_reused_server_applies_a_deny_rule_added_since_it_started(
    tmp_path: Path, runtime: Path
) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    assert _read(project, env, "--reuse")[0] == 0
    user = Path(env["HOME"]) / ".claude" / "settings.json"
    write_tree(user.parent, {user.name: json.dumps({"permissions": {"deny": ["read_file"]}})})
    direct = _read(project, env)
    assert direct[0] == 1  # what a fresh server does
    assert "return 1" not in direct[1]
    assert _read(project, env, "--reuse") == direct


# -- starting -----------------------------------------------------------------------------


def test_a_stale_socket_is_replaced(tmp_path: Path, runtime: Path) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    (runtime / "agentls").mkdir(mode=0o700)
    path = _expected_socket(runtime, project, env)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))
    dead.close()  # the file stays; nobody answers on it
    stale = path.stat().st_ino
    code, out, err = _read(project, env, "--reuse")
    assert code == 0, err
    assert "return 1" in out
    assert path.is_socket()
    assert path.stat().st_ino != stale
    assert len(_servers(runtime)) == 1


def test_concurrent_first_calls_start_one_server(tmp_path: Path, runtime: Path) -> None:
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    command = [sys.executable, "-m", "agentls", "tool", "read_file", '{"path": "a.py"}']
    command += ["-w", str(project), "--reuse"]
    calls = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    for call in calls:
        out, err = call.communicate(timeout=300)
        assert call.returncode == 0, err
        assert b"return 1" in out
    assert len(_servers(runtime)) == 1


# -- the lean client ------------------------------------------------------------------------


def test_a_reused_call_imports_no_lsp_library(tmp_path: Path, runtime: Path) -> None:
    """The CLI process of a reused call stays on the standard library (issue 33: ~0.4 s
    of every direct call is importing pygls and lsprotocol)."""
    project = _project(tmp_path / "p")
    env = _env(tmp_path, runtime)
    assert _read(project, env, "--reuse")[0] == 0  # the server runs: the fast path follows
    done = run_cli(
        "tool",
        "read_file",
        '{"path": "a.py"}',
        "-w",
        str(project),
        "--reuse",
        env=env,
        python=("-X", "importtime"),
    )
    assert done.code == 0
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "agentls" in imported
    assert imported & {"pygls", "lsprotocol", "pydantic", "pydantic_settings", "rich"} == set()


def test_without_a_runtime_folder_the_sockets_go_to_a_private_cache_folder(
    tmp_path: Path,
) -> None:
    from agentls.headless.reuse import socket_folder

    folder = socket_folder({"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert folder == tmp_path / "cache" / "agentls" / "run"
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_socket_path_too_long_for_unix_sockets_is_refused(tmp_path: Path) -> None:
    from agentls.headless.reuse import Refused, socket_path

    deep = tmp_path / ("x" * 60) / ("y" * 60)
    deep.mkdir(parents=True, mode=0o700)
    with pytest.raises(Refused, match="too long"):
        socket_path(tmp_path, None, {"XDG_RUNTIME_DIR": str(deep)})
