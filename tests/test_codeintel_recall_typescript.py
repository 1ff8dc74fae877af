"""Answers an agent can trust, in TypeScript (issue 31): tsserver types almost every call,
but not one through an `any`-typed value or in a JavaScript file, and leaves those out of
its references. `find_references` lists them as unconfirmed matches with a count (the same
labels as for Python), and `rename_symbol` refuses to leave them unchanged; another class's
method of the same name in a fully typed file is the server's to tell apart and is not
listed. When the server names no use at all, its answer may be partial (here: a caller in
tools/, outside the tsconfig's `include`), and the typed files' matches are listed too.

Real typescript-language-server over `agentls serve` (stdio).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.codeintel_support import reference_lines, tool_input, typescript_bin, write_tree
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

GREETERS = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020"}, '
    '"include": ["src"]}\n',
    "src/greeter.ts": """
        export class Greeter {
          greet(name: string): string {
            return `Hello, ${name}`;
          }
        }
        """,
    "src/typed.ts": """
        import { Greeter } from "./greeter";

        export const a = new Greeter().greet("a");
        """,
    "src/loose.ts": """
        export function viaAny(g: any): string {
          return g.greet("b");
        }

        export function viaCast(g: unknown): string {
          return (g as any).greet("c");
        }
        """,
    "src/robot.ts": """
        export class Robot {
          greet(): string {
            return "beep";
          }
        }

        export const r = new Robot().greet(); // greet in a comment never counts
        """,
    "src/legacy.js": """
        export function old(g) {
          return g.greet("d");
        }
        """,
    "src/clock.ts": """
        export class Clock {
          tick(): number {
            return Date.now();
          }
        }
        """,
    "tools/run.ts": """
        import { Clock } from "../src/clock";

        console.log(new Clock().tick());
        """,
}
CONFIRMED = {("src/greeter.ts", 2), ("src/typed.ts", 3)}
MISSED = {("src/loose.ts", 2), ("src/loose.ts", 6), ("src/legacy.js", 2)}
"""The calls of `Greeter.greet` through `any` and from JavaScript, which tsserver misses."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def greeters(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    folder = typescript_bin()
    root = tmp_path_factory.mktemp("greeters")
    write_tree(root, GREETERS)
    path = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    env = server_env(None, tmp_path_factory.mktemp("transcripts"), PATH=path)
    async with editor_session("neovim", root, env) as editor:
        yield editor


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


async def test_references_add_the_calls_through_any(greeters: FakeEditor) -> None:
    content, is_error = await tool(
        greeters, "find_references", tool_input("src/greeter.ts", 2, "greet")
    )
    assert not is_error, content
    confirmed_text, _, unconfirmed_text = content.partition("unconfirmed match")
    assert "2 confirmed references to `greet`" in confirmed_text, content
    assert "(source: language server (typescript-language-server))" in confirmed_text
    assert reference_lines(confirmed_text) == CONFIRMED, content
    assert reference_lines(unconfirmed_text) == MISSED, content  # not robot.ts: typed
    assert "3 unconfirmed matches in 2 files: attribute uses and definitions of `greet`" in (
        content
    )


async def test_references_used_only_in_typed_code_stay_the_servers(
    greeters: FakeEditor,
) -> None:
    """The class itself is named only in typed files: the server's answer, as before."""
    content, is_error = await tool(
        greeters, "find_references", tool_input("src/greeter.ts", 1, "Greeter")
    )
    assert not is_error, content
    assert "unconfirmed" not in content, content
    assert "3 references to `Greeter`" in content, content
    expected = {("src/greeter.ts", 1), ("src/typed.ts", 1), ("src/typed.ts", 3)}
    assert reference_lines(content) == expected, content


async def test_rename_refuses_to_leave_the_calls_through_any(greeters: FakeEditor) -> None:
    content, is_error = await tool(
        greeters,
        "rename_symbol",
        tool_input("src/greeter.ts", 2, "greet", new_name="welcome"),
    )
    assert is_error, content
    assert "Not staged" in content
    for path, line in MISSED:
        assert f"{path}:{line}" in content, content
    assert "src/robot.ts" not in content
    assert "force: true" in content


async def test_a_use_outside_the_tsconfig_is_listed_when_the_server_names_none(
    greeters: FakeEditor,
) -> None:
    content, is_error = await tool(
        greeters, "find_references", tool_input("src/clock.ts", 2, "tick")
    )
    assert not is_error, content
    confirmed_text, _, unconfirmed_text = content.partition("unconfirmed match")
    assert reference_lines(confirmed_text) == {("src/clock.ts", 2)}, content
    assert reference_lines(unconfirmed_text) == {("tools/run.ts", 3)}, content
    assert "1 unconfirmed match in 1 file" in content
    content, is_error = await tool(
        greeters, "rename_symbol", tool_input("src/clock.ts", 2, "tick", new_name="now")
    )
    assert is_error, content
    assert "tools/run.ts:3" in content, content
