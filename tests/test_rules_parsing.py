"""Rule syntax, Claude Code name mapping, path and command specifiers, precedence, files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentls.agent.rules.rule import RuleSet, Subject, parse_rule, parse_rules
from agentls.agent.rules.shell import split_command
from agentls.agent.safety import load_safety


def _rule(text: str, behavior: str = "allow", root: Path = Path("/ws"), home: Path = Path("/h")):
    rule, problem = parse_rule(text, behavior, "test", root=root, home=home)  # type: ignore[arg-type]
    return rule, problem


def _paths(tool: str, *paths: str) -> Subject:
    return Subject(tool, tuple(paths))


def test_claude_names_map_onto_ours() -> None:
    for claude, ours in [
        ("Read", "read_file"),
        ("Edit", "edit_file"),
        ("MultiEdit", "edit_file"),
        ("Write", "write_file"),
        ("Bash", "run_command"),
        ("Grep", "grep"),
        ("Glob", "list_files"),
        ("LS", "list_files"),
    ]:
        rule, problem = _rule(claude)
        assert rule is not None
        assert problem is None
        assert rule.covers_tool(ours), claude


def test_claude_read_and_edit_cover_their_families_like_claude_code() -> None:
    read, _ = _rule("Read(./.env)")
    edit, _ = _rule("Edit(src/**)")
    assert read is not None
    assert edit is not None
    assert {t for t in ("read_file", "grep", "list_files") if read.covers_tool(t)} == {
        "read_file",
        "grep",
        "list_files",
    }
    assert edit.covers_tool("write_file")
    assert not edit.covers_tool("delete_file")


def test_deny_on_one_file_tool_covers_its_siblings_but_allow_does_not() -> None:
    deny, _ = _rule("edit_file(secret.txt)", "deny")
    allow, _ = _rule("edit_file(src/**)", "allow")
    assert deny is not None
    assert allow is not None
    assert all(deny.covers_tool(t) for t in ("write_file", "rename_file", "delete_file"))
    assert not allow.covers_tool("write_file")
    assert not allow.covers_tool("delete_file")
    read_deny, _ = _rule("read_file(.env)", "deny")
    assert read_deny is not None
    assert read_deny.covers_tool("grep")


@pytest.mark.parametrize(
    "text",
    [
        "Bash(npm test",  # unbalanced
        "Bash()",  # empty specifier
        "Read (x) y",
        "",
        "mcp__github(foo)",  # MCP takes no specifier
        "mcp__",
        "NotebookRead(nb.ipynb)",  # no equivalent here
        "9tool",
    ],
)
def test_unparseable_rules_are_reported_and_dropped(text: str) -> None:
    rule, problem = _rule(text, "deny")
    assert rule is None
    assert problem
    assert "ignored" in problem


def test_a_non_string_rule_is_reported() -> None:
    rules, problems = parse_rules({"allow": [42, "read_file"], "deny": "Bash"}, "f", root=Path("/"))
    assert [r.text for r in rules] == ["read_file"]
    assert any("42" in p for p in problems)
    assert any("must be a list" in p for p in problems)


def test_unknown_tool_names_are_noted_but_kept() -> None:
    rule, problem = parse_rule(
        "read_flie(x)", "deny", "f", root=Path("/"), known_tools={"read_file"}
    )
    assert rule is not None
    assert problem
    assert "no tool named read_flie" in problem


def test_path_specifiers_relative_absolute_home_and_gitignore_depth(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    cases = {
        "./.env": ([f"{root}/.env"], [f"{root}/sub/.env"]),
        ".env": ([f"{root}/.env", f"{root}/sub/.env"], [f"{root}/.envrc"]),
        "/src/**": ([f"{root}/src/a.py", f"{root}/src/x/b.py"], [f"{root}/lib/src/a.py"]),
        "src/**": ([f"{root}/src/a.py"], [f"{root}/other/src/a.py", f"{root}/srcs/a"]),
        "*.pem": ([f"{root}/a/b/c.pem"], [f"{root}/c.pem.txt"]),
        f"/{tmp_path}/elsewhere/**": ([f"{tmp_path}/elsewhere/x"], [f"{root}/x"]),
        "~/.ssh/**": ([f"{home}/.ssh/id_rsa"], [f"{root}/.ssh/id_rsa"]),
    }
    for spec, (hits, misses) in cases.items():
        rule, problem = _rule(f"read_file({spec})", "deny", root=root, home=home)
        assert rule is not None, problem
        for path in hits:
            assert rule.matches_any(_paths("read_file", path)), (spec, path)
        for path in misses:
            assert not rule.matches_any(_paths("read_file", path)), (spec, path)


def test_paths_outside_the_rule_base_never_match(tmp_path: Path) -> None:
    rule, _ = _rule("edit_file(**)", root=tmp_path / "ws")
    assert rule is not None
    assert not rule.matches_path_all(_paths("edit_file", "/etc/passwd"))
    assert rule.matches_path_all(_paths("edit_file", f"{tmp_path}/ws/a.txt"))


def test_an_allowed_path_reached_through_a_symlink_to_elsewhere_is_not_allowed() -> None:
    rule, _ = _rule("edit_file(src/**)")
    assert rule is not None
    linked = Subject("edit_file", ("/ws/src/link",), ("/home/me/.bashrc",))
    assert not rule.matches_path_all(linked)


def test_command_specifiers_prefix_wildcard_and_exact() -> None:
    prefix, _ = _rule("Bash(npm run test:*)")
    wild, _ = _rule("run_command(git * main)")
    trailing, _ = _rule("run_command(ls *)")
    exact, _ = _rule("run_command(make build)")
    assert prefix
    assert wild
    assert trailing
    assert exact
    assert prefix.command
    assert prefix.command.matches("npm run test")
    assert prefix.command.matches("npm run test --watch")
    assert prefix.command.matches("npm run test:unit")  # "starts with", as Claude Code documents
    assert not prefix.command.matches("npm run build")
    assert wild.command
    assert wild.command.matches("git push origin main")
    assert not wild.command.matches("git push origin dev")
    assert trailing.command
    assert trailing.command.matches("ls")
    assert trailing.command.matches("ls -la")
    assert not trailing.command.matches("lsblk")
    assert exact.command
    assert exact.command.matches("make build")
    assert not exact.command.matches("make build-all")


def test_mcp_server_and_tool_rules() -> None:
    server, _ = _rule("mcp__github", "deny")
    star, _ = _rule("mcp__github__*", "deny")
    tool, _ = _rule("mcp__github__create_issue", "deny")
    assert server
    assert star
    assert tool
    assert server.covers_tool("mcp__github__list_prs")
    assert star.covers_tool("mcp__github__x")
    assert not server.covers_tool("mcp__githubx__list")
    assert tool.covers_tool("mcp__github__create_issue")
    assert not tool.covers_tool("mcp__github__list_prs")


def test_precedence_deny_beats_ask_beats_allow_wherever_written() -> None:
    rules = RuleSet()
    for lists, source in [
        ({"allow": ["edit_file(src/**)"]}, "user"),
        ({"ask": ["edit_file(src/config/**)"]}, "project"),
        ({"deny": ["edit_file(src/config/secret.py)"]}, "local"),
    ]:
        found, problems = parse_rules(lists, source, root=Path("/ws"))
        assert not problems
        rules.extend(found)
    secret = _paths("edit_file", "/ws/src/config/secret.py")
    config = _paths("edit_file", "/ws/src/config/app.py")
    plain = _paths("edit_file", "/ws/src/app.py")
    assert rules.first_hit("deny", secret) is not None
    assert rules.first_hit("deny", config) is None
    assert rules.first_hit("ask", config) is not None
    assert rules.first_hit("ask", plain) is None
    assert rules.allowing(plain) is not None


def test_compound_command_needs_every_part_allowed() -> None:
    rules = RuleSet()
    found, _ = parse_rules(
        {"allow": ["run_command(npm test:*)", "run_command(git status)"]}, "u", root=Path("/")
    )
    rules.extend(found)
    ok = Subject("run_command", command=split_command("npm test && git status"))
    bad = Subject("run_command", command=split_command("npm test && rm -rf ~"))
    assert rules.allowing(ok) is not None
    assert rules.allowing(bad) is None


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_claude_code_settings_files_are_merged(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    _write(
        home / ".claude" / "settings.json",
        {"permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(~/.ssh/**)"]}},
    )
    _write(
        root / ".claude" / "settings.json",
        {"permissions": {"deny": ["Bash(curl:*)"], "defaultMode": "acceptEdits"}},
    )
    _write(root / ".claude" / "settings.local.json", {"permissions": {"ask": ["Edit(docs/**)"]}})
    safety = load_safety([root], home=home)
    texts = {(r.behavior, r.text) for r in safety.rules.rules}
    assert ("allow", "Bash(npm test:*)") in texts
    assert ("deny", "Read(~/.ssh/**)") in texts
    assert ("deny", "Bash(curl:*)") in texts
    assert ("ask", "Edit(docs/**)") in texts
    assert safety.mode == "acceptEdits"
    assert not safety.problems


def test_bad_settings_files_are_reported_not_fatal(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text("{not json")
    _write(root / ".claude" / "settings.local.json", {"permissions": {"deny": ["Bash(rm"]}})
    safety = load_safety([root], home=home, section={"permissions": {"defaultMode": "yolo"}})
    assert any("invalid JSON" in p for p in safety.problems)
    assert any("Bash(rm" in p for p in safety.problems)
    assert any("yolo" in p for p in safety.problems)
    assert safety.mode == "default"
    assert not safety.rules.rules


def test_untrusted_project_settings_keep_only_deny_and_ask(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    _write(
        root / ".claude" / "settings.json",
        {
            "permissions": {"allow": ["Bash"], "deny": ["Bash(curl:*)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
        },
    )
    trusted = load_safety([root], home=home)
    untrusted = load_safety([root], home=home, section={"trustProjectSettings": False})
    assert {r.behavior for r in trusted.rules.rules} == {"allow", "deny"}
    assert {r.behavior for r in untrusted.rules.rules} == {"deny"}
    assert trusted.hook_config
    assert not untrusted.hook_config


def test_reading_claude_files_can_be_switched_off(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    _write(root / ".claude" / "settings.json", {"permissions": {"deny": ["Bash"]}})
    safety = load_safety([root], home=home, section={"readClaudeSettings": False})
    assert not safety.rules.rules
