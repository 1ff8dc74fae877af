"""A fake editor for end-to-end LSP tests: a pytest-lsp client that really applies edits.

`FakeEditor` keeps the client's copy of each open document (text + version), answers
`workspace/applyEdit` the way an editor does — checks versions, applies `TextEdit`s with
positions in the negotiated encoding, performs create/rename/delete on disk, and reports
the resulting buffer changes back with `didOpen`/`didChange` — and answers
`window/showMessageRequest` from a queue of scripted choices.

Positions are converted here without pygls, so the server's conversion is checked
against an independent implementation.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from agentls.headless.edits import apply_text_edits

# The test client applies edits with the headless CLI's client-side code: both are LSP
# clients, independent of the server code under test.


@dataclass
class Doc:
    text: str
    version: int


@dataclass
class FakeEditor:
    client: LanguageClient
    encoding: str = "utf-16"
    docs: dict[str, Doc] = field(default_factory=dict)
    edits: list[types.WorkspaceEdit] = field(default_factory=list)
    answer_edit: Callable[[types.WorkspaceEdit], str | None] | None = None
    """Return a failure reason to refuse an edit (like a user cancelling a preview)."""
    unchecked: set[str] = field(default_factory=set)
    """URIs whose text edits the user unchecks in the preview (applied: true anyway)."""
    unticked_labels: set[str] = field(default_factory=set)
    """Change-annotation labels (e.g. "Hunk 2 of b.py (line 10)") the user unticks in the
    preview: their text edits are left out (VS Code's Refactor Preview)."""
    choices: list[str | None] = field(default_factory=list)
    prompts: list[types.ShowMessageRequestParams] = field(default_factory=list)
    applied_event: asyncio.Event = field(default_factory=asyncio.Event)
    server_capabilities: types.ServerCapabilities | None = None
    progress_gate: asyncio.Event | None = None
    """When set, `window/workDoneProgress/create` is answered only once it is set."""
    preset: str = ""
    root: Path = Path()
    events: list[Any] = field(default_factory=list)
    """`agentls/event` notifications received."""
    change_delay: float = 0.0
    """Seconds between applying an edit and sending its didChange (eglot's idle timer)."""
    skip_edits: bool = False
    """Answer applyEdit with applied: true without changing anything (Neovim 0.7's stale skip)."""
    prompt_gate: asyncio.Event | None = None
    """When set, `window/showMessageRequest` is answered only once it is set (a prompt the
    user has not answered yet)."""
    held_prompts: list[types.ShowMessageRequestParams] = field(default_factory=list)
    """Prompts that arrived while `prompt_gate` held them open."""
    withdrawn_prompts: list[types.ShowMessageRequestParams] = field(default_factory=list)
    """Held prompts the server withdrew (`$/cancelRequest`) before the user answered."""

    # -- documents ------------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None, language: str = "python") -> str:
        uri = path.as_uri()
        if text is None:
            text = path.read_bytes().decode("utf-8")
        self.docs[uri] = Doc(text, 1)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
            )
        )
        return uri

    def type(self, uri: str, start: tuple[int, int], end: tuple[int, int], new_text: str) -> None:
        """The user edits the buffer (an incremental didChange)."""
        doc = self.docs[uri]
        rng = types.Range(types.Position(*start), types.Position(*end))
        doc.text = apply_text_edits(doc.text, [types.TextEdit(rng, new_text)], self.encoding)
        doc.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                [types.TextDocumentContentChangePartial(range=rng, text=new_text)],
            )
        )

    def text(self, path: Path) -> str:
        """What the user sees: the buffer if open, else the disk file."""
        doc = self.docs.get(path.as_uri())
        return doc.text if doc is not None else path.read_bytes().decode("utf-8")

    def close(self, uri: str) -> None:
        self.docs.pop(uri, None)
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )

    # -- applyEdit ------------------------------------------------------------------------

    def apply(self, edit: types.WorkspaceEdit) -> types.ApplyWorkspaceEditResult:
        self.edits.append(edit)
        if self.answer_edit is not None:
            refusal = self.answer_edit(edit)
            if refusal is not None:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=refusal)
        for op in edit.document_changes or []:
            if isinstance(op, types.TextDocumentEdit):
                doc = self.docs.get(op.text_document.uri)
                version = op.text_document.version
                if doc is not None and version is not None and version != doc.version:
                    return types.ApplyWorkspaceEditResult(
                        applied=False,
                        failure_reason=f"version mismatch for {op.text_document.uri}",
                    )
        if self.skip_edits:
            return types.ApplyWorkspaceEditResult(applied=True)
        unticked = {
            key
            for key, note in (edit.change_annotations or {}).items()
            if note.label in self.unticked_labels
        }
        for op in edit.document_changes or []:
            if isinstance(op, types.TextDocumentEdit) and unticked:
                kept = [e for e in op.edits if getattr(e, "annotation_id", None) not in unticked]
                op = types.TextDocumentEdit(text_document=op.text_document, edits=kept)
            self._apply_op(op)
        for uri, edits in (edit.changes or {}).items():
            self._edit(uri, list(edits))
        self.applied_event.set()
        return types.ApplyWorkspaceEditResult(applied=True)

    def _apply_op(self, op: Any) -> None:
        if isinstance(op, types.TextDocumentEdit):
            if op.text_document.uri not in self.unchecked:
                self._edit(op.text_document.uri, list(op.edits))
        elif isinstance(op, types.CreateFile):
            path = _path(op.uri)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")  # editors leave an empty file on disk
        elif isinstance(op, types.RenameFile):
            _path(op.old_uri).rename(_path(op.new_uri))
            doc = self.docs.get(op.old_uri)
            if doc is not None:
                self.close(op.old_uri)
                self.open(_path(op.new_uri), doc.text)
        elif isinstance(op, types.DeleteFile):
            if op.uri in self.docs:
                self.close(op.uri)
            _path(op.uri).unlink(missing_ok=True)

    def _edit(self, uri: str, edits: list[Any]) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            # the editor opens the file in an (unsaved) buffer, as VS Code and Neovim do
            text = _path(uri).read_bytes().decode("utf-8")
            self.open(_path(uri), apply_text_edits(text, edits, self.encoding))
            return
        doc.text = apply_text_edits(doc.text, edits, self.encoding)
        doc.version += 1
        params = types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
            [types.TextDocumentContentChangeWholeDocument(text=doc.text)],
        )
        if self.change_delay:
            loop = asyncio.get_running_loop()
            loop.call_later(self.change_delay, self.client.text_document_did_change, params)
            return
        self.client.text_document_did_change(params)

    # -- showMessageRequest ---------------------------------------------------------------

    def answer_prompt(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None:
        self.prompts.append(params)
        choice = self.choices.pop(0) if self.choices else None
        return None if choice is None else types.MessageActionItem(title=choice)


def plain(value: Any) -> Any:
    """pygls hands custom notifications over as named tuples; make them dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _path(uri: str) -> Path:
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(uri).path))


HELIX_LIKE = "helix-like"


def capabilities(preset: str) -> types.ClientCapabilities:
    """A recorded client's capabilities, or a Helix-like set (no annotations, no prompts,
    no documentChanges, no progress UI, UTF-8 offered first)."""
    if preset != HELIX_LIKE:
        return client_capabilities(preset)
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=False),
            execute_command=types.ExecuteCommandClientCapabilities(),
            symbol=types.WorkspaceSymbolClientCapabilities(),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(),
            code_action=types.CodeActionClientCapabilities(),
        ),
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf32]
        ),
    )


def server_env(api_url: str | None, transcripts: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["AGENTLS_TRANSCRIPT_DIR"] = str(transcripts)
    env["XDG_CACHE_HOME"] = str(transcripts / "cache")  # the symbol index's cache
    env["HOME"] = str(transcripts / "home")  # no user-level ~/.claude settings
    env["AGENTLS_RETRY_BASE_DELAY"] = "0.01"
    env["AGENTLS_RETRY_MAX_DELAY"] = "0.05"
    env["AGENTLS_MANAGED_SETTINGS"] = str(transcripts / "managed-settings.json")
    # Scenarios written before read-before-edit (issue 29) edit without reading first;
    # tests of that check (tests/test_small_models.py, test_cli_run.py) turn it on.
    env["AGENTLS_READ_BEFORE_EDIT"] = "0"
    if api_url is not None:
        env["ANTHROPIC_BASE_URL"] = api_url
        env["ANTHROPIC_API_KEY"] = "test"
    env.update(extra)
    return env


@asynccontextmanager
async def editor_session(
    preset: str,
    root: Path,
    env: dict[str, str],
    *,
    initialization_options: Any = None,
    caps: types.ClientCapabilities | None = None,
) -> AsyncIterator[FakeEditor]:
    """Start `agentls serve` over stdio, initialize it as `preset`, yield the editor."""
    client = LanguageClient(converter_factory=default_converter)
    defaults = dict(DEFAULT_CLIENT_FEATURES)
    del defaults[types.WINDOW_WORK_DONE_PROGRESS_CREATE]
    register_lsp_features(client, defaults)
    editor = FakeEditor(client, preset=preset, root=root)

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    async def create_progress(params: types.WorkDoneProgressCreateParams) -> None:
        client.progress_reports.setdefault(params.token, [])
        if editor.progress_gate is not None:  # a test holds the run before it starts
            await editor.progress_gate.wait()

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return editor.apply(params.edit)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def show_message_request(
        params: types.ShowMessageRequestParams,
    ) -> types.MessageActionItem | None:
        if editor.prompt_gate is not None:  # a test keeps the prompt open
            editor.held_prompts.append(params)
            try:
                await editor.prompt_gate.wait()
            except asyncio.CancelledError:
                editor.withdrawn_prompts.append(params)
                raise
        return editor.answer_prompt(params)

    @client.feature("agentls/event")
    def agent_event(params: Any) -> None:
        editor.events.append(plain(params))

    await client.start_io(sys.executable, "-m", "agentls", "serve", env=env)
    response = await client.initialize_session(
        types.InitializeParams(
            capabilities=caps or capabilities(preset),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=initialization_options,
        )
    )
    editor.server_capabilities = response.capabilities
    encoding = response.capabilities.position_encoding
    editor.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
    try:
        yield editor
    finally:
        await client.shutdown_session()


async def command(editor: FakeEditor, name: str, *arguments: Any) -> Any:
    return await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments))
    )


async def run_to_applied(editor: FakeEditor, prompt: str) -> None:
    """Run `prompt` to the end and see its edit applied: at once where the client applies
    edits as they come, by `agentls.accept` where it reviews staged ones."""
    result = await command(editor, "agentls.run", {"prompt": prompt, "wait": True})
    assert result["status"] == "completed"
    if result["edit"]["applied"] is None:  # staged: this client reviews with accept
        accepted = await command(editor, "agentls.accept", {"session": result["session"]})
        assert accepted["applied"] is True
    else:
        assert result["edit"]["applied"] is True


async def code_actions(editor: FakeEditor, params: types.CodeActionParams) -> list[dict[str, Any]]:
    """Code actions as plain dicts.

    The test client structures the `(Command | CodeAction)[]` result as `Command`s whose
    `command` is the repr of the CodeAction's dict; undo that here.
    """
    import ast

    result = await editor.client.text_document_code_action_async(params)
    actions = []
    for item in result or []:
        if isinstance(item, types.Command) and item.command.startswith("{"):
            nested = ast.literal_eval(item.command)
            actions.append({"title": item.title, "command": nested})
        else:
            actions.append(editor.client.protocol._converter.unstructure(item))
    return actions


async def wait_for(predicate: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)
