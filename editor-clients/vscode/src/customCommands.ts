// "agentls: Run Custom Command…": a quick pick of the server's custom commands
// (`agentls.commands`: .claude/commands/*.md and friends), then their arguments.
import * as vscode from "vscode";
import { type CustomCommandInfo, commandItems, commandPrompt } from "./commandPrompts";

interface Listing {
  commands: CustomCommandInfo[];
  problems: string[];
}

export async function pickCustomCommand(
  execute: <T>(command: string, args: object) => Promise<T>,
  run: (prompt: string) => Promise<void>,
): Promise<void> {
  const listing = await execute<Listing>("agentls.commands", {});
  for (const problem of listing.problems) {
    void vscode.window.showWarningMessage(`agentls: ${problem}`);
  }
  if (listing.commands.length === 0) {
    void vscode.window.showInformationMessage("agentls: no custom commands (add Markdown files to .claude/commands/)");
    return;
  }
  const pick = await vscode.window.showQuickPick(commandItems(listing.commands), {
    title: "agentls: Run Custom Command",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) {
    return;
  }
  const args = await vscode.window.showInputBox({
    title: `agentls: ${pick.label}`,
    prompt: pick.command.argument_hint ? `Arguments: ${pick.command.argument_hint}` : "Arguments (optional)",
    ignoreFocusOut: true,
  });
  if (args === undefined) {
    return;
  }
  await run(commandPrompt(pick.command.name, args));
}
