// One adapter per client: where its registry lives, how it files handlers (in groups, or in a
// flat list per event) and how one of our handlers is spelled for it. Everything else (merge,
// check, doctor) is shared. A new host is one adapter here plus its rows in registrations.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import type { JsonObject } from "./entries.ts";
import { absoluteOverride, type InstallerContext, type Resolved } from "./paths.ts";
import { registrationsFor, type ClientName, type Registration } from "./registrations.ts";
import { posixQuote, powershellQuote } from "./shell-words.ts";

/**
 * How a registry files handlers under `hooks.<event>`:
 * - "grouped" (Claude, Codex, the dsh bridge): `[{matcher?, hooks: [handler, …]}, …]`;
 * - "flat" (Windsurf): `[handler, …]`, no groups and no matchers.
 */
export type RegistryLayout = "grouped" | "flat";

export interface ClientAdapter {
  readonly name: ClientName;
  readonly layout: RegistryLayout;
  /** The agent's own directory; `install` without --client acts on clients whose directory exists. */
  clientHome(ctx: InstallerContext): Resolved;
  /** The file the installer edits. */
  registryPath(ctx: InstallerContext): Resolved;
  /** handler(row, binary, platform) → the handler object filed under row.wireEvent. */
  handler(row: Registration, binaryPath: string, platform: NodeJS.Platform): JsonObject;
  readonly rows: readonly Registration[];
}

/** The group that holds one handler: `{matcher?, hooks: [handler]}` (Claude and Codex share it). */
export function groupFor(row: Registration, handler: JsonObject): JsonObject {
  return row.matcher === undefined ? { hooks: [handler] } : { matcher: row.matcher, hooks: [handler] };
}

/** entryFor(client, row, binary, platform) → what install appends under row.wireEvent: a group, or the bare handler. */
export function entryFor(client: ClientAdapter, row: Registration, binaryPath: string, platform: NodeJS.Platform): JsonObject {
  const handler = client.handler(row, binaryPath, platform);
  return client.layout === "flat" ? handler : groupFor(row, handler);
}

// Claude Code (SPEC §4.1): the exec form — no shell, so no quoting, and it works on Windows.
const claude: ClientAdapter = {
  name: "claude",
  layout: "grouped",
  clientHome: (ctx) => absoluteOverride(ctx, "CLAUDE_CONFIG_DIR", path.join(ctx.home, ".claude")),
  registryPath(ctx) {
    const home = this.clientHome(ctx);
    return home.ok ? { ok: true, path: path.join(home.path, "settings.json") } : home;
  },
  handler: (row, binaryPath) => ({ type: "command", command: binaryPath, args: ["claude", row.argvEvent], timeout: row.timeout }),
  rows: registrationsFor("claude"),
};

// Codex CLI (SPEC §4.2): `command` goes through the session shell, so the path is POSIX-quoted;
// on Windows Codex runs `commandWindows` in PowerShell instead. No version in argv: the entry's
// bytes are its trust identity.
const codex: ClientAdapter = {
  name: "codex",
  layout: "grouped",
  clientHome: (ctx) => absoluteOverride(ctx, "CODEX_HOME", path.join(ctx.home, ".codex")),
  registryPath(ctx) {
    const home = this.clientHome(ctx);
    return home.ok ? { ok: true, path: path.join(home.path, "hooks.json") } : home;
  },
  handler(row, binaryPath, platform) {
    const handler: JsonObject = { type: "command", command: `${posixQuote(binaryPath)} codex ${row.argvEvent}` };
    if (platform === "win32") handler.commandWindows = `& ${powershellQuote(binaryPath)} codex ${row.argvEvent}`;
    handler.timeout = row.timeout;
    if (row.statusMessage !== undefined) handler.statusMessage = row.statusMessage;
    return handler;
  },
  rows: registrationsFor("codex"),
};

// Windsurf Cascade (SPEC §4.3): `{"command": …, "show_output": false}` in a flat list per event.
// Cascade runs `command` through a shell, so the path is POSIX-quoted. On Windows the shell
// Cascade uses was not measured; the path is double-quoted there, which cmd.exe and POSIX
// shells both read as one word (PowerShell would need `& "…"`). show_output stays false: the
// hooks' stdout is for parity only and the guard's refusal reaches the agent through exit 2.
const windsurf: ClientAdapter = {
  name: "windsurf",
  layout: "flat",
  clientHome: (ctx) => ({ ok: true, path: path.join(ctx.home, ".codeium", "windsurf") }),
  registryPath: (ctx) => ({ ok: true, path: path.join(ctx.home, ".codeium", "windsurf", "hooks.json") }),
  handler(row, binaryPath, platform) {
    const program = platform === "win32" ? `"${binaryPath}"` : posixQuote(binaryPath);
    return { command: `${program} windsurf ${row.argvEvent}`, show_output: false };
  },
  rows: registrationsFor("windsurf"),
};

/** windsurfRulesPath(ctx) → ~/.codeium/windsurf/memories/global_rules.md, the rules file Cascade reads in every workspace. */
export function windsurfRulesPath(ctx: InstallerContext): string {
  return path.join(ctx.home, ".codeium", "windsurf", "memories", "global_rules.md");
}

export const DSH_DEFAULT_CONFIG = path.join(".dsh", "velesdb-hooks.json");

// DeepSeek harness (SPEC §4.4): a Codex-format hooks.json the bridge plugin reads from its
// `configPath`, at a path the user chooses (`--config`, default ~/.dsh/velesdb-hooks.json).
// The bridge runs every command with `bash -c`, on every platform, so the path is always
// POSIX-quoted and there is no commandWindows.
const dsh: ClientAdapter = {
  name: "dsh",
  layout: "grouped",
  clientHome: (ctx) => ({ ok: true, path: path.join(ctx.home, ".dsh") }),
  registryPath(ctx) {
    const file = ctx.dshConfig ?? path.join(ctx.home, DSH_DEFAULT_CONFIG);
    // Codex's own hooks.json would then hold two clients' entries for the same binary, and
    // each install would take the other's entries for its own stale ones.
    const codexFile = codex.registryPath(ctx);
    if (codexFile.ok && sameLocation(file, codexFile.path)) {
      return { ok: false, problem: `${file} is Codex's own hooks.json; give the DeepSeek harness a file of its own (--config)` };
    }
    return { ok: true, path: file };
  },
  handler: (row, binaryPath) => ({ type: "command", command: `${posixQuote(binaryPath)} dsh ${row.argvEvent}`, timeout: row.timeout }),
  rows: registrationsFor("dsh"),
};

export const CLIENTS: Readonly<Record<ClientName, ClientAdapter>> = { claude, codex, windsurf, dsh };

/** sameLocation(a, b) → true when both names reach the same file (through links too, when it exists). */
function sameLocation(a: string, b: string): boolean {
  if (path.resolve(a) === path.resolve(b)) return true;
  try {
    return fs.realpathSync.native(a) === fs.realpathSync.native(b);
  } catch {
    return false;
  }
}
