// The installer's memory of what it wrote (docs/decisions.md#installer): one small file in its
// own directory, `<our tree>/installed.json`, listing every user file install put something of
// ours into — registries at any path (a dsh `--config` file included) and marked sections —
// with whether install created the file and which containers (`hooks`, `hooks.<event>`) it
// added. Without it, `uninstall` forgot a custom dsh file and removed the binary its entries
// still ran, and it could not tell a user's own empty `"hooks": {}` from one it had added.
//
// MCP server entries install added (`install --mcp`) are remembered in a list of their own,
// `mcp`, with the keys of what was added (["mcpServers"], ["mcpServers","velesdb-memory"]): a
// binary that predates them ignores that list and never takes such a file for a registry.
//
// It holds paths and key names only, never content. A manifest that cannot be read is
// reported and treated as remembering nothing, and then the binary is kept (uninstall cannot
// tell who still runs it).
import * as path from "node:path";
import { isJsonObject } from "../entries/entries.ts";
import { readBoundedFile } from "../../core/bounded-read.ts";
import type { InstallRecord } from "./plan-entries.ts";
import { MAX_READ_BYTES } from "../files/safe-read.ts";

export const MANIFEST_NAME = "installed.json";

export interface ManifestRecord extends InstallRecord {
  readonly client: string;
  /** "mcp": a file holding an MCP server entry of ours; absent: a registry or a section. */
  readonly kind?: "mcp";
  /** Absolute path of the file, as the client reads it (a symlink's name, not its target). */
  readonly path: string;
  readonly added: readonly (readonly string[])[];
}

export type Manifest =
  | {
      readonly ok: true;
      readonly path: string;
      readonly records: readonly ManifestRecord[];
      readonly text: string | undefined;
    }
  | { readonly ok: false; readonly path: string; readonly problem: string };

/** manifestPath(tree) → <our tree>/installed.json. */
export const manifestPath = (tree: string): string => path.join(tree, MANIFEST_NAME);

/** readManifest(tree) → the records, none when the file is absent, or why it cannot be used. Never throws. */
export function readManifest(tree: string): Manifest {
  const file = manifestPath(tree);
  const problem = (text: string): Manifest => ({ ok: false, path: file, problem: text });
  const read = readBoundedFile(file, MAX_READ_BYTES, { followLink: false });
  if (!read.ok)
    return read.code === "ENOENT" ? { ok: true, path: file, records: [], text: undefined } : problem(read.problem);
  const text = read.bytes.toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return problem("is not valid JSON");
  }
  const files = isJsonObject(value) && value.version === 1 && Array.isArray(value.files) ? value.files : undefined;
  if (!files) return problem("is not a velesdb-hooks manifest (version 1)");
  const mcp = isJsonObject(value) && Array.isArray(value.mcp) ? value.mcp : [];
  const records: ManifestRecord[] = [];
  for (const [items, kind] of [
    [files, undefined],
    [mcp, "mcp"],
  ] as const) {
    for (const item of items) {
      if (
        !isJsonObject(item) ||
        typeof item.client !== "string" ||
        typeof item.path !== "string" ||
        !path.isAbsolute(item.path)
      )
        continue;
      const added = Array.isArray(item.added)
        ? item.added.filter((key): key is string[] => Array.isArray(key) && key.every((k) => typeof k === "string"))
        : [];
      records.push({
        client: item.client,
        path: item.path,
        created: item.created === true,
        added,
        ...(kind ? { kind } : {}),
      });
    }
  }
  return { ok: true, path: file, records, text };
}

/** manifestText(records) → the file's bytes, or undefined when nothing is remembered (the file goes). */
export function manifestText(records: readonly ManifestRecord[]): string | undefined {
  if (records.length === 0) return undefined;
  const row = (r: ManifestRecord) => ({ client: r.client, path: r.path, created: r.created, added: r.added });
  const files = records.filter((r) => r.kind === undefined).map(row);
  const mcp = records.filter((r) => r.kind === "mcp").map(row);
  return `${JSON.stringify(mcp.length > 0 ? { version: 1, files, mcp } : { version: 1, files }, null, 2)}\n`;
}

/** recordFor(manifest, client, path, kind) → what install remembered about that file, if anything. */
export function recordFor(
  manifest: Manifest,
  client: string,
  filePath: string,
  kind?: "mcp",
): ManifestRecord | undefined {
  if (!manifest.ok) return undefined;
  return manifest.records.find(sameRecord(client, filePath, kind));
}

const sameRecord =
  (client: string, filePath: string, kind: "mcp" | undefined) =>
  (r: ManifestRecord): boolean =>
    r.client === client && r.kind === kind && path.resolve(r.path) === path.resolve(filePath);

/** remember(records, record) → the records with this file's entry merged in (created stays true once true; added keys unite). */
export function remember(records: readonly ManifestRecord[], record: ManifestRecord): ManifestRecord[] {
  const same = sameRecord(record.client, record.path, record.kind);
  const old = records.find(same);
  if (!old) return [...records, record];
  const added = [...old.added];
  for (const key of record.added) if (!added.some((k) => k.join("\0") === key.join("\0"))) added.push(key);
  return records.map((r) => (same(r) ? { ...old, created: old.created || record.created, added } : r));
}

/** forget(records, client, path, kind) → the records without that file. */
export function forget(
  records: readonly ManifestRecord[],
  client: string,
  filePath: string,
  kind?: "mcp",
): ManifestRecord[] {
  const same = sameRecord(client, filePath, kind);
  return records.filter((r) => !same(r));
}
