"""Staged changes → `WorkspaceEdit`: versioned, line-granular, minimal, and safe.

For each staged `Change` the builder compares three texts: what the agent read
(`original_text`, at `base_version`), what the agent wants (`new_text`) and what the editor
has now (its open buffer, else the file on disk). When the editor still has what the agent
read, the edit is the line diff between them. When the user changed the buffer meanwhile,
the agent's hunks are rebased onto the user's text if no hunk of one shares a line with a
hunk of the other (changes to adjacent lines merge); otherwise the file is left out and
reported as a conflict, and the agent's version stays staged — the user's text is never
overwritten.

Edits replace whole lines (difflib over lines), never fragments of a line, so they read
well in a preview and survive the editor's own normalisation. Positions are computed on
the editor's current text through pygls's `TextDocument` in the negotiated encoding.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.workspace import PositionCodec, ServerTextPosition, TextDocument

from agentls.lsp.capabilities import ClientFeatures
from agentls.workspace.changes import Change
from agentls.workspace.merge import (
    line_hunks,
    lines_with_endings,
    match_line_endings,
    overlaps,
    rebase,
)

__all__ = [
    "DocState",
    "EditBuilder",
    "EditPlan",
    "line_hunks",
    "lines_with_endings",
    "match_line_endings",
    "rebase",
    "shows_edit",
    "text_edits",
]


@dataclass(frozen=True)
class DocState:
    """A file as the editor has it now: `text` None when it does not exist."""

    uri: str
    text: str | None
    version: int | None


@dataclass(frozen=True)
class Problem:
    uri: str
    reason: str


@dataclass
class EditPlan:
    """One `WorkspaceEdit` plus what was left out of it and why."""

    edit: types.WorkspaceEdit | None = None
    included: list[Change] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    conflicts: list[Problem] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)
    expected: dict[str, str] = field(default_factory=dict)
    """URI → the text the document must have once the edit is applied (for verification)."""
    uris_of: list[list[str]] = field(default_factory=list)
    """For each included change, the URIs whose text it sets (parallel to `included`)."""

    @property
    def reasons(self) -> list[str]:
        return [f"{p.uri}: {p.reason}" for p in (*self.conflicts, *self.skipped)]


def shows_edit(before: str, expected: str, current: str) -> bool:
    """Whether `current` contains the edit that turned `before` into `expected`, maybe with
    other changes (the user typing along) that do not touch the edit's lines. An editor
    that skipped the edit while the user typed has changed text that fails this."""
    edited = _changed_spans(before, expected, side="new")
    others = _changed_spans(expected, current, side="old")
    return not any(overlaps(a, o) for a in edited for o in others)


def _changed_spans(old: str, new: str, *, side: str) -> list[tuple[int, int]]:
    """Line spans of the changed hunks between two texts, on the `old` or `new` side."""
    matcher = difflib.SequenceMatcher(
        None, lines_with_endings(old), lines_with_endings(new), autojunk=False
    )
    spans = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            spans.append((i1, i2) if side == "old" else (j1, j2))
    return spans


def client_position(doc: TextDocument, offset: int) -> types.Position:
    """`client_position_at_offset`, correct at the very end of a document too."""
    text = doc.source
    if offset < len(text):
        return doc.client_position_at_offset(offset)
    lines = doc.lines
    if not lines:
        return types.Position(0, 0)
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return types.Position(len(lines), 0)
    return doc.position_to_client_units(ServerTextPosition(len(lines) - 1, len(last)))


def text_edits(uri: str, current: str, target: str, codec: PositionCodec) -> list[types.TextEdit]:
    """Minimal whole-line edits turning `current` into `target`, in client units."""
    doc = TextDocument(uri, current, position_codec=codec)
    lines = lines_with_endings(current)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    edits = []
    for start, end, replacement in line_hunks(current, target):
        rng = types.Range(client_position(doc, offsets[start]), client_position(doc, offsets[end]))
        edits.append(types.TextEdit(range=rng, new_text="".join(replacement)))
    return edits


DocLookup = Callable[[Path], DocState]


class EditBuilder:
    """Builds one `WorkspaceEdit` for a list of changes, shaped for one client."""

    def __init__(
        self,
        features: ClientFeatures,
        codec: PositionCodec,
        docs: DocLookup,
        checks: Mapping[str, str] | None = None,
    ) -> None:
        self.features = features
        self.codec = codec
        self.docs = docs
        self.checks = dict(checks or {})
        """uri → the file's check before review, shown with its change annotations."""
        self._document_changes: list[
            types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
        ] = []
        self._changes: dict[str, list[types.TextEdit]] = {}
        self._annotations: dict[str, types.ChangeAnnotation] = {}
        self._label = ""
        self._confirm = False
        self._expected: dict[str, str] = {}

    def build(self, changes: Sequence[Change], *, label: str, confirm: bool) -> EditPlan:
        """`confirm`: ask the client to show the edit for confirmation where it can."""
        self._label = label
        self._confirm = confirm and self.features.change_annotations
        plan = EditPlan()
        self._expected = plan.expected
        for change in changes:
            before = set(plan.expected)
            problem = self._add(change)
            if problem is None:
                plan.included.append(change)
                plan.files.append(self.docs(change.path).uri)
                plan.uris_of.append([u for u in plan.expected if u not in before])
            elif problem.reason.startswith(_SKIP):
                plan.skipped.append(Problem(problem.uri, problem.reason[len(_SKIP) :]))
            else:
                plan.conflicts.append(problem)
        if plan.included:
            plan.edit = self._workspace_edit()
        return plan

    # -- one change -----------------------------------------------------------------------

    def _add(self, change: Change) -> Problem | None:
        if change.kind == "modify":
            return self._modify(change)
        if change.kind == "create":
            return self._create(change)
        if change.kind == "delete":
            return self._delete(change)
        return self._rename(change)

    def _target(self, change: Change, doc: DocState) -> str | Problem:
        """The text the file should have, rebased onto the editor's text if needed."""
        assert change.new_text is not None
        assert doc.text is not None
        wanted = match_line_endings(change.original_text, change.new_text)
        if change.original_text is None or doc.text == change.original_text:
            return wanted
        merged = rebase(change.original_text, wanted, doc.text)
        if merged is None:
            return Problem(
                doc.uri,
                "the file changed in the editor since the agent read it and the changes "
                "overlap; the agent's version stays staged (nothing was overwritten)",
            )
        return merged

    def _modify(self, change: Change) -> Problem | None:
        doc = self.docs(change.path)
        if doc.text is None:
            return Problem(doc.uri, "the file no longer exists; the agent's version stays staged")
        target = self._target(change, doc)
        if isinstance(target, Problem):
            return target
        self._text_edit(doc.uri, doc.text, target, doc.version, "Edit", per_hunk=True)
        return None

    def _create(self, change: Change) -> Problem | None:
        doc = self.docs(change.path)
        if not self._resource_op("create"):
            return Problem(doc.uri, _SKIP + _unsupported("creating files", self.features))
        if doc.text is not None:
            return Problem(doc.uri, "a file with this name now exists; not overwritten")
        annotation = self._annotate(doc.uri, "Create")
        self._document_changes.append(
            types.CreateFile(
                uri=doc.uri,
                options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False),
                annotation_id=annotation,
            )
        )
        if change.new_text:
            self._text_edit(doc.uri, "", change.new_text, None, "Create", annotation)
        return None

    def _delete(self, change: Change) -> Problem | None:
        doc = self.docs(change.path)
        if not self._resource_op("delete"):
            return Problem(doc.uri, _SKIP + _unsupported("deleting files", self.features))
        if doc.text is None:
            return None  # already gone: nothing to do, nothing to lose
        if change.original_text is not None and doc.text != change.original_text:
            return Problem(
                doc.uri,
                "the file changed in the editor since the agent read it; not deleted",
            )
        self._document_changes.append(
            types.DeleteFile(
                uri=doc.uri,
                options=types.DeleteFileOptions(ignore_if_not_exists=True),
                annotation_id=self._annotate(doc.uri, "Delete"),
            )
        )
        return None

    def _rename(self, change: Change) -> Problem | None:
        assert change.old_path is not None
        old = self.docs(change.old_path)
        new = self.docs(change.path)
        if not self._resource_op("rename"):
            return Problem(old.uri, _SKIP + _unsupported("renaming files", self.features))
        if old.text is None:
            return Problem(old.uri, "the file no longer exists; the rename stays staged")
        if new.text is not None:
            return Problem(new.uri, "a file with the new name now exists; not overwritten")
        target: str | None = None
        if change.new_text is not None:
            rebased = self._target(change, old)
            if isinstance(rebased, Problem):
                return rebased
            target = rebased
        annotation = self._annotate(new.uri, f"Rename from {Path(change.old_path).name}")
        self._document_changes.append(
            types.RenameFile(
                old_uri=old.uri,
                new_uri=new.uri,
                options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
                annotation_id=annotation,
            )
        )
        if target is not None:
            self._text_edit(new.uri, old.text, target, None, "Edit", annotation)
        return None

    # -- building blocks ------------------------------------------------------------------

    def _resource_op(self, kind: str) -> bool:
        return self.features.document_changes and kind in self.features.resource_operations

    def _annotate(self, uri: str, what: str) -> str | None:
        if not self._confirm:
            return None
        annotation_id = f"agentls-{len(self._annotations)}"
        check = f" — {self.checks[uri]}" if uri in self.checks else ""
        self._annotations[annotation_id] = types.ChangeAnnotation(
            label=self._label,
            needs_confirmation=True,
            description=f"{what} {_name(uri)}{check}",
        )
        return annotation_id

    def _annotate_hunk(self, uri: str, number: int, edit: types.TextEdit) -> str:
        """An annotation of its own for hunk `number` of `uri`, labelled with where it is."""
        first, last = edit.range.start.line + 1, edit.range.end.line
        where = (
            f"after line {first - 1}"
            if last < first
            else (f"line {first}" if first == last else f"lines {first}-{last}")
        )
        annotation_id = f"agentls-{len(self._annotations)}"
        check = f" — {_short(self.checks[uri])}" if uri in self.checks else ""
        self._annotations[annotation_id] = types.ChangeAnnotation(
            label=f"Hunk {number} of {_name(uri)} ({where}){check}",
            needs_confirmation=True,
            description=self._label,
        )
        return annotation_id

    def _text_edit(
        self,
        uri: str,
        current: str,
        target: str,
        version: int | None,
        what: str,
        annotation: str | None = None,
        *,
        per_hunk: bool = False,
    ) -> None:
        """`per_hunk`: one change annotation per hunk (when confirming), so a preview such
        as VS Code's Refactor Preview lists, and lets the user tick, each hunk."""
        edits = text_edits(uri, current, target, self.codec)
        self._expected[uri] = target
        if not self.features.document_changes:
            self._changes.setdefault(uri, []).extend(edits)
            return
        if not edits:
            return
        final: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit]
        if per_hunk and annotation is None and self._confirm and len(edits) > 1:
            final = [
                types.AnnotatedTextEdit(
                    range=e.range, new_text=e.new_text, annotation_id=self._annotate_hunk(uri, n, e)
                )
                for n, e in enumerate(edits, start=1)
            ]
        else:
            annotation = annotation or self._annotate(uri, what)
            final = (
                [
                    types.AnnotatedTextEdit(
                        range=e.range, new_text=e.new_text, annotation_id=annotation
                    )
                    for e in edits
                ]
                if annotation
                else list(edits)
            )
        self._document_changes.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=version
                ),
                edits=final,
            )
        )

    def _workspace_edit(self) -> types.WorkspaceEdit:
        if not self.features.document_changes:
            return types.WorkspaceEdit(changes=dict(self._changes))
        return types.WorkspaceEdit(
            document_changes=list(self._document_changes),
            change_annotations=dict(self._annotations) or None,
        )


_SKIP = "skip:"


def _unsupported(what: str, features: ClientFeatures) -> str:
    missing = (
        "workspace edits with documentChanges"
        if not features.document_changes
        else "this resource operation in workspace edits"
    )
    return (
        f"{what} is not supported by this editor (it does not advertise {missing}); the "
        "change stays staged — apply it by hand, or reject it with agentls.reject"
    )


def _name(uri: str) -> str:
    return uri.rsplit("/", 1)[-1]


def _short(summary: str, limit: int = 90) -> str:
    """A check's summary short enough for a preview's label."""
    return summary if len(summary) <= limit else summary[: limit - 1] + "…"
