"""A whole-file write that drops definitions: asked again before it is staged.

Why: asked to "add a function triple(x) to mathx.py", the 1.5B model sent write_file with
only `triple` — the file's `double` gone. A small model writes the part it changes, not the
whole file. In the compact profile, a write_file (or file listing) that overwrites a file
and loses a top-level name the file defined (a `def`, `class`, `function`, assignment …
at the start of a line, whose name no longer occurs at all) is refused once with the names
it would remove; the same call sent again goes through (the removal was meant).

A rename is not a loss: asked to rename find_usr to find_user, the model wrote lookup.py
with `def find_user` and was refused for dropping `find_usr`. A write whose text is the
old text with each dropped name replaced, everywhere, by a name the new text adds passes.
"""

from __future__ import annotations

import re

_DEFINITION = re.compile(
    r"^(?:export\s+)?(?:pub\s+)?(?:async\s+)?"
    r"(?:def|class|function|func|fn|struct|enum|interface|type|const|let|var)\s+"
    r"(?P<kw>[A-Za-z_]\w*)"
    r"|^(?P<assign>[A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)",
    re.MULTILINE,
)


def defined_names(text: str) -> list[str]:
    """Top-level names `text` defines, in order (a line-start heuristic, any language)."""
    names: list[str] = []
    for match in _DEFINITION.finditer(text):
        name = match.group("kw") or match.group("assign")
        if name and name not in names:
            names.append(name)
    return names


def dropped_names(old: str, new: str) -> list[str]:
    """The names `old` defines that `new` no longer mentions anywhere (none when `new` is
    `old` with those names renamed)."""
    dropped = [n for n in defined_names(old) if not re.search(rf"\b{re.escape(n)}\b", new)]
    return [] if dropped and _renamed(old, new, dropped) else dropped


def _renamed(old: str, new: str, dropped: list[str]) -> bool:
    """Whether `new` is `old` with each dropped name replaced by a name `new` adds."""
    added = [n for n in defined_names(new) if n not in defined_names(old)]
    new_lines = {line.rstrip() for line in new.splitlines()}
    text = old
    for name in dropped:
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        line = next(x for x in old.splitlines() if pattern.search(x))  # its definition
        other = next((a for a in added if pattern.sub(a, line).rstrip() in new_lines), None)
        if other is None:
            return False
        text = pattern.sub(other, text)
        added.remove(other)
    return text.rstrip() == new.rstrip()


def refusal(display: str, names: list[str]) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:5])
    return (
        f"Not written: write_file replaces the whole of {display}, and this content no longer "
        f"has {shown}, which the file defines now. Send the complete new file: every line "
        "you do not change, plus your change (or use edit_file for a small change). If "
        "removing them is what you mean, send the same call again."
    )
