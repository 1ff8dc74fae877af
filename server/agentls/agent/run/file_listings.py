"""Whole-file listings a model wrote as text, turned into `write_file` calls.

Why: a small local model (Qwen2.5-Coder 1.5B) gets an exact-substring `edit_file` wrong
often (old_string from another file, a parameter never added) and a `write_file` whose
content is JSON-escaped code wrong too (a file rewritten without a function). Asked for the
whole file in aider's "whole" format — the file's path alone on a line, then the complete
new file in a fenced block — the same model gets the same tasks right. So in the compact
profile, on an endpoint whose replies are read for text calls, such a *file listing* is a
`write_file` call: it goes through the same pipeline (schema, permissions and approval,
workspace and secret-file checks, staging and review, problem checks) as any other call.

Only a file the session has read (or written) counts: the model has seen its current text,
so a listing of it is a rewrite, not an invented file; a listing whose text equals the file
is a quotation (an answer showing code), not a change. Which files qualify is the caller's
`target` (it knows the workspace and the read log); this module only finds listings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_LISTING = re.compile(
    r"^[ \t]*(?:#+[ \t]*|[-*>][ \t]+)?(?:File:[ \t]*)?[`*]*(?P<path>[^\s`*:]+?)[`*]*:?[`*]*[ \t]*\n"
    r"(?:[ \t]*\n)?"
    r"[ \t]*(?P<fence>`{3,})[ \t]*[\w+#.-]*[ \t]*\n"
    r"(?P<body>.*?)"
    r"^[ \t]*(?P=fence)[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
"""A path alone on its line (optionally in backticks or bold, with a colon inside or after
them — `**app.py:**`, the 1.5B model's form —, after a heading
or bullet mark, or "File:"), at most one blank line, then a fenced block up to the fence
that closes it at the start of a line."""


_INNER_LISTING = re.compile(
    r"^[ \t]*(?P<fence>`{3,})[ \t]*[\w+#.-]*[ \t]*\n"
    r"[ \t]*(?:#[ \t]*)?(?P<path>[\w./-]+\.\w+)[ \t]*\n"
    r"(?P<body>.*?)"
    r"^[ \t]*(?P=fence)[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
"""The path as the fenced block's first line ("```\nlookup.py\ndef find_user…```", or
"# lookup.py"): the 1.5B model's listing after a refused write. The caller's `target`
decides, as for the other form: only a file the session has read, changed."""


_BLOCK = re.compile(
    r"^[ \t]*(?P<fence>`{3,})[ \t]*[\w+#.-]*[ \t]*\n(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
"""Any fenced block (for a reply whose one block has no path)."""


@dataclass(frozen=True)
class Listing:
    path: str
    """The file to write, as `target` named it (workspace-relative)."""
    content: str


def parse_listings(
    text: str,
    target: Callable[[str, str], str | None],
    bare: Callable[[str], str | None] | None = None,
) -> tuple[list[Listing], str]:
    """The listings in `text` that `target(path, content)` accepts (it returns the path to
    write, or None), and the text without them.

    `bare(content)`: when the reply has no listing and exactly one fenced block, the path
    that block rewrites, or None. The 0.5B model, shown one file and asked to fix it,
    answered with the fixed file in a fence and no path; the caller decides when that can
    only mean the one file shown (`agentls.agent.run.listing_turn`)."""
    listings: list[Listing] = []

    def replace(match: re.Match[str]) -> str:
        content = match.group("body")
        path = target(match.group("path"), content)
        if path is None:
            return match.group(0)
        listings.append(Listing(path, content))
        return ""

    rest = _LISTING.sub(replace, text)
    rest = _INNER_LISTING.sub(replace, rest)
    blocks = list(_BLOCK.finditer(rest))
    if not listings and bare is not None and len(blocks) == 1:
        path = bare(blocks[0].group("body"))
        if path is not None:
            listings.append(Listing(path, blocks[0].group("body")))
            rest = rest[: blocks[0].start()] + rest[blocks[0].end() :]
    return listings, rest.strip()
