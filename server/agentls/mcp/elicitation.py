"""Elicitation: an MCP server asks the user for input in the middle of a tool call.

The server sends `elicitation/create` with a message and either a flat form (a restricted
JSON Schema: text, number, integer, boolean, single- and multi-select fields) or, in URL
mode, a page to open. The user is asked like any other question: through a
`QuestionPort` the host provides (an LSP `window/showMessageRequest` per question, the
CLI's terminal prompt), one field after another; every prompt names the server, so the
user knows who asks. The answer goes back as `accept` with the values, `decline` (the
user said no) or `cancel` (dismissed, or nobody could answer).

Nothing here imports pygls: the port is all a host implements, so routing elicitation
through a general "ask the user" port later is a change of adapter, not of this module.
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict
from urllib.parse import urlsplit

import mcp_types as types

log = logging.getLogger(__name__)

ANSWER = "Answer"
ACCEPT = "Accept"
DECLINE = "Decline"
CANCEL = "Cancel"
SKIP = "Skip"
DONE = "Done"
YES, NO = "Yes", "No"
OPEN = "Open the page"
MAX_TRIES = 3
"""A typed value that does not fit the field is asked for again this often."""

FieldKind = Literal["text", "number", "integer", "boolean", "choice", "choices"]
Value = str | int | float | bool | list[str] | None


class QuestionPort(Protocol):
    """How a host asks its user. Every method returns None when nobody answered."""

    @property
    def can_type(self) -> bool:
        """`text` works (the client can collect free text); else only choices can be asked."""
        ...

    async def choose(self, message: str, options: Sequence[str]) -> str | None: ...

    async def text(self, message: str, default: str | None) -> str | None: ...

    async def open_url(self, url: str, message: str) -> bool: ...


@dataclass(frozen=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True)
class FormField:
    """One field of a form, from the server's requested schema."""

    name: str
    kind: FieldKind
    title: str
    description: str = ""
    choices: tuple[Choice, ...] = ()
    default: Value = None
    required: bool = False
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None

    def question(self, server: str) -> str:
        about = f" — {self.description}" if self.description else ""
        hints = []
        if self.format:
            hints.append(self.format)
        if self.minimum is not None or self.maximum is not None:
            low = "" if self.minimum is None else f"{self.minimum:g}"
            high = "" if self.maximum is None else f"{self.maximum:g}"
            hints.append(f"{low}…{high}")
        if self.default is not None:
            hints.append(f"default: {self.default}")
        if not self.required:
            hints.append("optional")
        extra = f" ({', '.join(hints)})" if hints else ""
        return f"MCP server '{server}' asks for {self.title}{about}{extra}"


@dataclass(frozen=True)
class Elicitation:
    """What a server asked: a form (possibly empty: a confirmation) or a page to open."""

    server: str
    message: str
    fields: tuple[FormField, ...] = ()
    url: str | None = None
    problems: tuple[str, ...] = field(default=())
    """Parts of the schema that cannot be asked (the request is then cancelled)."""

    @classmethod
    def of(cls, server: str, params: types.ElicitRequestParams) -> Elicitation:
        if isinstance(params, types.ElicitRequestURLParams):
            return cls(server, params.message, url=params.url)
        schema = params.requested_schema if isinstance(params.requested_schema, dict) else {}
        properties = schema.get("properties")
        required = set(schema.get("required") or [])
        fields: list[FormField] = []
        problems: list[str] = []
        if isinstance(properties, dict):
            for name, spec in properties.items():
                parsed = form_field(str(name), spec, str(name) in required)
                if isinstance(parsed, str):
                    problems.append(parsed)
                else:
                    fields.append(parsed)
        return cls(server, params.message, tuple(fields), problems=tuple(problems))


class _Common(TypedDict):
    """The `FormField` arguments every kind of field has."""

    name: str
    title: str
    description: str
    required: bool


def form_field(name: str, spec: object, required: bool) -> FormField | str:
    """A field from its schema, or a problem when the schema is not one MCP allows."""
    if not isinstance(spec, Mapping):
        return f"field {name!r}: not an object schema"
    title = str(spec.get("title") or name)
    description = str(spec.get("description") or "")
    common: _Common = {
        "name": name,
        "title": title,
        "description": description,
        "required": required,
    }
    kind = spec.get("type")
    choices = _choices(spec)
    default = spec.get("default")
    if kind == "array":
        items = spec.get("items")
        options = _choices(items) if isinstance(items, Mapping) else ()
        if not options:
            return f"field {name!r}: an array without enumerated items"
        chosen = [str(v) for v in default] if isinstance(default, list) else None
        return FormField(
            **common,
            kind="choices",
            choices=options,
            default=chosen,
            min_items=_int(spec.get("minItems")),
            max_items=_int(spec.get("maxItems")),
        )
    if choices:
        return FormField(**common, kind="choice", choices=choices, default=_str(default))
    if kind == "boolean":
        return FormField(**common, kind="boolean", default=default if _is_bool(default) else None)
    if kind in ("number", "integer"):
        return FormField(
            **common,
            kind="integer" if kind == "integer" else "number",
            default=default if _is_number(default) else None,
            minimum=_float(spec.get("minimum")),
            maximum=_float(spec.get("maximum")),
        )
    if kind == "string":
        return FormField(
            **common,
            kind="text",
            default=_str(default),
            format=_str(spec.get("format")),
            min_length=_int(spec.get("minLength")),
            max_length=_int(spec.get("maxLength")),
        )
    return f"field {name!r}: unsupported type {kind!r}"


def _choices(spec: Mapping[str, Any]) -> tuple[Choice, ...]:
    """`enum` (with the legacy `enumNames`), or `oneOf`/`anyOf` of `{const, title}`."""
    enum = spec.get("enum")
    if isinstance(enum, list):
        names = spec.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(enum) else enum
        return tuple(Choice(str(v), str(label)) for v, label in zip(enum, labels, strict=True))
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if isinstance(options, list) and all(isinstance(o, Mapping) for o in options):
            found = [
                Choice(str(o["const"]), str(o.get("title") or o["const"]))
                for o in options
                if "const" in o
            ]
            if found:
                return tuple(found)
    return ()


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _float(value: object) -> float | None:
    return float(value) if _is_number(value) else None  # type: ignore[arg-type]


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def openable(url: str) -> bool:
    """Only web pages are opened for a server: https, or http on this machine (a server's
    metadata must not make the editor open a `file:` or custom-scheme URL)."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return bool(parts.hostname)
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")


class _Cancelled(Exception):
    """The user dismissed a question, or a field cannot be asked on this host."""


async def ask(port: QuestionPort | None, request: Elicitation) -> types.ElicitResult:
    """Ask the user, field by field; the result the server gets."""
    if port is None:
        return types.ElicitResult(action="cancel")
    if request.url is not None:
        return await _ask_url(port, request)
    if request.problems:
        log.warning("cannot ask for MCP server %s: %s", request.server, request.problems)
        return types.ElicitResult(action="cancel")
    fields = request.fields
    intro = f"MCP server '{request.server}' asks: {request.message}"
    start = await port.choose(intro, [ANSWER if fields else ACCEPT, DECLINE])
    if start is None:
        return types.ElicitResult(action="cancel")
    if start == DECLINE:
        return types.ElicitResult(action="decline")
    content: dict[str, Value] = {}
    try:
        for form_field in fields:
            value = await _ask_field(port, request.server, form_field)
            if value is not None:
                content[form_field.name] = value
    except _Cancelled:
        return types.ElicitResult(action="cancel")
    return types.ElicitResult(action="accept", content=content)


async def _ask_url(port: QuestionPort, request: Elicitation) -> types.ElicitResult:
    url = request.url or ""
    if not openable(url):
        log.warning("MCP server %s asked to open %r; declined", request.server, url[:200])
        return types.ElicitResult(action="decline")
    message = f"MCP server '{request.server}' asks you to open {url}: {request.message}"
    answer = await port.choose(message, [OPEN, DECLINE])
    if answer is None:
        return types.ElicitResult(action="cancel")
    if answer != OPEN:
        return types.ElicitResult(action="decline")
    await port.open_url(url, message)
    return types.ElicitResult(action="accept")


async def _ask_field(port: QuestionPort, server: str, form_field: FormField) -> Value:
    question = form_field.question(server)
    if form_field.kind == "boolean":
        return await _ask_boolean(port, question, form_field)
    if form_field.kind == "choice":
        return await _ask_choice(port, question, form_field)
    if form_field.kind == "choices":
        return await _ask_choices(port, question, form_field)
    return await _ask_typed(port, question, form_field)


def _closing(form_field: FormField) -> list[str]:
    return ([] if form_field.required else [SKIP]) + [CANCEL]


async def _pick(port: QuestionPort, question: str, options: list[str]) -> str:
    answer = await port.choose(question, options)
    if answer is None or answer == CANCEL:
        raise _Cancelled
    return answer


async def _ask_boolean(port: QuestionPort, question: str, form_field: FormField) -> Value:
    answer = await _pick(port, question, [YES, NO, *_closing(form_field)])
    return None if answer == SKIP else answer == YES


async def _ask_choice(port: QuestionPort, question: str, form_field: FormField) -> Value:
    labels = {c.label: c.value for c in form_field.choices}
    answer = await _pick(port, question, [*labels, *_closing(form_field)])
    return None if answer == SKIP else labels[answer]


async def _ask_choices(port: QuestionPort, question: str, form_field: FormField) -> Value:
    """One option at a time until "Done" (within minItems/maxItems)."""
    chosen: list[str] = []
    labels = {c.label: c.value for c in form_field.choices}
    most = form_field.max_items or len(labels)
    least = form_field.min_items or 0
    while len(chosen) < most:
        left = [label for label, value in labels.items() if value not in chosen]
        if not left:
            break
        done = [DONE] if len(chosen) >= least and chosen else []
        skip = [SKIP] if not chosen and not form_field.required and least == 0 else []
        picked = ", ".join(chosen) or "none yet"
        answer = await _pick(port, f"{question} — chosen: {picked}", [*left, *done, *skip, CANCEL])
        if answer == SKIP:
            return None
        if answer == DONE:
            break
        chosen.append(labels[answer])
    return chosen


async def _ask_typed(port: QuestionPort, question: str, form_field: FormField) -> Value:
    """Text and numbers: typed where the host can collect text, else the default."""
    default = None if form_field.default is None else str(form_field.default)
    if not port.can_type:
        if form_field.default is not None:
            return form_field.default
        if form_field.required:
            raise _Cancelled  # nothing sensible to send: the server learns it was cancelled
        return None
    prompt = question
    for _ in range(MAX_TRIES):
        typed = await port.text(prompt, default)
        if typed is None:
            raise _Cancelled
        if not typed.strip() and not form_field.required:
            return None
        value, problem = convert(form_field, typed.strip())
        if problem is None:
            return value
        prompt = f"{question} — {problem}; try again"
    raise _Cancelled


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def convert(form_field: FormField, text: str) -> tuple[Value, str | None]:
    """A typed answer as the field's type, or a problem to show the user."""
    if form_field.kind in ("number", "integer"):
        try:
            number: float | int = int(text) if form_field.kind == "integer" else float(text)
        except ValueError:
            return (
                None,
                f"{text!r} is not {'an integer' if form_field.kind == 'integer' else 'a number'}",
            )
        if form_field.minimum is not None and number < form_field.minimum:
            return None, f"{number} is below {form_field.minimum:g}"
        if form_field.maximum is not None and number > form_field.maximum:
            return None, f"{number} is above {form_field.maximum:g}"
        return number, None
    if form_field.required and not text:
        return None, "a value is required"
    if form_field.min_length is not None and len(text) < form_field.min_length:
        return None, f"at least {form_field.min_length} characters"
    if form_field.max_length is not None and len(text) > form_field.max_length:
        return None, f"at most {form_field.max_length} characters"
    return text, _format_problem(form_field.format, text)


def _format_problem(fmt: str | None, text: str) -> str | None:
    if fmt == "email" and not _EMAIL.match(text):
        return f"{text!r} is not an email address"
    if fmt == "uri" and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$", text):
        return f"{text!r} is not a URI"
    if fmt == "date":
        try:
            datetime.date.fromisoformat(text)
        except ValueError:
            return f"{text!r} is not a date (YYYY-MM-DD)"
    if fmt == "date-time":
        try:
            datetime.datetime.fromisoformat(text)
        except ValueError:
            return f"{text!r} is not a date and time (ISO 8601)"
    return None
