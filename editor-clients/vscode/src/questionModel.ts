// The shapes of the server's `agentls/askQuestions` and `agentls/reviewPlan` requests
// (docs/lsp.md, "Questions and plans") and the pure parts of answering them. Unit-tested;
// the quick picks themselves are in questions.ts and planReview.ts.

export const OTHER_LABEL = "Other…";

export interface QuestionOption {
  label: string;
  description?: string;
}

export interface Question {
  question: string;
  header: string;
  options: QuestionOption[];
  multi_select?: boolean;
}

export interface AskQuestionsParams {
  session_id: string;
  tool_use_id?: string;
  questions: Question[];
  other_label?: string;
}

export interface Answer {
  selected: string[];
  other: string | null;
}

export type PlanDecisionId = "review" | "auto" | "keep_planning";

export interface PlanChoice {
  id: PlanDecisionId;
  label: string;
}

export interface ReviewPlanParams {
  session_id: string;
  tool_use_id?: string;
  plan: string;
  choices?: PlanChoice[];
}

export interface PlanDecision {
  decision: PlanDecisionId;
  feedback?: string;
}

/** One row of a question's quick pick: an option, or the free-text "Other…". */
export interface PickItem {
  label: string;
  detail?: string;
  other: boolean;
}

export function pickItems(question: Question, otherLabel = OTHER_LABEL): PickItem[] {
  const items: PickItem[] = question.options.map((o) => ({
    label: o.label,
    detail: o.description || undefined,
    other: false,
  }));
  items.push({ label: otherLabel, detail: "Answer in your own words", other: true });
  return items;
}

/** The answer for the rows the user picked and (when "Other…" was among them) the text
 *  they typed; undefined when that is no answer at all. */
export function answerOf(picked: readonly PickItem[], otherText: string | undefined): Answer | undefined {
  const selected = picked.filter((p) => !p.other).map((p) => p.label);
  const wantsOther = picked.some((p) => p.other);
  const other = wantsOther && otherText !== undefined && otherText.trim() ? otherText.trim() : null;
  if (!selected.length && other === null) {
    return undefined;
  }
  return { selected, other };
}

export const DEFAULT_PLAN_CHOICES: PlanChoice[] = [
  { id: "review", label: "Approve and let the agent edit (review)" },
  { id: "auto", label: "Approve with auto-accepted edits" },
  { id: "keep_planning", label: "Keep planning" },
];

/** The choices the server sent (their labels are the same in every host), else the defaults. */
export function planChoices(params: ReviewPlanParams): PlanChoice[] {
  const known = new Set<string>(DEFAULT_PLAN_CHOICES.map((c) => c.id));
  const sent = (params.choices ?? []).filter((c) => known.has(c.id) && typeof c.label === "string");
  return sent.length ? sent : DEFAULT_PLAN_CHOICES;
}
