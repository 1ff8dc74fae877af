// Custom commands (`/name args`): the quick-pick items and the prompt they start. Pure.

export interface CustomCommandInfo {
  name: string;
  description: string;
  argument_hint: string | null;
  source: string;
}

export interface CommandItem {
  label: string;
  description: string;
  detail?: string;
  command: CustomCommandInfo;
}

export function commandItems(commands: readonly CustomCommandInfo[]): CommandItem[] {
  return commands.map((command) => ({
    label: `/${command.name}`,
    description: command.argument_hint ?? "",
    detail: command.description,
    command,
  }));
}

/** The prompt `agentls.run` expands on the server. */
export function commandPrompt(name: string, args: string | undefined): string {
  const rest = (args ?? "").trim();
  return rest ? `/${name} ${rest}` : `/${name}`;
}
