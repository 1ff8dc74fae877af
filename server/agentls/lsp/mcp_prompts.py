"""MCP servers' questions to the editor's user: elicitation and OAuth sign-in pages.

`LspQuestions` implements `agentls.mcp.elicitation.QuestionPort`:

- a choice is a `window/showMessageRequest` with the options as actions (the CLI, an LSP
  client too, asks them on its terminal);
- free text is the `agentls/textInput` request (`{message, default}` → the text, or null
  when dismissed), sent only to clients that announce
  `capabilities.experimental.agentls.textInput` (the CLI does); elsewhere a text field
  takes its default, or the server is told the user cancelled;
- a page (OAuth sign-in, URL elicitation) is opened with `window/showDocument`
  (`external: true`) where supported, and always shown as a message with its address.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection

log = logging.getLogger(__name__)

TEXT_INPUT = "agentls/textInput"
QUESTION_TIMEOUT = 600.0
"""A question nobody answers is given up after this long (the server hears "cancel")."""


class LspQuestions:
    """Questions from MCP servers, asked in the editor."""

    def __init__(self, ls: Connection) -> None:
        self.ls = ls

    @property
    def can_type(self) -> bool:
        return self.ls.features.text_input

    async def choose(self, message: str, options: Sequence[str]) -> str | None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=f"agentls: {message}",
            actions=[types.MessageActionItem(title=option) for option in options],
        )
        self.ls.log_line(f"agentls: asking: {message}")
        try:
            choice = await asyncio.wait_for(
                self.ls.window_show_message_request_async(params), QUESTION_TIMEOUT
            )
        except (TimeoutError, Exception) as exc:
            log.info("question not answered: %s", exc)
            return None
        return choice.title if choice is not None and choice.title in options else None

    async def text(self, message: str, default: str | None) -> str | None:
        if not self.can_type:
            return None
        try:
            answer: Any = await asyncio.wait_for(
                self.ls.protocol.send_request_async(
                    TEXT_INPUT, {"message": f"agentls: {message}", "default": default}
                ),
                QUESTION_TIMEOUT,
            )
        except (TimeoutError, Exception) as exc:
            log.info("text input not answered: %s", exc)
            return None
        return answer if isinstance(answer, str) else None

    async def open_url(self, url: str, message: str) -> bool:
        self.ls.message(types.MessageType.Warning, f"agentls: {message}")
        if not self.ls.features.show_document:
            return True  # the address is in the message: the user opens it
        try:
            result = await asyncio.wait_for(
                self.ls.window_show_document_async(
                    types.ShowDocumentParams(uri=url, external=True, take_focus=True)
                ),
                30,
            )
        except (TimeoutError, Exception) as exc:
            log.info("showDocument failed for %s: %s", url, exc)
            return True
        if not result.success:
            log.info("the editor did not open %s", url)
        return True


def questions_for(ls: Connection) -> LspQuestions | None:
    """A question port where the editor can show message requests, else None: servers are
    then not offered elicitation, and a sign-in cannot be asked for."""
    return LspQuestions(ls) if ls.features.show_message_request else None
