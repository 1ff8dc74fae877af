"""Parsing a message body from a client, with its nesting bounded.

`json.loads` recurses once per `[` or `{`: a body of 100,000 nested `[` raised
`RecursionError` out of the read loops of `agentls serve` (stdio and TCP) and `agentls acp`,
and the process exited. Deep nesting is refused before parsing, as a `ValueError` like any
other unparsable body, so every transport answers it with `-32700 Parse error` and keeps
serving. No protocol message nests anywhere near `MAX_DEPTH`.
"""

from __future__ import annotations

import json
from array import array
from itertools import accumulate
from typing import Any

__all__ = ["MAX_DEPTH", "loads_bounded"]

MAX_DEPTH = 256
"""Deepest nesting of arrays and objects accepted (cattrs and our handlers recurse too)."""

_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
"""Opening and closing brackets as the signed bytes +1 and -1."""
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[{]}")


def loads_bounded(body: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads`, but a body nested deeper than `max_depth` raises `ValueError`."""
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    if data.count(b"[") + data.count(b"{") > max_depth:  # only then is the depth in doubt
        depth = nesting_depth(data)
        if depth > max_depth:
            raise ValueError(f"nested {depth} levels deep (at most {max_depth} accepted)")
    try:
        return json.loads(body)
    except RecursionError:  # a last guard: nothing that deep should get here
        raise ValueError("nested too deeply") from None


def nesting_depth(data: bytes) -> int:
    """The deepest nesting of `[`/`{` outside strings (an upper bound for broken JSON)."""
    # Without escaped backslashes and quotes, every `"` opens or closes a string, so the
    # even pieces between quotes are what lies outside strings (whose brackets do not nest).
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2])
    brackets = outside.translate(None, _NOT_BRACKETS)
    return max(accumulate(array("b", brackets.translate(_STEPS)), initial=0))
