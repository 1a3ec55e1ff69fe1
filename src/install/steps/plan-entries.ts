// Planning a registry's edit in memory, from its bytes alone (no disk: a plan is a pure function
// of the file's text, the client's rows, the binary path, the platform and install's record).
// Install keeps an entry that is already exactly right (a second install changes no byte),
// replaces a stale one where it stands (hosts run entries in order: a stale entry moved to the
// end would run after the user's), removes the other entries of ours and appends what is
// missing; uninstall removes every entry of ours and prunes only the containers install recorded
// as its own. The edit is made on the text (jsonc-edit.ts), so the user's comments, key order
// and indentation stay as they were.
import { getNodeValue } from "jsonc-parser";
import { entryFor, type Registration, type RegistrySpec } from "../client.ts";
import { isJsonObject, sameJson, type JsonObject, type OwnedEntry } from "../entries/entries.ts";
import {
  addProperty,
  appendToArray,
  DEFAULT_STYLE,
  detectStyle,
  insertIntoArray,
  removeAt,
  replaceAt,
  type TextStyle,
} from "../files/jsonc-edit.ts";
import { parseJsonc } from "../files/jsonc-parse.ts";
import { judgeRegistry } from "../entries/owned-entries.ts";
import { BOM, parseRegistryText } from "../entries/registry-file.ts";

export interface RegistryPlan {
  /** Entries of ours taken out (legacy, stale, duplicated, misplaced — or all of them on uninstall); replaced ones included. */
  readonly removals: readonly OwnedEntry[];
  /** Rows (re)written, in place of a stale entry or appended. */
  readonly additions: readonly Registration[];
  /** The registry text after the change; equal to the input when nothing changes. */
  readonly text: string;
  /** Uninstall only: the file was created by install and now holds nothing else, so it goes. */
  readonly deleteFile: boolean;
  /** Containers this edit created (`["hooks"]`, `["hooks","Stop"]`): install's record, so uninstall removes no more. */
  readonly added: readonly (readonly string[])[];
}

export type PlanResult =
  | { readonly ok: true; readonly plan: RegistryPlan }
  | { readonly ok: false; readonly problem: string };

/**
 * What install recorded about a registry (the manifest): whether it created the file, and the
 * containers it added. `added: null` means unknown (written before the manifest existed), and
 * uninstall then prunes every container its removals emptied.
 */
export interface InstallRecord {
  readonly created: boolean;
  readonly added: readonly (readonly string[])[] | null;
}

/** One text edit at a place of the original file; applied last place first, so earlier paths stay valid. */
type Edit =
  | { readonly kind: "remove"; readonly entry: OwnedEntry }
  /** The element at [hooks, event, group]: our handler (flat) or our group (grouped, alone in it). */
  | { readonly kind: "replace"; readonly entry: OwnedEntry; readonly value: JsonObject }
  /** A new group right after the shared group our stale handler leaves. */
  | { readonly kind: "insert after"; readonly entry: OwnedEntry; readonly value: JsonObject };

/** What planEntries plans from: the registry's bytes and the entries wanted there. */
export interface EntriesWanted {
  /** The registry's bytes as read (a BOM included), or null when the file does not exist yet. */
  readonly text: string | null;
  /** The client's registry: its rows, layout, handler shape and skeleton. */
  readonly registry: RegistrySpec;
  /** The installed binary every entry of ours runs. */
  readonly binaryPath: string;
  readonly platform: NodeJS.Platform;
  readonly mode: "install" | "uninstall";
  /** What install recorded about this file (the manifest), when it did. */
  readonly record?: InstallRecord;
}

/**
 * planEntries({ text, registry, binaryPath, platform, mode, record }) → the edit, computed
 * entirely in memory from the bytes (no file is read), or why the bytes cannot be merged. A file
 * install created that holds nothing else is deleted on uninstall.
 */
export function planEntries(wanted: EntriesWanted): PlanResult {
  const { registry, binaryPath, platform, mode, record } = wanted;
  let hooks: unknown;
  if (wanted.text !== null) {
    const parsed = parseRegistryText(wanted.text, registry.skeleton);
    if (!parsed.ok) return parsed;
    hooks = parsed.hooks;
  }
  const verdict = judgeRegistry(hooks, registry, binaryPath, platform);
  const keep = new Set(verdict.rows.filter((r) => r.state === "in step").map((r) => r.row.wireEvent));
  const additions = mode === "uninstall" ? [] : registry.rows.filter((row) => !keep.has(row.wireEvent));
  for (const row of additions) {
    const existing = isJsonObject(hooks) ? hooks[row.wireEvent] : undefined;
    if (existing !== undefined && !Array.isArray(existing)) {
      return { ok: false, problem: `has a "hooks.${row.wireEvent}" value that is not a list` };
    }
  }
  const edits: Edit[] = [];
  const appended: Registration[] = [];
  const claimed = new Set<OwnedEntry>();
  for (const row of additions) {
    const spot = verdict.owned.find((entry) => entry.event === row.wireEvent);
    const value = entryFor(registry, row, binaryPath, platform);
    if (!spot) appended.push(row);
    else if (registry.layout === "flat" || spot.groupSize === 1) edits.push({ kind: "replace", entry: spot, value });
    else edits.push({ kind: "remove", entry: spot }, { kind: "insert after", entry: spot, value: value });
    if (spot) claimed.add(spot);
  }
  const removals = mode === "uninstall" ? verdict.owned : verdict.owned.filter((entry) => !keep.has(entry.event));
  for (const entry of removals) if (!claimed.has(entry)) edits.push({ kind: "remove", entry });

  const original = wanted.text ?? "";
  const bom = original.startsWith(BOM) ? BOM : "";
  const body = original.slice(bom.length);
  const blank = body.trim() === "";
  const style: TextStyle = blank ? DEFAULT_STYLE : detectStyle(body);
  // First record of this file: containers only entries of ours (or the bash hooks') keep alive
  // were put there by an installer of ours, so uninstall may remove them again.
  const added: string[][] = mode === "install" && !record ? emptiedBy(body, verdict.owned, registry.layout, style) : [];
  if (edits.length === 0 && appended.length === 0)
    return { ok: true, plan: { removals: [], additions: [], text: original, deleteFile: false, added } };

  // A new file starts with the client's skeleton (`{}` for most).
  let text = blank ? JSON.stringify(registry.skeleton ?? {}, null, style.indent) : body;
  const owns = (container: readonly string[]): boolean =>
    mode === "install" || !record || record.added === null || record.added.some((added) => sameJson(added, container));
  const prune = {
    event: (event: string) => !appended.some((row) => row.wireEvent === event) && owns(["hooks", event]),
    hooks: () => appended.length === 0 && owns(["hooks"]),
  };
  text = applyEdits(text, edits, registry.layout, style, prune);
  for (const row of appended) {
    const before = hooksValue(text);
    if (before === undefined) added.push(["hooks"]);
    if (before?.[row.wireEvent] === undefined) added.push(["hooks", row.wireEvent]);
    text = addEntry(text, row, entryFor(registry, row, binaryPath, platform), style);
  }
  if (blank) text += style.eol;
  const deleteFile =
    mode === "uninstall" && record?.created === true && sameJson(parsedValue(text), registry.skeleton ?? {});
  return { ok: true, plan: { removals, additions, text: deleteFile ? "" : bom + text, deleteFile, added } };
}

/**
 * applyEdits: last place first (by event key order, then index), so the paths of the places
 * before stay valid; at one index a removal goes before an insertion after the group in front.
 * A handler alone in its group takes the group with it (in the flat layout every handler is
 * its own element); an event left without elements loses its key, and `hooks` left empty
 * loses its key, when `prune` says that container is ours to remove.
 */
function applyEdits(
  text: string,
  edits: readonly Edit[],
  layout: RegistrySpec["layout"],
  style: TextStyle,
  prune: { event(event: string): boolean; hooks(): boolean },
): string {
  let current = text;
  const keys = Object.keys(hooksValue(current) ?? {});
  const place = (edit: Edit): number => edit.entry.group * 2 + (edit.kind === "insert after" ? 1 : 0);
  const ordered = [...edits].sort(
    (a, b) =>
      keys.indexOf(b.entry.event) - keys.indexOf(a.entry.event) ||
      place(b) - place(a) ||
      b.entry.handler - a.entry.handler,
  );
  for (const edit of ordered) {
    const { entry } = edit;
    if (edit.kind === "replace") {
      current = replaceAt(current, ["hooks", entry.event, entry.group], edit.value, style);
      continue;
    }
    if (edit.kind === "insert after") {
      current = insertIntoArray(current, ["hooks", entry.event], entry.group + 1, edit.value, style);
      continue;
    }
    const hooks = hooksValue(current) ?? {};
    const groups = hooks[entry.event] as unknown[];
    const handlers = layout === "flat" ? [entry.value] : ((groups[entry.group] as JsonObject).hooks as unknown[]);
    if (handlers.length > 1) {
      current = removeAt(current, ["hooks", entry.event, entry.group, "hooks", entry.handler]);
    } else if (groups.length > 1 || !prune.event(entry.event)) {
      current = removeAt(current, ["hooks", entry.event, entry.group]);
    } else if (Object.keys(hooks).length > 1 || !prune.hooks()) {
      current = removeAt(current, ["hooks", entry.event]);
    } else {
      current = removeAt(current, ["hooks"]);
    }
  }
  return current;
}

/** emptiedBy(text, entries) → the containers that removing those entries (pruning all) would take away. */
function emptiedBy(
  text: string,
  entries: readonly OwnedEntry[],
  layout: RegistrySpec["layout"],
  style: TextStyle,
): string[][] {
  if (entries.length === 0 || text.trim() === "") return [];
  const before = hooksValue(text) ?? {};
  const after = hooksValue(
    applyEdits(
      text,
      entries.map((entry) => ({ kind: "remove", entry })),
      layout,
      style,
      { event: () => true, hooks: () => true },
    ),
  );
  const gone: string[][] = after === undefined ? [["hooks"]] : [];
  for (const event of Object.keys(before)) if (after?.[event] === undefined) gone.push(["hooks", event]);
  return gone;
}

function parsedValue(text: string): unknown {
  const parsed = parseJsonc(text);
  return parsed.ok && parsed.root ? getNodeValue(parsed.root) : {};
}

/** hooksValue(text) → the `hooks` object of the text, or undefined when there is none. */
function hooksValue(text: string): JsonObject | undefined {
  const value = parsedValue(text);
  return isJsonObject(value) && isJsonObject(value.hooks) ? value.hooks : undefined;
}

/** addEntry(text, row, entry, style): `entry` (a group, or a bare handler in the flat layout) appended under row.wireEvent. */
function addEntry(text: string, row: Registration, group: JsonObject, style: TextStyle): string {
  const hooks = hooksValue(text);
  if (!hooks) return addProperty(text, [], "hooks", { [row.wireEvent]: [group] }, style);
  if (hooks[row.wireEvent] === undefined) return addProperty(text, ["hooks"], row.wireEvent, [group], style);
  return appendToArray(text, ["hooks", row.wireEvent], group, style);
}
