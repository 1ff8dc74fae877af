// File paths in the agent view's Markdown as links that open the file (at the line), and
// no bare "calc.py" turned into http://calc.py: markdown-it's fuzzy links are off, and a
// core rule links the words and `code spans` that name a file of the workspace.
// Pure (the resolver decides what is a file), so it is unit-tested without VS Code.
import type MarkdownIt from "markdown-it";
import type Token from "markdown-it/lib/token.mjs";

/** The absolute path of a workspace file named `text`, else undefined. */
export type Resolve = (text: string) => string | undefined;

const PATH = /(?<![\w/.@-])((?:\.{0,2}\/)?(?:[\w.-]+\/)*[\w-][\w.-]*\.[A-Za-z][\w]*)(?::(\d+))?(?![\w/])/g;
const WHOLE = /^((?:\.{0,2}\/)?(?:[\w.-]+\/)*[\w-][\w.-]*\.[A-Za-z][\w]*)(?::(\d+))?$/;

function linkTokens(state: { Token: typeof Token }, file: string, line: string | undefined, inner: Token[]): Token[] {
  const open = new state.Token("link_open", "a", 1);
  open.attrs = [
    ["href", "#"],
    ["class", "file-link"],
    ["data-path", file],
    ["title", line ? `Open ${file} at line ${line}` : `Open ${file}`],
  ];
  if (line) {
    open.attrs.push(["data-line", line]);
  }
  return [open, ...inner, new state.Token("link_close", "a", -1)];
}

function textToken(state: { Token: typeof Token }, content: string): Token {
  const token = new state.Token("text", "", 0);
  token.content = content;
  return token;
}

/** One text token → text and file links. */
function splitText(state: { Token: typeof Token }, token: Token, resolve: Resolve): Token[] {
  const out: Token[] = [];
  let last = 0;
  for (const match of token.content.matchAll(PATH)) {
    const file = resolve(match[1]);
    if (!file || match.index === undefined) {
      continue;
    }
    if (match.index > last) {
      out.push(textToken(state, token.content.slice(last, match.index)));
    }
    out.push(...linkTokens(state, file, match[2], [textToken(state, match[0])]));
    last = match.index + match[0].length;
  }
  if (out.length === 0) {
    return [token];
  }
  if (last < token.content.length) {
    out.push(textToken(state, token.content.slice(last)));
  }
  return out;
}

/** Install on `md`: fuzzy links off, file paths linked through `resolve`. */
export function fileLinks(md: MarkdownIt, resolve: () => Resolve | undefined): void {
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });
  md.core.ruler.push("agentls_file_links", (state) => {
    const current = resolve();
    if (!current) {
      return;
    }
    for (const block of state.tokens) {
      if (block.type !== "inline" || !block.children) {
        continue;
      }
      const children: Token[] = [];
      let inLink = 0;
      for (const token of block.children) {
        if (token.type === "link_open") {inLink++;}
        if (token.type === "link_close") {inLink--;}
        if (inLink === 0 && token.type === "text") {
          children.push(...splitText(state, token, current));
        } else if (inLink === 0 && token.type === "code_inline") {
          const match = WHOLE.exec(token.content);
          const file = match ? current(match[1]) : undefined;
          children.push(...(file ? linkTokens(state, file, match?.[2], [token]) : [token]));
        } else {
          children.push(token);
        }
      }
      block.children = children;
    }
  });
}
