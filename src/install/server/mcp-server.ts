// The velesdb-memory MCP server the hooks point at (docs/mcp-server.md). Every hook tells the agent to
// call velesdb-memory tools, and in opted-in repositories the guard refuses edits until one of
// them answered: hooks installed where the agent has no such server lock the user out for the
// whole session. So check/doctor look for the server wherever each agent reads it (the
// client's `mcp` files), under either spelling the recall rule accepts, and say what it points
// at; `install --mcp` / `--mcp-url` add one; uninstall takes out only the entry install added.
//
// Same guarantees as the hook entries: a minimal text edit (jsonc-edit.ts for JSON; for
// Codex's TOML one appended table, as `codex mcp add` writes it, checked by parsing the result
// before anything is written), owner and mode kept, a backup, a record in installed.json, and a
// server the user configured is never replaced ("configured by you"). Values read from a
// user's file are shown quoted, URLs without their query or credentials, `env`/`headers`
// values never.
//
// This module: what install registers and how it is shown. The rest, one module per step:
// mcp-read.ts (the files the agent reads servers from), mcp-check.ts (check and doctor),
// mcp-edit.ts (install's and uninstall's edit).
import { resolveCompiler } from "../../core/compiler.ts";
import type { JsonObject } from "../entries/entries.ts";
import { mcpUrlProblem } from "./mcp-url.ts";
import { quoted, shown, type InstallerContext } from "../paths.ts";

/** The name install writes; the recall rule (docs/contract.md §6.2) accepts both spellings. */
export const MCP_SERVER_NAME = "velesdb-memory";
export const MCP_SERVER_NAMES = [MCP_SERVER_NAME, "velesdb_memory"] as const;
/** Upstream's daemon (scripts/install-memory-daemon.sh, VelesDB 92b0086): the example in messages. */
export const UPSTREAM_DAEMON_URL = "https://127.0.0.1:18090/mcp";
/** ~/.claude.json grows with every project Claude Code has seen; anything past this is not a settings file. */
export const MAX_MCP_FILE_BYTES = 64 * 1024 * 1024;

/**
 * What install registers: the shared front (`front mcp --server command`, src/mcp/front.ts,
 * docs/shared-memory.md: one velesdb-memory per store, shared by every session), or the URL
 * of a running daemon.
 */
export type McpSource =
  | { readonly kind: "stdio"; readonly command: string; readonly front: string | undefined }
  | { readonly kind: "url"; readonly url: string };

/** frontArgs("/abs/velesdb-memory") → the arguments of the front's entry. */
export const frontArgs = (server: string): string[] => ["mcp", "--server", server];

/** The line install prints for --mcp-url: what a TCP daemon means for who can reach the memory. */
export const TCP_NOTE =
  "note: with --mcp-url the memory is reached over TCP, and velesdb-memory's HTTP transport authenticates no one: any local user or process that can reach that port reads and writes it (install --mcp shares one server through an owner-only socket instead)";

/**
 * resolveMcpSource(env, url) → what `install --mcp` registers: `--mcp-url URL` (http or https),
 * else the absolute path of velesdb-memory from VELESDB_MEMORY_BIN or PATH (the same lookup the
 * compression hook uses); neither → the refusal naming both ways.
 */
/**
 * `front` is the stable binary; undefined on Windows, where the front has no channel yet (no
 * Unix socket; a named pipe is unproven here, docs/shared-memory.md "Windows"): there the
 * direct velesdb-memory entry is written, one session at a time, as before.
 */
export function resolveMcpSource(
  env: NodeJS.ProcessEnv,
  url: string | undefined,
  front: string | undefined,
): { ok: true; source: McpSource } | { ok: false; problem: string } {
  if (url !== undefined) {
    const problem = mcpUrlProblem(url, UPSTREAM_DAEMON_URL);
    return problem === undefined ? { ok: true, source: { kind: "url", url } } : { ok: false, problem };
  }
  const found = resolveCompiler(env);
  if (found.ok) return { ok: true, source: { kind: "stdio", command: found.path, front } };
  return {
    ok: false,
    problem: `install --mcp found no velesdb-memory to register (${found.problem}): install it with \`cargo install velesdb-memory\` (or put it on PATH, or set VELESDB_MEMORY_BIN to its absolute path), then run install --mcp again`,
  };
}

export function parseHttpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}

/** describeSource(ctx, source) → "stdio ~/bin/velesdb-memory" / "HTTP https://127.0.0.1:18090/mcp" for install's report. */
export function describeSource(ctx: InstallerContext, source: McpSource): string {
  if (source.kind === "url") return `HTTP ${safeUrl(source.url)}`;
  return source.front === undefined
    ? `stdio ${shown(ctx, source.command)}, one session at a time on Windows`
    : `stdio ${shown(ctx, source.front)} mcp, shared by every session, running ${shown(ctx, source.command)}`;
}

/** safeUrl("https://u:p@h:1/mcp?token=x") → `"https://h:1/mcp"` (query and credentials dropped, quoted). */
export function safeUrl(text: string): string {
  const url = parseHttpUrl(text);
  if (!url) return "(not an http(s) URL)";
  const dropped = url.search !== "" || url.username !== "" || url.password !== "" || url.hash !== "";
  return `${quoted(`${url.protocol}//${url.host}${url.pathname}`)}${dropped ? " (query or credentials not shown)" : ""}`;
}

/** frontServerOf(entry) → X when the entry's arguments are exactly `mcp --server X` (the front install writes). */
export function frontServerOf(entry: JsonObject): string | undefined {
  const args = Array.isArray(entry.command) ? entry.command.slice(1) : entry.args;
  if (!Array.isArray(args) || args.length !== 3 || args[0] !== "mcp" || args[1] !== "--server") return undefined;
  return typeof args[2] === "string" && args[2] !== "" ? args[2] : undefined;
}

/**
 * programOf(entry) → the program a stdio entry runs: `command` as a string (every agent but
 * OpenCode), or the first word of OpenCode's `command` array (its McpLocalConfig: "Command and
 * arguments", measured on opencode-ai 1.18.33).
 */
export function programOf(entry: JsonObject): string | undefined {
  const command = Array.isArray(entry.command) ? entry.command[0] : entry.command;
  return typeof command === "string" && command !== "" ? command : undefined;
}
