// Which words of the agent's text name a file of the workspace (for links in the agent
// view), and opening one at a line. Only existing files inside a workspace folder qualify,
// so a link never opens something outside the user's project.
import * as fs from "node:fs";
import * as path from "node:path";

const CACHE_LIMIT = 2000;

/** `resolve(text)`: the absolute path of the file `text` names in one of `folders`. */
export class WorkspaceFiles {
  private readonly cache = new Map<string, string | undefined>();

  constructor(private readonly folders: () => string[]) {}

  resolve = (text: string): string | undefined => {
    if (this.cache.has(text)) {
      return this.cache.get(text);
    }
    const found = this.find(text);
    if (this.cache.size >= CACHE_LIMIT) {
      this.cache.clear();
    }
    this.cache.set(text, found);
    return found;
  };

  /** Forget what was looked up (files appear as the agent writes them). */
  clear(): void {
    this.cache.clear();
  }

  private find(text: string): string | undefined {
    for (const folder of this.folders()) {
      const root = path.resolve(folder);
      const candidate = path.resolve(root, text);
      if (!inside(root, candidate)) {
        continue;
      }
      try {
        const real = fs.realpathSync(candidate);
        if (inside(fs.realpathSync(root), real) && fs.statSync(real).isFile()) {
          return candidate;
        }
      } catch {
        // not there
      }
    }
    return undefined;
  }
}

function inside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}
