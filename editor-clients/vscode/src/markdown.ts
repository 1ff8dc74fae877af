// The agent view's Markdown: rendered here with markdown-it (raw HTML off, no fuzzy web
// links), file paths of the workspace as links that open the file. No VS Code API, so it is
// unit-tested under plain node.
import MarkdownIt from "markdown-it";
import { fileLinks, type Resolve } from "./fileLinks";
import { type SessionView } from "./viewModel";

let resolveFile: Resolve | undefined;
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
fileLinks(md, () => resolveFile);

/** A session as the webview draws it: text items as rendered Markdown (file paths that
 * `resolve` finds become links that open the file). */
export function forWebview(s: SessionView, resolve?: Resolve): unknown {
  resolveFile = resolve;
  try {
    return {
      ...s,
      items: s.items.map((item) => (item.kind === "text" ? { kind: "text", html: md.render(item.text) } : item)),
    };
  } finally {
    resolveFile = undefined;
  }
}
