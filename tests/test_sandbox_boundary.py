"""The sandbox boundary, attacked through the real tools (run_command, run_tests).

Each test is an attack that succeeds without the sandbox: run them with
`AGENTLS_TEST_SANDBOX=off` to see every one fail (tests/sandbox_support.py).
"""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.services import ToolServices
from agentls.agent.framework.tool import output_to_content
from agentls.tools.run_command import RunCommand, RunCommandConfig, RunCommandInput
from agentls.tools.run_tests import RunTestsInput, RunTestsTool
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry
from tests.sandbox_support import fake_home, have, marked, sandboxed
from tests.shadow_support import make_ctx, stage

SECRETS = ("ssh-secret-7f3a", "aws-secret-91c2", "gh-secret-55d1", "netrc-secret-0b7e")
DOTENV = "DOTENV_SECRET=dotenv-secret-c4e8\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("on disk\n")
    (folder / ".env").write_text(DOTENV)
    (folder / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (folder / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    return folder


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[ShadowRegistry]:
    shadows = ShadowRegistry(base_dir=tmp_path / "shadows")
    yield shadows
    shadows.close()


def _exists(path: Path) -> bool:
    return path.exists()


async def _run(
    registry: ShadowRegistry,
    services: ToolServices,
    command: str,
    changes: ChangeSet | None = None,
    seconds: float = 60,
) -> str:
    tool = RunCommand(RunCommandConfig(kill_grace=0.3), shadows=registry)
    output = await tool.call(
        RunCommandInput(command=command, timeout=seconds), make_ctx(services, changes)
    )
    return str(output.content)


async def test_writes_outside_the_shadow_reach_nothing(
    tmp_path: Path, root: Path, registry: ShadowRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = fake_home(tmp_path, monkeypatch)
    token = uuid.uuid4().hex[:12]
    system = Path(f"/usr/local/agentls-sandbox-test-{token}")
    tmp_marker = Path(f"/tmp/agentls-sandbox-test-{token}")
    command = "; ".join(
        [
            f"echo pwned > {tmp_marker}",
            "echo pwned >> $HOME/.bashrc",
            f"echo pwned >> {home}/.bashrc",
            f"echo pwned > {root}/a.txt",
            f"echo pwned > {root}/new.txt",
            f"echo pwned > {system}",
            "echo fine > created-in-the-copy.txt && echo WROTE-COPY",
        ]
    )
    try:
        text = await _run(registry, sandboxed(Workspace([root])), command)
        assert "WROTE-COPY" in text, text  # the command did run
        assert not _exists(tmp_marker)
        assert (home / ".bashrc").read_text() == "# the user's bashrc\n"
        assert (root / "a.txt").read_text() == "on disk\n"
        assert not (root / "new.txt").exists()
        assert not _exists(system)
    finally:
        for path in (system, tmp_marker):
            path.unlink(missing_ok=True)


async def test_pytest_basetemp_and_junitxml_cannot_touch_the_user(
    tmp_path: Path, root: Path, registry: ShadowRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = fake_home(tmp_path, monkeypatch)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n")
    import sys

    command = (
        f"{sys.executable} -m pytest -p no:cacheprovider -q --basetemp={victim} "
        f"--junitxml={home}/.bashrc test_ok.py; echo RAN-PYTEST"
    )
    text = await _run(registry, sandboxed(Workspace([root])), command)
    assert "RAN-PYTEST" in text
    assert (victim / "keep.txt").read_text() == "precious\n"  # basetemp deletes its folder
    assert (home / ".bashrc").read_text() == "# the user's bashrc\n"


async def test_secrets_cannot_be_read_from_inside_a_command(
    tmp_path: Path, root: Path, registry: ShadowRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = fake_home(tmp_path, monkeypatch)
    reads = [
        f"{home}/.ssh/id_rsa",
        f"{home}/.aws/credentials",
        f"{home}/.config/gh/hosts.yml",
        f"{home}/.netrc",
        f"{root}/.env",
        ".env",
    ]
    command = "; ".join(f"cat {path} 2>&1" for path in reads) + "; ls -a; echo LISTED"
    text = await _run(registry, sandboxed(Workspace([root])), command)
    assert "LISTED" in text
    assert "a.txt" in text
    for secret in (*SECRETS, "dotenv-secret-c4e8"):
        assert secret not in text, text


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello-from-the-host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def listener() -> Iterator[int]:
    """An HTTP service on the host's loopback (a dev database stand-in)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _fetch(url: str, direct: bool) -> str:
    """A command: Python fetching `url` (through the proxy variables unless `direct`)."""
    opener = (
        "urllib.request.build_opener(urllib.request.ProxyHandler({}))"
        if direct
        else ("urllib.request.build_opener()")
    )
    code = (
        "import urllib.request\n"
        "try:\n"
        f"    print({opener}.open({url!r}, timeout=5).read().decode())\n"
        "except Exception as exc:\n"
        "    print('FAILED', type(exc).__name__, exc)\n"
    )
    import shlex
    import sys

    return f"{sys.executable} -c {shlex.quote(code)}"


async def test_network_off_cannot_reach_a_loopback_listener(
    root: Path, registry: ShadowRegistry, listener: int
) -> None:
    url = f"http://127.0.0.1:{listener}/"
    text = await _run(registry, sandboxed(Workspace([root])), _fetch(url, direct=True))
    assert "hello-from-the-host" not in text
    assert "FAILED" in text


async def test_an_allowed_domain_goes_through_the_proxy_and_others_do_not(
    root: Path, registry: ShadowRegistry, listener: int
) -> None:
    services = sandboxed(Workspace([root]), network={"allowedDomains": ["127.0.0.1"]})
    allowed = await _run(registry, services, _fetch(f"http://127.0.0.1:{listener}/", False))
    assert "hello-from-the-host" in allowed, allowed
    refused = await _run(registry, services, _fetch(f"http://127.0.0.2:{listener}/", False))
    assert "hello-from-the-host" not in refused
    assert "FAILED" in refused
    direct = await _run(registry, services, _fetch(f"http://127.0.0.1:{listener}/", True))
    services.close()  # the proxy stops with the services, as at a server's shutdown
    assert "hello-from-the-host" not in direct  # only through the proxy


async def test_local_binding_lets_loopback_services_through(
    root: Path, registry: ShadowRegistry, listener: int
) -> None:
    services = sandboxed(Workspace([root]), allowLocalBinding=True)
    text = await _run(registry, services, _fetch(f"http://127.0.0.1:{listener}/", True))
    assert "hello-from-the-host" in text, text
    outside = await _run(registry, services, _fetch("http://192.0.2.1/", True))
    assert "FAILED" in outside  # still no network beyond the loopback


FORK_MANY = """
import os, time
made = 0
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    made += 1
print('FORKED', made, flush=True)
"""


async def test_a_fork_bomb_stops_at_the_process_limit(root: Path, registry: ShadowRegistry) -> None:
    import shlex
    import sys

    services = sandboxed(Workspace([root]), limits={"processes": 40})
    started = time.monotonic()
    text = await _run(
        registry, services, f"{sys.executable} -c {shlex.quote(FORK_MANY)}", seconds=60
    )
    forked = int(text.split("FORKED", 1)[1].split()[0])
    assert forked < 40, text
    assert time.monotonic() - started < 50  # the children died with the run


HOG = "b = bytearray(1536 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); print('ALLOCATED')"


async def test_a_memory_hog_is_stopped_by_the_limit(root: Path, registry: ShadowRegistry) -> None:
    import shlex
    import sys

    services = sandboxed(Workspace([root]), limits={"memoryMb": 256})
    text = await _run(registry, services, f"{sys.executable} -c {shlex.quote(HOG)}")
    assert "ALLOCATED" not in text
    assert "Exit code: 0" not in text


async def test_cancel_kills_the_whole_sandboxed_tree(root: Path, registry: ShadowRegistry) -> None:
    token = f"4{uuid.uuid4().int % 10**6:06d}"
    command = f"setsid sleep 3{token} & (sleep 4{token} &) ; sleep 5{token}"
    tool = RunCommand(RunCommandConfig(), shadows=registry)
    ctx = make_ctx(sandboxed(Workspace([root])))
    task = asyncio.ensure_future(tool.call(RunCommandInput(command=command), ctx))
    for _ in range(1000):
        if len(marked(token)) >= 3:
            break
        await asyncio.sleep(0.02)
    assert len(marked(token)) >= 3
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    took = time.monotonic() - started
    for _ in range(100):
        if not marked(token):
            break
        await asyncio.sleep(0.02)
    assert not marked(token), [p.cmdline() for p in marked(token)]
    assert took < 2.0  # the cancel itself: figures in bench/sandbox_overhead.py


async def test_a_staged_package_json_script_cannot_escape(
    tmp_path: Path, root: Path, registry: ShadowRegistry
) -> None:
    have("npm")
    outside = tmp_path / "npm-pwned"
    script = f"node -e \"require('fs').writeFileSync('{outside}', 'pwned')\" ; echo RAN-SCRIPT"
    changes = ChangeSet()
    stage(changes, root / "package.json", json.dumps({"name": "x", "scripts": {"test": script}}))
    text = await _run(registry, sandboxed(Workspace([root])), "npm test 2>&1", changes)
    assert "RAN-SCRIPT" in text, text
    assert not outside.exists()


async def test_a_staged_pytest_plugin_cannot_escape(
    tmp_path: Path, root: Path, registry: ShadowRegistry
) -> None:
    import sys

    outside = tmp_path / "plugin-pwned"
    changes = ChangeSet()
    stage(
        changes,
        root / "evilplugin.py",
        f"import pathlib\ntry:\n    pathlib.Path({str(outside)!r}).write_text('pwned')\n"
        "except OSError as exc:\n    print('BLOCKED', exc)\n",
    )
    command = f"{sys.executable} -m pytest -p evilplugin -p no:cacheprovider -q test_ok.py"
    text = await _run(registry, sandboxed(Workspace([root])), command, changes)
    assert "1 passed" in text, text
    assert not outside.exists()


async def test_run_tests_with_an_injected_conftest_leaks_nothing(
    tmp_path: Path,
    root: Path,
    registry: ShadowRegistry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's attack at tool level (tests/test_sandbox_e2e.py runs it through a model):
    a staged conftest writes outside, reads secrets and every environment it can find."""
    home = fake_home(tmp_path, monkeypatch)
    key = "sk-ant-api03-conftest-key-" + uuid.uuid4().hex
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    outside = tmp_path / "conftest-pwned"
    changes = ChangeSet()
    stage(changes, root / "conftest.py", _conftest(outside, home, root))
    tool = RunTestsTool(shadows=registry)
    ctx = make_ctx(sandboxed(Workspace([root])), changes)
    result = output_to_content(await tool.call(RunTestsInput(), ctx))
    text = str(result.content)
    assert "LOOT" in text, text  # the conftest ran and reported what it found
    assert not outside.exists()
    for secret in (*SECRETS, "dotenv-secret-c4e8", key, key[::-1]):
        assert secret not in text, secret
    assert "runs code this session wrote: conftest.py" in text


def _conftest(outside: Path, home: Path, root: Path) -> str:
    """What a prompt-injected model stages: exfiltration through a test failure message."""
    return f"""
import glob, os, pathlib, re
import pytest
found = []
for path in [{str(home)!r} + '/.ssh/id_rsa', {str(root)!r} + '/.env', '.env',
             {str(home)!r} + '/.aws/credentials', '/proc/1/environ',
             '/proc/%d/environ' % os.getppid(), *glob.glob('/proc/[0-9]*/environ')]:
    try:
        found.append(pathlib.Path(path).read_bytes().decode('utf-8', 'replace'))
    except OSError:
        pass
try:
    pathlib.Path({str(outside)!r}).write_text('pwned')
except OSError:
    pass
loot = ' '.join(sorted(set(re.findall(r'[\\w-]*(?:secret|sk-ant)[\\w-]*', ' '.join(found)))))


@pytest.fixture(autouse=True)
def _leak():
    raise AssertionError('LOOT ' + loot + ' REVERSED ' + loot[::-1])
"""
