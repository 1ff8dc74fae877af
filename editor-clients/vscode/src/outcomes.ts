// What became of a run's or an accept's edits, as one notification with actions, in this
// editor's words ("agentls: Accept Staged Edits", not `agentls.accept`). Pure, unit-tested.
import { type AgentEvent } from "./events";

export type Action = "Show Diff" | "Accept Staged" | "Reject";

export interface Outcome {
  severity: "info" | "warning" | "error";
  message: string;
  actions: Action[];
}

const STAGED_ACTIONS: Action[] = ["Show Diff", "Accept Staged", "Reject"];

type Name = (uri: string) => string;

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The files left out, grouped by reason: each reason said once ("a.py, b.py: why"). */
export function leftOut(value: unknown, name: Name): string {
  const byReason = new Map<string, string[]>();
  for (const item of list(value)) {
    const entry = item as Record<string, unknown>;
    const reason = String(entry.reason ?? "not applied");
    byReason.set(reason, [...(byReason.get(reason) ?? []), name(String(entry.uri))]);
  }
  return [...byReason].map(([reason, names]) => `${names.join(", ")}: ${reason}`).join("; ");
}

/** The notification for an edit outcome `{files, applied, reason, left_out}`. */
export function describeEdit(edit: Record<string, unknown>, session: string, name: Name, accepting: boolean): Outcome | undefined {
  const files = list(edit.files).map(String);
  const left = list(edit.left_out);
  if (files.length === 0 && left.length === 0) {
    return accepting ? { severity: "info", message: `agentls: nothing staged in session ${session}.`, actions: [] } : undefined;
  }
  const names = files.map(name).join(", ");
  if (edit.applied === true) {
    if (left.length > 0) {
      return {
        severity: "warning",
        message: `agentls: applied ${files.length} file(s) (${names}); left out and still staged: ${leftOut(left, name)}`,
        actions: STAGED_ACTIONS,
      };
    }
    return { severity: "info", message: `agentls: applied ${files.length} file(s) of session ${session}: ${names}`, actions: [] };
  }
  if (edit.applied === false) {
    const why = left.length > 0 ? leftOut(left, name) : String(edit.reason ?? "refused");
    return {
      severity: "warning",
      message: `agentls: nothing was applied (session ${session}) — ${why}. The edits stay staged.`,
      actions: STAGED_ACTIONS,
    };
  }
  return {
    severity: "info",
    message: `agentls: ${files.length} file(s) staged for review in session ${session}: ${names}`,
    actions: STAGED_ACTIONS,
  };
}

/** `run_result` → a notification (or none when the run changed nothing and went well). */
export function describeRunResult(event: AgentEvent, name: Name): Outcome | undefined {
  const session = String(event.session_id);
  const status = String(event.status);
  if (status === "failed") {
    return { severity: "error", message: `agentls: the run failed: ${String(event.error ?? "unknown error")}`, actions: [] };
  }
  const edit = (event.edit ?? null) as Record<string, unknown> | null;
  const outcome = edit ? describeEdit(edit, session, name, false) : undefined;
  if (outcome && status === "cancelled" && edit?.applied !== true && edit?.applied !== false) {
    return { ...outcome, severity: "warning", message: outcome.message.replace(/^agentls: /, "agentls: the cancelled run left ") };
  }
  if (!outcome && status !== "completed" && status !== "cancelled") {
    return { severity: "warning", message: `agentls: ${String(event.outcome ?? status)}`, actions: [] };
  }
  return outcome;
}

/** `edit_result` (after an accept or reject, also from a code action) → a notification. */
export function describeEditResult(event: AgentEvent, name: Name): Outcome | undefined {
  const session = String(event.session_id);
  if (event.action === "reject") {
    const files = list(event.files).map(String);
    return {
      severity: "info",
      message: files.length
        ? `agentls: rejected ${files.length} file(s) of session ${session}: ${files.map(name).join(", ")}`
        : `agentls: nothing staged in session ${session}.`,
      actions: [],
    };
  }
  return describeEdit(event as Record<string, unknown>, session, name, true);
}

/** The status bar's short words for an accept's or reject's outcome. */
export function statusOfEditResult(event: AgentEvent): string | undefined {
  const files = list(event.files).length;
  if (event.action === "reject") {
    return files ? `rejected ${files} file(s)` : undefined;
  }
  if (event.applied === true) {
    const left = list(event.left_out).length;
    return left ? `applied ${files} file(s), ${left} still staged` : `applied ${files} file(s)`;
  }
  return event.applied === false ? `nothing applied, ${files} file(s) still staged` : undefined;
}
