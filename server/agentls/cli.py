"""The `agentls` command line. Subcommands import lazily so each starts fast."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path


def _transcript(args: argparse.Namespace) -> int:
    from agentls.agent.persistence.transcript import read_records, render_tree, resolve_transcript
    from agentls.headless.sessions import resolve_id

    try:
        name = args.transcript if Path(args.transcript).exists() else resolve_id(args.transcript)
        path = resolve_transcript(name)
    except ValueError as exc:  # an ambiguous session id prefix
        sys.stderr.write(f"agentls: {exc}\n")
        return 2
    except FileNotFoundError as exc:
        sys.stderr.write(f"agentls: {exc}\n")
        return 2
    records = list(read_records(path))
    if args.json:
        sys.stdout.write(json.dumps(records, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(render_tree(records, path) + "\n")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from agentls.lsp.serve import serve

    return serve(args)


def _acp(args: argparse.Namespace) -> int:
    from agentls.acp.serve import serve as serve_acp

    return serve_acp(args)


def _settings_schema(args: argparse.Namespace) -> int:
    from agentls.config.schema import main as schema_main

    flags = ["--root", str(args.root)] + (["--write"] if args.write else [])
    return schema_main(flags + (["--check"] if args.check else []))


def build_parser() -> argparse.ArgumentParser:
    from agentls import __version__

    parser = argparse.ArgumentParser(
        prog="agentls", description="A coding agent for every LSP editor."
    )
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    transcript = commands.add_parser(
        "transcript", help="show a session transcript as a tree of turns and tool calls"
    )
    transcript.add_argument(
        "transcript", help="a transcript .jsonl file or a session id (an id prefix will do)"
    )
    transcript.add_argument("--tree", action="store_true", help="tree view (the default)")
    transcript.add_argument("--json", action="store_true", help="print the records as JSON")
    transcript.set_defaults(handler=_transcript)
    serve = commands.add_parser("serve", help="run the language server (stdio by default)")
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="serve one client over TCP")
    transport.add_argument("--ws", metavar="HOST:PORT", help="serve one client over WebSocket")
    serve.add_argument("--log-file", metavar="FILE", help="write the server log here")
    serve.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level (default WARNING)",
    )
    serve.set_defaults(handler=_serve)
    acp = commands.add_parser(
        "acp", help="run the agent for Agent Client Protocol clients (Zed, JetBrains, …) on stdio"
    )
    acp.add_argument(
        "--settings",
        metavar="JSON|FILE",
        help="your agentls settings section, inline JSON or a JSON file (user level)",
    )
    acp.add_argument("--log-file", metavar="FILE", help="write the log here (default: stderr)")
    acp.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level (default WARNING)",
    )
    acp.add_argument(
        "--login",
        action="store_true",
        help="check the credentials in a terminal (the ACP terminal login) and say how to set them",
    )
    acp.set_defaults(handler=_acp)
    schema = commands.add_parser(
        "settings-schema", help="print the JSON Schema of the settings (or update/check the repo's)"
    )
    schema.add_argument("--root", default=".", help="repository root for --write/--check")
    schema_action = schema.add_mutually_exclusive_group()
    schema_action.add_argument(
        "--write",
        action="store_true",
        help="regenerate docs/settings.schema.json and the VS Code extension's settings",
    )
    schema_action.add_argument("--check", action="store_true", help="exit 1 if they are stale")
    schema.set_defaults(handler=_settings_schema)
    from agentls.headless.cli import add_commands

    add_commands(commands)
    return parser


QUICK_EXIT = frozenset({"serve", "tool", "tools", "commands"})
"""Commands whose process ends without the interpreter's teardown (see `quick_exit`)."""


def quick_exit(code: int) -> int:
    """End the process at once: exit handlers run and output is flushed, but the
    interpreter's teardown (freeing hundreds of modules: up to a second on a busy
    machine, after the answer is out; issue 33) is skipped. Only when no other thread is
    left, so nothing is cut short; otherwise returns `code` for a normal exit."""
    import atexit
    import contextlib
    import os
    import threading

    if threading.active_count() > 1:
        return code
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the process entry (console script, `python -m agentls`)
        from agentls.credentials import isolate

        isolate()  # re-executes without the API key in /proc/self/environ
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args)
    if argv is None and args.command in QUICK_EXIT:
        return quick_exit(result)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
