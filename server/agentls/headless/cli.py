"""Argument parsing for the headless subcommands; the work is imported only when run.

`agentls.cli.build_parser` calls `add_commands` so `transcript` and `serve` stay where they
are and start-up stays fast (nothing heavy is imported to parse arguments).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from agentls.headless.mcp_options import add_allow_mcp


def _quiet_logging() -> None:
    """The CLI's own output is the UI; library warnings go nowhere unless asked for."""
    import logging  # here: `agentls tool --reuse` never needs it

    from agentls.config.environment import environment

    level = environment()[0].cli_log_level
    root = logging.getLogger()
    if level:
        logging.basicConfig(level=level.upper())
    else:
        root.addHandler(logging.NullHandler())
        logging.getLogger("pygls").setLevel(logging.CRITICAL)


CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
NO_KEY = (
    "agentls: no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or "
    "ANTHROPIC_BASE_URL for a local endpoint (Ollama, llama.cpp, LiteLLM; with AGENTLS_MODEL "
    "naming its model). `agentls doctor` checks the set-up; `agentls demo` runs offline "
    "without a key.\n"
)


def _no_credentials() -> bool:
    """Checked before anything starts: a run without them would only fail, slowly."""
    if any(os.environ.get(name) for name in CREDENTIALS):
        return False
    sys.stderr.write(NO_KEY)
    return True


def _session_id(value: str | None) -> str | None:
    """A full session id for an id prefix (`agentls sessions` shows short ones)."""
    if not value:
        return value
    from agentls.headless.sessions import resolve_id

    return resolve_id(value)


def _saved(session: str | None) -> bool:
    from agentls.headless.sessions import known_ids

    return session in known_ids()


def _run(args: argparse.Namespace) -> int:
    import asyncio

    if _no_credentials():
        return 1
    try:
        session = _session_id(args.session)
    except ValueError as exc:
        sys.stderr.write(f"agentls: {exc}\n")
        return 2
    if getattr(args, "command", None) == "resume" and not _saved(session):
        sys.stderr.write(
            f"agentls: no saved session {args.session!r}: `agentls sessions` lists them\n"
        )
        return 2
    _quiet_logging()
    _trust_if_asked(args, note=False)
    from agentls.headless.commands import RunOptions, run_agent

    output = "apply" if args.apply else "diff" if args.diff else "patch" if args.patch else "show"
    options = RunOptions(
        prompt=args.prompt,
        workspace=Path(args.workspace),
        mode=args.mode,
        session=session,
        output=output,  # type: ignore[arg-type]
        patch=Path(args.patch) if args.patch else None,
        json=args.json,
        allow=list(args.allow or []),
        permission_mode=args.permission_mode,
        allow_mcp=args.allow_mcp,
    )
    code, _ = asyncio.run(run_agent(options))
    return code


def _ask(args: argparse.Namespace) -> int:
    import asyncio

    if _no_credentials():
        return 1
    _quiet_logging()
    _trust_if_asked(args)
    from agentls.headless.commands import ask

    return asyncio.run(
        ask(args.prompt, Path(args.workspace), as_json=args.json, allow_mcp=args.allow_mcp)
    )


def _tools(args: argparse.Namespace) -> int:
    import asyncio

    _quiet_logging()
    _trust_if_asked(args)
    from agentls.headless.commands import list_tools

    return asyncio.run(
        list_tools(
            Path(args.workspace),
            as_json=args.json,
            mode=args.mode,
            allow_mcp=args.allow_mcp,
            deferred=args.deferred,
        )
    )


def _tool(args: argparse.Namespace) -> int:
    from agentls.headless.reuse import run_reused, wanted

    if wanted(args.reuse, os.environ):  # the lean path: nothing heavy imported here
        code = run_reused(
            args.name,
            args.input,
            Path(args.workspace),
            apply=args.apply,
            as_json=args.json,
            allow_mcp=args.allow_mcp,
            trust=args.trust,
        )
        if code is not None:
            return code
    import asyncio

    _quiet_logging()
    _trust_if_asked(args)
    from agentls.headless.commands import run_tool

    return asyncio.run(
        run_tool(
            args.name,
            args.input,
            Path(args.workspace),
            apply=args.apply,
            as_json=args.json,
            allow_mcp=args.allow_mcp,
        )
    )


def _trust_if_asked(args: argparse.Namespace, *, note: bool = True) -> None:
    """`--trust`: trust the workspace's own settings before the server starts (scripts).
    Without it, commands that cannot ask (`note`) say what stays held back; `run` asks on
    a terminal and otherwise prints the server's own message."""
    from agentls.headless.trust import held_back_note, trust_workspace

    if getattr(args, "trust", False):
        trust_workspace(Path(args.workspace))
    elif note:
        held_back_note(Path(args.workspace))


def _saved_session(args: argparse.Namespace) -> tuple[str, Path | None] | None:
    """`apply` and `rewind`: the session id (a unique prefix resolved) and the workspace;
    None after saying why the id is not usable (exit code 2)."""
    try:
        session = _session_id(args.session)
    except ValueError as exc:
        sys.stderr.write(f"agentls: {exc}\n")
        return None
    _quiet_logging()
    return session or args.session, Path(args.workspace) if args.workspace else None


def _apply(args: argparse.Namespace) -> int:
    import asyncio

    from agentls.headless.apply import apply_session

    found = _saved_session(args)
    if found is None:
        return 2
    session, workspace = found
    return asyncio.run(
        apply_session(session, workspace, as_json=args.json, interactive=args.interactive)
    )


def _rewind(args: argparse.Namespace) -> int:
    import asyncio

    from agentls.headless.rewind import rewind_session

    found = _saved_session(args)
    if found is None:
        return 2
    session, workspace = found
    return asyncio.run(rewind_session(session, workspace, args.turn, as_json=args.json))


def _trust(args: argparse.Namespace) -> int:
    from agentls.headless.trust import trust_command

    return trust_command(
        Path(args.workspace), revoke=args.revoke, show=args.show, as_json=args.json
    )


def _commands(args: argparse.Namespace) -> int:
    import asyncio

    _quiet_logging()
    from agentls.headless.commands import list_commands

    return asyncio.run(list_commands(Path(args.workspace), as_json=args.json))


def _doctor(args: argparse.Namespace) -> int:
    _quiet_logging()
    from agentls.headless.doctor import doctor

    return doctor(Path(args.workspace), as_json=args.json, timeout=args.timeout)


def _demo(args: argparse.Namespace) -> int:
    _quiet_logging()
    from agentls.headless.demo import demo

    return demo(keep=args.keep, directory=Path(args.dir) if args.dir else None, as_json=args.json)


def _sessions(args: argparse.Namespace) -> int:
    from agentls.headless.sessions import list_sessions

    workspace = None if args.all else Path(args.workspace)
    return list_sessions(workspace, as_json=args.json)


def _run_options(run: argparse.ArgumentParser) -> None:
    """Options shared by `run` and `resume`."""
    _workspace(run)
    _trust_flag(run)
    run.add_argument(
        "--mode",
        choices=["review", "auto", "plan"],
        help="review: edits collected and shown at the end (default); auto: each edit "
        "applied as it happens; plan: read-only",
    )
    output = run.add_mutually_exclusive_group()
    output.add_argument("--apply", action="store_true", help="write the changes to the files")
    output.add_argument(
        "--diff", action="store_true", help="print only the unified diff on stdout (no writes)"
    )
    output.add_argument("--patch", metavar="FILE", help="write the unified diff to FILE")
    run.add_argument("--json", action="store_true", help="print only the run result as JSON")
    run.add_argument(
        "--allow",
        action="append",
        metavar="RULE",
        help='permission allow rule, e.g. "edit_file" or "run_command(npm test)" (repeatable)',
    )
    run.add_argument(
        "--permission-mode",
        choices=["default", "acceptEdits", "plan"],
        help="permission mode (acceptEdits: edits run without approval)",
    )
    add_allow_mcp(run)


def _workspace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", "-w", default=".", metavar="DIR", help="the project folder (default: .)"
    )


def _trust_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust",
        action="store_true",
        help="trust the workspace's own settings (allow rules, hooks, commands) without "
        "asking; remembered like the trust prompt's answer (see `agentls trust`)",
    )


def add_commands(commands: Any) -> None:
    """Add run, resume, sessions, ask, tools, tool, trust, apply, doctor and demo."""
    run = commands.add_parser(
        "run",
        help="run the agent on a prompt without an editor",
        description="Run the agent headless: starts `agentls serve` and drives it over LSP. "
        "Shows progress and the diff of the agent's changes; nothing is written without "
        "--apply. Exit code: 0 completed, 1 failed (also: no API key, or every edit the run "
        "asked for was refused), 2 cancelled.",
    )
    run.add_argument("prompt", help="what the agent should do")
    run.add_argument("--session", metavar="ID", help="continue this session (an id prefix will do)")
    _run_options(run)
    run.set_defaults(handler=_run)

    resume = commands.add_parser(
        "resume",
        help="continue a saved session (also after a server restart)",
        description="Same as `agentls run PROMPT --session ID`; `agentls sessions` lists ids.",
    )
    resume.add_argument(
        "session", metavar="ID", help="the session to continue (an id prefix will do)"
    )
    resume.add_argument("prompt", help="the follow-up prompt")
    _run_options(resume)
    resume.set_defaults(handler=_run)

    apply = commands.add_parser(
        "apply",
        help="write a session's staged edits (a reviewed dry run) without running the model",
        description="Writes the edits a run left staged (`agentls run` without --apply): each "
        "is rebased onto the file as it is now, or left staged as a conflict when the same "
        "lines changed since. Exit code: 0 all written, 1 something left out, 2 unknown "
        "session.",
    )
    apply.add_argument("session", metavar="ID", help="the session (an id prefix will do)")
    apply.add_argument(
        "--workspace",
        "-w",
        metavar="DIR",
        help="the project folder (default: the session's own workspace)",
    )
    apply.add_argument("--json", action="store_true", help="print the result as JSON")
    apply.add_argument(
        "--interactive",
        "-i",
        action="store_true",
        help="ask hunk by hunk, like `git add -p`: y apply, n leave staged, r reject (with a "
        "reason the model is told), a/d the rest, q quit",
    )
    apply.set_defaults(handler=_apply)

    rewind = commands.add_parser(
        "rewind",
        help="list a session's turns, or roll it back to the end of one (--turn N)",
        description="Without --turn: each turn's prompt and the files it changed. With it: "
        "the history goes back to the end of turn N, its staged edits come back, and edits "
        "applied since are staged in reverse (write them with `agentls apply`).",
    )
    rewind.add_argument("session", metavar="ID", help="the session (an id prefix will do)")
    rewind.add_argument("--turn", type=int, metavar="N", help="the turn to go back to (from 1)")
    rewind.add_argument(
        "--workspace", "-w", metavar="DIR", help="the project folder (default: the session's)"
    )
    rewind.add_argument("--json", action="store_true", help="print the result as JSON")
    rewind.set_defaults(handler=_rewind)

    sessions = commands.add_parser(
        "sessions", help="list saved sessions (date, workspace, first prompt, status, tokens)"
    )
    _workspace(sessions)
    sessions.add_argument("--all", action="store_true", help="every workspace, not just this one")
    sessions.add_argument("--json", action="store_true", help="the list as JSON")
    sessions.set_defaults(handler=_sessions)

    ask = commands.add_parser("ask", help="ask a read-only question; the answer is Markdown")
    ask.add_argument("prompt")
    _workspace(ask)
    _trust_flag(ask)
    ask.add_argument("--json", action="store_true", help="print the result object as JSON")
    add_allow_mcp(ask)
    ask.set_defaults(handler=_ask)

    tools = commands.add_parser(
        "tools",
        help="list the tools (--json: the definitions exactly as the model gets them)",
    )
    _workspace(tools)
    _trust_flag(tools)
    tools.add_argument("--json", action="store_true", help="the tool definitions as JSON")
    tools.add_argument("--mode", choices=["review", "auto", "plan"], default="review")
    tools.add_argument(
        "--deferred",
        action="store_true",
        help="with --json: also the deferred tools (marked defer_loading)",
    )
    add_allow_mcp(tools)
    tools.set_defaults(handler=_tools)

    tool = commands.add_parser("tool", help="run one tool directly (no model)")
    tool.add_argument("name", help="tool name, e.g. read_file")
    tool.add_argument(
        "input", nargs="?", default="{}", help='tool input as JSON, e.g. \'{"path": "a.py"}\''
    )
    _workspace(tool)
    _trust_flag(tool)
    tool.add_argument("--apply", action="store_true", help="write a write tool's change")
    tool.add_argument("--json", action="store_true", help="print {content, is_error} as JSON")
    tool.add_argument(
        "--reuse",
        action="store_true",
        help="call through a tool server kept running for this workspace (started on "
        "demand, exits after AGENTLS_TOOL_SERVER_IDLE seconds idle, default 600); "
        "AGENTLS_TOOL_SERVER=1 turns it on for scripts",
    )
    add_allow_mcp(tool)
    tool.set_defaults(handler=_tool)

    trust = commands.add_parser(
        "trust",
        help="trust this workspace's own agentls settings (what they loosen is held back "
        "until then)",
        description="A repository's own settings that loosen safety (allow rules, hooks, "
        "lint/tests commands, language servers, auto modes) apply only once you trust the "
        "workspace; the answer is remembered until those settings change. Editors ask with "
        "a prompt; this records the same answer.",
    )
    _workspace(trust)
    choice = trust.add_mutually_exclusive_group()
    choice.add_argument("--revoke", action="store_true", help="do not trust it (hold back)")
    choice.add_argument("--show", action="store_true", help="only show what would be trusted")
    trust.add_argument("--json", action="store_true", help="the trust state as JSON")
    trust.set_defaults(handler=_trust)

    custom = commands.add_parser(
        "commands", help="list the custom commands a prompt can start with (/name args)"
    )
    _workspace(custom)
    custom.add_argument("--json", action="store_true", help="the list (and problems) as JSON")
    custom.set_defaults(handler=_commands)

    doctor = commands.add_parser("doctor", help="check the environment agentls needs")
    _workspace(doctor)
    doctor.add_argument("--json", action="store_true", help="the checks as JSON")
    doctor.add_argument(
        "--timeout", type=float, default=15.0, help="seconds for the endpoint check (default 15)"
    )
    doctor.set_defaults(handler=_doctor)

    demo = commands.add_parser(
        "demo", help="offline demo: the agent fixes two bugs in a sample project (no API key)"
    )
    demo.add_argument(
        "--dir", metavar="DIR", help="copy the sample project here (default: a temp dir)"
    )
    demo.add_argument(
        "--keep", action="store_true", help="keep the temp dir afterwards, to look at the result"
    )
    demo.add_argument("--json", action="store_true", help="print the run result as JSON")
    demo.set_defaults(handler=_demo)
