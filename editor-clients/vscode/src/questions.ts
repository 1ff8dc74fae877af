// Answers the agent's questions (`agentls/askQuestions`) with a quick pick per question —
// several rows can be ticked for a multi-select question, and "Other…" opens an input box
// for the user's own words — and its plans (`agentls/reviewPlan`, see planReview.ts).
// Announced as `capabilities.experimental.agentls.questions` / `.planReview`, so the server
// sends these instead of plain message requests. When the run is cancelled while a pick is
// open, the server withdraws the request and the pick closes.
import * as vscode from "vscode";
import {
  type CancellationToken,
  type ClientCapabilities,
  type FeatureState,
  type LanguageClient,
  type StaticFeature,
} from "vscode-languageclient/node";
import { PlanDocuments, reviewPlan } from "./planReview";
import {
  type Answer,
  type AskQuestionsParams,
  type PickItem,
  type Question,
  answerOf,
  OTHER_LABEL,
  pickItems,
} from "./questionModel";

export class QuestionsFeature implements StaticFeature {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly plans = new PlanDocuments();

  constructor(private readonly client: LanguageClient) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    const agentls = (experimental.agentls ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, agentls: { ...agentls, questions: true, planReview: true } };
  }

  initialize(): void {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(PlanDocuments.scheme, this.plans),
      this.client.onRequest("agentls/askQuestions", (params: AskQuestionsParams, token: CancellationToken) =>
        askQuestions(params, token),
      ),
      this.client.onRequest("agentls/reviewPlan", (params, token: CancellationToken) => reviewPlan(this.plans, params, token)),
    );
  }

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {
    for (const d of this.disposables.splice(0)) {
      d.dispose();
    }
  }
}

/** Every question in turn; null when the user dismissed the first one. */
export async function askQuestions(params: AskQuestionsParams, token: CancellationToken): Promise<{ answers: Answer[] } | null> {
  const answers: Answer[] = [];
  const questions = params.questions ?? [];
  for (const [index, question] of questions.entries()) {
    const answer = await askOne(question, `${index + 1}/${questions.length}`, params.other_label ?? OTHER_LABEL, token);
    if (!answer) {
      break; // dismissed: no more questions now
    }
    answers.push(answer);
  }
  if (!answers.length) {
    return null;
  }
  while (answers.length < questions.length) {
    answers.push({ selected: [], other: null });
  }
  return { answers };
}

type Row = vscode.QuickPickItem & { item: PickItem };

function askOne(question: Question, position: string, otherLabel: string, token: CancellationToken): Promise<Answer | undefined> {
  const pick = vscode.window.createQuickPick<Row>();
  pick.title = `agentls asks (${position}): ${question.header}`;
  pick.placeholder = question.question;
  pick.canSelectMany = Boolean(question.multi_select);
  pick.ignoreFocusOut = true;
  pick.matchOnDetail = true;
  pick.items = pickItems(question, otherLabel).map((item) => ({ label: item.label, detail: item.detail, item }));
  return new Promise((resolve) => {
    let accepted = false;
    const cancelled = token.onCancellationRequested(() => pick.hide());
    pick.onDidAccept(async () => {
      const rows = pick.canSelectMany ? pick.selectedItems : pick.activeItems.slice(0, 1);
      if (!rows.length) {
        return; // nothing ticked yet: keep the pick open
      }
      accepted = true;
      pick.hide();
      const picked = rows.map((row) => row.item);
      let text: string | undefined;
      if (picked.some((p) => p.other) && !token.isCancellationRequested) {
        text = await vscode.window.showInputBox({
          title: `agentls asks: ${question.header}`,
          prompt: question.question,
          placeHolder: "Your answer",
          ignoreFocusOut: true,
        });
      }
      resolve(answerOf(picked, text));
    });
    pick.onDidHide(() => {
      cancelled.dispose();
      pick.dispose();
      if (!accepted) {
        resolve(undefined);
      }
    });
    pick.show();
  });
}
