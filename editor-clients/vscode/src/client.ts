// Starting `agentls serve` with vscode-languageclient, with clear errors when it can't.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  type ClientCapabilities,
  type FeatureState,
  LanguageClient,
  type LanguageClientOptions,
  type StaticFeature,
  RevealOutputChannelOn,
  type ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { resolveServerCommand, type Resolved } from "./serverCommand";
import { type ServerSettings } from "./settings";

export const API_KEY_SECRET = "agentls.apiKey";

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) {
      return path.join(dir, name);
    }
  }
  return undefined;
}

export function findServer(config: vscode.WorkspaceConfiguration): Resolved {
  return resolveServerCommand({
    configured: config.get<string>("server.command") ?? "",
    args: config.get<string[]>("server.args") ?? ["serve"],
    folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    platform: process.platform,
    isExecutable,
    onPath,
  });
}

/** The server's environment: ours, plus the API key from Secret Storage when one is stored. */
export async function serverEnv(secrets: vscode.SecretStorage): Promise<NodeJS.ProcessEnv> {
  const env = { ...process.env };
  const key = await secrets.get(API_KEY_SECRET);
  if (key) {
    env.ANTHROPIC_API_KEY = key;
  }
  return env;
}

export interface StartOptions {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  settings: ServerSettings;
  serverChannel: vscode.OutputChannel;
}

export function createClient(options: StartOptions): LanguageClient {
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const serverOptions: ServerOptions = {
    command: options.command,
    args: options.args,
    transport: TransportKind.stdio,
    options: { env: options.env, cwd },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    initializationOptions: options.settings,
    outputChannel: options.serverChannel,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
  };
  const client = new LanguageClient("agentls", "agentls", serverOptions, clientOptions);
  client.registerFeature(AGENTLS_FLAGS);
  return client;
}

/** `experimental.agentls.runResults`: this extension shows run and accept outcomes itself
 *  (from the server's run_result / edit_result events), so the server adds no messages. */
const AGENTLS_FLAGS: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    const agentls = (experimental.agentls ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, agentls: { ...agentls, runResults: true } };
  },
  initialize(): void {},
  getState(): FeatureState {
    return { kind: "static" };
  },
  clear(): void {},
};
