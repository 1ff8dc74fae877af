// One status-bar item for runs: the server's work-done progress is shown here instead of in
// vscode-languageclient's own window progress (which added a second spinner). The item
// spins while a run works, names the current step, ends with the run's outcome, and
// cancels the run when clicked.
import * as vscode from "vscode";
import { type LanguageClient, WorkDoneProgress, WorkDoneProgressCreateRequest } from "vscode-languageclient/node";
import { truncate } from "./events";

interface Active {
  title: string;
  message: string;
  /** The run's session (the begin message says "session <id>"). */
  session?: string;
}

/** What the status bar says while a finished run's edits are delivered (the preview). */
export const DELIVERING = "delivering the edits";

export class RunStatus implements vscode.Disposable {
  private readonly active = new Map<string, Active>();
  private readonly disposables: vscode.Disposable[] = [];
  private hideTimer: NodeJS.Timeout | undefined;
  private lastOutcome: string | undefined;

  constructor(
    private readonly item: vscode.StatusBarItem,
    private readonly runningLabel: string,
  ) {}

  /** Take over `window/workDoneProgress/create` and `$/progress` for this client. */
  attach(client: LanguageClient): void {
    this.disposables.push(
      client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
        const key = String(token);
        this.active.set(key, { title: "agentls", message: "" });
        const sub = client.onProgress(WorkDoneProgress.type, token, (value) => {
          const entry = this.active.get(key);
          if (!entry) {
            return;
          }
          if (value.kind === "begin") {
            entry.title = value.title;
            entry.message = value.message ?? "";
            entry.session = /^session (\S+)$/.exec(entry.message)?.[1];
          } else if (value.kind === "report") {
            entry.message = value.message ?? entry.message;
          } else {
            this.active.delete(key);
            sub.dispose();
            this.lastOutcome = value.message;
          }
          this.render();
        });
        this.disposables.push(sub);
        this.render();
      }),
    );
  }

  /** A run's model work ended (`run_finished`): its last step ("Running tests…") is over;
   * what is left is delivering its edits (the preview, the review question). */
  runFinished(session: string): void {
    for (const entry of this.active.values()) {
      if (entry.session === session) {
        entry.message = DELIVERING;
      }
    }
    this.render();
  }

  /** An accept or reject changed what the last outcome said ("3 file(s) not applied"). */
  outcome(text: string): void {
    this.lastOutcome = text;
    this.render();
  }

  /** The title words of the run, without the "agentls: " the server puts first. */
  private static words(title: string): string {
    return title.replace(/^agentls:\s*/, "");
  }

  private render(): void {
    if (this.hideTimer) {
      clearTimeout(this.hideTimer);
      this.hideTimer = undefined;
    }
    const runs = [...this.active.values()];
    if (runs.length === 1) {
      const run = runs[0];
      const step = run.message && !run.message.startsWith("session ") ? run.message : RunStatus.words(run.title);
      this.item.text = `$(sync~spin) agentls: ${truncate(step, 48)}`;
      this.item.tooltip = `${RunStatus.words(run.title)} — click to cancel`;
      this.item.command = "agentls.cancelRun";
      this.item.accessibilityInformation = { label: this.runningLabel };
      this.item.show();
    } else if (runs.length > 1) {
      this.item.text = `$(sync~spin) agentls: ${runs.length} runs`;
      this.item.tooltip = "agentls runs in progress — click to cancel";
      this.item.command = "agentls.cancelRun";
      this.item.accessibilityInformation = { label: this.runningLabel };
      this.item.show();
    } else if (this.lastOutcome) {
      // the progress ends with the outcome: shown (no spinner) for a while
      this.item.text = `agentls: ${truncate(this.lastOutcome, 60)}`;
      this.item.tooltip = this.lastOutcome;
      this.item.command = "agentls.openView";
      this.item.accessibilityInformation = { label: `agentls: last run: ${this.lastOutcome}` };
      this.item.show();
      this.hideTimer = setTimeout(() => this.item.hide(), 15000);
    } else {
      this.item.hide();
    }
  }

  running(): boolean {
    return this.active.size > 0;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
    if (this.hideTimer) {
      clearTimeout(this.hideTimer);
    }
  }
}
