"""Matches by name that a language server did not confirm (issue 31: answers an agent can
trust).

In a dynamic language a server resolves only what it can type: on Django, basedpyright
confirms about a fifth of the real calls of `Model.save`-like methods (`self.x`, untyped
parameters, querysets). A references or rename answer that silently stops there breaks
code. So next to the server's answer the tools list the identifier occurrences of the same
name (the index's tree-sitter scan: comments and strings never count) that the server did
not return, labelled unconfirmed. For a method (an indented definition, or a name used as
an attribute) only attribute uses (`.name`) and other `def name` lines count: a module
function of the same name is someone else.

TypeScript's server types almost everything, but not a call through an `any`-typed value
(`(g as any).greet()`, a parameter `g: any`) or in a `// @ts-nocheck` file: tsserver leaves
those out of its references. So in TypeScript the unconfirmed matches are those in the
group's loosely typed files (JavaScript, and TypeScript that uses `any` or switches the
checker off); matches in fully typed files are the server's to resolve and are not listed
(another class's method of the same name). Unless the server named no use at all: then its
answer may be partial too (tsserver does not see a file outside its tsconfig, and answers
from the open file alone while its project loads), and every file's matches count.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentls.codeintel.index_source import IndexSource, name_at
from agentls.codeintel.languages import language_of
from agentls.codeintel.model import Document, Location, Overlay, Pos
from agentls.workspace.core import Workspace
from agentls.workspace.textio import split_lines

__all__ = [
    "DYNAMIC_LANGUAGES",
    "TYPED_LANGUAGES",
    "Unconfirmed",
    "may_be_incomplete",
    "unconfirmed_matches",
]

DYNAMIC_LANGUAGES = frozenset({"python", "javascript", "jsx", "ruby", "php"})
"""Languages whose servers' references are often incomplete (calls through untyped values)."""
TYPED_LANGUAGES = frozenset({"typescript", "tsx"})
"""Languages whose servers miss only the uses in loosely typed files (`any`, JavaScript)."""
_DEF = re.compile(r"^\s+(?:async\s+)?(?:def|function)\s+(\w+)")
_DEF_ANY = re.compile(r"^\s*(?:async\s+)?(?:def|function|class)\s+(\w+)")
_TS_METHOD = re.compile(
    r"^\s+(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)\s+)*"
    r"(?!(?:if|for|while|switch|catch|function|return)\b)([\w$]+)\??\s*(?:<[^>]*>)?\s*\(.*\)"
    r"\s*(?:\{\s*$|:\s*[^=;{]+(?:\{\s*|;\s*)$)"
)
"""A TypeScript method (or interface method signature): indented `name(…) {` / `name(…): T;`."""
_LOOSE = re.compile(rb"(?:[:<|,(]\s*any\b|\bas\s+any\b|@ts-(?:nocheck|ignore|expect-error)\b)")
"""An `any` type or a checker switch: tsserver cannot follow every call in such a file."""


@dataclass(frozen=True)
class Unconfirmed:
    """Occurrences the server did not return, and the name they match."""

    name: str
    locations: list[Location]
    method: bool
    """Only attribute uses and method definitions were counted."""
    typed_only: bool = False
    """A typed language's answer (TypeScript): fully typed files are the server's to resolve,
    so with nothing unconfirmed the answer is reported as the server's, as before."""

    def describe(self) -> str:
        files = len({loc.path for loc in self.locations})
        kind = "attribute uses and definitions of" if self.method else "identifiers named"
        count = len(self.locations)
        return (
            f"{count} unconfirmed match{'es' if count != 1 else ''} in {files} "
            f"file{'s' if files != 1 else ''}: {kind} `{self.name}` that the language server "
            "did not resolve (calls through untyped values are among them, and so may be "
            "unrelated symbols of the same name)"
        )


def may_be_incomplete(doc: Document, source: str) -> bool:
    """Whether an answer from `source` for `doc` is to be completed by name."""
    dynamic = doc.language in DYNAMIC_LANGUAGES or doc.language in TYPED_LANGUAGES
    return dynamic and not source.startswith("index")


async def unconfirmed_matches(
    workspace: Workspace,
    doc: Document,
    pos: Pos,
    overlay: Overlay,
    confirmed: Iterable[Location],
    *,
    definitions: bool = True,
    sparse: bool = False,
) -> Unconfirmed:
    """The name's occurrences (same language group) not at a confirmed location's start;
    `definitions=False` leaves out `def name` lines (references without declarations).
    `sparse`: the server named no use at all, so in a typed language its answer may be
    partial too (a file outside its tsconfig, a project still loading): every file counts."""
    name = name_at(doc.text, pos)
    lines = split_lines(doc.text)
    typed = doc.language in TYPED_LANGUAGES
    loose_only = typed and not sparse
    method = _is_method(lines[pos.line], pos.character, name, typed)
    scanner = IndexSource(workspace)
    found = await asyncio.to_thread(scanner.scan, doc.path, name, overlay)
    seen = {(loc.path, loc.span.start.line) for loc in confirmed}
    texts: dict[Path, list[str]] = {}
    loose: dict[Path, bool] = {}
    kept: list[Location] = []
    for loc in found:
        if (loc.path, loc.span.start.line) in seen:
            continue
        if loose_only and not _loosely_typed(scanner, loc.path, overlay, loose):
            continue
        if method or not definitions:
            file_lines = texts.get(loc.path)
            if file_lines is None:
                data = scanner.content(loc.path, overlay) or b""
                file_lines = split_lines(data.decode("utf-8", "replace"))
                texts[loc.path] = file_lines
            if not definitions and _is_def(file_lines, loc, name):
                continue
            if method and not _attribute_or_def(file_lines, loc, name, typed):
                continue
        kept.append(loc)
    return Unconfirmed(name, kept, method, typed)


def _loosely_typed(
    scanner: IndexSource, path: Path, overlay: Overlay, seen: dict[Path, bool]
) -> bool:
    """JavaScript, or TypeScript with an `any` or a checker switch (cached per file)."""
    known = seen.get(path)
    if known is None:
        language = language_of(path)
        if language is not None and language.id in DYNAMIC_LANGUAGES:
            known = True
        else:
            known = _LOOSE.search(scanner.content(path, overlay) or b"") is not None
        seen[path] = known
    return known


def _is_method(line: str, column: int, name: str, typed: bool = False) -> bool:
    """A method or attribute: used as `.name`, or defined indented (inside a class)."""
    if column > 0 and line[:column].rstrip().endswith("."):
        return True
    match = _DEF.match(line) or (_TS_METHOD.match(line) if typed else None)
    return match is not None and match.group(1) == name


def _attribute_or_def(lines: list[str], loc: Location, name: str, typed: bool) -> bool:
    if loc.span.start.line >= len(lines):
        return False
    line = lines[loc.span.start.line]
    before = line[: loc.span.start.character].rstrip()
    if before.endswith("."):
        return True
    match = _DEF.match(line) or (_TS_METHOD.match(line) if typed else None)
    return match is not None and match.group(1) == name


def _is_def(lines: list[str], loc: Location, name: str) -> bool:
    if loc.span.start.line >= len(lines):
        return False
    match = _DEF_ANY.match(lines[loc.span.start.line])
    return match is not None and match.group(1) == name
