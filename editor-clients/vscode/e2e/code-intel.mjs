#!/usr/bin/env node
// Code intelligence through the editor (source 1), in a real VS Code: code-server with the
// extension installed from the .vsix, driven by Playwright. A TypeScript project is opened;
// "agentls: Run Task…" runs the scripted model, which calls find_references on `greet`,
// find_implementations on the interface method `Shape.area` (two classes implement it) and
// code_actions on src/c.ts, whose `greet` is not imported: it lists the actions for that
// diagnostic, applies `Add import from "./greeter"` (review mode: staged, not written) and
// reads the file back. The extension answers the server's `agentls/editorQuery` with
// `vscode.executeReferenceProvider`, `…ImplementationProvider` and `…CodeActionProvider`,
// i.e. code-server's built-in TypeScript features. What the model was told is read back
// from the scripted server's request log, and src/c.ts as it is on disk while the staged
// edit waits in the Refactor Preview.
//
// Usage: node e2e/code-intel.mjs [--python PATH] [--code-server PATH] [--chromium PATH]
//                                [--vsix PATH] [--keep]
// Prints one JSON line {ok, references, implementations, actions, applied, staged,
// previewShown, cOnDisk, steps, ...}; exit status 0 only when ok.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  baseSettings, finish, parseArgs, recordedRequests, refactorPreview, runSession, runTask, toolResults, waitFor,
  writeScenario,
} from "./harness.mjs";

const args = parseArgs();

const ADD_IMPORT = 'Add import from "./greeter"';
const implementing = (name, field, body) =>
  `import type { Shape } from "./shapes";\n\nexport class ${name} implements Shape {\n` +
  `  constructor(private readonly ${field}: number) {}\n\n  area(): number {\n    return ${body};\n  }\n}\n`;
const FILES = {
  "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020"}, "include": ["src"]}\n',
  "src/greeter.ts": "export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n",
  "src/a.ts": 'import { greet } from "./greeter";\n\nexport const a = greet("a");\n',
  "src/b.ts": 'import { greet as hello } from "./greeter";\n\nexport const b = hello("b");\n',
  "src/c.ts": 'export const c = greet("c");\n', // not imported (TS2304): "Add import" fixes it
  "src/shapes.ts": "export interface Shape {\n  area(): number;\n}\n",
  "src/circle.ts": implementing("Circle", "r", "3 * this.r * this.r"),
  "src/square.ts": implementing("Square", "side", "this.side * this.side"),
};
const C_LINE = { path: "src/c.ts", line: 1 };
const SCENARIO = {
  description: "code intelligence through the editor: references, implementations, a code action listed and applied",
  turns: [
    {
      content: [
        { type: "text", text: "Let me look around." },
        { type: "tool_use", name: "find_references", input: { path: "src/greeter.ts", line: 1, symbol: "greet" } },
        { type: "tool_use", name: "find_implementations", input: { path: "src/shapes.ts", line: 2, symbol: "area" } },
        { type: "tool_use", name: "code_actions", input: C_LINE },
      ],
    },
    { content: [{ type: "tool_use", name: "code_actions", input: { ...C_LINE, apply: ADD_IMPORT } }] },
    { content: [{ type: "tool_use", name: "read_file", input: { path: "src/c.ts" } }] },
    { content: [{ type: "text", text: "greet is used in a.ts and b.ts; c.ts imports it now." }] },
  ],
};

/** The TypeScript project of FILES, and the scenario written next to it. */
function prepare(tmp, workspace) {
  for (const [name, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), text);
  }
  const settings = {
    ...baseSettings(tmp),
    "agentls.mode": "review",
    "extensions.autoUpdate": false,
    "typescript.surveys.enabled": false,
    "typescript.tsserver.experimental.enableProjectDiagnostics": false,
  };
  return { settings, scenario: writeScenario(tmp, SCENARIO) };
}

async function drive({ page, tmp, workspace, result }) {
  const row = (name) => page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first();
  await row("src").waitFor({ state: "visible", timeout: 60000 });
  await row("src").click();
  await row("greeter.ts").waitFor({ state: "visible", timeout: 20000 });
  await row("greeter.ts").dblclick();
  const lines = page.locator(".editor-instance .monaco-editor .view-lines").first();
  const text = async () => ((await lines.textContent()) ?? "").replace(/\u00a0/g, " ");
  await waitFor("greeter.ts open", 20000, async () => (await text()).includes("export function greet"));

  // The editor's own TypeScript features first (as a user would): Go to References on
  // `greet` until its peek view lists the other files, so tsserver has loaded the project.
  await lines.click();
  await page.keyboard.press("Control+Home");
  for (let i = 0; i < 17; i++) {
    await page.keyboard.press("ArrowRight");
  }
  const peek = page.locator(".zone-widget .monaco-list-row", { hasText: "b.ts" }).first();
  await waitFor("the editor's references list b.ts", 90000, async () => {
    await page.keyboard.press("Shift+F12");
    try {
      await peek.waitFor({ state: "visible", timeout: 5000 });
      return true;
    } catch {
      return false;
    }
  });
  await page.keyboard.press("Escape");

  // src/c.ts open until tsserver marks its missing name: the quick fixes are for the
  // diagnostics the editor has, and with project diagnostics off a closed file has none.
  await row("c.ts").dblclick();
  await waitFor("c.ts open", 20000, async () => (await text()).includes("export const c"));
  await page.locator(".editor-instance .squiggly-error").first().waitFor({ state: "visible", timeout: 60000 });

  await runTask(page, "Who calls greet, what implements Shape.area, and fix c.ts", { timeout: 60000 });
  await waitFor("the model read c.ts back", 150000, async () => toolResults(tmp, "read_file").length > 0);
  [result.references] = toolResults(tmp, "find_references");
  [result.implementations] = toolResults(tmp, "find_implementations");
  [result.actions, result.applied] = toolResults(tmp, "code_actions");
  [result.staged] = toolResults(tmp, "read_file");
  await waitFor("the model's last request", 30000, async () => recordedRequests(tmp).length >= 4);
  // Review mode delivers the staged import as a preview for the user to apply: until then
  // the file on disk is as it was.
  await refactorPreview(page).waitFor({ state: "visible", timeout: 60000 });
  result.previewShown = true;
  result.cOnDisk = fs.readFileSync(path.join(workspace, "src", "c.ts"), "utf8");
}

await finish(() =>
  runSession(args, {
    tmpPrefix: "agentls-vscode-codeintel-",
    prepare,
    viewport: { width: 1200, height: 760 },
    logTail: 4000,
    drive,
  }),
);
