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
import * as path from "node:path";
import TOML from "@iarna/toml";
import { getNodeValue } from "jsonc-parser";
import { isExecutableFile, resolveCompiler } from "../core/compiler.ts";
import type { InstallerClient, McpFile, McpSpec } from "./clients/client.ts";
import { isJsonObject, sameJson, type JsonObject } from "./entries.ts";
import { addProperty, DEFAULT_STYLE, detectStyle, duplicateKey, parseJsonc, removeAt, replaceAt, type TextStyle } from "./jsonc-edit.ts";
import type { ManifestRecord } from "./manifest.ts";
import { narrowJsonc, widen } from "./json-narrow.ts";
import { mcpUrlProblem } from "./mcp-url.ts";
import { quoted, shown, type InstallerContext } from "./paths.ts";
import { readUserFile, type WritableFile } from "./registry.ts";
import { serverSpec, type ServerSpec } from "./server-probe.ts";

/** The name install writes; the recall rule (docs/contract.md §6.2) accepts both spellings. */
export const MCP_SERVER_NAME = "velesdb-memory";
export const MCP_SERVER_NAMES = [MCP_SERVER_NAME, "velesdb_memory"] as const;
/** Upstream's daemon (scripts/install-memory-daemon.sh, VelesDB 92b0086): the example in messages. */
export const UPSTREAM_DAEMON_URL = "https://127.0.0.1:18090/mcp";
/** ~/.claude.json grows with every project Claude Code has seen; anything past this is not a settings file. */
export const MAX_MCP_FILE_BYTES = 64 * 1024 * 1024;
const BOM = "\uFEFF";

/**
 * What install registers: the shared front (`front mcp --server command`, src/mcp/front.ts,
 * docs/shared-memory.md: one velesdb-memory per store, shared by every session), or the URL
 * of a running daemon.
 */
export type McpSource = { readonly kind: "stdio"; readonly command: string; readonly front: string | undefined } | { readonly kind: "url"; readonly url: string };

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
export function resolveMcpSource(env: NodeJS.ProcessEnv, url: string | undefined, front: string | undefined): { ok: true; source: McpSource } | { ok: false; problem: string } {
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

function parseHttpUrl(text: string): URL | undefined {
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
  return source.front === undefined ? `stdio ${shown(ctx, source.command)}, one session at a time on Windows` : `stdio ${shown(ctx, source.front)} mcp, shared by every session, running ${shown(ctx, source.command)}`;
}

/** safeUrl("https://u:p@h:1/mcp?token=x") → `"https://h:1/mcp"` (query and credentials dropped, quoted). */
function safeUrl(text: string): string {
  const url = parseHttpUrl(text);
  if (!url) return "(not an http(s) URL)";
  const dropped = url.search !== "" || url.username !== "" || url.password !== "" || url.hash !== "";
  return `${quoted(`${url.protocol}//${url.host}${url.pathname}`)}${dropped ? " (query or credentials not shown)" : ""}`;
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

export type McpRead =
  | { readonly kind: "absent"; readonly file: Extract<WritableFile, { kind: "absent" }>; readonly value: JsonObject }
  | { readonly kind: "present"; readonly file: Extract<WritableFile, { kind: "present" }>; readonly value: JsonObject }
  | { readonly kind: "refused"; readonly path: string; readonly problem: string };

/**
 * readMcpFile(path, format, tree, paths) → the file and its parsed value, or why it cannot be
 * used. Never throws. With `paths` (the servers tables read there), a JSON file's value holds
 * only what lies on them, every other value a stand-in (json-narrow.ts: a 41 MB ~/.claude.json).
 */
export function readMcpFile(filePath: string, format: McpFile["format"], tree: string, paths?: readonly (readonly string[])[]): McpRead {
  const file = readUserFile(filePath, tree, MAX_MCP_FILE_BYTES);
  if (file.kind === "refused") return file;
  if (file.kind === "absent") return { kind: "absent", file, value: {} };
  const narrowed = format === "json" && paths ? narrowJsonc(file.text, paths) : undefined;
  if (narrowed && !narrowed.ok) return { kind: "refused", path: filePath, problem: syntaxProblem(narrowed) };
  const parsed = parseText(narrowed ? narrowed.narrowed.text : file.text, format);
  return parsed.ok ? { kind: "present", file, value: parsed.value } : { kind: "refused", path: filePath, problem: parsed.problem };
}

/** parseText(text, format) → the top-level object, or why not (a position at most, never content). */
function parseText(text: string, format: McpFile["format"]): { ok: true; value: JsonObject } | { ok: false; problem: string } {
  const body = text.startsWith(BOM) ? text.slice(BOM.length) : text;
  // A deeply nested file overflows the parsers' recursion: a RangeError, caught here.
  try {
    if (format === "toml") return { ok: true, value: TOML.parse(body) as JsonObject };
    const parsed = parseJsonc(body);
    if (!parsed.ok) return { ok: false, problem: syntaxProblem(parsed) };
    const value: unknown = parsed.root ? getNodeValue(parsed.root) : {};
    if (!isJsonObject(value)) return { ok: false, problem: "is not a JSON object" };
    const duplicate = duplicateKey(body, parsed.root, ["mcpServers"]);
    if (duplicate) return { ok: false, problem: `has ${JSON.stringify(duplicate.key)} twice (again on line ${duplicate.line}); merge them by hand` };
    return { ok: true, value };
  } catch (error) {
    if (error instanceof RangeError) return { ok: false, problem: "is nested too deeply to read" };
    // The TOML parser's message quotes the file; only its line is safe to show.
    const line = (error as { line?: unknown }).line;
    return { ok: false, problem: `does not parse${typeof line === "number" ? ` (line ${line + 1})` : ""}` };
  }
}

const syntaxProblem = (error: { line: number; column: number; code: string }): string => `does not parse: line ${error.line}, column ${error.column} (${error.code})`;

/** The servers table at `keys`: absent, an object, or a value in the way (its key path). */
function serversAt(value: JsonObject, keys: readonly string[]): { kind: "none" } | { kind: "table"; table: JsonObject } | { kind: "blocked"; at: string } {
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
    isJsonObject(entry[key]) && Object.keys(entry[key]).length > 0 ? [`${key}: ${Object.keys(entry[key]).length} (values not shown)`] : [],
  );
  const tail = secrets.length > 0 ? `; ${secrets.join(", ")}` : "";
  if (entry.disabled === true || entry.enabled === false) return { usable: false, text: `is disabled${tail}` };
  const url = [entry.url, entry.httpUrl, entry.serverUrl].find((u) => typeof u === "string") as string | undefined;
  if (url !== undefined) {
    const parsed = parseHttpUrl(url);
    return parsed ? { usable: true, text: `HTTP ${safeUrl(url)}${tail}` } : { usable: false, text: `has a URL that is not http(s)${tail}` };
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
    return isExecutableFile(command) ? { usable: true, text: `stdio ${where} (an executable file)${tail}` } : { usable: false, text: `stdio ${where}, which is missing or not executable${tail}` };
  }
  if (command.includes("/") || command.includes("\\")) return { usable: true, text: `stdio ${where} (relative: the agent resolves it from its working directory)${tail}` };
  const found = resolveCompiler({ ...ctx.env, VELESDB_MEMORY_BIN: command });
  return found.ok ? { usable: true, text: `stdio ${where} (on PATH: ${shown(ctx, found.path)})${tail}` } : { usable: false, text: `stdio ${where}, which is not on PATH${tail}` };
}

// ---------------------------------------------------------------------------------------------
// check and doctor
// ---------------------------------------------------------------------------------------------

export interface McpReport {
  readonly lines: string[];
  readonly drifted: boolean;
  readonly repairs: string[];
  /** Each usable entry as the agent would start it, for the probe of check/doctor (server-report.ts). */
  readonly servers: ServerTarget[];
}

/** One configured server to start: where it was found ("in ~/.claude.json (local scope)") and what runs. */
export interface ServerTarget {
  readonly where: string;
  readonly spec: ServerSpec;
}

/** mcpInstallCommand(ctx, client) → the repair line's command. */
export const mcpInstallCommand = (client: InstallerClient): string =>
  `velesdb-hooks install --client ${client.name} --mcp (stdio velesdb-memory from PATH or VELESDB_MEMORY_BIN) or --mcp-url URL (a running daemon, e.g. ${UPSTREAM_DAEMON_URL})`;

/**
 * mcpReport(ctx, client, tree, hooksHere) → one line per place the agent reads servers from
 * that holds a velesdb-memory entry (or one line saying none does). With our hooks in place,
 * no usable server is drift: the guard would refuse every edit of an opted-in repository.
 */
export function mcpReport(ctx: InstallerContext, client: InstallerClient, tree: string, hooksHere: boolean): McpReport {
  const name = client.name;
  if (!client.mcp) return { lines: hooksHere && client.mcpUnchecked ? [`${name}: MCP server not checked: ${client.mcpUnchecked}`] : [], drifted: false, repairs: [], servers: [] };
  const lines: string[] = [];
  const servers: ServerTarget[] = [];
  const cache = new Map<string, McpRead>();
  let usable = false;
  let found = false;
  const places: string[] = [];
  const seen = new Set<string>();
  // A file that cannot be read is what to fix first: `install --mcp` refuses it for the same reason (issue 30).
  const unreadable: string[] = [];
  const readable: string[] = [];
  for (const spot of client.mcp.files) {
    const resolved = spot.path(ctx);
    if (!resolved.ok) {
      lines.push(`${name}: MCP servers cannot be checked (${spot.label}): ${resolved.problem}`);
      continue;
    }
    // The project's file and the user's are one when the agent runs in the home directory.
    const keys = spot.servers(ctx);
    const seenKey = JSON.stringify([resolved.path, ...keys]);
    if (seen.has(seenKey)) continue;
    seen.add(seenKey);
    // The project's .mcp.json sits under the cwd, a name the repository chooses: quoted when odd.
    const where = shown(ctx, resolved.path);
    const place = spot.label === path.basename(resolved.path) ? where : `${where} (${spot.label})`;
    places.push(place);
    const tables = client.mcp.files.filter((other) => sameFile(other.path(ctx), resolved.path)).map((other) => other.servers(ctx));
    const read = cache.get(resolved.path) ?? readMcpFile(resolved.path, spot.format, tree, tables);
    cache.set(resolved.path, read);
    if (read.kind === "refused") {
      lines.push(`${name}: MCP servers cannot be checked: ${where} ${read.problem}`);
      unreadable.push(`${where} (it ${read.problem})`);
      continue;
    }
    readable.push(place);
    const server = findServer(read.value, keys);
    if (!server) continue;
    found = true;
    const described = describeServer(ctx, server.entry);
    const approval = spot.needsApproval ? " (used once approved in a session)" : "";
    usable ||= described.usable;
    const foundIn = `${where}${spot.label === path.basename(resolved.path) ? "" : ` (${spot.label})`}`;
    lines.push(`${name}: MCP server ${server.name} ${described.usable ? "configured" : "UNUSABLE"} in ${foundIn}${approval}: ${described.text}`);
    // Agents start every server, a user-level one too, in the session's directory (where a
    // repository's velesdb-memory.toml is read): the probe starts it where check runs.
    const spec = described.usable ? serverSpec(server.entry, ctx.cwd) : undefined;
    if (spec) servers.push({ where: foundIn, spec });
  }
  const repairs: string[] = [];
  let drifted = false;
  if (!found) {
    const looked = unreadable.length > 0 ? `not found in the files that could be read (${readable.join(", ") || "none"})` : `missing (looked in ${places.join(", ")})`;
    lines.push(`${name}: MCP server velesdb-memory ${looked}${hooksHere ? ": the hooks ask for velesdb-memory tools the agent does not have, and an opted-in repository refuses every edit" : ""}`);
  }
  if (hooksHere && !usable) {
    drifted = true;
    if (unreadable.length > 0) repairs.push(`fix ${[...new Set(unreadable)].join(" and ")} or move it aside, then ${mcpInstallCommand(client)}`);
    else repairs.push(found ? `fix or remove the velesdb-memory MCP server of ${name}, then ${mcpInstallCommand(client)}` : mcpInstallCommand(client));
  }
  return { lines, drifted, repairs, servers };
}

// ---------------------------------------------------------------------------------------------
// install and uninstall
// ---------------------------------------------------------------------------------------------

export interface McpEdit {
  /** The text after the edit (equal to the input when nothing changes); null: the file goes. */
  readonly text: string | null;
  readonly parts: ReadonlyArray<readonly [past: string, future: string]>;
  /** What follows the file's name when nothing changes. */
  readonly unchanged: string;
  /** What the manifest remembers after the run; undefined: forget it. */
  readonly record: ManifestRecord | undefined;
}

export interface McpEditInput {
  readonly ctx: InstallerContext;
  readonly client: InstallerClient;
  readonly spec: McpSpec;
  readonly spot: McpFile;
  readonly filePath: string;
  /** The text to edit (the file's, or the registry's planned text when both share the file); "" when absent. */
  readonly text: string;
  /** Whether this run creates the file. */
  readonly creates: boolean;
  /** Whether the file may go when only `skeleton` is left (install created it). */
  readonly mode: "install" | "uninstall";
  readonly source: McpSource | undefined;
  readonly record: ManifestRecord | undefined;
  /** What a file the client creates starts with (for deletion on uninstall). */
  readonly skeleton?: JsonObject;
  /** The file is the MCP entry's alone (not the registry's too): uninstall may delete it once install created it and it is empty. */
  readonly mayDelete: boolean;
}

/**
 * planMcpEdit → the text edit for one client's MCP file. Install adds our entry under the
 * first spelling, keeps a user's entry (either spelling) as it is, updates an entry of ours in
 * place; uninstall removes an entry of ours that is still exactly what install wrote (then the
 * containers install added, and the file when install created it and nothing else is left).
 */
export function planMcpEdit(input: McpEditInput): { ok: true; edit: McpEdit } | { ok: false; problem: string } {
  // A JSON file is edited through its stand-in (json-narrow.ts), the edit then made on its own bytes.
  if (input.spot.format !== "json" || input.text.trim() === "") return planOnText(input);
  const tables = [input.spot.servers(input.ctx)];
  const narrowed = narrowJsonc(input.text, tables);
  if (!narrowed.ok) return { ok: false, problem: syntaxProblem(narrowed) };
  const planned = planOnText({ ...input, text: narrowed.narrowed.text });
  if (!planned.ok || planned.edit.text === null) return planned;
  const text = widen(input.text, narrowed.narrowed, planned.edit.text, tables);
  if (text === undefined) return { ok: false, problem: "cannot take a velesdb-memory MCP server without changing something else; add it by hand" };
  return { ok: true, edit: { ...planned.edit, text } };
}

const sameFile = (resolved: { ok: true; path: string } | { ok: false }, filePath: string): boolean => resolved.ok && resolved.path === filePath;

function planOnText(input: McpEditInput): { ok: true; edit: McpEdit } | { ok: false; problem: string } {
  const { ctx, client, spec, spot, filePath, mode, source, record } = input;
  // A BOM stays where it is; the edits see the text after it.
  const bom = input.text.startsWith(BOM) ? BOM : "";
  const text = input.text.slice(bom.length);
  const parsed = parseText(text, spot.format);
  if (!parsed.ok) return { ok: false, problem: parsed.problem };
  const keys = spot.servers(ctx);
  const servers = serversAt(parsed.value, keys);
  if (servers.kind === "blocked") return { ok: false, problem: `has a ${JSON.stringify(servers.at)} value that is not a table of servers` };
  const found = findServer(parsed.value, keys);
  const ours = found !== undefined && isRecorded(record, [...keys, found.name]) && isOurShape(spec, found.entry);
  const remember = (added: readonly (readonly string[])[]): ManifestRecord => ({ client: client.name, path: filePath, created: record?.created === true || input.creates, added, kind: "mcp" });
  const none: McpEdit = { text: input.text, parts: [], unchanged: "", record: undefined };

  if (mode === "uninstall") {
    if (!found || !record) return { ok: true, edit: { ...none, unchanged: ": no velesdb-memory MCP server of ours; nothing to remove" } };
    if (!ours) return { ok: true, edit: { ...none, unchanged: `: the ${found.name} MCP server changed since install (or was never ours); kept` } };
    let after = removeServer(text, spot.format, keys, found.name, found.entry, isRecorded(record, BLANK_LINE_KEY));
    if (after !== undefined && !removedOnly(after, spot.format, parsed.value, keys, found.name)) after = undefined;
    if (after === undefined) return { ok: true, edit: { ...none, unchanged: `: the ${found.name} MCP server was rewritten since install; kept, remove it by hand` } };
    for (const container of [...record.added].filter((key) => key.length < keys.length + 1).sort((a, b) => b.length - a.length)) {
      if (spot.format !== "json") break;
      const value = parseText(after, "json");
      const table = value.ok ? serversAt(value.value, container) : undefined;
      if (table?.kind === "table" && Object.keys(table.table).length === 0) after = removeAt(after, [...container]);
    }
    const left = parseText(after, spot.format);
    const gone = input.mayDelete && record.created && left.ok && sameJson(left.value, input.skeleton ?? {});
    return { ok: true, edit: { text: gone ? null : bom + after, parts: [[`removed the ${found.name} MCP server`, `remove the ${found.name} MCP server`], ...(gone ? [["deleted the file (install had created it and it holds nothing else)", "delete the file (install created it and it would hold nothing else)"] as const] : [])], unchanged: "", record: undefined } };
  }

  if (!source) return { ok: true, edit: none };
  const wanted = source.kind === "url" ? spec.url(source.url) : source.front === undefined ? spec.stdio(source.command, []) : spec.stdio(source.front, frontArgs(source.command));
  const what = describeSource(ctx, source);
  if (found && !ours) return { ok: true, edit: { ...none, unchanged: `: MCP server ${found.name} configured by you; kept as it is` } };
  if (found && ours) {
    if (sameJson(found.entry, wanted)) return { ok: true, edit: { ...none, unchanged: `: the velesdb-memory MCP server is already in step (${what}); unchanged`, record: remember(record?.added ?? []) } };
    const removed = removeServer(text, spot.format, keys, found.name, found.entry, isRecorded(record, BLANK_LINE_KEY));
    if (removed === undefined) return { ok: true, edit: { ...none, unchanged: `: the ${found.name} MCP server was rewritten since install; kept as it is` } };
    const replaced = spot.format === "json" ? replaceAt(text, [...keys, found.name], wanted, styleOf(text)) : appendToml(removed, keys, MCP_SERVER_NAME, wanted);
    const checked = verify(replaced, spot.format, parsed.value, keys, found.name, wanted);
    if (!checked.ok) return checked;
    return { ok: true, edit: { text: bom + replaced, parts: [[`updated the ${found.name} MCP server (${what})`, `update the ${found.name} MCP server (${what})`]], unchanged: "", record: remember(record?.added ?? [[...keys, found.name]]) } };
  }
  const added: string[][] = [];
  let after: string;
  if (spot.format === "toml") {
    after = appendToml(text, keys, MCP_SERVER_NAME, wanted);
    if (addsBlankLine(text)) added.push([...BLANK_LINE_KEY]);
  }
  else {
    // The deepest container that exists gets the rest of the path as one new property.
    const blank = text.trim() === "";
    const style = styleOf(text);
    let start = blank ? JSON.stringify(input.skeleton ?? {}, null, style.indent) : text;
    const base = blank ? {} : parsed.value;
    let depth = 0;
    while (depth < keys.length && serversAt(base, keys.slice(0, depth + 1)).kind === "table") depth++;
    let value: unknown = { [MCP_SERVER_NAME]: wanted };
    for (let i = keys.length - 1; i > depth; i--) value = { [keys[i]!]: value };
    for (let i = depth; i < keys.length; i++) added.push(keys.slice(0, i + 1));
    start = depth === keys.length ? addProperty(start, [...keys], MCP_SERVER_NAME, wanted, style) : addProperty(start, [...keys.slice(0, depth)], keys[depth]!, value, style);
    after = start + (blank ? style.eol : "");
  }
  added.push([...keys, MCP_SERVER_NAME]);
  const checked = verify(after, spot.format, parsed.value, keys, undefined, wanted);
  if (!checked.ok) return checked;
  return { ok: true, edit: { text: bom + after, parts: [[`added the velesdb-memory MCP server (${what})`, `add the velesdb-memory MCP server (${what})`]], unchanged: "", record: remember(mergeKeys(record?.added ?? [], added)) } };
}

const mergeKeys = (a: readonly (readonly string[])[], b: readonly (readonly string[])[]): string[][] => {
  const all = [...a, ...b].map((k) => [...k]);
  return all.filter((k, i) => all.findIndex((o) => o.join("\0") === k.join("\0")) === i);
};

const isRecorded = (record: ManifestRecord | undefined, key: readonly string[]): boolean =>
  record?.added?.some((k) => k.length === key.length && k.every((part, i) => part === key[i])) === true;

/** isOurShape(spec, entry) → the entry is exactly what install writes, for its own command or URL. */
function isOurShape(spec: McpSpec, entry: unknown): boolean {
  if (!isJsonObject(entry)) return false;
  const url = [entry.url, entry.httpUrl, entry.serverUrl].find((u) => typeof u === "string") as string | undefined;
  if (url !== undefined && sameJson(entry, spec.url(url))) return true;
  const command = programOf(entry);
  if (command === undefined) return false;
  // The direct entry of an earlier install (upgraded to the front), or the front's own.
  if (sameJson(entry, spec.stdio(command, []))) return true;
  const server = frontServerOf(entry);
  return server !== undefined && sameJson(entry, spec.stdio(command, frontArgs(server)));
}

/** frontServerOf(entry) → X when the entry's arguments are exactly `mcp --server X` (the front install writes). */
function frontServerOf(entry: JsonObject): string | undefined {
  const args = Array.isArray(entry.command) ? entry.command.slice(1) : entry.args;
  if (!Array.isArray(args) || args.length !== 3 || args[0] !== "mcp" || args[1] !== "--server") return undefined;
  return typeof args[2] === "string" && args[2] !== "" ? args[2] : undefined;
}

/**
 * programOf(entry) → the program a stdio entry runs: `command` as a string (every agent but
 * OpenCode), or the first word of OpenCode's `command` array (its McpLocalConfig: "Command and
 * arguments", measured on opencode-ai 1.18.33).
 */
function programOf(entry: JsonObject): string | undefined {
  const command = Array.isArray(entry.command) ? entry.command[0] : entry.command;
  return typeof command === "string" && command !== "" ? command : undefined;
}

const styleOf = (text: string): TextStyle => (text.trim() === "" ? DEFAULT_STYLE : detectStyle(text));

/**
 * verify(after, …) → ok when the new text parses and holds exactly the old value with our
 * server as wanted (and, when replacing, nothing else changed): an edit that cannot be shown
 * to be that is refused before anything is written.
 */
function verify(after: string, format: McpFile["format"], before: JsonObject, keys: readonly string[], replacing: string | undefined, wanted: JsonObject): { ok: true } | { ok: false; problem: string } {
  const parsed = parseText(after, format);
  const expected = structuredClone(before) as JsonObject;
  let table: JsonObject = expected;
  for (const key of keys) {
    if (!isJsonObject(table[key])) table[key] = {};
    table = table[key] as JsonObject;
  }
  if (replacing !== undefined) delete table[replacing];
  table[MCP_SERVER_NAME] = wanted;
  if (parsed.ok && sameJson(parsed.value, expected)) return { ok: true };
  return { ok: false, problem: `cannot take a velesdb-memory MCP server without changing something else (${parsed.ok ? "its other values would change" : parsed.problem}); add it by hand` };
}

/** removedOnly(after, …) → the text now holds the old value without our server (an emptied table may go with it). */
function removedOnly(after: string, format: McpFile["format"], before: JsonObject, keys: readonly string[], name: string): boolean {
  const parsed = parseText(after, format);
  if (!parsed.ok) return false;
  const expected = structuredClone(before) as JsonObject;
  let parent: JsonObject = expected;
  for (const key of keys.slice(0, -1)) parent = parent[key] as JsonObject;
  const last = keys[keys.length - 1]!;
  const table = parent[last] as JsonObject;
  delete table[name];
  if (sameJson(parsed.value, expected)) return true;
  if (Object.keys(table).length > 0) return false;
  delete parent[last];
  return sameJson(parsed.value, expected);
}

// TOML (Codex's config.toml): one table appended, `[mcp_servers.velesdb-memory]` with one
// string per key — the lines `codex mcp add` writes — and on uninstall exactly those lines out.

/** tomlBlock(keys, name, entry, eol) → the table's lines, each ending with eol. */
function tomlBlock(keys: readonly string[], name: string, entry: JsonObject, eol: string): string {
  const header = `[${[...keys, name].map(tomlKey).join(".")}]`;
  const lines = Object.entries(entry).map(([key, value]) => `${tomlKey(key)} = ${tomlValue(value)}`);
  return [header, ...lines].map((line) => line + eol).join("");
}

const tomlKey = (key: string): string => (/^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key));
// JSON strings are TOML basic strings (the parse check in verify() catches the rare exception).
const tomlValue = (value: unknown): string => (Array.isArray(value) ? `[${value.map(tomlValue).join(", ")}]` : JSON.stringify(value));

function appendToml(text: string, keys: readonly string[], name: string, entry: JsonObject): string {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const separator = !addsBlankLine(text) ? "" : text.endsWith(eol) ? eol : eol + eol;
  return text + separator + tomlBlock(keys, name, entry, eol);
}

/** A blank line goes in front of the table unless the file is empty or already ends with one. */
const addsBlankLine = (text: string): boolean => text !== "" && !/(\r?\n){2}$/.test(text);

/**
 * The manifest's note that install put a blank line in front of the TOML table: uninstall then
 * takes it out again, and only then (the manifest holds key paths, so the note is one).
 */
const BLANK_LINE_KEY = ["(blank line before the table)"] as const;

/** removeServer → the text without our entry; undefined when its bytes are no longer what we write (TOML). */
function removeServer(text: string, format: McpFile["format"], keys: readonly string[], name: string, entry: unknown, blankLineAdded: boolean): string | undefined {
  if (format === "json") return removeAt(text, [...keys, name]);
  if (!isJsonObject(entry)) return undefined;
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const block = tomlBlock(keys, name, entry, eol);
  const at = text.indexOf(block);
  if (at < 0 || text.indexOf(block, at + 1) >= 0 || (at > 0 && !text.slice(0, at).endsWith(eol))) return undefined;
  // The blank line install put in front of the table goes with it.
  const start = blankLineAdded && text.slice(0, at).endsWith(eol + eol) ? at - eol.length : at;
  return text.slice(0, start) + text.slice(at + block.length);
}
