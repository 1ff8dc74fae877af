// The server's `agentls/applyNotebookEdit` request, checked and normalised. Pure (no
// `vscode` import) so it is unit-tested; notebookEdits.ts applies it.

export type CellKind = "code" | "markdown" | "raw";

export interface NotebookCellJson {
  kind: CellKind;
  source: string;
  metadata: Record<string, unknown>;
  id?: string;
}

/** Replace `delete` cells at `index` with `cells`. The server sends the operations last
 *  first, so applying them in order never shifts the index of a later one. */
export interface NotebookOp {
  index: number;
  delete: number;
  cells: NotebookCellJson[];
}

export interface NotebookEditRequest {
  uri: string;
  label: string;
  edits: NotebookOp[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function cellOf(value: unknown): NotebookCellJson {
  if (!isObject(value) || typeof value.source !== "string") {
    throw new Error("a cell needs a source");
  }
  const kind = value.kind === "markdown" || value.kind === "raw" ? value.kind : "code";
  const metadata = isObject(value.metadata) ? value.metadata : {};
  const id = typeof value.id === "string" && value.id ? value.id : undefined;
  return { kind, source: value.source, metadata, ...(id ? { id } : {}) };
}

/** The request as typed operations; throws on anything malformed (nothing is applied). */
export function parseNotebookEdit(params: unknown): NotebookEditRequest {
  if (!isObject(params) || typeof params.uri !== "string" || !Array.isArray(params.edits)) {
    throw new Error("agentls/applyNotebookEdit needs {uri, edits}");
  }
  let previous = Number.POSITIVE_INFINITY;
  const edits = params.edits.map((raw): NotebookOp => {
    if (!isObject(raw) || !Number.isInteger(raw.index) || !Number.isInteger(raw.delete)) {
      throw new Error("each edit needs an integer index and delete count");
    }
    const index = raw.index as number;
    const count = raw.delete as number;
    if (index < 0 || count < 0 || index + count > previous) {
      throw new Error("edits must not overlap and must come last first");
    }
    previous = index;
    return { index, delete: count, cells: Array.isArray(raw.cells) ? raw.cells.map(cellOf) : [] };
  });
  return { uri: params.uri, label: typeof params.label === "string" ? params.label : "agentls", edits };
}

/** VS Code's language for a new cell: markdown, raw, else the notebook's code language. */
export function cellLanguage(cell: NotebookCellJson, codeLanguage: string): string {
  return cell.kind === "markdown" ? "markdown" : cell.kind === "raw" ? "raw" : codeLanguage;
}
