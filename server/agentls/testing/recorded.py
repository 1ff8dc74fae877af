"""What the fake API saw: every request, kept so tests can assert on what a client sent."""

from __future__ import annotations

import json
from dataclasses import dataclass, field


def _parse_json_object(body: bytes) -> dict[str, object]:
    """Parses a JSON object body; anything else reads as `{}` (the raw bytes stay available)."""
    try:
        parsed = json.loads(body) if body else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as received, with accessors for the Messages API fields tests check."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names are lower-cased, so lookups need not guess the client's spelling."""
    body: bytes = b""
    json: dict[str, object] = field(default_factory=dict)

    @classmethod
    def build(cls, method: str, path: str, headers: dict[str, str], body: bytes) -> RecordedRequest:
        """Records a request, parsing its JSON body once up front."""
        lowered = {name.lower(): value for name, value in headers.items()}
        return cls(method, path, lowered, body, _parse_json_object(body))

    @property
    def route(self) -> str:
        """The path without its query string (the SDK adds `?beta=true` on beta calls)."""
        return self.path.split("?", 1)[0]

    @property
    def api_key(self) -> str | None:
        """The credential sent, whether as `x-api-key` or as an `Authorization: Bearer` token."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        return token.strip() if scheme.lower() == "bearer" else None

    @property
    def model(self) -> str | None:
        value = self.json.get("model")
        return value if isinstance(value, str) else None

    @property
    def stream(self) -> bool:
        return self.json.get("stream") is True

    @property
    def messages(self) -> list[dict[str, object]]:
        """The conversation sent, keeping only well-formed (object) messages."""
        value = self.json.get("messages")
        return _objects(value)

    @property
    def system(self) -> str | list[dict[str, object]] | None:
        """The `system` field as sent: a string, a list of blocks, or absent."""
        value = self.json.get("system")
        return value if isinstance(value, str | list) else None

    @property
    def system_text(self) -> str:
        """The system prompt as plain text, however it was sent."""
        return _text_of(self.system)

    @property
    def tools(self) -> list[dict[str, object]]:
        return _objects(self.json.get("tools"))

    @property
    def tool_names(self) -> list[str]:
        return [str(tool.get("name")) for tool in self.tools]

    @property
    def last_user_message(self) -> dict[str, object] | None:
        """The final `user` message, i.e. what this request asks the model to respond to."""
        for message in self.messages[::-1]:
            if message.get("role") == "user":
                return message
        return None

    def tool_results(self) -> list[dict[str, object]]:
        """The `tool_result` blocks of the last user message, in the order sent."""
        blocks = _blocks_of(self.last_user_message)
        return [block for block in blocks if block.get("type") == "tool_result"]

    def user_text(self) -> str:
        """The text of the last user message (string content or its text blocks)."""
        message = self.last_user_message
        return _text_of(message.get("content")) if message else ""


def _objects(value: object) -> list[dict[str, object]]:
    """The JSON objects of a list (anything else reads as empty)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _blocks_of(message: dict[str, object] | None) -> list[dict[str, object]]:
    return _objects(message.get("content") if message else None)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(str(text) for text in texts)
