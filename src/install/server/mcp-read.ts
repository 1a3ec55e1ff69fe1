// The files an agent reads MCP servers from (the client's `mcp` files), read without trusting
// them (safe-read.ts) and parsed as JSON(C) or TOML; the velesdb-memory entry found there under
// either spelling, and what it points at, told without a raw value (docs/mcp-server.md).
import * as path from "node:path";
import TOML from "@iarna/toml";
import { getNodeValue } from "jsonc-parser";
import { isExecutableFile, resolveCompiler } from "../../core/compiler.ts";
import type { McpFile } from "../client.ts";
import { isJsonObject, type JsonObject } from "../entries/entries.ts";
import { duplicateKey, parseJsonc } from "../files/jsonc-parse.ts";
import { narrowJsonc } from "../files/json-narrow.ts";
import { frontServerOf, MAX_MCP_FILE_BYTES, MCP_SERVER_NAMES, parseHttpUrl, programOf, safeUrl } from "./mcp-server.ts";
import { shown, type InstallerContext } from "../paths.ts";
import { readUserFile, type WritableFile } from "../files/safe-read.ts";

export const BOM = "\uFEFF";

export type McpRead =
  | { readonly kind: "absent"; readonly file: Extract<WritableFile, { kind: "absent" }>; readonly value: JsonObject }
  | { readonly kind: "present"; readonly file: Extract<WritableFile, { kind: "present" }>; readonly value: JsonObject }
  | { readonly kind: "refused"; readonly path: string; readonly problem: string };

/**
 * readMcpFile(path, format, tree, paths) → the file and its parsed value, or why it cannot be
 * used. Never throws. With `paths` (the servers tables read there), a JSON file's value holds
 * only what lies on them, every other value a stand-in (json-narrow.ts: a 41 MB ~/.claude.json).
 */
export function readMcpFile(
  filePath: string,
  format: McpFile["format"],
  tree: string,
  paths?: readonly (readonly string[])[],
): McpRead {
  const file = readUserFile(filePath, tree, MAX_MCP_FILE_BYTES);
  if (file.kind === "refused") return file;
  if (file.kind === "absent") return { kind: "absent", file, value: {} };
  const narrowed = format === "json" && paths ? narrowJsonc(file.text, paths) : undefined;
  if (narrowed && !narrowed.ok) return { kind: "refused", path: filePath, problem: syntaxProblem(narrowed) };
  const parsed = parseText(narrowed ? narrowed.narrowed.text : file.text, format);
  return parsed.ok
    ? { kind: "present", file, value: parsed.value }
    : { kind: "refused", path: filePath, problem: parsed.problem };
}

/** parseText(text, format) → the top-level object, or why not (a position at most, never content). */
export function parseText(
  text: string,
  format: McpFile["format"],
): { ok: true; value: JsonObject } | { ok: false; problem: string } {
  const body = text.startsWith(BOM) ? text.slice(BOM.length) : text;
  // A deeply nested file overflows the parsers' recursion: a RangeError, caught here.
  try {
    if (format === "toml") return { ok: true, value: TOML.parse(body) as JsonObject };
    const parsed = parseJsonc(body);
    if (!parsed.ok) return { ok: false, problem: syntaxProblem(parsed) };
    const value: unknown = parsed.root ? getNodeValue(parsed.root) : {};
    if (!isJsonObject(value)) return { ok: false, problem: "is not a JSON object" };
    const duplicate = duplicateKey(body, parsed.root, ["mcpServers"]);
    if (duplicate)
      return {
        ok: false,
        problem: `has ${JSON.stringify(duplicate.key)} twice (again on line ${duplicate.line}); merge them by hand`,
      };
    return { ok: true, value };
  } catch (error) {
    if (error instanceof RangeError) return { ok: false, problem: "is nested too deeply to read" };
    // The TOML parser's message quotes the file; only its line is safe to show.
    const line = (error as { line?: unknown }).line;
    return { ok: false, problem: `does not parse${typeof line === "number" ? ` (line ${line + 1})` : ""}` };
  }
}

export const syntaxProblem = (error: { line: number; column: number; code: string }): string =>
  `does not parse: line ${error.line}, column ${error.column} (${error.code})`;

/** The servers table at `keys`: absent, an object, or a value in the way (its key path). */
export function serversAt(
  value: JsonObject,
  keys: readonly string[],
): { kind: "none" } | { kind: "table"; table: JsonObject } | { kind: "blocked"; at: string } {
  let current: unknown = value;
  for (const [i, key] of keys.entries()) {
    if (!isJsonObject(current)) return { kind: "blocked", at: keys.slice(0, i).join(".") };
    if (!Object.hasOwn(current, key)) return { kind: "none" };
    current = current[key];
  }
  return isJsonObject(current) ? { kind: "table", table: current } : { kind: "blocked", at: keys.join(".") };
}

/** findServer(value, keys) → the velesdb-memory entry under `keys`, in either spelling. */
export function findServer(value: JsonObject, keys: readonly string[]): { name: string; entry: unknown } | undefined {
  const servers = serversAt(value, keys);
  if (servers.kind !== "table") return undefined;
  const name = MCP_SERVER_NAMES.find((n) => Object.hasOwn(servers.table, n));
  return name === undefined ? undefined : { name, entry: servers.table[name] };
}

/** What a server entry points at, for people: never a raw value, never an env or header value. */
export function describeServer(ctx: InstallerContext, entry: unknown): { usable: boolean; text: string } {
  if (!isJsonObject(entry)) return { usable: false, text: "is not an object" };
  const secrets = ["env", "environment", "headers", "http_headers", "env_http_headers"].flatMap((key) =>
    isJsonObject(entry[key]) && Object.keys(entry[key]).length > 0
      ? [`${key}: ${Object.keys(entry[key]).length} (values not shown)`]
      : [],
  );
  const tail = secrets.length > 0 ? `; ${secrets.join(", ")}` : "";
  if (entry.disabled === true || entry.enabled === false) return { usable: false, text: `is disabled${tail}` };
  const url = [entry.url, entry.httpUrl, entry.serverUrl].find((u) => typeof u === "string") as string | undefined;
  if (url !== undefined) {
    const parsed = parseHttpUrl(url);
    return parsed
      ? { usable: true, text: `HTTP ${safeUrl(url)}${tail}` }
      : { usable: false, text: `has a URL that is not http(s)${tail}` };
  }
  const command = programOf(entry);
  if (command === undefined) return { usable: false, text: `has neither a command nor a URL${tail}` };
  const where = shown(ctx, command);
  const server = frontServerOf(entry);
  if (server !== undefined) {
    // The shared front: usable when both it and the server it runs are executable files.
    const front = path.isAbsolute(command) && isExecutableFile(command);
    const runs = path.isAbsolute(server) && isExecutableFile(server);
    const text = `stdio ${where} mcp (the shared front) running ${shown(ctx, server)}${front ? "" : `; ${where} is missing or not executable`}${runs ? "" : `; ${shown(ctx, server)} is missing or not executable`}${tail}`;
    return { usable: front && runs, text };
  }
  if (path.isAbsolute(command)) {
    return isExecutableFile(command)
      ? { usable: true, text: `stdio ${where} (an executable file)${tail}` }
      : { usable: false, text: `stdio ${where}, which is missing or not executable${tail}` };
  }
  if (command.includes("/") || command.includes("\\"))
    return { usable: true, text: `stdio ${where} (relative: the agent resolves it from its working directory)${tail}` };
  const found = resolveCompiler({ ...ctx.env, VELESDB_MEMORY_BIN: command });
  return found.ok
    ? { usable: true, text: `stdio ${where} (on PATH: ${shown(ctx, found.path)})${tail}` }
    : { usable: false, text: `stdio ${where}, which is not on PATH${tail}` };
}
