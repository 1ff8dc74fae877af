"""`go_to_definition`, `find_references`, `hover`, `diagnostics`: code intelligence from the
editor's language servers, language servers agentls runs, or the index by name.

All four are read-only and concurrency-safe. Each result names the source that answered
(`editor (pyright)`, `language server (basedpyright)`, `index (by name, unresolved)`), and
every source sees what the agent sees: unsaved buffers and this session's staged edits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.codeintel.languages import language_of
from agentls.codeintel.model import SEVERITY_RANK, Answer, Diagnostic, Document, Location
from agentls.codeintel.service import Checked
from agentls.codeintel.sources import IMPLEMENTATION, TYPE_DEFINITION, Method
from agentls.codeintel.unconfirmed import may_be_incomplete, unconfirmed_matches
from agentls.codeintel.views import document_of, overlay_of
from agentls.errors import ToolError
from agentls.index import language_for
from agentls.tools._code_intel import (
    LineReader,
    PositionInput,
    Query,
    context_snippet,
    dedupe,
    group_by_file,
    notes_block,
    position_problem,
    prepare,
    source_line,
    what,
)
from agentls.tools._files import cut_line
from agentls.tools._secret_literals import SecretLiterals

DEFAULT_REFERENCES = 100
MAX_REFERENCES = 1000
NOTES_RESERVE = 2_000
"""Characters kept free for the notes and the truncation marker of the output limit."""
_FIT = (
    "[{count} more confirmed references not shown: the output keeps room for the matches "
    "not confirmed, below; narrow the question or use grep to see them]"
)
MAX_DEFINITIONS = 20
MAX_DIAGNOSTIC_FILES = 100
MAX_DIAGNOSTICS = 300

_POSITION_HELP = """
Give the position like read_file shows it: `line` (1-based) plus `symbol`, the identifier as
written on that line (`occurrence` picks the n-th one when it appears twice); `character`
(1-based column) only when the target is not an identifier.
"""


QueryT = TypeVar("QueryT", bound=PositionInput)


class _PositionQuery(Tool[QueryT]):
    """A read-only query at a position: parallel-safe, refused early for unreadable paths."""

    def is_read_only(self, input: QueryT | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: QueryT) -> bool:
        return True

    async def validate_input(self, input: QueryT, ctx: ToolContext) -> str | None:
        return position_problem(ctx, input.path)


class GoToDefinition(_PositionQuery[PositionInput]):
    name = "go_to_definition"
    input_model = PositionInput
    search_hint = "definition declaration where defined jump go to source implementation"
    usage = (
        """
Find where the symbol at a position is defined, resolved by a real language server (types,
imports and aliases understood), with a few lines of context around each definition.

- Use it to follow a call or a name to its definition; search_symbols finds definitions by
  name when you have no position.
"""
        + _POSITION_HELP
        + """
- The result says its source. `index (by name, unresolved)` means no language server covers
  the file: the candidates merely share the name.

Example: {"path": "<path>", "line": <line>, "symbol": "<name>"}
"""
    )

    def summary(self, input: PositionInput) -> str:
        return f"Finding the definition of {input.symbol or 'a symbol'} in {input.path}"

    async def call(self, input: PositionInput, ctx: ToolContext) -> str:
        query = prepare(ctx, input)
        answer = await ctx.services.code_intel.definition(
            query.document, query.target.pos, query.overlay
        )
        return _with_notes(_located(ctx, query, answer, "definition"), answer)


def _located(
    ctx: ToolContext, query: Query, answer: Answer[list[Location]], noun: str
) -> list[str]:
    """Locations with a few lines of context each (definitions, implementations, types)."""
    reader = LineReader(ctx, query.overlay)
    found = dedupe(answer.value)
    if not found:
        return [f"No {noun} found for {what(query)} {source_line(answer)}."]
    head = f"{noun.capitalize()} of {what(query)} {source_line(answer)}:"
    if len(found) > 1:
        head = f"{len(found)} {noun}s of {what(query)} {source_line(answer)}:"
    parts = [head]
    for group in group_by_file(found[:MAX_DEFINITIONS], query.document.path):
        for loc in group:
            where = f"{reader.display(loc.path)}:{loc.span.start.line + 1}"
            parts.append(f"\n{where}:{loc.span.start.character + 1}")
            parts.append(context_snippet(reader, loc))
    if len(found) > MAX_DEFINITIONS:
        parts.append(f"[{len(found) - MAX_DEFINITIONS} more {noun}s not shown]")
    return parts


class _LocationsQuery(_PositionQuery[PositionInput]):
    """A position answered with locations by one LSP request (`method`), shown with context
    and named by `noun` (implementations, type definitions)."""

    input_model = PositionInput
    method: ClassVar[Method]
    noun: ClassVar[str]

    async def call(self, input: PositionInput, ctx: ToolContext) -> str:
        query = prepare(ctx, input)
        answer = await ctx.services.code_intel.locations(
            self.method, query.document, query.target.pos, query.overlay
        )
        return _with_notes(_located(ctx, query, answer, self.noun), answer)


class FindImplementations(_LocationsQuery):
    name = "find_implementations"
    method = IMPLEMENTATION
    noun = "implementation"
    search_hint = "implementations implementers subclasses overrides interface abstract method"
    usage = (
        """
Find the implementations of the interface, abstract method or class at a position (the
classes that implement it, the methods that override it), resolved by a real language
server, with a few lines of context each.
"""
        + _POSITION_HELP
        + """
- Not every server answers it (pyright does not): the error then says so; use
  find_references or search_symbols instead.

Example: {"path": "<path>", "line": <line>, "symbol": "<name>"}
"""
    )

    def summary(self, input: PositionInput) -> str:
        return f"Finding implementations of {input.symbol or 'a symbol'} in {input.path}"


class TypeDefinition(_LocationsQuery):
    name = "type_definition"
    method = TYPE_DEFINITION
    noun = "type definition"
    search_hint = "type definition declared type of variable class of value"
    usage = (
        """
Find where the type of the symbol at a position is defined (the class of a variable, the
interface of a parameter), resolved by a real language server, with context.
"""
        + _POSITION_HELP
        + """
Example: {"path": "<path>", "line": <line>, "symbol": "<name>"}
"""
    )

    def summary(self, input: PositionInput) -> str:
        return f"Finding the type of {input.symbol or 'a symbol'} in {input.path}"


class FindReferencesInput(PositionInput):
    include_declaration: bool = Field(
        default=True, description="Also list the declaration itself (default true)."
    )
    max_results: int | None = Field(
        default=None,
        ge=1,
        le=MAX_REFERENCES,
        description=f"At most this many references (default {DEFAULT_REFERENCES}).",
    )


class FindReferences(_PositionQuery[FindReferencesInput]):
    name = "find_references"
    input_model = FindReferencesInput
    search_hint = "references usages callers call sites who uses where used find usages"
    usage = (
        """
Find every place that uses the symbol at a position — callers, imports, aliases, overrides —
resolved by a real language server, grouped by file with each line's text. Unlike grep it
ignores unrelated symbols that share the name, and comments and strings.

- Use it before changing a function's signature or behaviour, to see who depends on it.
"""
        + _POSITION_HELP
        + f"""
- `max_results` caps the list (default {DEFAULT_REFERENCES}); the output says how many more
  exist. `include_declaration: false` leaves out the definition itself.
- The result says its source. With `index (by name, unresolved)` no language server covers
  the file and every identifier with that name is listed.
- In dynamic languages (Python, JavaScript, Ruby, PHP) a server confirms only the calls it
  can type. The result then also lists the occurrences of the name it did not confirm,
  labelled unconfirmed, with their count: check them before changing a signature. In
  TypeScript the same goes for files that use `any` (or `@ts-ignore`) and JavaScript files.

Example: {{"path": "<path>", "line": <line>, "symbol": "<name>"}}
"""
    )

    def summary(self, input: FindReferencesInput) -> str:
        return f"Finding references to {input.symbol or 'a symbol'} in {input.path}"

    async def call(self, input: FindReferencesInput, ctx: ToolContext) -> str:
        query = prepare(ctx, input)
        answer = await ctx.services.code_intel.references(
            query.document, query.target.pos, query.overlay, input.include_declaration
        )
        found = dedupe(answer.value)
        limit = input.max_results or DEFAULT_REFERENCES
        extra = None
        if may_be_incomplete(query.document, answer.source):
            extra = await unconfirmed_matches(
                ctx.workspace,
                query.document,
                query.target.pos,
                query.overlay,
                found,
                definitions=input.include_declaration,
                sparse=len(found) <= (1 if input.include_declaration else 0),
            )
            if extra.typed_only and not extra.locations:
                extra = None  # no loosely typed file uses the name: the server's answer stands
        reader = LineReader(ctx, query.overlay)
        tail: list[str] = []
        if extra is not None and extra.locations:
            tail.append(f"\n{extra.describe()}. Check each before relying on the list:")
            room = max(limit - min(limit, len(found)), min(limit, 50))
            tail.extend(
                _listing(
                    _first_by_file(extra.locations, room, query.document.path),
                    query.document.path,
                    reader,
                )
            )
            if len(extra.locations) > room:
                tail.append(
                    f"[{len(extra.locations) - room} more unconfirmed matches not "
                    "shown; raise max_results to see them]"
                )
        elif extra is not None:
            tail.append("No other identifier of that name: the answer is complete by name too.")
        budget = self.max_result_chars - len("\n".join(tail)) - NOTES_RESERVE
        parts = _fitting_confirmed(query, answer, found, limit, reader, extra is not None, budget)
        return _with_notes([*parts, *tail], answer)


def _fitting_confirmed(
    query: Query,
    answer: Answer[list[Location]],
    found: list[Location],
    limit: int,
    reader: LineReader,
    labelled: bool,
    budget: int,
) -> list[str]:
    """The confirmed part, shortened to `budget` characters when it would not fit: the
    output limit cuts the end of a tool's result, and the unconfirmed matches that follow
    are the ones the model must check (on Django, 635 confirmed calls of
    `assertQuerySetEqual` used to push the 12 unconfirmed ones out of the result)."""
    parts = _confirmed_part(query, answer, found, limit, reader, labelled)
    if len("\n".join(parts)) <= budget or not found:
        return parts
    parts = _confirmed_part(query, answer, found, limit, reader, labelled, compact=True)
    if len("\n".join(parts)) <= budget:
        return parts
    low, high = 1, min(limit, len(found))
    while low < high:  # the most confirmed positions that fit
        middle = (low + high + 1) // 2
        trial = _confirmed_part(query, answer, found, middle, reader, labelled, _FIT, True)
        if len("\n".join(trial)) <= budget:
            low = middle
        else:
            high = middle - 1
    return _confirmed_part(query, answer, found, low, reader, labelled, _FIT, True)


def _confirmed_part(
    query: Query,
    answer: Answer[list[Location]],
    found: list[Location],
    limit: int,
    reader: LineReader,
    labelled: bool,
    more: str = "",
    compact: bool = False,
) -> list[str]:
    """The source's own answer: counted, grouped by file, capped at `limit` (`more`: why
    the rest is not shown, when not `max_results`)."""
    if not found:
        return [f"No references to {what(query)} {source_line(answer)}."]
    shown = _first_by_file(found, limit, query.document.path)
    files = len({loc.path for loc in found})
    noun = "reference" if len(found) == 1 else "references"
    if labelled:
        noun = f"confirmed {noun}"
    in_files = "1 file" if files == 1 else f"{files} files"
    parts = [f"{len(found)} {noun} to {what(query)} in {in_files} {source_line(answer)}:"]
    if compact:
        parts.append("(positions only: the output keeps room for the matches not confirmed, below)")
    listing = _compact_listing if compact else _listing
    parts.extend(listing(shown, query.document.path, reader))
    if len(found) > len(shown):
        hidden = len(found) - len(shown)
        parts.append(
            more.format(count=hidden)
            or f"[{hidden} more references not shown; raise max_results (up to "
            f"{MAX_REFERENCES}) to see them]"
        )
    return parts


def _listing(shown: list[Location], first: Path, reader: LineReader) -> list[str]:
    parts: list[str] = []
    for group in group_by_file(shown, first):
        parts.append(reader.display(group[0].path))
        for loc in group:
            text = reader.line(loc.path, loc.span.start.line)
            shown_text = text if text is not None else "(text not shown)"
            at = f"{loc.span.start.line + 1}:{loc.span.start.character + 1}"
            parts.append(f"  {at:<9} {shown_text}")
    return parts


def _compact_listing(shown: list[Location], first: Path, reader: LineReader) -> list[str]:
    """Each file, then its `line:column` positions on one line (no text)."""
    parts: list[str] = []
    for group in group_by_file(shown, first):
        parts.append(reader.display(group[0].path))
        at = (f"{loc.span.start.line + 1}:{loc.span.start.character + 1}" for loc in group)
        parts.append("  " + ", ".join(at))
    return parts


def _first_by_file(found: list[Location], limit: int, first: Path) -> list[Location]:
    """The first `limit` references in the order they are shown (queried file first)."""
    ordered = [loc for group in group_by_file(found, first) for loc in group]
    return ordered[:limit]


class Hover(_PositionQuery[PositionInput]):
    name = "hover"
    input_model = PositionInput
    search_hint = "type signature docs documentation hover what is the type of"
    usage = (
        """
Show what the language server knows about the symbol at a position: its type, signature
and documentation (what an editor shows on mouse-over).

- Use it to learn a variable's inferred type or a function's parameters without reading its
  source.
"""
        + _POSITION_HELP
        + """
Example: {"path": "<path>", "line": <line>, "symbol": "<name>"}
"""
    )

    def summary(self, input: PositionInput) -> str:
        return f"Looking up {input.symbol or 'a symbol'} in {input.path}"

    async def call(self, input: PositionInput, ctx: ToolContext) -> str:
        query = prepare(ctx, input)
        service = ctx.services.code_intel
        answer = await service.hover(query.document, query.target.pos, query.overlay)
        hidden = await _defined_in_hidden_file(ctx, query)
        if hidden is not None:
            return (
                f"{what(query).capitalize()} is defined in {hidden}, which may not be read; "
                "its hover text is not shown."
            )
        if not answer.value.strip():
            return _with_notes(
                [f"Nothing known about {what(query)} {source_line(answer)}."], answer
            )
        document = query.document
        hidden_values = SecretLiterals.of(ctx.workspace, [(document.path, document.text)])
        text = hidden_values.redact(answer.value.strip())
        return _with_notes([f"{what(query).capitalize()} {source_line(answer)}:", text], answer)


async def _defined_in_hidden_file(ctx: ToolContext, query: Query) -> str | None:
    """A definition in a secret or read-denied file: hover would show its values (a
    constant's literal type is its value), so the hover is withheld."""
    try:
        found = await ctx.services.code_intel.definition(
            query.document, query.target.pos, query.overlay
        )
    except ToolError:
        return None
    secrets = ctx.services.secrets
    for loc in found.value:
        if ctx.workspace.contains(loc.path) and secrets.blocks_reading(loc.path):
            return ctx.workspace.display(loc.path)
    return None


Severity = Literal["error", "warning", "all"]
_THRESHOLD = {"error": 1, "warning": 2, "all": 4}


class DiagnosticsInput(ToolInput):
    paths: list[str] | None = Field(
        default=None,
        description="Files (or folders) to check, relative to the workspace root. Default: "
        "the files you changed in this session and the files open in the editor.",
    )
    severity: Severity = Field(
        default="warning",
        description="`error`: errors only; `warning` (default): errors and warnings; `all`: "
        "also information and hints.",
    )


class Diagnostics(Tool[DiagnosticsInput]):
    name = "diagnostics"
    input_model = DiagnosticsInput
    search_hint = "errors warnings type check problems compile errors lint check my change"
    usage = """
The language servers' errors and warnings (type errors, undefined names, wrong arguments)
for files as you see them, including your staged edits and the user's unsaved buffers — so
you can check your change before the user sees it.

- Call it after editing: without `paths` it checks the files you changed in this session
  (and files open in the editor). The user's files on disk are not touched.
- `severity`: `error`, `warning` (default: errors and warnings) or `all`.
- The result names its source. When no language server covers a file, only syntax errors
  are checked (`index (syntax errors only)`); use lint or run_tests for more.

Example: {"paths": ["<path>"], "severity": "error"}
"""

    def is_read_only(self, input: DiagnosticsInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: DiagnosticsInput) -> bool:
        return True

    async def validate_input(self, input: DiagnosticsInput, ctx: ToolContext) -> str | None:
        for raw in input.paths or []:
            problem = position_problem(ctx, raw)
            if problem is not None:
                return problem
        return None

    def summary(self, input: DiagnosticsInput) -> str:
        where = ", ".join(input.paths[:3]) if input.paths else "changed files"
        return f"Checking {where}"

    async def call(self, input: DiagnosticsInput, ctx: ToolContext) -> str:
        paths, skipped = _diagnostic_targets(ctx, input.paths)
        docs: list[Document] = []
        for path in paths:
            try:
                docs.append(document_of(ctx.workspace, path, ctx.changes))
            except ToolError as exc:
                if input.paths and len(paths) == 1:
                    raise
                skipped.append(f"{ctx.workspace.display(path)}: {exc}")
        if not docs:
            raise ToolError(
                "Nothing to check: "
                + ("; ".join(skipped) if skipped else "no readable source files were given")
            )
        overlay = overlay_of(ctx.workspace, ctx.changes)
        checked = await ctx.services.code_intel.diagnostics(docs, overlay)
        return _format_diagnostics(ctx, checked, input.severity, skipped)


def _diagnostic_targets(ctx: ToolContext, raw: list[str] | None) -> tuple[list[Path], list[str]]:
    ws = ctx.workspace
    skipped: list[str] = []
    if not raw:
        changed = [
            p
            for p in [*ctx.changes.changed_paths(), *ws.open_paths()]
            if ws.is_file(p, ctx.changes) and ws.contains(p)
        ]
        secrets = ctx.services.secrets
        paths = [
            p for p in dict.fromkeys(changed) if _checkable(p) and not secrets.blocks_reading(p)
        ]
        if not paths:
            raise ToolError(
                "Nothing to check: you changed no source file in this session and none is "
                "open in the editor. Give `paths` (files or folders) to check."
            )
        return paths[:MAX_DIAGNOSTIC_FILES], skipped
    paths = []
    view = ws.view(ctx.changes)
    for text in raw:
        path = ws.resolve(text)
        if view.is_dir(path):
            secrets = ctx.services.secrets
            inside = [
                Path(p)
                for p in view.file_strs(path)
                if _checkable(Path(p)) and not secrets.blocks_reading(p, resolve=False)
            ]
            paths.extend(inside)
        elif view.is_file(path):
            paths.append(path)
        else:
            raise ws.missing_error(path, ctx.changes)
    unique = list(dict.fromkeys(paths))
    if len(unique) > MAX_DIAGNOSTIC_FILES:
        skipped.append(
            f"{len(unique) - MAX_DIAGNOSTIC_FILES} more files not checked (at most "
            f"{MAX_DIAGNOSTIC_FILES} per call); give narrower paths"
        )
    return unique[:MAX_DIAGNOSTIC_FILES], skipped


def _checkable(path: Path) -> bool:
    return language_of(path) is not None or language_for(path) is not None


def _format_diagnostics(
    ctx: ToolContext, checked: list[Checked], severity: Severity, skipped: list[str]
) -> str:
    ws = ctx.workspace
    threshold = _THRESHOLD[severity]
    parts: list[str] = []
    notes: list[str] = []
    total = 0
    for group in checked:
        answer = group.answer
        texts = {doc.path: doc.text.split("\n") for doc in group.docs}
        hidden_values = SecretLiterals.of(ws, [(doc.path, doc.text) for doc in group.docs])
        notes.extend(answer.notes)
        kept = [d for d in answer.value if SEVERITY_RANK[d.severity] <= threshold]
        kept.sort(key=lambda d: (str(d.path), d.span.start, SEVERITY_RANK[d.severity]))
        names = [ws.display(doc.path) for doc in group.docs]
        more_files = f" and {len(names) - 10} more" if len(names) > 10 else ""
        parts.append(
            f"{_counts(kept)} in {', '.join(names[:10])}{more_files} (source: {answer.source})"
        )
        for diagnostic in kept[: max(0, MAX_DIAGNOSTICS - total)]:
            line = _diagnostic_line(ws.display(diagnostic.path), diagnostic, texts)
            parts.append(hidden_values.redact(line))
        total += len(kept)
    if total > MAX_DIAGNOSTICS:
        parts.append(f"[{total - MAX_DIAGNOSTICS} more not shown; check fewer files]")
    if skipped:
        notes.append("Not checked: " + "; ".join(skipped))
    if severity != "all":
        notes.append(f"Showing severity `{severity}` and above; `all` adds information and hints.")
    note_text = notes_block(notes)
    return "\n".join([parts[0], note_text, *parts[1:]] if note_text else parts)


def _counts(found: list[Diagnostic]) -> str:
    if not found:
        return "No problems"
    errors = sum(1 for d in found if d.severity == "error")
    warnings = sum(1 for d in found if d.severity == "warning")
    other = len(found) - errors - warnings
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    if other:
        parts.append(f"{other} hint{'s' if other != 1 else ''}/information")
    return ", ".join(parts)


def _diagnostic_line(display: str, d: Diagnostic, texts: dict[Path, list[str]]) -> str:
    code = f" [{d.code}]" if d.code else ""
    source = f" ({d.source})" if d.source else ""
    head = f"{display}:{d.span.start.line + 1}:{d.span.start.character + 1} {d.severity}: "
    message = d.message.strip().replace("\n", "\n    ")
    lines = texts.get(d.path)
    code_line = ""
    if lines is not None and d.span.start.line < len(lines):
        code_line = (
            f"\n    {d.span.start.line + 1} | {cut_line(lines[d.span.start.line].rstrip(), 160)}"
        )
    return f"{head}{message}{code}{source}{code_line}"


def _with_notes(parts: list[str], answer: Answer[Any]) -> str:
    """The header, then the notes (before a long list, so truncation never hides them)."""
    notes = notes_block(answer.notes)
    return "\n".join([parts[0], notes, *parts[1:]] if notes else parts)
