// The "agentls" activity-bar view: a webview drawn from `ViewModel` (media/view.js draws
// it). Markdown is rendered here with markdown-it (raw HTML off), so the webview only
// receives escaped HTML and runs no renderer of its own.
import * as vscode from "vscode";
import { type Resolve } from "./fileLinks";
import { forWebview } from "./markdown";
import { type ViewModel } from "./viewModel";

/** What the view asks of the extension. */
export interface ViewHost {
  run(prompt: string, session: string | undefined): Promise<void>;
  accept(session: string, uri?: string): Promise<void>;
  reject(session: string, uri?: string): Promise<void>;
  diff(session: string, uri: string): Promise<void>;
  cancel(session: string): Promise<void>;
  toolOutput(session: string, toolUseId: string): Promise<{ content: string; isError: boolean }>;
  /** "hello.py, lines 1-2" for what a prompt sends along, or undefined. */
  context(): string | undefined;
  /** Open a workspace file (a link in the agent's text), at `line` when given. */
  open(path: string, line: number | undefined): Promise<void>;
}

type Incoming =
  | { type: "ready" }
  | { type: "prompt"; text: string; followUp: boolean }
  | { type: "newSession" }
  | { type: "select"; session: string }
  | { type: "accept" | "reject"; session: string; uri?: string }
  | { type: "diff"; session: string; uri: string }
  | { type: "cancel"; session: string }
  | { type: "toolOutput"; session: string; id: string }
  | { type: "open"; path: string; line?: string };



function nonce(): string {
  let out = "";
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  for (let i = 0; i < 32; i++) {
    out += chars.charAt(Math.floor(Math.random() * chars.length));
  }
  return out;
}

export class AgentView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = "agentls.view";
  private view: vscode.WebviewView | undefined;
  private timer: NodeJS.Timeout | undefined;
  private newSession = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: ViewModel,
    private readonly host: ViewHost,
    private readonly resolve?: Resolve,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    view.webview.onDidReceiveMessage((message: Incoming) => void this.receive(message));
    view.onDidChangeVisibility(() => this.refresh());
  }

  /** Redraw soon (events arrive many per second while text streams). */
  refresh(): void {
    if (this.timer) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.post();
    }, 40);
  }

  private post(): void {
    if (!this.view) {
      return;
    }
    const current = this.newSession ? undefined : this.model.current;
    void this.view.webview.postMessage({
      type: "state",
      current,
      sessions: this.model.order.map((id) => {
        const s = this.model.sessions.get(id)!;
        return { id, title: s.title, status: s.status, running: s.running };
      }),
      session: current ? forWebview(this.model.sessions.get(current)!, this.resolve) : undefined,
      context: this.host.context(),
    });
  }

  private async receive(message: Incoming): Promise<void> {
    try {
      switch (message.type) {
        case "ready":
          break;
        case "prompt": {
          const session = message.followUp && !this.newSession ? this.model.current : undefined;
          this.newSession = false;
          await this.host.run(message.text, session);
          break;
        }
        case "newSession":
          this.newSession = true;
          break;
        case "select":
          this.newSession = false;
          this.model.current = message.session;
          break;
        case "accept":
          await this.host.accept(message.session, message.uri);
          break;
        case "reject":
          await this.host.reject(message.session, message.uri);
          break;
        case "diff":
          await this.host.diff(message.session, message.uri);
          break;
        case "cancel":
          await this.host.cancel(message.session);
          break;
        case "open": {
          const line = message.line ? Number.parseInt(message.line, 10) : undefined;
          await this.host.open(message.path, Number.isFinite(line) ? line : undefined);
          return; // nothing changed in the view
        }
        case "toolOutput": {
          const s = this.model.sessions.get(message.session);
          const item = s?.items.find((i) => i.kind === "tool" && i.tool.id === message.id);
          if (item && item.kind === "tool" && item.tool.output === undefined) {
            const out = await this.host.toolOutput(message.session, message.id);
            item.tool.output = out.content;
            item.tool.outputError = out.isError;
          }
          break;
        }
      }
    } catch (err) {
      void vscode.window.showErrorMessage(`agentls: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.post();
  }

  /** Start a new session on the next prompt (the view's "New Session" button). */
  startNewSession(): void {
    this.newSession = true;
    this.post();
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const n = nonce();
    const script = webview.asWebviewUri(vscode.Uri.joinPath(media, "view.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, "view.css"));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${n}'`,
      `img-src ${webview.cspSource} https: data:`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>agentls</title></head>
<body>
<div id="sessions" aria-label="sessions"></div>
<div id="session" aria-live="polite"></div>
<form id="prompt-form">
  <div id="context" class="context"></div>
  <textarea id="prompt" rows="3" placeholder="Ask agentls to do something… (Ctrl+Enter to send)" aria-label="prompt"></textarea>
  <div class="row">
    <label><input type="checkbox" id="follow-up" checked> follow up in this session</label>
    <button type="submit" id="send">Send</button>
  </div>
</form>
<script nonce="${n}" src="${script.toString()}"></script>
</body></html>`;
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
  }
}
