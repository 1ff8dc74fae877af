"""Validation that keeps every valid part and reports each invalid one the same way.

`validate_leniently(Model, raw, source)` validates a whole settings object with pydantic;
for each error it drops the smallest invalid part and tries again, so one bad value never
costs the rest of the section. The part dropped is:

- a field of a settings object → its default (or the lower layer's value) applies;
- an entry of a list or map (a rule, a hook, a price) → that entry is left out;
- the entry around a field declared critical (`entry_error`), or around a missing
  required field → the whole entry is left out (a hook whose `type` is not understood
  must not run as some other type).

Each dropped part becomes a `Problem`: where it came from, its path, the bad value, why,
and what applies instead. `describe_validation_error` is the one formatter of pydantic
errors for every other caller (tool input, command arguments).
"""

from __future__ import annotations

import copy
import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_snake
from pydantic_core import PydanticCustomError

M = TypeVar("M", bound=BaseModel)
PathPart = str | int
Path = tuple[PathPart, ...]
ProblemKind = Literal["invalid", "unknown", "not_here", "section"]

ENTRY_ERROR = "invalid_entry"
MAX_VALUE_CHARS = 120
_MAX_PASSES = 64


def entry_error(message: str) -> PydanticCustomError:
    """Raise this from a validator when an invalid value must drop the entry around it."""
    return PydanticCustomError(ENTRY_ERROR, message)


@dataclass(frozen=True)
class Problem:
    """One invalid part of one settings source, as the user is told about it."""

    source: str
    path: Path
    value: object
    reason: str
    kind: ProblemKind = "invalid"
    instead: str = "ignored"
    variable: str | None = None
    """For the environment: the variable that carried the value."""

    @property
    def where(self) -> str:
        return format_path(self.path)

    def __str__(self) -> str:
        shown = _short_repr(self.value)
        if self.variable is not None:
            field = "" if self.where == self.variable else f" for `{self.where}`"
            return (
                f"{self.variable}={shown} is not a valid value{field} "
                f"({self.reason}); {self.instead}"
            )
        if self.kind == "unknown":
            return f"{self.source}: unknown setting `{self.where}` ({self.reason}); ignored"
        if self.kind == "not_here":
            return f"{self.source}: `{self.where}` cannot be set here ({self.reason}); ignored"
        if self.kind == "section":
            return f"{self.source}: {self.reason}; ignored"
        return f"{self.source}: `{self.where}` = {shown} is invalid ({self.reason}); {self.instead}"

    def resolved(self, effective: BaseModel) -> Problem:
        """The same problem, saying what applies in `effective` (the merged settings)."""
        instead = what_applies(effective, self.path) if self.kind == "invalid" else None
        return self if instead is None else replace(self, instead=instead)


@dataclass(frozen=True)
class Checked(Generic[M]):
    """A validated model, the values that were set (camelCase, for layering) and problems."""

    model: M
    values: dict[str, object]
    problems: list[Problem]


def validate_leniently(model: type[M], raw: object, source: str) -> Checked[M]:
    """Validate `raw` as `model`, dropping (and reporting) each invalid part."""
    if raw is None:
        return Checked(model(), {}, [])
    if not isinstance(raw, Mapping):
        reason = f"expected an object of settings, got {type(raw).__name__}"
        return Checked(model(), {}, [Problem(source, (), raw, reason, kind="section")])
    data: dict[str, object] = copy.deepcopy(dict(raw))
    problems: list[Problem] = []
    for _ in range(_MAX_PASSES):
        try:
            validated = model.model_validate(data)
        except ValidationError as exc:
            found = _drop_invalid(model, data, exc, source)
            if not found:
                break
            problems.extend(found)
            continue
        values = validated.model_dump(by_alias=True, exclude_unset=True)
        return Checked(validated, values, problems)
    problems.append(Problem(source, (), raw, "it could not be understood", kind="section"))
    return Checked(model(), {}, problems)


def _drop_invalid(
    model: type[BaseModel], data: dict[str, object], exc: ValidationError, source: str
) -> list[Problem]:
    """Remove the part each error points at and describe it; [] when an error names no
    part that can be dropped."""
    drops: dict[Path, Problem] = {}
    for error in exc.errors(include_url=False):
        path, rest = _invalid_part(data, error["loc"], error["type"])
        if len(path) > 1 and _required(model, path):
            path, rest = path[:-1], (path[-1], *rest)  # no entry without its required field
        if not path:
            return []
        if path not in drops:
            drops[path] = _problem(model, source, path, rest, error)
    problems = []
    for path in sorted(drops, key=_deepest_last_index_first, reverse=True):
        found, value = _pop(data, path)
        if found:  # else it was inside a part dropped already
            problems.append(replace(drops[path], value=value))
    return problems[::-1]


def _problem(model: type[BaseModel], source: str, path: Path, rest: Path, error: Any) -> Problem:
    if error["type"] == "extra_forbidden":
        return Problem(source, path, None, _unknown_hint(model, path), kind="unknown")
    message = str(error["msg"]).removeprefix("Value error, ")
    inner = [str(p) for p in rest if not _is_tag(p)]
    reason = f"{'.'.join(inner)}: {message}" if inner and error["type"] != ENTRY_ERROR else message
    return Problem(source, path, None, reason, instead=_default_instead(model, path))


def _unknown_hint(model: type[BaseModel], path: Path) -> str:
    parent = _model_at(model, path[:-1])
    if parent is None:
        return "not a known key"
    known = sorted(f.alias or n for n, f in parent.model_fields.items())
    close = difflib.get_close_matches(str(path[-1]), known, n=1)
    if close:
        return f"did you mean `{close[0]}`?"
    return "known: " + ", ".join(known)


def _default_instead(model: type[BaseModel], path: Path) -> str:
    """What applies when the part at `path` is dropped: a field's default, or nothing."""
    parent = _model_at(model, path[:-1])
    name = field_name(parent, path[-1]) if parent is not None else None
    if parent is None or name is None:
        return "ignored"
    info = parent.model_fields[name]
    if info.is_required():
        return "ignored"
    return _using(info.get_default(call_default_factory=True))


def _using(value: object) -> str:
    if value is None:
        return "leaving it unset"
    if isinstance(value, BaseModel):
        return "using the default"
    return f"using {_short_repr(_plain(value))}"


def _invalid_part(data: Any, loc: Sequence[PathPart], error_type: str) -> tuple[Path, Path]:
    """The path (in `data`'s own keys) of the smallest part to drop for one error, and the
    rest of pydantic's `loc` below it.

    `loc` may hold union tags and `[key]`, and spells fields by alias where the user may
    have used the attribute name; parts that are not in the data are skipped.
    """
    node, path, matched = data, [], 0
    for index, part in enumerate(loc):
        key = _key_in(node, part)
        if key is None:
            continue
        node, matched = node[key], index + 1
        path.append(key)
    rest = tuple(loc[matched:])
    if error_type == ENTRY_ERROR and path:
        rest = (path.pop(), *rest)  # the field is critical: its entry goes
    return tuple(path), rest


def _key_in(node: Any, part: PathPart) -> PathPart | None:
    if isinstance(node, dict):
        if part in node:
            return part
        snake = to_snake(part) if isinstance(part, str) else None
        return snake if snake in node else None
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return part
    return None


def _pop(data: Any, path: Path) -> tuple[bool, Any]:
    node = data
    for part in path[:-1]:
        key = _key_in(node, part)
        if key is None:
            return False, None
        node = node[key]
    key = _key_in(node, path[-1])
    if key is None:
        return False, None
    return True, node.pop(key)


def _deepest_last_index_first(path: Path) -> tuple[tuple[bool, Any], ...]:
    """Sort key: dropping in reverse order keeps later list indices valid."""
    return tuple((isinstance(p, int), p) for p in path)


def _is_tag(part: PathPart) -> bool:
    """pydantic's union members and validators in `loc` (`list[str]`, `[key]`, …)."""
    return isinstance(part, str) and "[" in part


def _model_at(model: type[BaseModel], path: Path) -> type[BaseModel] | None:
    """The settings class of the object at `path` (None when it is not one)."""
    annotation: Any = model
    for part in path:
        annotation = _descend(annotation, part)
    return model_class(annotation)


def _descend(annotation: Any, part: PathPart) -> Any:
    """The annotation of the value under `part` (a field, a map key or a list index)."""
    if annotation is None:
        return None
    cls = model_class(annotation)
    if cls is not None:
        name = field_name(cls, part)
        return cls.model_fields[name].annotation if name is not None else None
    if hasattr(annotation, "__metadata__"):  # Annotated[X, ...]
        annotation = annotation.__origin__
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        origin = getattr(candidate, "__origin__", None)
        args: tuple[Any, ...] = getattr(candidate, "__args__", ())
        if origin in (dict, Mapping) and len(args) == 2 and isinstance(part, str):
            return args[-1]
        if origin in (list, tuple, frozenset, set) and args and isinstance(part, int):
            return args[0]
    return None


def model_class(annotation: Any) -> type[BaseModel] | None:
    """The settings class an annotation names (also through `X | None`), else None."""
    if hasattr(annotation, "__metadata__"):  # Annotated[X, ...]
        annotation = annotation.__origin__
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if getattr(annotation, "__origin__", None) is not None and not _is_union(annotation):
        return None
    for arg in getattr(annotation, "__args__", ()):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _is_union(annotation: Any) -> bool:
    origin = getattr(annotation, "__origin__", None)
    return origin is typing.Union or isinstance(annotation, types.UnionType)


def _required(model: type[BaseModel], path: Path) -> bool:
    """Whether `path` names a required field (one without a default) of an object."""
    parent = _model_at(model, path[:-1])
    name = field_name(parent, path[-1]) if parent is not None and path else None
    return parent is not None and name is not None and parent.model_fields[name].is_required()


def field_name(model: type[BaseModel], key: PathPart) -> str | None:
    """The attribute name of the field spelled `key` (its camelCase alias or its name)."""
    if not isinstance(key, str):
        return None
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return name
    return None


def what_applies(effective: BaseModel, path: Path) -> str | None:
    """ "using X" for a field reached through settings objects only (X: its value in
    `effective`); None when the path goes through a list or map entry."""
    node: Any = effective
    for part in path:
        if not isinstance(node, BaseModel):
            return None
        name = field_name(type(node), part)
        if name is None:
            return None
        node = getattr(node, name)
    return _using(node)


def _plain(value: Any) -> Any:
    if isinstance(value, frozenset | set):
        return sorted(value)
    return value


def format_path(path: Path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(settings)"


def _short_repr(value: object) -> str:
    text = repr(value)
    if len(text) > MAX_VALUE_CHARS:
        text = text[: MAX_VALUE_CHARS - 1] + "…"
    return text


def describe_validation_error(exc: ValidationError, *, unknown: str = "a known key") -> str:
    """Name each bad field and why, the way a person would fix it (tool input, arguments).

    `unknown` completes "`x` is not …" for keys the model does not have.
    """
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(input)"
        if err["type"] == "missing":
            problems.append(f"`{where}` is required")
        elif err["type"] == "extra_forbidden":
            problems.append(f"`{where}` is not {unknown}")
        else:
            problems.append(f"`{where}`: {err['msg']}")
    return "; ".join(problems)
