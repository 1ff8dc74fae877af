// Answers the server's `agentls/editorQuery` requests with VS Code's own language features
// (whatever extensions provide them: Pylance, the built-in TypeScript support, gopls, …), so
// the agent's go_to_definition, find_references, hover, diagnostics and rename see exactly
// what the editor sees. Announced as `capabilities.experimental.agentlsEditorQueries`.
//
// A request is `{method, params}` with LSP params; the answer is `{result, source}` where
// `source` says which editor and language answered ("code-server: typescript").
import * as vscode from "vscode";
import {
  type ClientCapabilities,
  type FeatureState,
  type LanguageClient,
  ResponseError,
  type StaticFeature,
} from "vscode-languageclient/node";

export const EDITOR_QUERY_METHODS = [
  "textDocument/definition",
  "textDocument/references",
  "textDocument/hover",
  "textDocument/rename",
  "textDocument/implementation",
  "textDocument/typeDefinition",
  "textDocument/prepareCallHierarchy",
  "callHierarchy/incomingCalls",
  "callHierarchy/outgoingCalls",
  "textDocument/codeAction",
  "textDocument/documentSymbol",
  "workspace/symbol",
  "agentls/diagnostics",
  "agentls/languages",
] as const;

const REQUEST_FAILED = -32803;

interface Position {
  line: number;
  character: number;
}
interface Range {
  start: Position;
  end: Position;
}
interface ProtocolCallItem {
  name: string;
  kind: number;
  detail?: string;
  uri: string;
  range: Range;
  selectionRange: Range;
}
interface QueryParams {
  textDocument?: { uri: string };
  position?: Position;
  range?: Range;
  context?: { only?: string[] };
  item?: ProtocolCallItem;
  newName?: string;
  query?: string;
  uris?: string[];
}
interface EditorQuery {
  method: string;
  params?: QueryParams;
}
interface Answer {
  result: unknown;
  source: string;
}

/** The feature: announces the methods and registers the request handler. */
export class EditorQueriesFeature implements StaticFeature {
  private handler: vscode.Disposable | undefined;

  constructor(private readonly client: LanguageClient) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = {
      ...(capabilities.experimental as object | undefined),
      agentlsEditorQueries: [...EDITOR_QUERY_METHODS],
    };
  }

  initialize(): void {
    this.handler = this.client.onRequest("agentls/editorQuery", (query: EditorQuery) => answer(this.client, query));
  }

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {
    this.handler?.dispose();
    this.handler = undefined;
  }
}

function source(document?: vscode.TextDocument): string {
  return document ? `${vscode.env.appName}: ${document.languageId}` : vscode.env.appName;
}

async function target(client: LanguageClient, params: QueryParams) {
  if (!params.textDocument || !params.position) {
    throw new ResponseError(REQUEST_FAILED, "textDocument and position are required");
  }
  const uri = client.protocol2CodeConverter.asUri(params.textDocument.uri);
  const document = await vscode.workspace.openTextDocument(uri); // loads it without showing it
  return { uri, document, position: new vscode.Position(params.position.line, params.position.character) };
}

function asLocation(client: LanguageClient, item: vscode.Location | vscode.LocationLink): unknown {
  const c2p = client.code2ProtocolConverter;
  if ("targetUri" in item) {
    return {
      targetUri: c2p.asUri(item.targetUri),
      targetRange: c2p.asRange(item.targetRange),
      targetSelectionRange: c2p.asRange(item.targetSelectionRange ?? item.targetRange),
    };
  }
  return c2p.asLocation(item);
}

function hoverText(hovers: vscode.Hover[]): string {
  const parts: string[] = [];
  for (const hover of hovers) {
    for (const content of hover.contents) {
      if (typeof content === "string") {
        parts.push(content);
      } else if (content instanceof vscode.MarkdownString) {
        parts.push(content.value);
      } else {
        parts.push(`\`\`\`${content.language}\n${content.value}\n\`\`\``);
      }
    }
  }
  return parts.filter((p) => p.trim()).join("\n\n---\n\n");
}

function asWorkspaceEdit(client: LanguageClient, edit: vscode.WorkspaceEdit | undefined): unknown {
  if (!edit) {
    return null;
  }
  const changes: Record<string, unknown[]> = {};
  for (const [uri, edits] of edit.entries()) {
    changes[client.code2ProtocolConverter.asUri(uri)] = edits.map((e) => client.code2ProtocolConverter.asTextEdit(e));
  }
  return { changes };
}

function asCallItem(client: LanguageClient, item: vscode.CallHierarchyItem): ProtocolCallItem {
  const c2p = client.code2ProtocolConverter;
  return {
    name: item.name,
    kind: item.kind + 1, // vscode.SymbolKind is 0-based, LSP's is 1-based
    detail: item.detail || undefined,
    uri: c2p.asUri(item.uri),
    range: c2p.asRange(item.range),
    selectionRange: c2p.asRange(item.selectionRange),
  };
}

// Call hierarchy items go back to the server as plain JSON; the next request finds the
// VS Code item again by its place (the providers need their own objects).
const callItems = new Map<string, vscode.CallHierarchyItem>();

function callItemKey(uri: string, range: Range): string {
  return `${uri}#${range.start.line}:${range.start.character}`;
}

function remember(client: LanguageClient, item: vscode.CallHierarchyItem): ProtocolCallItem {
  const plain = asCallItem(client, item);
  callItems.set(callItemKey(plain.uri, plain.selectionRange), item);
  return plain;
}

async function calls(client: LanguageClient, params: QueryParams, incoming: boolean): Promise<Answer> {
  const plain = params.item;
  const item = plain ? callItems.get(callItemKey(plain.uri, plain.selectionRange)) : undefined;
  if (!item) {
    throw new ResponseError(REQUEST_FAILED, "unknown call hierarchy item: prepare it first");
  }
  const c2p = client.code2ProtocolConverter;
  if (incoming) {
    const found = (await vscode.commands.executeCommand<vscode.CallHierarchyIncomingCall[]>("vscode.provideIncomingCalls", item)) ?? [];
    const result = found.map((call) => ({ from: remember(client, call.from), fromRanges: call.fromRanges.map((r) => c2p.asRange(r)) }));
    return { result, source: vscode.env.appName };
  }
  const found = (await vscode.commands.executeCommand<vscode.CallHierarchyOutgoingCall[]>("vscode.provideOutgoingCalls", item)) ?? [];
  const result = found.map((call) => ({ to: remember(client, call.to), fromRanges: call.fromRanges.map((r) => c2p.asRange(r)) }));
  return { result, source: vscode.env.appName };
}

async function codeActions(client: LanguageClient, params: QueryParams): Promise<Answer> {
  if (!params.textDocument || !params.range) {
    throw new ResponseError(REQUEST_FAILED, "textDocument and range are required");
  }
  const uri = client.protocol2CodeConverter.asUri(params.textDocument.uri);
  const document = await vscode.workspace.openTextDocument(uri);
  const range = client.protocol2CodeConverter.asRange(params.range);
  const only = params.context?.only?.[0];
  // VS Code adds its own diagnostics for the range, and resolves edits (the last argument)
  const found =
    (await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[]>("vscode.executeCodeActionProvider", uri, range, only, 100)) ?? [];
  const result = found.map((action) => {
    if (!("title" in action) || typeof (action as vscode.Command).command === "string") {
      const command = action as vscode.Command;
      return { title: command.title, command: command.command };
    }
    const codeAction = action as vscode.CodeAction;
    return {
      title: codeAction.title,
      kind: codeAction.kind?.value,
      isPreferred: codeAction.isPreferred,
      disabled: codeAction.disabled ? { reason: codeAction.disabled.reason } : undefined,
      diagnostics: (codeAction.diagnostics ?? []).map((d) => ({ range: client.code2ProtocolConverter.asRange(d.range), message: d.message })),
      edit: asWorkspaceEdit(client, codeAction.edit) ?? undefined,
      command: codeAction.command ? { title: codeAction.command.title, command: codeAction.command.command } : undefined,
    };
  });
  return { result, source: source(document) };
}

async function documentSymbols(client: LanguageClient, params: QueryParams): Promise<Answer> {
  const { uri, document } = await target(client, { ...params, position: { line: 0, character: 0 } });
  const found = (await vscode.commands.executeCommand<vscode.DocumentSymbol[]>("vscode.executeDocumentSymbolProvider", uri)) ?? [];
  const c2p = client.code2ProtocolConverter;
  const convert = (s: vscode.DocumentSymbol): unknown => ({
    name: s.name,
    kind: s.kind + 1,
    range: c2p.asRange(s.range),
    selectionRange: c2p.asRange(s.selectionRange),
    children: (s.children ?? []).map(convert),
  });
  return { result: found.filter((s) => "selectionRange" in s).map(convert), source: source(document) };
}

async function diagnostics(client: LanguageClient, uris: string[]): Promise<Answer> {
  const open = new Set(vscode.workspace.textDocuments.map((d) => d.uri.toString()));
  const items = [];
  const languages = new Set<string>();
  for (const raw of uris) {
    const uri = client.protocol2CodeConverter.asUri(raw);
    if (!open.has(uri.toString())) {
      // Nothing collected for a closed file is not "no problems": let the server check it.
      throw new ResponseError(REQUEST_FAILED, `${uri.fsPath} is not open in the editor`);
    }
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (document) {
      languages.add(document.languageId);
    }
    const found = vscode.languages.getDiagnostics(uri);
    items.push({ uri: raw, diagnostics: await client.code2ProtocolConverter.asDiagnostics(found) });
  }
  return { result: items, source: `${vscode.env.appName}: ${[...languages].join(", ")}` };
}

/**
 * `agentls/languages`: the language ids the editor's own servers evidently serve. VS Code has
 * no API that lists running language servers, so the evidence is their diagnostics: an open
 * document with a diagnostic from a source other than agentls. agentls then starts no
 * headless server of its own for that language (no duplicate server).
 */
export function servedLanguages(): string[] {
  const served = new Set<string>();
  const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d.languageId]));
  for (const [uri, found] of vscode.languages.getDiagnostics()) {
    const language = open.get(uri.toString());
    if (language && found.some((d) => d.source && d.source !== "agentls")) {
      served.add(language);
    }
  }
  return [...served].sort();
}

/** One `agentls/editorQuery`, answered with VS Code's `vscode.execute…Provider` commands. */
export async function answer(client: LanguageClient, query: EditorQuery): Promise<Answer> {
  const params = query.params ?? {};
  const run = <T>(command: string, ...args: unknown[]) => vscode.commands.executeCommand<T>(command, ...args);
  switch (query.method) {
    case "textDocument/definition": {
      const { uri, document, position } = await target(client, params);
      const found = (await run<(vscode.Location | vscode.LocationLink)[]>("vscode.executeDefinitionProvider", uri, position)) ?? [];
      return { result: found.map((l) => asLocation(client, l)), source: source(document) };
    }
    case "textDocument/references": {
      const { uri, document, position } = await target(client, params);
      const found = (await run<vscode.Location[]>("vscode.executeReferenceProvider", uri, position)) ?? [];
      return { result: found.map((l) => asLocation(client, l)), source: source(document) };
    }
    case "textDocument/hover": {
      const { uri, document, position } = await target(client, params);
      const hovers = (await run<vscode.Hover[]>("vscode.executeHoverProvider", uri, position)) ?? [];
      const text = hoverText(hovers);
      return { result: text ? { contents: { kind: "markdown", value: text } } : null, source: source(document) };
    }
    case "textDocument/rename": {
      const { uri, document, position } = await target(client, params);
      const edit = await run<vscode.WorkspaceEdit>("vscode.executeDocumentRenameProvider", uri, position, params.newName ?? "");
      return { result: asWorkspaceEdit(client, edit), source: source(document) };
    }
    case "textDocument/implementation": {
      const { uri, document, position } = await target(client, params);
      const found = (await run<(vscode.Location | vscode.LocationLink)[]>("vscode.executeImplementationProvider", uri, position)) ?? [];
      return { result: found.map((l) => asLocation(client, l)), source: source(document) };
    }
    case "textDocument/typeDefinition": {
      const { uri, document, position } = await target(client, params);
      const found = (await run<(vscode.Location | vscode.LocationLink)[]>("vscode.executeTypeDefinitionProvider", uri, position)) ?? [];
      return { result: found.map((l) => asLocation(client, l)), source: source(document) };
    }
    case "textDocument/prepareCallHierarchy": {
      const { uri, document, position } = await target(client, params);
      const found = (await run<vscode.CallHierarchyItem[]>("vscode.prepareCallHierarchy", uri, position)) ?? [];
      return { result: found.map((item) => remember(client, item)), source: source(document) };
    }
    case "callHierarchy/incomingCalls":
      return calls(client, params, true);
    case "callHierarchy/outgoingCalls":
      return calls(client, params, false);
    case "textDocument/codeAction":
      return codeActions(client, params);
    case "textDocument/documentSymbol":
      return documentSymbols(client, params);
    case "workspace/symbol": {
      const found = (await run<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", params.query ?? "")) ?? [];
      const result = found.map((s) => ({
        name: s.name,
        kind: s.kind + 1, // vscode.SymbolKind is 0-based, LSP's is 1-based
        containerName: s.containerName || undefined,
        location: client.code2ProtocolConverter.asLocation(s.location),
      }));
      return { result, source: source() };
    }
    case "agentls/diagnostics":
      return diagnostics(client, params.uris ?? []);
    case "agentls/languages":
      return { result: servedLanguages(), source: source() };
    default:
      throw new ResponseError(-32601, `agentls/editorQuery: unsupported method ${query.method}`);
  }
}
