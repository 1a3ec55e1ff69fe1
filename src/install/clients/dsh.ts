// DeepSeek harness (docs/contract.md §4.4): a Codex-format hooks.json the bridge plugin reads from its
// `configPath`, at a path the user chooses (`--config`, default ~/.dsh/velesdb-hooks.json).
// The bridge runs every command with `bash -c`, on every platform, so the path is always
// POSIX-quoted and there is no commandWindows. install never edits the harness config; it
// prints the plugin row to paste there.
import * as fs from "node:fs";
import * as path from "node:path";
import { posixQuote } from "../entries/shell-words.ts";
import { DSH } from "../../hosts/dsh.ts";
import { rowsOf, type RegistryClient } from "../client.ts";
import { codex } from "./codex.ts";

// Events, matchers (anchored: the bridge matches unanchored regexes) and timeouts in seconds: the
// descriptor (src/hosts/descriptors/dsh.ts).
const ROWS = rowsOf(DSH);

export const DSH_DEFAULT_CONFIG = path.join(".dsh", "velesdb-hooks.json");

export const dsh: RegistryClient = {
  name: DSH.name,
  descriptor: DSH,
  home: (ctx) => ({ ok: true, path: path.join(ctx.home, ".dsh") }),
  configFile: "the DeepSeek harness hooks.json",
  registry: {
    path(ctx) {
      const file = ctx.configPath ?? path.join(ctx.home, DSH_DEFAULT_CONFIG);
      // Codex's own hooks.json would then hold two clients' entries for the same binary, and
      // each install would take the other's entries for its own stale ones.
      const codexFile = codex.registry.path(ctx);
      if (codexFile.ok && sameLocation(file, codexFile.path)) {
        return {
          ok: false,
          problem: `${file} is Codex's own hooks.json; give the DeepSeek harness a file of its own (--config)`,
        };
      }
      return { ok: true, path: file };
    },
    layout: "grouped",
    rows: ROWS,
    handler: (row, binaryPath) => ({
      type: "command",
      command: `${posixQuote(binaryPath)} dsh ${row.argvEvent}`,
      timeout: row.timeout,
    }),
  },
  // The bridge (@deepseek-ai/dsh-hooks-codex) runs hooks only; the harness starts MCP servers
  // from its own plugin config, which velesdb-hooks neither reads nor writes.
  mcpUnchecked:
    "the DeepSeek harness starts MCP servers from its own config (cordis.patch.yml), which velesdb-hooks does not read: make sure velesdb-memory is there",
  afterWrite: (_ctx, facts) => (facts.mode === "install" ? dshPluginRow(facts.registryPath) : []),
};

/**
 * dshPluginRow(configPath) → the lines install prints for the harness config: the bridge
 * plugin pointed at our hooks.json by its absolute path (the bridge resolves a relative one
 * from whatever directory launched the harness).
 */
export function dshPluginRow(configPath: string): string[] {
  return [
    "dsh: add this entry to the plugin list of the harness config (cordis.patch.yml); install does not edit that file:",
    "  - name: '@deepseek-ai/dsh-hooks-codex'",
    "    config:",
    `      configPath: ${yamlScalar(configPath)}`,
    "      model: deepseek-v4",
  ];
}

/** yamlScalar("/a b/it's") → `'/a b/it''s'`; a path of plain characters stays plain. */
export function yamlScalar(value: string): string {
  if (/^[A-Za-z0-9_/.~+-][A-Za-z0-9_/.~+@:=-]*$/.test(value) && !value.includes(": ")) return value;
  return `'${value.replaceAll("'", "''")}'`;
}

/** sameLocation(a, b) → true when both names reach the same file (through links too, when it exists). */
function sameLocation(a: string, b: string): boolean {
  if (path.resolve(a) === path.resolve(b)) return true;
  try {
    return fs.realpathSync.native(a) === fs.realpathSync.native(b);
  } catch {
    return false;
  }
}
