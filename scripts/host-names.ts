// The product name of every host in the host table (src/hosts/index.ts), and the sentences the
// package metadata builds from them: package.json's "description" and the npm packages'
// (scripts/npm-packages.ts). Keyed by the table's own names, so a host added to the table without
// a name here fails the type check, and test/host-names.test.ts fails when package.json, the npm
// metadata, the installer's client table or the docs list other hosts than the table does.
// `bun scripts/host-names.ts` prints the description; `--write` puts it into package.json.
import * as fs from "node:fs";
import * as path from "node:path";
import { HOSTS, type HostName } from "../src/hosts/index.ts";

export const HOST_PRODUCTS = {
  claude: "Claude Code",
  codex: "Codex CLI",
  windsurf: "Windsurf",
  dsh: "the DeepSeek harness",
  gemini: "Gemini CLI",
  copilot: "GitHub Copilot CLI",
  qwen: "Qwen Code",
  opencode: "OpenCode",
  droid: "Factory Droid",
  kilo: "Kilo Code",
  codebuddy: "CodeBuddy Code",
  pi: "the Pi coding agent",
} as const satisfies Record<HostName, string>;

/** hostProducts() → the product names in the host table's order. */
export function hostProducts(): string[] {
  return (Object.keys(HOSTS) as HostName[]).map((host) => HOST_PRODUCTS[host]);
}

/** packageDescription() → the one description package.json and every npm package carry. */
export function packageDescription(): string {
  const names = hostProducts();
  const list = `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  return `Agent hooks in one native binary that make ${list} use their velesdb-memory MCP server: working context loaded and saved, recall before edits, large Bash output compressed where the host allows it.`;
}

export const PACKAGE_JSON = path.resolve(import.meta.dir, "..", "package.json");

if (import.meta.main) {
  const description = packageDescription();
  if (process.argv.includes("--write")) {
    const text = fs.readFileSync(PACKAGE_JSON, "utf8");
    const current = JSON.parse(text).description as string;
    // A minimal edit: only the value of "description" changes, the file's layout stays.
    fs.writeFileSync(
      PACKAGE_JSON,
      text.replace(`"description": ${JSON.stringify(current)}`, `"description": ${JSON.stringify(description)}`),
    );
  }
  console.log(description);
}
