// The agent's plan (`agentls/reviewPlan`): shown as a read-only Markdown document beside the
// editor, then decided in a quick pick — approve for review, approve with auto-accepted
// edits, or keep planning (an input box takes the user's feedback, which the agent gets).
import * as vscode from "vscode";
import { type CancellationToken } from "vscode-languageclient/node";
import { type PlanDecision, type ReviewPlanParams, planChoices } from "./questionModel";

/** `agentls-plan:` documents: the plans the agent presented, read-only. */
export class PlanDocuments implements vscode.TextDocumentContentProvider {
  static readonly scheme = "agentls-plan";
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private count = 0;

  add(session: string, plan: string): vscode.Uri {
    this.count += 1;
    const name = session.replace(/[^A-Za-z0-9_-]/g, "_");
    const uri = vscode.Uri.from({ scheme: PlanDocuments.scheme, path: `/plan ${name} ${this.count}.md` });
    this.texts.set(uri.toString(), plan);
    this.changed.fire(uri);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }
}

export async function reviewPlan(docs: PlanDocuments, params: ReviewPlanParams, token: CancellationToken): Promise<PlanDecision | null> {
  const uri = docs.add(params.session_id, params.plan ?? "");
  try {
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, "markdown");
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: true });
  } catch {
    // the pick below still names the plan; the server's log has it too
  }
  const choices = planChoices(params);
  const picked = await vscode.window.showQuickPick(
    choices.map((c) => ({ label: c.label, id: c.id })),
    { title: "agentls: the agent's plan (shown beside)", placeHolder: "Approve the plan, or keep planning?", ignoreFocusOut: true },
    token,
  );
  if (!picked || token.isCancellationRequested) {
    return null;
  }
  if (picked.id !== "keep_planning") {
    return { decision: picked.id };
  }
  const feedback = await vscode.window.showInputBox(
    { title: "agentls: keep planning", prompt: "What should change in the plan? (optional)", ignoreFocusOut: true },
    token,
  );
  return { decision: "keep_planning", feedback: feedback ?? "" };
}
