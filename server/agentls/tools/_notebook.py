"""Jupyter notebooks for the file tools: render cells for `read_file`, edit them for
`notebook_edit`, always through `nbformat` (no hand-written JSON surgery).

Why a rendering of its own: the raw `.ipynb` JSON buries the code in quoting and base64
outputs; the model needs each cell's id, type, numbered source and a short view of its
outputs (images summarised, long outputs capped).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentls.errors import ToolError
from agentls.tools._files import cut_line
from agentls.workspace.textio import number_line, split_lines

if TYPE_CHECKING:  # nbformat (and jsonschema) load with the first notebook (issue 33)
    from nbformat import NotebookNode

NOTEBOOK_SUFFIX = ".ipynb"
OUTPUT_CHARS = 2_000
"""One output's text is cut here (a long log or a big table)."""
CELL_OUTPUT_CHARS = 6_000
"""All outputs of one cell together."""
CELL_TYPES = ("code", "markdown", "raw")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def is_notebook(path: object) -> bool:
    return str(path).lower().endswith(NOTEBOOK_SUFFIX)


def parse(text: str, display: str) -> NotebookNode:
    """A notebook (nbformat 4) from its JSON; `ToolError` naming the problem otherwise."""
    import nbformat

    try:
        notebook: NotebookNode = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call]
    except (ValueError, nbformat.reader.NotJSONError) as exc:
        raise ToolError(f"{display} is not a valid notebook: {_first_line(exc)}") from None
    except Exception as exc:  # nbformat raises several kinds for odd content
        raise ToolError(f"{display} is not a valid notebook: {_first_line(exc)}") from None
    return notebook


def validate(notebook: NotebookNode, display: str) -> None:
    import nbformat

    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as exc:
        raise ToolError(
            f"the edit would leave {display} invalid ({_first_line(exc)}); nothing was changed"
        ) from None


def dumps(notebook: NotebookNode, original: str) -> str:
    """The notebook as JSON in the original file's layout (indent, final newline), so the
    change the user reviews is the edited cells, not a reformatted file."""
    import nbformat

    text: str = nbformat.writes(notebook)  # type: ignore[no-untyped-call]
    indent = _indent_of(original)
    if indent != 1:  # nbformat always writes Jupyter's indent of 1: keep the file's own
        text = json.dumps(json.loads(text), indent=indent, ensure_ascii=False)
    if original.endswith("\n") and not text.endswith("\n"):
        text += "\n"
    return text


def _indent_of(text: str) -> int:
    for line in text.splitlines()[1:3]:
        stripped = line.lstrip(" ")
        if stripped and len(line) > len(stripped):
            return len(line) - len(stripped)
    return 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


# -- rendering ------------------------------------------------------------------------------


def render(
    notebook: NotebookNode, display: str, first: int = 0, count: int | None = None, budget: int = 0
) -> str:
    """Cells `first`.. (0-based, `count` of them, as many as fit in `budget` characters when
    it is set) with ids, types, numbered source and outputs; a header with the notebook's
    size and kernel, and a footer saying how to read on (read_file's offset counts cells)."""
    cells: list[NotebookNode] = list(notebook.cells)
    total = len(cells)
    if total == 0:
        return f"[{display}: a notebook with no cells]"
    if first >= total:
        raise ToolError(
            f"{display} has {total} cells (offset 1-{total} for cell_number 0-{total - 1}); "
            f"there is no cell_number {first}"
        )
    last = total if count is None else min(total, first + count)
    parts = [_header(notebook, display, total)]
    used = len(parts[0])
    shown = first
    for index in range(first, last):
        text = render_cell(cells[index], index)
        if budget and index > first and used + len(text) > budget:
            break
        parts.append(text)
        used += len(text) + 2
        shown = index + 1
    if first > 0 or shown < total:
        more = f"; call again with offset={shown + 1} for the next" if shown < total else ""
        parts.append(f"[cell_number {first}-{shown - 1} of {total} shown{more}]")
    return "\n\n".join(parts)


def _header(notebook: NotebookNode, display: str, total: int) -> str:
    meta = notebook.get("metadata", {})
    kernel = meta.get("kernelspec", {}).get("name") or "no kernel"
    language = meta.get("language_info", {}).get("name") or meta.get("kernelspec", {}).get(
        "language", "unknown language"
    )
    version = f"{notebook.nbformat}.{notebook.nbformat_minor}"
    return (
        f"[notebook {display}: {total} cells, nbformat {version}, kernel {kernel} ({language}); "
        "edit cells with notebook_edit, by cell_id or cell_number]"
    )


def render_cell(cell: NotebookNode, index: int) -> str:
    kind = cell.get("cell_type", "code")
    attributes = [f"cell_number={index}", f"type={kind}"]
    if cell.get("id"):
        attributes.insert(0, f'cell_id="{cell["id"]}"')
    if kind == "code" and cell.get("execution_count") is not None:
        attributes.append(f"execution_count={cell['execution_count']}")
    lines = [f"<cell {' '.join(attributes)}>"]
    source = source_of(cell)
    body = split_lines(source)
    lines.extend(number_line(n, cut_line(text)) for n, text in enumerate(body, start=1))
    if not body:
        lines.append("(empty)")
    outputs = cell.get("outputs") or []
    if outputs:
        lines.append("<outputs>")
        lines.append(render_outputs(outputs))
        lines.append("</outputs>")
    lines.append("</cell>")
    return "\n".join(lines)


def source_of(cell: NotebookNode) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def render_outputs(outputs: Sequence[Any]) -> str:
    shown: list[str] = []
    used = 0
    for index, output in enumerate(outputs):
        text = _render_output(output)
        if used + len(text) > CELL_OUTPUT_CHARS:
            shown.append(f"[{len(outputs) - index} more output(s) not shown]")
            break
        shown.append(text)
        used += len(text)
    return "\n".join(shown)


def _render_output(output: Any) -> str:
    kind = output.get("output_type", "")
    if kind == "stream":
        return f"[{output.get('name', 'stream')}]\n{_cap(_text(output.get('text')))}"
    if kind == "error":
        trace = "\n".join(_ANSI.sub("", line) for line in output.get("traceback") or [])
        head = f"[error] {output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return f"{head}\n{_cap(trace)}" if trace else head
    if kind in ("execute_result", "display_data"):
        return _render_data(output.get("data") or {})
    return f"[{kind or 'unknown'} output]"


def _render_data(data: dict[str, object]) -> str:
    pieces: list[str] = []
    for mime, value in data.items():
        if mime.startswith("image/"):
            pieces.append(f"[{mime} image, {_size(value)}, not shown]")
        elif mime == "text/plain":
            pieces.append(_cap(_text(value)))
        elif mime in ("text/markdown", "text/latex"):
            pieces.append(f"[{mime}]\n{_cap(_text(value))}")
        elif mime == "text/html" and "text/plain" not in data:
            pieces.append(f"[text/html, {_size(value)}]\n{_cap(_text(value))}")
        elif mime != "text/html":
            pieces.append(f"[{mime} output, {_size(value)}, not shown]")
    return "\n".join(pieces) or "[empty output]"


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _size(value: Any) -> str:
    size = len(_text(value))
    return f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} bytes"


def _cap(text: str) -> str:
    text = _ANSI.sub("", text).rstrip("\n")
    if len(text) <= OUTPUT_CHARS:
        return text
    return f"{text[:OUTPUT_CHARS]}\n[output cut: {len(text)} characters in all]"


# -- editing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellEdit:
    """What `apply_edit` did, for the tool's confirmation."""

    index: int
    cell: NotebookNode | None
    action: str
    outputs_cleared: bool = False


def find_cell(notebook: NotebookNode, cell_id: str | None, number: int | None) -> int:
    """The index of the cell named by id (preferred) or 0-based number."""
    cells = notebook.cells
    if cell_id is not None:
        for index, cell in enumerate(cells):
            if cell.get("id") == cell_id:
                return index
        if cell_id.isdigit() and int(cell_id) < len(cells) and not _has_ids(notebook):
            return int(cell_id)
        known = ", ".join(str(c.get("id")) for c in cells[:20] if c.get("id")) or "none"
        raise ToolError(
            f"no cell with cell_id {cell_id!r} (ids: {known}); read the notebook with "
            "read_file to see its cells"
        )
    assert number is not None
    if not 0 <= number < len(cells):
        raise ToolError(
            f"cell_number {number} does not exist: the notebook has {len(cells)} cells "
            f"(numbered 0-{len(cells) - 1})"
        )
    return number


def _has_ids(notebook: NotebookNode) -> bool:
    return any(cell.get("id") for cell in notebook.cells)


def new_cell(notebook: NotebookNode, kind: str, source: str) -> NotebookNode:
    """A fresh cell of `kind`; it gets an id only where the format has ids (nbformat 4.5+)."""
    import nbformat

    makers = {
        "code": nbformat.v4.new_code_cell,
        "markdown": nbformat.v4.new_markdown_cell,
        "raw": nbformat.v4.new_raw_cell,
    }
    cell: NotebookNode = makers[kind](source=source)  # type: ignore[no-untyped-call]
    if (notebook.nbformat, notebook.nbformat_minor) < (4, 5):
        cell.pop("id", None)
    return cell


def apply_edit(
    notebook: NotebookNode,
    mode: str,
    source: str,
    kind: str | None,
    cell_id: str | None,
    number: int | None,
) -> CellEdit:
    """Replace, insert or delete one cell, in place."""
    cells = notebook.cells
    if mode == "insert":
        if kind is None:
            raise ToolError("cell_type is required to insert a cell (code, markdown or raw)")
        if cell_id is not None:
            index = find_cell(notebook, cell_id, None) + 1
        elif number is not None:
            if not 0 <= number <= len(cells):
                raise ToolError(
                    f"cannot insert at cell_number {number}: use 0-{len(cells)} "
                    f"(the notebook has {len(cells)} cells)"
                )
            index = number
        else:
            index = 0
        cell = new_cell(notebook, kind, source)
        cells.insert(index, cell)
        return CellEdit(index, cell, "Inserted")
    if cell_id is None and number is None:
        raise ToolError(f"give cell_id (or cell_number) of the cell to {mode}")
    index = find_cell(notebook, cell_id, number)
    if mode == "delete":
        cells.pop(index)
        return CellEdit(index, None, "Deleted")
    old = cells[index]
    wanted = kind or old.get("cell_type", "code")
    if wanted != old.get("cell_type"):
        cell = new_cell(notebook, wanted, source)
        if "id" in old:
            cell["id"] = old["id"]
        cell["metadata"] = old.get("metadata", {})
        if old.get("attachments") and wanted != "code":
            cell["attachments"] = old["attachments"]
        cells[index] = cell
        return CellEdit(index, cell, "Replaced", outputs_cleared=bool(old.get("outputs")))
    old["source"] = source
    cleared = False
    if wanted == "code":
        cleared = bool(old.get("outputs"))
        old["outputs"] = []
        old["execution_count"] = None
    return CellEdit(index, old, "Replaced", outputs_cleared=cleared)
