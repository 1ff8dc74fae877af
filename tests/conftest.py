from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest

from agentls import credentials
from agentls.testing import ScriptedMessagesServer
from tests.agent_support import close_left_open
from tests.artefact_support import Artefacts


@pytest.fixture
def api() -> Iterator[ScriptedMessagesServer]:
    """A scripted Messages-API server; tests add turns with `api.extend(...)`."""
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.fixture(autouse=True)
def _close_sessions() -> Iterator[None]:
    """Sessions a test made are closed when it ends, also on a module-scoped event loop."""
    yield
    close_left_open()


@pytest.fixture(autouse=True)
def _isolated_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test may use the developer's real key, endpoint or cache directory."""
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "AGENTLS_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTLS_TRANSCRIPT_DIR", str(tmp_path_factory.mktemp("transcripts")))
    # this machine's Claude Code managed settings (if any) must not change test results
    monkeypatch.setenv("AGENTLS_MANAGED_SETTINGS", "/nonexistent/managed-settings.json")
    # the real-editor scenarios (Neovim, Emacs, code-server) were written before
    # read-before-edit (issue 29) and edit without reading, like the helpers' scripted ones
    # (lsp_support, acp_support, agent_support); the tests of the check turn it on
    monkeypatch.setenv("AGENTLS_READ_BEFORE_EDIT", "0")
    # keys an `apiKeyHelper` printed are remembered process-wide for redaction: per test
    monkeypatch.setattr(credentials, "_secret_values", set())


if os.environ.get("AGENTLS_TEST_GC"):  # diagnosis: leaks are reported on the test that made them

    @pytest.fixture(autouse=True)
    def _collect_garbage() -> Iterator[None]:
        yield
        gc.collect()


@pytest.fixture(scope="session")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Artefacts:
    """Real Claude Code repositories exported from the fetched mirrors (skips when absent)."""
    return Artefacts(tmp_path_factory)
