// agentls for VS Code: starts `agentls serve`, adds the palette commands, shows runs live.
import * as vscode from "vscode";
import { type LanguageClient, DidChangeConfigurationNotification, ExecuteCommandRequest } from "vscode-languageclient/node";
import { API_KEY_SECRET, createClient, findServer, serverEnv } from "./client";
import { pickCustomCommand } from "./customCommands";
import { EditorQueriesFeature } from "./editorQueries";
import { type AgentEvent, renderEvent, RunTracker } from "./events";
import { type Outcome, describeEditResult, describeRunResult, statusOfEditResult } from "./outcomes";
import { QuestionsFeature } from "./questions";
import { NotebookEditsFeature } from "./notebookEdits";
import { RunStatus } from "./progress";
import { fixPrompt, statusDetails, statusSummary } from "./prompts";
import { RESTART_KEYS, serverSettings } from "./settings";
import { type StagedFile, StagedDocuments, SCHEME, showStagedDiff } from "./staged";
import { rewindMessage, turnItems } from "./turns";
import { AgentView } from "./view";
import { ViewModel } from "./viewModel";
import { WorkspaceFiles } from "./workspaceFiles";

/** An error the user has already been shown (with its buttons); not shown twice. */
class ShownError extends Error {}

/** Accessible label of the status-bar item (also how the end-to-end test finds it). */
export const STATUS_LABEL = "agentls run in progress, click to cancel";

class Agentls implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly log = vscode.window.createOutputChannel("agentls");
  private readonly serverChannel = vscode.window.createOutputChannel("agentls server");
  private readonly statusItem = vscode.window.createStatusBarItem("agentls.run", vscode.StatusBarAlignment.Left, 100);
  private readonly runStatus = new RunStatus(this.statusItem, STATUS_LABEL);
  private readonly runs = new RunTracker();
  readonly model = new ViewModel((uri) => vscode.workspace.asRelativePath(vscode.Uri.parse(uri)));
  readonly stagedDocs = new StagedDocuments();
  readonly view: AgentView;
  private readonly files = new WorkspaceFiles(() => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath));
  private textOpen = false;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.statusItem.command = "agentls.cancelRun";
    this.statusItem.name = "agentls run";
    this.view = new AgentView(context.extensionUri, this.model, {
      run: (prompt, session) => this.startRun("run", prompt, undefined, session),
      accept: (session, uri) => this.decide("agentls.accept", session, uri),
      reject: (session, uri) => this.decide("agentls.reject", session, uri),
      diff: (session, uri) => this.showDiff(session, uri),
      cancel: (session) => this.cancelSession(session),
      toolOutput: async (session, id) => {
        const out = await this.execute<{ content: string; is_error: boolean }>("agentls.toolResult", { session, tool_use_id: id });
        return { content: out.content, isError: out.is_error };
      },
      context: () => this.contextLabel(),
      open: (file, line) => this.openFile(file, line),
    }, this.files.resolve);
  }

  /** A file link of the agent view: the file (only a workspace file), at the line. */
  private async openFile(file: string, line: number | undefined): Promise<void> {
    const found = this.files.resolve(file);
    if (!found) {
      return;
    }
    const at = line && line > 0 ? new vscode.Position(line - 1, 0) : undefined;
    await vscode.window.showTextDocument(vscode.Uri.file(found), {
      preview: true,
      selection: at ? new vscode.Range(at, at) : undefined,
    });
  }

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration("agentls");
  }

  /** The running client, started on first use. */
  async ensureClient(): Promise<LanguageClient> {
    if (this.client?.isRunning()) {
      return this.client;
    }
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  private async start(): Promise<LanguageClient> {
    const found = findServer(this.config());
    if (!found.ok) {
      void vscode.window.showErrorMessage(found.message, "Open Settings").then((choice) => {
        if (choice) {
          void vscode.commands.executeCommand("workbench.action.openSettings", "agentls.server");
        }
      });
      throw new ShownError(found.message);
    }
    const env = await serverEnv(this.context.secrets);
    if (!env.ANTHROPIC_API_KEY && !env.ANTHROPIC_AUTH_TOKEN && !env.ANTHROPIC_BASE_URL && !this.config().get<string>("endpoint")) {
      void vscode.window
        .showWarningMessage("agentls: no API key (ANTHROPIC_API_KEY or Secret Storage) and no endpoint set.", "Set API Key")
        .then((choice) => choice && vscode.commands.executeCommand("agentls.setApiKey"));
    }
    const client = createClient({
      command: found.command,
      args: found.args,
      env,
      settings: serverSettings(this.config()),
      serverChannel: this.serverChannel,
    });
    client.registerFeature(new EditorQueriesFeature(client)); // agentls/editorQuery (docs/code-intelligence.md)
    client.registerFeature(new QuestionsFeature(client)); // agentls/askQuestions, agentls/reviewPlan
    client.registerFeature(new NotebookEditsFeature(client)); // agentls/applyNotebookEdit (docs/tools.md)
    this.serverChannel.appendLine(`starting ${found.command} ${found.args.join(" ")} (from ${found.source})`);
    try {
      await client.start();
    } catch (err) {
      const message =
        `agentls: the server (${found.command} ${found.args.join(" ")}) failed to start: ` +
        `${err instanceof Error ? err.message : String(err)}`;
      this.serverChannel.appendLine(message);
      void vscode.window.showErrorMessage(message, "Show Log", "Open Settings").then((choice) => {
        if (choice === "Show Log") {
          this.serverChannel.show();
        } else if (choice) {
          void vscode.commands.executeCommand("workbench.action.openSettings", "agentls.server");
        }
      });
      throw new ShownError(message);
    }
    client.onNotification("agentls/event", (event: AgentEvent) => this.onEvent(event));
    this.runStatus.attach(client);
    this.client = client;
    return client;
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    if (old) {
      await old.stop().catch(() => undefined);
    }
    await this.ensureClient();
  }

  private onEvent(event: AgentEvent): void {
    this.runs.onEvent(event);
    const out = renderEvent(event, this.textOpen);
    this.textOpen = out.textOpen;
    if (out.text) {
      this.log.append(out.text);
    }
    if (this.model.apply(event)) {
      this.view.refresh();
      this.updateContext();
    }
    const name = (uri: string): string => vscode.workspace.asRelativePath(vscode.Uri.parse(uri));
    if (event.type === "tool_finished") {
      this.files.clear(); // the tool may have created files the text names next
    }
    if (event.type === "run_finished") {
      this.runStatus.runFinished(String(event.session_id));
    } else if (event.type === "run_result") {
      this.notify(describeRunResult(event, name), String(event.session_id));
    } else if (event.type === "edit_result") {
      this.notify(describeEditResult(event, name), String(event.session_id));
      const status = statusOfEditResult(event);
      if (status) {
        this.runStatus.outcome(status);
      }
    }
  }

  /** The outcome as a notification whose buttons act on the session's staged edits. */
  private notify(outcome: Outcome | undefined, session: string): void {
    if (!outcome) {
      return;
    }
    const show =
      outcome.severity === "error"
        ? vscode.window.showErrorMessage
        : outcome.severity === "warning"
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    void show(outcome.message, ...outcome.actions).then((choice) => {
      if (choice === "Show Diff") {
        void this.showDiff(session).catch((err: unknown) => this.showError(err));
      } else if (choice === "Accept Staged") {
        void this.decide("agentls.accept", session).catch((err: unknown) => this.showError(err));
      } else if (choice === "Reject") {
        void this.decide("agentls.reject", session).catch((err: unknown) => this.showError(err));
      }
    });
  }

  private showError(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    void vscode.window.showErrorMessage(message.startsWith("agentls") ? message : `agentls: ${message}`);
  }

  /** Context keys for the `when` clauses of menus and key bindings. */
  private updateContext(): void {
    void vscode.commands.executeCommand("setContext", "agentls.running", this.model.anyRunning());
    void vscode.commands.executeCommand("setContext", "agentls.hasStaged", this.model.anyPending());
  }

  /** What a prompt sends along: the active file (and its selected lines). */
  contextLabel(): string | undefined {
    const active = vscode.window.activeTextEditor;
    const editor = active?.document.uri.scheme === "file" ? active : this.lastEditor;
    if (!editor || editor.document.uri.scheme !== "file") {
      return undefined;
    }
    const name = vscode.workspace.asRelativePath(editor.document.uri);
    if (editor.selection.isEmpty) {
      return name;
    }
    const first = editor.selection.start.line + 1;
    const last = editor.selection.end.line + 1;
    return first === last ? `${name}, line ${first}` : `${name}, lines ${first}-${last}`;
  }

  /** workspace/executeCommand with one argument object. */
  async execute<T>(command: string, args: object): Promise<T> {
    const client = await this.ensureClient();
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] }) as Promise<T>;
  }

  private editorContext(editor: vscode.TextEditor | undefined, range?: vscode.Range): Record<string, unknown> {
    if (!editor || !this.client || editor.document.uri.scheme !== "file") {
      return {};
    }
    const c2p = this.client.code2ProtocolConverter;
    const selection = range ?? (editor.selection.isEmpty ? undefined : editor.selection);
    return {
      uri: c2p.asUri(editor.document.uri),
      ...(selection ? { range: c2p.asRange(selection) } : {}),
    };
  }

  async startRun(kind: "run" | "ask", prompt: string, range?: vscode.Range, session?: string): Promise<void> {
    const active = vscode.window.activeTextEditor;
    const editor = active?.document.uri.scheme === "file" ? active : this.lastEditor;
    await this.ensureClient();
    const args = { prompt, ...this.editorContext(editor, range), ...(session ? { session } : {}) };
    const result = await this.execute<{ session: string }>(kind === "run" ? "agentls.run" : "agentls.ask", args);
    this.runs.started(result.session);
    this.model.started(result.session, prompt);
    this.view.refresh();
    this.updateContext();
  }

  /** The last text editor the user was in (the view takes the focus from it). */
  lastEditor: vscode.TextEditor | undefined;

  async runTask(kind: "run" | "ask"): Promise<void> {
    void this.ensureClient().catch(() => undefined); // start while the user types
    const prompt = await vscode.window.showInputBox({
      title: kind === "run" ? "agentls: Run Task" : "agentls: Ask",
      prompt: kind === "run" ? "What should the agent do? (current file and selection are sent)" : "Your question",
      ignoreFocusOut: true,
    });
    if (prompt?.trim()) {
      await this.startRun(kind, prompt.trim());
    }
  }

  async fixHere(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showWarningMessage("agentls: open a file first");
      return;
    }
    const doc = editor.document;
    const where = editor.selection.isEmpty ? doc.lineAt(editor.selection.active.line).range : editor.selection;
    const found = vscode.languages.getDiagnostics(doc.uri).filter((d) => d.range.intersection(where) !== undefined);
    const prompt = fixPrompt(
      found.map((d) => ({
        line: d.range.start.line,
        message: d.message,
        source: d.source,
        code: typeof d.code === "object" ? d.code.value : d.code,
      })),
    );
    if (!prompt) {
      void vscode.window.showInformationMessage("agentls: no diagnostics here");
      return;
    }
    const range = found.reduce((acc, d) => acc.union(d.range), where);
    await this.startRun("run", prompt, new vscode.Range(range.start.line, 0, range.end.line, doc.lineAt(range.end.line).text.length));
  }

  async cancelSession(session: string): Promise<void> {
    await this.execute<{ cancelled: string[] }>("agentls.cancel", { session });
  }

  async cancel(): Promise<void> {
    const running = this.runs.running();
    let session: string | undefined;
    if (running.length > 1) {
      const pick = await vscode.window.showQuickPick(
        [{ label: "All runs" }, ...running.map((r) => ({ label: r.session, description: r.status }))],
        { title: "agentls: cancel which run?" },
      );
      if (!pick) {
        return;
      }
      session = pick.label === "All runs" ? undefined : pick.label;
    } else if (running.length === 1) {
      session = running[0].session;
    }
    const result = await this.execute<{ cancelled: string[] }>("agentls.cancel", session ? { session } : {});
    void vscode.window.showInformationMessage(
      result.cancelled.length ? `agentls: cancelling ${result.cancelled.join(", ")}` : "agentls: nothing to cancel",
    );
  }

  /** The session the staged-edit commands act on: the view's, else the last with staged files. */
  private stagedSession(): string | undefined {
    const current = this.model.current;
    if (current && this.model.pending(current).length > 0) {
      return current;
    }
    return this.model.order.find((id) => this.model.pending(id).length > 0) ?? this.runs.last;
  }

  async staged(command: "agentls.accept" | "agentls.reject"): Promise<void> {
    const session = this.stagedSession();
    if (!session) {
      void vscode.window.showWarningMessage("agentls: no session yet — run a task first");
      return;
    }
    await this.decide(command, session);
  }

  /** Accept or reject a session's staged edits (one file, or all); the server's
   *  edit_result event says what happened (also for code actions). */
  async decide(command: "agentls.accept" | "agentls.reject", session: string, uri?: string): Promise<void> {
    await this.execute(command, { session, ...(uri ? { uris: [uri] } : {}) });
  }

  /** VS Code's diff editor for a staged file (asks which when there are several). */
  async showDiff(session?: string, uri?: string): Promise<void> {
    const id = session ?? this.stagedSession();
    if (!id) {
      void vscode.window.showWarningMessage("agentls: no session yet — run a task first");
      return;
    }
    const result = await this.execute<{ files: StagedFile[] }>("agentls.staged", { session: id });
    let file = uri ? result.files.find((f) => f.uri === uri || f.old_uri === uri) : undefined;
    if (!file && result.files.length === 1) {
      file = result.files[0];
    } else if (!file && result.files.length > 1) {
      const pick = await vscode.window.showQuickPick(
        result.files.map((f) => ({ label: vscode.workspace.asRelativePath(vscode.Uri.parse(f.uri)), description: f.kind, file: f })),
        { title: `agentls: staged files of session ${id}` },
      );
      file = pick?.file;
      if (!pick) {
        return;
      }
    }
    if (!file) {
      void vscode.window.showInformationMessage(`agentls: nothing staged in session ${id}.`);
      return;
    }
    await showStagedDiff(this.stagedDocs, id, file);
  }

  /** Rewind a session to the end of a turn picked from its turns (prompt and files). */
  async rewind(): Promise<void> {
    const session = this.model.current ?? this.runs.last;
    if (!session) {
      void vscode.window.showWarningMessage("agentls: no session yet — run a task first");
      return;
    }
    const items = turnItems(await this.execute<unknown>("agentls.status", {}), session);
    if (!items.length) {
      void vscode.window.showInformationMessage(`agentls: session ${session} has no turns yet.`);
      return;
    }
    const pick = await vscode.window.showQuickPick(items, { title: `agentls: rewind session ${session} to the end of turn` });
    if (!pick) {
      return;
    }
    const result = await this.execute<unknown>("agentls.rewind", { session, turn: pick.turn });
    void vscode.window.showInformationMessage(rewindMessage(session, pick.turn, result));
  }

  async showTranscript(): Promise<void> {
    this.log.show(true);
    const info = this.runs.last ? this.runs.get(this.runs.last) : undefined;
    if (info?.transcript) {
      const uri = info.transcript.startsWith("file:") ? vscode.Uri.parse(info.transcript) : vscode.Uri.file(info.transcript);
      await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    }
  }

  async showStatus(): Promise<void> {
    const status = await this.execute<unknown>("agentls.status", {});
    this.log.appendLine(`${this.textOpen ? "\n" : ""}${statusDetails(status).join("\n")}`);
    this.textOpen = false;
    const choice = await vscode.window.showInformationMessage(statusSummary(status), "Show Details");
    if (choice) {
      this.log.show(true);
    }
  }

  async setApiKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: "agentls: API key",
      prompt: "Stored in VS Code's Secret Storage and passed to the server as ANTHROPIC_API_KEY",
      password: true,
      ignoreFocusOut: true,
    });
    if (key) {
      await this.context.secrets.store(API_KEY_SECRET, key.trim());
      await this.offerRestart("agentls: API key stored.");
    }
  }

  async clearApiKey(): Promise<void> {
    await this.context.secrets.delete(API_KEY_SECRET);
    await this.offerRestart("agentls: stored API key removed.");
  }

  private async offerRestart(message: string): Promise<void> {
    if (!this.client) {
      void vscode.window.showInformationMessage(message);
      return;
    }
    const choice = await vscode.window.showInformationMessage(`${message} Restart the server to use it?`, "Restart");
    if (choice) {
      await this.restart();
    }
  }

  async onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!event.affectsConfiguration("agentls") || !this.client) {
      return;
    }
    if (RESTART_KEYS.some((key) => event.affectsConfiguration(key))) {
      await this.offerRestart("agentls: the server command changed.");
      return;
    }
    await this.client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { agentls: serverSettings(this.config()) },
    });
  }

  /** Stop the server (awaited by `deactivate`, so it exits cleanly with the window). */
  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client?.isRunning()) {
      await client.stop().catch(() => undefined);
    }
  }

  dispose(): void {
    this.runStatus.dispose();
    this.statusItem.dispose();
    this.view.dispose();
    this.log.dispose();
    this.serverChannel.dispose();
  }
}

let instance: Agentls | undefined;

function guarded(action: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await action();
    } catch (err) {
      if (err instanceof ShownError) {
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      void vscode.window.showErrorMessage(message.startsWith("agentls") ? message : `agentls: ${message}`);
    }
  };
}

export function activate(context: vscode.ExtensionContext): void {
  const agentls = new Agentls(context);
  instance = agentls;
  context.subscriptions.push(agentls);
  const commands: Record<string, () => Promise<void>> = {
    "agentls.runTask": () => agentls.runTask("run"),
    "agentls.askQuestion": () => agentls.runTask("ask"),
    "agentls.fixHere": () => agentls.fixHere(),
    "agentls.cancelRun": () => agentls.cancel(),
    "agentls.acceptEdits": () => agentls.staged("agentls.accept"),
    "agentls.rejectEdits": () => agentls.staged("agentls.reject"),
    "agentls.showTranscript": () => agentls.showTranscript(),
    "agentls.showStatus": () => agentls.showStatus(),
    "agentls.setApiKey": () => agentls.setApiKey(),
    "agentls.clearApiKey": () => agentls.clearApiKey(),
    "agentls.restartServer": () => agentls.restart(),
    "agentls.openView": () => Promise.resolve(void vscode.commands.executeCommand(`${AgentView.id}.focus`)),
    "agentls.showDiff": () => agentls.showDiff(),
    "agentls.rewindTurn": () => agentls.rewind(),
    "agentls.runCommand": () => pickCustomCommand((c, a) => agentls.execute(c, a), (p) => agentls.startRun("run", p)),
    "agentls.newSession": async () => {
      agentls.view.startNewSession();
      await vscode.commands.executeCommand(`${AgentView.id}.focus`);
    },
  };
  for (const [id, action] of Object.entries(commands)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, guarded(action)));
  }
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => void agentls.onConfigurationChanged(e)),
    vscode.window.registerWebviewViewProvider(AgentView.id, agentls.view, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, agentls.stagedDocs),
    vscode.window.onDidChangeActiveTextEditor((editor) => {
      if (editor && editor.document.uri.scheme === "file") {
        agentls.lastEditor = editor;
      }
      agentls.view.refresh();
    }),
    vscode.window.onDidChangeTextEditorSelection(() => agentls.view.refresh()),
  );
  agentls.lastEditor = vscode.window.activeTextEditor;
  void vscode.commands.executeCommand("setContext", "agentls.running", false);
  void vscode.commands.executeCommand("setContext", "agentls.hasStaged", false);
  void agentls.ensureClient().catch(() => undefined);
}

export async function deactivate(): Promise<void> {
  const current = instance;
  instance = undefined;
  await current?.stop();
}
