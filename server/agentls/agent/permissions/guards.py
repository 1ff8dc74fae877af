"""The safety steps of the pipeline that no host configuration can leave out.

Why here and not in a policy or a hook: a policy and hooks are what a host configures (and
a test host, a script or a settings file that failed to load may configure none). These
steps run for every call, whatever was configured — the first two as inputs of the one
permission decision (`agentls.agent.run.decision.decide`), the third in
`agentls.agent.run.pipeline.Pipeline`:

- secret files (`.env*`, keys, cloud credentials) are never shown by tools that show file
  contents, in any mode, whatever rules or hooks allow;
- plan mode (the run's, or the permission mode's) denies every call that is not read-only;
- the agent's own credentials are redacted from every tool result before the model, the
  transcript or a post-tool hook sees it.

Also here: what a call is about (`call_subject`), which the rules match too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agentls.agent.framework.tool import ToolOutput
from agentls.agent.protocol.messages import JsonObject, text_block
from agentls.agent.rules.rule import COMMAND_TOOLS, DOMAIN_TOOLS, Subject
from agentls.agent.rules.shell import split_command
from agentls.workspace.secrets import Redactor

if TYPE_CHECKING:
    from agentls.agent.framework.context import ToolContext
    from agentls.agent.framework.tool import Tool
    from agentls.agent.permissions.approval import PermissionMode

__all__ = [
    "CREDENTIAL_WITHHELD",
    "SECRET_GUARDED_TOOLS",
    "call_subject",
    "in_plan_mode",
    "input_dict",
    "is_read_only",
    "plan_mode_denial",
    "redact_output",
    "secret_file_denial",
]

SECRET_GUARDED_TOOLS: frozenset[str] = frozenset(
    {
        "read_file",
        "grep",
        "edit_file",
        "rename_file",
        "document_symbols",
        "search_symbols",
        "go_to_definition",
        "find_references",
        "find_implementations",
        "type_definition",
        "hover",
        "diagnostics",
        "rename_symbol",
        "notebook_edit",
        "call_hierarchy",
        "code_actions",
        "replace_symbol_body",
        "insert_before_symbol",
        "insert_after_symbol",
        "safe_delete_symbol",
    }
)
"""Tools whose result shows (or, for rename_file, would later show under another name) the
contents of the file they name. grep and list_files also skip secret files inside the
folders they walk (`Workspace.services.secrets`)."""

_PATH_KEYS = ("path", "new_path", "file_path")
_PATH_LIST_KEYS = ("paths",)
_SOURCE_KEYS = ("path", "file_path")
"""The inputs whose file a tool reads (a rename's `new_path` is written, not read)."""
_WALKING_TOOLS = ("grep", "list_files")
"""Tools whose missing `path` means the whole workspace, and that read a whole folder."""
_ANY_FILE = "<any file>"

CREDENTIAL_WITHHELD = (
    "The tool's output contained the agent's API credential and was withheld. "
    "Redacted output follows."
)


def input_dict(input: Any) -> JsonObject:
    """A parsed tool input as plain data (rules and prompts look at fields by name)."""
    if isinstance(input, BaseModel):
        return input.model_dump()
    if isinstance(input, dict):
        return dict(input)
    return {}


def is_read_only(tool: Tool[Any], input: Any) -> bool:
    """The tool's own answer; a tool that fails to answer counts as writing."""
    try:
        return bool(tool.is_read_only(input))
    except Exception:
        return False


def call_subject(
    tool: str, raw: JsonObject, roots: Sequence[Path], keys: Sequence[str] = _PATH_KEYS
) -> Subject:
    """The paths or command a call is about, as rules (and the secret step) match them."""
    if tool in COMMAND_TOOLS:
        command = raw.get("command")
        return Subject(tool, command=split_command(command if isinstance(command, str) else ""))
    if tool in DOMAIN_TOOLS:
        return Subject(tool, domains=url_hosts(raw.get("url")))
    texts: list[str] = []
    for key in keys:
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            texts.append(value)
    for key in _PATH_LIST_KEYS:
        values = raw.get(key)
        if isinstance(values, list):
            texts.extend(v for v in values if isinstance(v, str) and v.strip())
    if not texts and tool in _WALKING_TOOLS:
        texts.append(".")
    root_list = list(roots)
    lexical = tuple(_absolute(t, root_list) for t in texts)
    real = tuple(os.path.realpath(p) for p in lexical)
    extra = tuple(r for r in real if r not in lexical)
    contents: tuple[str, ...] = ()
    if tool in _WALKING_TOOLS:
        contents = tuple(os.path.join(p, _ANY_FILE) for p in (*lexical, *extra))
    return Subject(tool, lexical, extra, contents=contents)


def url_hosts(url: object) -> tuple[str, ...]:
    """The host a URL names, lower case (none for a value that is not an http(s) URL)."""
    from urllib.parse import urlsplit

    if not isinstance(url, str):
        return ()
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return ()
    return (host.rstrip(".").lower(),) if host else ()


def secret_file_denial(tool: str, input: Any, ctx: ToolContext) -> str | None:
    """Why this call must not run because it would show a secret file, or None.

    The matcher is the workspace's (`Workspace.services.secrets`): the defaults, or the
    `secrets` setting the runtime installed. Both the path as written and its symlink
    target are checked, so `notes.txt -> .env` is refused like `.env`.
    """
    if tool not in SECRET_GUARDED_TOOLS:
        return None
    subject = call_subject(tool, input_dict(input), ctx.workspace.roots, _SOURCE_KEYS)
    matcher = ctx.services.secrets
    for path in (*subject.paths, *subject.real_paths, *subject.contents):
        pattern = matcher.match(path, resolve=False)
        if pattern is not None:
            return (
                f"{path} matches the secret-file pattern `{pattern}`. Reading secret files "
                "(keys, credentials, .env) is denied by default; the user can change the "
                "`secrets` setting. Do not try to read it another way"
            )
    return None


def in_plan_mode(run_mode: str, permission_mode: str) -> bool:
    """Plan mode is the run's mode `plan` or the permission mode `plan`: one test for both,
    used by the permission decision (and by the rules, which judge a plan run's reads like
    the default mode's)."""
    return run_mode == "plan" or permission_mode == "plan"


def plan_mode_denial(
    tool: Tool[Any], input: Any, ctx: ToolContext, mode: PermissionMode
) -> str | None:
    """Why plan mode forbids this call (it is not read-only), or None. Read only by
    `agentls.agent.run.decision.decide`, the one place a call's permission is decided."""
    if in_plan_mode(ctx.mode, mode) and not is_read_only(tool, input):
        return (
            f"Permission denied: {tool.name} changes files, and this run is in plan mode "
            "(read-only). Do not retry; describe the change instead."
        )
    return None


def redact_output(output: ToolOutput, redactor: Redactor) -> ToolOutput:
    """`output` with the agent's credentials replaced; a result that contained one is
    withheld as an error that says so (the model must not build on a leaked key)."""
    if not redactor.values:
        return output
    if isinstance(output.content, str):
        if not redactor.contains(output.content):
            return output
        return ToolOutput(f"{CREDENTIAL_WITHHELD}\n{redactor.redact(output.content)}", True)
    blocks = [_redact_value(block, redactor) for block in output.content]
    if blocks == output.content:
        return output
    return ToolOutput([text_block(CREDENTIAL_WITHHELD), *blocks], True)


def _redact_value(value: Any, redactor: Redactor) -> Any:
    """Every string inside a content block (text, a document's data, nested content)."""
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, dict):
        return {k: _redact_value(v, redactor) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v, redactor) for v in value]
    return value


def _absolute(text: str, roots: list[Path]) -> str:
    """The path a tool would use, lexically (like `PathResolver`: multi-root names work)."""
    raw = text.strip() or "."
    if os.path.isabs(raw):
        return os.path.normpath(raw)
    if not roots:
        return os.path.normpath(os.path.abspath(raw))
    parts = Path(raw).parts
    if len(roots) > 1 and parts and parts[0] not in (".", ".."):
        for root in roots[1:]:
            if parts[0] == root.name and not os.path.lexists(roots[0] / parts[0]):
                return os.path.normpath(os.path.join(root, *parts[1:]))
    return os.path.normpath(os.path.join(roots[0], raw))
