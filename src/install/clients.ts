// One adapter per client: where its registry lives and how one of our handlers is spelled for
// it. Everything else (merge, check, doctor) is shared. A new host is one adapter here plus
// its rows in registrations.ts.
import * as path from "node:path";
import type { JsonObject } from "./entries.ts";
import { absoluteOverride, type InstallerContext, type Resolved } from "./paths.ts";
import { registrationsFor, type ClientName, type Registration } from "./registrations.ts";
import { posixQuote, powershellQuote } from "./shell-words.ts";

export interface ClientAdapter {
  readonly name: ClientName;
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

// Claude Code (SPEC §4.1): the exec form — no shell, so no quoting, and it works on Windows.
const claude: ClientAdapter = {
  name: "claude",
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

export const CLIENTS: Readonly<Record<ClientName, ClientAdapter>> = { claude, codex };
