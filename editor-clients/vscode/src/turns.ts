// The turns of a session for a rewind (agentls.rewind): each prompt with the files it
// changed, from agentls.status's `history`. Pure, unit-tested; the extension shows them in
// a quick pick.

export interface TurnItem {
  label: string;
  description: string;
  turn: number;
}

function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] ?? path;
}

/** The quick-pick items for `session`'s turns, newest first ("2. go on" — "hello.py"). */
export function turnItems(status: unknown, session: string): TurnItem[] {
  const sessions = (status as { sessions?: unknown })?.sessions;
  if (!Array.isArray(sessions)) {
    return [];
  }
  const entry = sessions.find((s) => (s as { id?: unknown })?.id === session) as { history?: unknown } | undefined;
  const history = Array.isArray(entry?.history) ? (entry.history as Record<string, unknown>[]) : [];
  return history
    .map((t) => {
      const files = Array.isArray(t.files) ? t.files.map((f) => baseName(String(f))) : [];
      return {
        label: `${Number(t.turn)}. ${String(t.prompt ?? "")}`,
        description: files.length ? files.join(", ") : "no files",
        turn: Number(t.turn),
      };
    })
    .reverse();
}

/** What a rewind did, in one line. */
export function rewindMessage(session: string, turn: number, result: unknown): string {
  const r = (result ?? {}) as { dropped?: unknown[]; reverted?: unknown[] };
  const dropped = Array.isArray(r.dropped) ? r.dropped.length : 0;
  const reverted = Array.isArray(r.reverted) ? r.reverted.length : 0;
  const back = reverted ? `; ${reverted} file(s) changed since are reversed (review the edit, or Show Staged Diff)` : "";
  return `agentls: session ${session} is back at the end of turn ${turn} (${dropped} later turn(s) dropped${back})`;
}
