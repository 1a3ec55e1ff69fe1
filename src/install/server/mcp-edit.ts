// install's and uninstall's edit of one client's MCP file (docs/mcp-server.md): our entry added
// under the first spelling, a user's entry kept as it is, an entry of ours updated in place or,
// on uninstall, taken out only while it is still exactly what install wrote. The edit is a
// minimal text edit (jsonc-edit.ts; for Codex's TOML one appended table, as `codex mcp add`
// writes it), checked by parsing the result before anything is written.
import type { InstallerClient, McpFile, McpSpec } from "../client.ts";
import { isJsonObject, sameJson, type JsonObject } from "../entries/entries.ts";
import { addProperty, DEFAULT_STYLE, detectStyle, removeAt, replaceAt, type TextStyle } from "../files/jsonc-edit.ts";
import type { ManifestRecord } from "../steps/manifest.ts";
import { narrowJsonc, widen } from "../files/json-narrow.ts";
import { describeSource, frontArgs, frontServerOf, MCP_SERVER_NAME, programOf, type McpSource } from "./mcp-server.ts";
import { BOM, findServer, parseText, serversAt, syntaxProblem } from "./mcp-read.ts";
import type { InstallerContext } from "../paths.ts";

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
export function planMcpEdit(input: McpEditInput): Planned {
  // A JSON file is edited through its stand-in (json-narrow.ts), the edit then made on its own bytes.
  if (input.spot.format !== "json" || input.text.trim() === "") return planOnText(input);
  const tables = [input.spot.servers(input.ctx)];
  const narrowed = narrowJsonc(input.text, tables);
  if (!narrowed.ok) return { ok: false, problem: syntaxProblem(narrowed) };
  const planned = planOnText({ ...input, text: narrowed.narrowed.text });
  if (!planned.ok || planned.edit.text === null) return planned;
  const text = widen(input.text, narrowed.narrowed, planned.edit.text, tables);
  if (text === undefined)
    return {
      ok: false,
      problem: "cannot take a velesdb-memory MCP server without changing something else; add it by hand",
    };
  return { ok: true, edit: { ...planned.edit, text } };
}

type Planned = { ok: true; edit: McpEdit } | { ok: false; problem: string };

/** The MCP file as planOnText found it, what each of its three plans starts from. */
interface ReadMcpFile {
  readonly input: McpEditInput;
  /** A BOM stays where it is; the edits see the text after it. */
  readonly bom: string;
  readonly text: string;
  readonly value: JsonObject;
  /** The path to the servers table (`mcpServers`, `mcp_servers`, …). */
  readonly keys: readonly string[];
  readonly found: ReturnType<typeof findServer>;
  /** The entry found is the one install wrote and recorded. */
  readonly ours: boolean;
  /** The edit that changes nothing. */
  readonly none: McpEdit;
}

function planOnText(input: McpEditInput): Planned {
  const { ctx, spec, spot, record } = input;
  const bom = input.text.startsWith(BOM) ? BOM : "";
  const text = input.text.slice(bom.length);
  const parsed = parseText(text, spot.format);
  if (!parsed.ok) return { ok: false, problem: parsed.problem };
  const keys = spot.servers(ctx);
  const servers = serversAt(parsed.value, keys);
  if (servers.kind === "blocked")
    return { ok: false, problem: `has a ${JSON.stringify(servers.at)} value that is not a table of servers` };
  const found = findServer(parsed.value, keys);
  const ours = found !== undefined && isRecorded(record, [...keys, found.name]) && isOurShape(spec, found.entry);
  const none: McpEdit = { text: input.text, parts: [], unchanged: "", record: undefined };
  const file: ReadMcpFile = { input, bom, text, value: parsed.value, keys, found, ours, none };
  if (input.mode === "uninstall") return planRemoval(file);
  const source = input.source;
  if (!source) return { ok: true, edit: none };
  const wanted =
    source.kind === "url"
      ? spec.url(source.url)
      : source.front === undefined
        ? spec.stdio(source.command, [])
        : spec.stdio(source.front, frontArgs(source.command));
  const what = describeSource(ctx, source);
  if (found && !ours)
    return { ok: true, edit: { ...none, unchanged: `: MCP server ${found.name} configured by you; kept as it is` } };
  return found ? planUpdate(file, found, wanted, what) : planAddition(file, wanted, what);
}

/** rememberWith(input, added) → the manifest's record of this MCP file after the run. */
const rememberWith = (input: McpEditInput, added: readonly (readonly string[])[]): ManifestRecord => ({
  client: input.client.name,
  path: input.filePath,
  created: input.record?.created === true || input.creates,
  added,
  kind: "mcp",
});

/** Uninstall: our entry out while it is still what install wrote, then the containers install added, then the file it created. */
function planRemoval(file: ReadMcpFile): Planned {
  const { input, bom, text, keys, found, ours, none } = file;
  const { spot, record } = input;
  if (!found || !record)
    return { ok: true, edit: { ...none, unchanged: ": no velesdb-memory MCP server of ours; nothing to remove" } };
  if (!ours)
    return {
      ok: true,
      edit: { ...none, unchanged: `: the ${found.name} MCP server changed since install (or was never ours); kept` },
    };
  let after = removeServer(text, spot.format, keys, found.name, found.entry, isRecorded(record, BLANK_LINE_KEY));
  if (after !== undefined && !removedOnly(after, spot.format, file.value, keys, found.name)) after = undefined;
  if (after === undefined)
    return {
      ok: true,
      edit: {
        ...none,
        unchanged: `: the ${found.name} MCP server was rewritten since install; kept, remove it by hand`,
      },
    };
  for (const container of [...record.added]
    .filter((key) => key.length < keys.length + 1)
    .sort((a, b) => b.length - a.length)) {
    if (spot.format !== "json") break;
    const value = parseText(after, "json");
    const table = value.ok ? serversAt(value.value, container) : undefined;
    if (table?.kind === "table" && Object.keys(table.table).length === 0) after = removeAt(after, [...container]);
  }
  const left = parseText(after, spot.format);
  const gone = input.mayDelete && record.created && left.ok && sameJson(left.value, input.skeleton ?? {});
  return {
    ok: true,
    edit: {
      text: gone ? null : bom + after,
      parts: [
        [`removed the ${found.name} MCP server`, `remove the ${found.name} MCP server`],
        ...(gone
          ? [
              [
                "deleted the file (install had created it and it holds nothing else)",
                "delete the file (install created it and it would hold nothing else)",
              ] as const,
            ]
          : []),
      ],
      unchanged: "",
      record: undefined,
    },
  };
}

/** Install over an entry of ours: unchanged when in step, else replaced where it stands (Codex's TOML: its table rewritten at the end). */
function planUpdate(
  file: ReadMcpFile,
  found: NonNullable<ReadMcpFile["found"]>,
  wanted: JsonObject,
  what: string,
): Planned {
  const { input, bom, text, keys, none } = file;
  const { spot, record } = input;
  if (sameJson(found.entry, wanted))
    return {
      ok: true,
      edit: {
        ...none,
        unchanged: `: the velesdb-memory MCP server is already in step (${what}); unchanged`,
        record: rememberWith(input, record?.added ?? []),
      },
    };
  const removed = removeServer(text, spot.format, keys, found.name, found.entry, isRecorded(record, BLANK_LINE_KEY));
  if (removed === undefined)
    return {
      ok: true,
      edit: { ...none, unchanged: `: the ${found.name} MCP server was rewritten since install; kept as it is` },
    };
  const replaced =
    spot.format === "json"
      ? replaceAt(text, [...keys, found.name], wanted, styleOf(text))
      : appendToml(removed, keys, MCP_SERVER_NAME, wanted);
  const checked = verify(replaced, spot.format, file.value, keys, found.name, wanted);
  if (!checked.ok) return checked;
  return {
    ok: true,
    edit: {
      text: bom + replaced,
      parts: [[`updated the ${found.name} MCP server (${what})`, `update the ${found.name} MCP server (${what})`]],
      unchanged: "",
      record: rememberWith(input, record?.added ?? [[...keys, found.name]]),
    },
  };
}

/** Install where no entry is: ours added under the first spelling, with the containers it needs (recorded, for uninstall). */
function planAddition(file: ReadMcpFile, wanted: JsonObject, what: string): Planned {
  const { input, bom, text, keys } = file;
  const { spot, record } = input;
  const added: string[][] = [];
  let after: string;
  if (spot.format === "toml") {
    after = appendToml(text, keys, MCP_SERVER_NAME, wanted);
    if (addsBlankLine(text)) added.push([...BLANK_LINE_KEY]);
  } else {
    // The deepest container that exists gets the rest of the path as one new property.
    const blank = text.trim() === "";
    const style = styleOf(text);
    const start = blank ? JSON.stringify(input.skeleton ?? {}, null, style.indent) : text;
    const base = blank ? {} : file.value;
    let depth = 0;
    while (depth < keys.length && serversAt(base, keys.slice(0, depth + 1)).kind === "table") depth++;
    let value: unknown = { [MCP_SERVER_NAME]: wanted };
    for (let i = keys.length - 1; i > depth; i--) value = { [keys[i]!]: value };
    for (let i = depth; i < keys.length; i++) added.push(keys.slice(0, i + 1));
    const edited =
      depth === keys.length
        ? addProperty(start, [...keys], MCP_SERVER_NAME, wanted, style)
        : addProperty(start, [...keys.slice(0, depth)], keys[depth]!, value, style);
    after = edited + (blank ? style.eol : "");
  }
  added.push([...keys, MCP_SERVER_NAME]);
  const checked = verify(after, spot.format, file.value, keys, undefined, wanted);
  if (!checked.ok) return checked;
  return {
    ok: true,
    edit: {
      text: bom + after,
      parts: [[`added the velesdb-memory MCP server (${what})`, `add the velesdb-memory MCP server (${what})`]],
      unchanged: "",
      record: rememberWith(input, mergeKeys(record?.added ?? [], added)),
    },
  };
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

const styleOf = (text: string): TextStyle => (text.trim() === "" ? DEFAULT_STYLE : detectStyle(text));

/**
 * verify(after, …) → ok when the new text parses and holds exactly the old value with our
 * server as wanted (and, when replacing, nothing else changed): an edit that cannot be shown
 * to be that is refused before anything is written.
 */
function verify(
  after: string,
  format: McpFile["format"],
  before: JsonObject,
  keys: readonly string[],
  replacing: string | undefined,
  wanted: JsonObject,
): { ok: true } | { ok: false; problem: string } {
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
  return {
    ok: false,
    problem: `cannot take a velesdb-memory MCP server without changing something else (${parsed.ok ? "its other values would change" : parsed.problem}); add it by hand`,
  };
}

/** removedOnly(after, …) → the text now holds the old value without our server (an emptied table may go with it). */
function removedOnly(
  after: string,
  format: McpFile["format"],
  before: JsonObject,
  keys: readonly string[],
  name: string,
): boolean {
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
const tomlValue = (value: unknown): string =>
  Array.isArray(value) ? `[${value.map(tomlValue).join(", ")}]` : JSON.stringify(value);

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
function removeServer(
  text: string,
  format: McpFile["format"],
  keys: readonly string[],
  name: string,
  entry: unknown,
  blankLineAdded: boolean,
): string | undefined {
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
