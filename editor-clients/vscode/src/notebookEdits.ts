// Applies the server's notebook edits (`agentls/applyNotebookEdit`) as one undoable
// `vscode.NotebookEdit` batch on the open notebook, so a notebook the agent changed is
// edited cell by cell (outputs of replaced cells cleared) instead of as .ipynb JSON.
// Announced as `capabilities.experimental.agentls.notebookEdits` (docs/tools.md).
import * as vscode from "vscode";
import { type ClientCapabilities, type FeatureState, type LanguageClient, type StaticFeature } from "vscode-languageclient/node";
import { type NotebookOp, cellLanguage, parseNotebookEdit } from "./notebookOps";

interface NotebookEditResult {
  applied: boolean;
  failureReason?: string;
}

export class NotebookEditsFeature implements StaticFeature {
  private handler: vscode.Disposable | undefined;

  constructor(private readonly client: LanguageClient) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    const ours = (experimental.agentls ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, agentls: { ...ours, notebookEdits: true } };
  }

  initialize(): void {
    this.handler = this.client.onRequest("agentls/applyNotebookEdit", (params: unknown) => applyNotebookEdit(params));
  }

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {
    this.handler?.dispose();
    this.handler = undefined;
  }
}

async function applyNotebookEdit(params: unknown): Promise<NotebookEditResult> {
  let request;
  try {
    request = parseNotebookEdit(params);
  } catch (err) {
    return { applied: false, failureReason: err instanceof Error ? err.message : String(err) };
  }
  const uri = vscode.Uri.parse(request.uri);
  const notebook =
    vscode.workspace.notebookDocuments.find((n) => n.uri.toString() === uri.toString()) ??
    (await vscode.workspace.openNotebookDocument(uri));
  const code = notebook.getCells().find((c) => c.kind === vscode.NotebookCellKind.Code)?.document.languageId ?? "python";
  const edit = new vscode.WorkspaceEdit();
  edit.set(
    notebook.uri,
    request.edits.map((op) => toNotebookEdit(op, code)),
  );
  const applied = await vscode.workspace.applyEdit(edit);
  return applied ? { applied } : { applied, failureReason: "VS Code did not apply the notebook edit" };
}

function toNotebookEdit(op: NotebookOp, code: string): vscode.NotebookEdit {
  const cells = op.cells.map((cell) => {
    const kind = cell.kind === "markdown" ? vscode.NotebookCellKind.Markup : vscode.NotebookCellKind.Code;
    const data = new vscode.NotebookCellData(kind, cell.source, cellLanguage(cell, code));
    // VS Code's ipynb serializer keeps the nbformat id and metadata here
    data.metadata = { ...(cell.id ? { id: cell.id } : {}), metadata: cell.metadata };
    return data;
  });
  return vscode.NotebookEdit.replaceCells(new vscode.NotebookRange(op.index, op.index + op.delete), cells);
}
