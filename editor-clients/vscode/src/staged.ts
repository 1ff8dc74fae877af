// The agent's staged version of a file as a read-only document (`agentls-staged:`), so VS
// Code's own diff editor can show it beside the file: `showStagedDiff`.
import * as vscode from "vscode";

export const SCHEME = "agentls-staged";

export interface StagedFile {
  uri: string;
  kind: string;
  old_uri: string | null;
  original: string | null;
  staged: string | null;
  current: string | null;
}

export class StagedDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** The virtual URI holding `text` for `file` of `session`. */
  put(session: string, file: string, text: string): vscode.Uri {
    const path = vscode.Uri.parse(file).path;
    const uri = vscode.Uri.from({ scheme: SCHEME, path, query: `session=${encodeURIComponent(session)}` });
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }
}

/** Open VS Code's diff editor: the file as it is now (left) against the agent's version. */
export async function showStagedDiff(docs: StagedDocuments, session: string, file: StagedFile): Promise<void> {
  const name = vscode.workspace.asRelativePath(vscode.Uri.parse(file.uri));
  const right = docs.put(session, file.uri, file.staged ?? "");
  let left: vscode.Uri;
  if (file.current === null || file.kind === "create") {
    left = docs.put(`${session}-before`, file.uri, "");
  } else if (file.old_uri) {
    left = vscode.Uri.parse(file.old_uri);
  } else {
    left = vscode.Uri.parse(file.uri);
  }
  const what = file.kind === "modify" ? "staged" : file.kind;
  await vscode.commands.executeCommand("vscode.diff", left, right, `${name} ↔ agentls (${what}, session ${session})`, {
    preview: true,
  });
}
