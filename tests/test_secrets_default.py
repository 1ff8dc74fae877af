"""Secret files are denied by default; the agent's API key never reaches the model,
transcripts, tool output or child processes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentls.agent.framework.registry import ToolPool
from agentls.agent.permissions.approval import PermissionMode
from agentls.agent.permissions.guards import secret_file_denial
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.safety import load_safety
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.tools import builtin_tools
from agentls.tools.run_command import RunCommand
from agentls.workspace import Workspace
from agentls.workspace.secrets import Redactor, SecretMatcher
from agentls.workspace.shadow import ShadowRegistry
from tests.agent_support import close_at_loop_end
from tests.shadow_support import make_ctx

KEY = "sk-ant-api03-TESTKEY-0123456789abcdefghij"

SECRET = [
    ".env",
    ".env.local",
    "config/.env.production",
    "certs/server.pem",
    "deploy.key",
    "home/.ssh/id_rsa",
    "id_ed25519",
    ".netrc",
    "/home/u/.aws/credentials",
    "/home/u/.config/gcloud/application_default_credentials.json",
    "/home/u/.azure/accessTokens.json",
    "/home/u/.docker/config.json",
    ".npmrc",
    ".pypirc",
]
NOT_SECRET = [".env.example", "id_rsa.pub", "src/app.py", "environment.py", "keys.py", "envs/a"]


@pytest.mark.parametrize("path", SECRET)
def test_default_patterns_cover_keys_and_credentials(path: str) -> None:
    assert SecretMatcher().is_secret(path), path


@pytest.mark.parametrize("path", NOT_SECRET)
def test_ordinary_files_and_templates_are_not_secret(path: str) -> None:
    assert not SecretMatcher().is_secret(path), path


def test_a_project_under_a_credential_folder_is_not_wholly_secret(tmp_path: Path) -> None:
    root = tmp_path / ".azure" / "project"
    matcher = SecretMatcher(roots=[root])
    assert not matcher.is_secret(root / "src" / "app.py")
    assert matcher.is_secret(root / ".env")


def _tools() -> dict[str, object]:
    return {t.name: t for t in builtin_tools()}


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
@pytest.mark.parametrize(
    ("tool", "input"),
    [
        ("read_file", {"path": ".env"}),
        ("read_file", {"path": "sub/.env.production"}),
        ("grep", {"pattern": "KEY", "path": ".env"}),
        ("edit_file", {"path": "certs/server.pem", "old_string": "a", "new_string": "b"}),
        ("read_file", {"path": "notes.txt"}),  # a symlink to .env
    ],
)
async def test_reading_secrets_is_denied_by_default_in_every_mode(
    tmp_path: Path, mode: PermissionMode, tool: str, input: dict[str, str]
) -> None:
    (tmp_path / ".env").write_text("DB_PASSWORD=hunter2-in-env\n")
    (tmp_path / "notes.txt").symlink_to(tmp_path / ".env")
    policy = RulePolicy(mode=mode, bypass_enabled=True)
    pipeline = Pipeline(ToolPool(builtin_tools()), policy)
    result = await pipeline.execute(ToolCall("1", tool, input), make_ctx(Workspace([tmp_path])))
    assert result.is_error
    assert "secret" in str(result.content)
    assert "hunter2" not in str(result.content)


async def test_templates_stay_readable(tmp_path: Path) -> None:
    (tmp_path / ".env.example").write_text("DB_PASSWORD=\n")
    pipeline = Pipeline(ToolPool(builtin_tools()), RulePolicy())
    result = await pipeline.execute(
        ToolCall("1", "read_file", {"path": ".env.example"}), make_ctx(Workspace([tmp_path]))
    )
    assert not result.is_error
    assert "DB_PASSWORD=" in str(result.content)


def test_a_command_naming_a_secret_file_is_never_auto_allowed(tmp_path: Path) -> None:
    rules_safety = load_safety(
        [tmp_path], home=tmp_path / "h", section={"permissions": {"allow": ["Bash(cat:*)"]}}
    )
    policy = rules_safety.policy()
    tool = RunCommand()
    ctx = make_ctx(Workspace([tmp_path]))
    plain = policy.evaluate(tool, tool.parse_input({"command": "cat README"}), ctx)
    secret = policy.evaluate(tool, tool.parse_input({"command": "cat .env"}), ctx)
    assert plain.behavior == "allow"
    assert secret.behavior == "ask"
    assert ".env" in secret.reason


def test_user_settings_replace_patterns_a_project_can_only_add(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = load_safety(
        [tmp_path],
        home=home,
        project_section={"secrets": {"patterns": [], "extraPatterns": ["*.secret"]}},
    )
    assert project.secrets.is_secret(".env")
    assert project.secrets.is_secret("a/b.secret")
    assert any("secrets.patterns" in p for p in project.problems)
    user = load_safety(
        [tmp_path], home=home, section={"secrets": {"patterns": ["vault/**"], "exceptions": []}}
    )
    assert not user.secrets.is_secret(".env")
    assert user.secrets.is_secret("vault/x")
    # the tools' view of a workspace follows the settings the host loaded for it
    workspace, other = Workspace([tmp_path]), Workspace([tmp_path])
    workspace.services.secrets = user.secrets
    assert workspace.services.secrets is user.secrets
    assert other.services.secrets.is_secret(".env")  # another workspace keeps the defaults


def test_redactor_and_env_scrub_by_value() -> None:
    redactor = Redactor.from_env({"ANTHROPIC_API_KEY": KEY})
    assert KEY not in redactor.redact(f"key={KEY}!")
    assert "REDACTED" in redactor.redact(KEY)
    env = redactor.scrub_env({"HOME": "/h", "COPY_OF_IT": f"x{KEY}y"})
    assert env == {"HOME": "/h"}
    assert Redactor.from_env({"ANTHROPIC_API_KEY": "short"}).values == ()


async def test_child_processes_never_see_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("HARMLESS_LOOKING", KEY)  # the same value under another name
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hi\n")
    tool = RunCommand(shadows=ShadowRegistry(base_dir=tmp_path / "shadows"))
    output = await tool.call(tool.parse_input({"command": "env"}), make_ctx(Workspace([root])))
    text = str(output.content)
    assert "PATH=" in text
    assert KEY not in text
    # removed from the environment, not just redacted from the output
    assert "ANTHROPIC_API_KEY" not in text
    assert "HARMLESS_LOOKING" not in text


async def test_the_key_never_reaches_the_model_or_the_transcript(
    api: ScriptedMessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text(f"somebody pasted {KEY} here\n")
    safety = load_safety([root], home=tmp_path / "home")
    settings = AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}, retry_base_delay=0.01
    )
    config = SessionConfig(
        settings=settings,
        workspace=Workspace([root]),
        tools=builtin_tools(),
        permissions=safety.policy(),
        hooks=safety.hooks(),
        transcript_dir=tmp_path / "transcripts",
    )
    api.extend(tool_turn(("read_file", {"path": "notes.txt"})), text_turn("read it"))
    session = close_at_loop_end(AgentSession(AnthropicModelClient(settings), config))
    result = await session.run("what is in notes.txt?")
    assert result.status == "completed"
    assert api.message_requests[0].api_key == KEY  # the key is only ever a header
    for request in api.message_requests:
        assert KEY not in request.body.decode()
    sent = api.message_requests[1].tool_results()[0]
    assert "REDACTED" in str(sent["content"])
    assert "somebody pasted" in str(sent["content"])
    transcript = session.transcript.path.read_text()
    assert KEY not in transcript
    assert "REDACTED" in transcript
    assert os.environ["ANTHROPIC_API_KEY"] == KEY


def test_folder_walks_skip_what_a_read_would_be_denied(tmp_path: Path) -> None:
    safety = load_safety(
        [tmp_path],
        home=tmp_path / "home",
        section={"permissions": {"deny": ["Read(./private/**)", "read_file(*.sql)"]}},
    )
    workspace = Workspace([tmp_path])
    workspace.services.secrets = safety.secrets  # what the server does when settings load
    walker = workspace.services.secrets  # what grep / list_files call per file
    assert walker.blocks_reading(tmp_path / "private" / "notes.md")
    assert walker.blocks_reading("dump.sql")
    assert walker.blocks_reading(tmp_path / ".env")
    assert not walker.blocks_reading(tmp_path / "src" / "app.py")
    assert "deny rule `Read(./private/**)`" in (walker.reading_blocked_by("private/x") or "")
    # searching the denied folder itself is denied outright; the workspace is not
    grep = _tools()["grep"]
    ctx = make_ctx(Workspace([tmp_path]))
    policy = safety.policy()

    def verdict(input: dict[str, str]) -> str:
        parsed = grep.parse_input(input)  # type: ignore[attr-defined]
        if secret_file_denial("grep", parsed, ctx):  # the pipeline's step, before the rules
            return "deny"
        return policy.evaluate(grep, parsed, ctx).behavior  # type: ignore[arg-type]

    assert verdict({"pattern": "x", "path": "private"}) == "deny"
    assert verdict({"pattern": "x", "path": ".ssh"}) == "deny"
    assert verdict({"pattern": "x"}) == "allow"


async def test_grep_skips_secret_files_but_finds_the_rest(tmp_path: Path) -> None:
    from agentls.agent.framework.context import ToolContext
    from agentls.tools.grep import Grep, GrepInput
    from agentls.workspace import ChangeSet, Workspace

    (tmp_path / ".env").write_text("TOKEN=needle-in-env\n")
    (tmp_path / "id_rsa").write_text("needle-in-key\n")
    (tmp_path / "app.py").write_text("x = 'needle-in-code'\n")
    ctx = ToolContext(session_id="s", workspace=Workspace([tmp_path]), changes=ChangeSet())
    out = await Grep().call(GrepInput(pattern="needle"), ctx)
    assert "needle-in-code" in out
    assert "needle-in-env" not in out
    assert "needle-in-key" not in out
