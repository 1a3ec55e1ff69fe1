// A client's registry (settings.json, hooks.json) under the user-settings write policy of
// docs/contract.md §9: read, merge at hook granularity, write back — never replace the `hooks`
// object, never touch an entry that is not ours, keep the file's mode, follow a symlinked
// registry to its target, write by temp + fsync + rename, and refuse (before anything changes)
// whatever cannot be merged safely. Users' top complaints about hook installers are clobbered
// or duplicated hooks and hooks that silently never fire; every refusal here names the file
// and the reason, and nothing here ever prints the file's content (settings hold tokens).
import * as fs from "node:fs";
import * as path from "node:path";
import { getNodeValue } from "jsonc-parser";
import { readBoundedFile } from "../core/bounded-read.ts";
import { errorCode } from "../core/state.ts";
import { entryFor, type Registration, type RegistrySpec } from "./clients/client.ts";
import { isJsonObject, ownershipOf, sameJson, type JsonObject } from "./entries.ts";
import { addProperty, appendToArray, DEFAULT_STYLE, detectStyle, duplicateKey, insertIntoArray, parseJsonc, removeAt, replaceAt, type TextStyle } from "./jsonc-edit.ts";
import { isInside } from "./paths.ts";

export const BACKUP_SUFFIX = ".velesdb-backup";
/**
 * The most the installer reads of any file it did not write itself (a registry, Codex's
 * config.toml, a rules file, a backup, its own record): hosts' settings are kilobytes, and a
 * bound keeps a link to a huge or endless file from costing more
 * (docs/decisions.md#installer-second-trial-from-outside).
 */
export const MAX_READ_BYTES = 16 << 20;
/** The top-level key every client's registry files its hooks under. */
const HOOKS_KEY = "hooks";
const BOM = "\uFEFF";

/** A user file we may write (a registry or Windsurf's rules file), as the write policy needs it. */
export type WritableFile =
  | {
      readonly kind: "absent";
      readonly path: string;
      readonly target: string;
      /** Who a new file belongs to: the nearest existing directory's owner (it matters when root installs into a user's home). */
      readonly owner: Owner;
    }
  | {
      readonly kind: "present";
      readonly path: string;
      /** Where the bytes live: the link's resolved target for a symlinked file. */
      readonly target: string;
      readonly linked: boolean;
      /** The bytes as read (a BOM included). */
      readonly text: string;
      readonly mode: number;
      readonly owner: Owner;
    };

/** A file's owner and group, kept across a rewrite (docs/decisions.md#installer: `sudo install` took users' settings away from them). */
export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** A user file as found on disk; `refused` means no command may change it. */
export type UserFile = WritableFile | { readonly kind: "refused"; readonly path: string; readonly problem: string };

/** A registry as found on disk; `refused` means no command may change it. */
export type RegistryFile =
  | Extract<WritableFile, { kind: "absent" }>
  | (Extract<WritableFile, { kind: "present" }> & { readonly hooks: unknown })
  | Extract<UserFile, { kind: "refused" }>;

/**
 * readUserFile(path, ourTree) → the file, or why it must not be touched. Never throws. A link
 * is followed to a regular file (written there later); a broken link, a directory, something
 * that is not a regular file, a link into our own tree and a backup name taken by a directory
 * are refused; so is a file larger than `maxBytes` (default MAX_READ_BYTES; its size is never
 * trusted: the read stops one byte past the limit).
 */
export function readUserFile(filePath: string, ourTreePath: string, maxBytes?: number): UserFile {
  const refused = (problem: string): UserFile => ({ kind: "refused", path: filePath, problem });
  let linkStat: fs.Stats;
  try {
    linkStat = fs.lstatSync(filePath);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT") return { kind: "absent", path: filePath, target: filePath, owner: ownerOfNearest(path.dirname(filePath)) };
    if (code === "ENOTDIR") return refused("sits under something that is not a directory");
    return refused(`cannot be inspected (${code})`);
  }
  let target = filePath;
  let stat = linkStat;
  const linked = linkStat.isSymbolicLink();
  if (linked) {
    try {
      stat = fs.statSync(filePath);
      target = fs.realpathSync.native(filePath);
    } catch (error) {
      return refused(errorCode(error) === "ENOENT" ? "is a symlink to a file that does not exist" : `is a symlink that cannot be followed (${errorCode(error)})`);
    }
  }
  if (stat.isDirectory()) return refused(linked ? "is a symlink to a directory" : "is a directory");
  if (!stat.isFile()) return refused(linked ? "is a symlink to something that is not a regular file" : "is not a regular file");
  if (inOurTree(target, ourTreePath)) return refused("resolves into velesdb-hooks' own directory; point it at a file of its own");
  const owner = ownerProblem(stat);
  if (owner) return refused(owner);
  const backup = backupProblem(target);
  if (backup) return refused(backup);
  // The bytes come from the file whose kind was just checked (a FIFO swapped in since would
  // otherwise hang the read): `target` is resolved, so a link there now is refused.
  const read = readBoundedFile(target, maxBytes ?? MAX_READ_BYTES, { followLink: false });
  if (!read.ok) return refused(read.problem);
  const text = read.bytes.toString("utf8");
  return { kind: "present", path: filePath, target, linked, text, mode: stat.mode & 0o7777, owner: { uid: stat.uid, gid: stat.gid } };
}

/** readRegistry(path, ourTree, skeleton) → the file with its `hooks` value, or why it must not be touched. Never throws. */
export function readRegistry(registryPath: string, ourTreePath: string, skeleton?: JsonObject): RegistryFile {
  const file = readUserFile(registryPath, ourTreePath);
  if (file.kind !== "present") return file;
  const refused = (problem: string): RegistryFile => ({ kind: "refused", path: registryPath, problem });
  const text = file.text.startsWith(BOM) ? file.text.slice(BOM.length) : file.text;
  const parsed = parseJsonc(text);
  if (!parsed.ok) return refused(`does not parse: line ${parsed.line}, column ${parsed.column} (${parsed.code}); fix it or move it aside`);
  const value: unknown = parsed.root ? getNodeValue(parsed.root) : {};
  if (!isJsonObject(value)) return refused("is not a JSON object");
  const duplicate = duplicateKey(text, parsed.root, [HOOKS_KEY, ...Object.keys(skeleton ?? {})]);
  if (duplicate) {
    // The line counts from the first line of the file as the user sees it (a BOM is no line).
    return refused(`has ${JSON.stringify(duplicate.key)} twice (again on line ${duplicate.line}); every host reads only the last one: merge them by hand, then run this again`);
  }
  if (value.hooks !== undefined && !isJsonObject(value.hooks)) return refused('has a "hooks" value that is not an object');
  return { ...file, hooks: value.hooks };
}

/** One handler of ours found in a registry: where it sits and what it says. */
export interface OwnedEntry {
  readonly event: string;
  /** Index under `hooks.<event>`: the group (grouped layout), or the handler itself (flat layout). */
  readonly group: number;
  /** Index inside the group's `hooks` (always 0 in the flat layout). */
  readonly handler: number;
  readonly ownership: "ours" | "legacy";
  readonly value: unknown;
  /** The enclosing group's matcher, as written (undefined when absent). */
  readonly matcher: unknown;
  /** How many handlers share the group (ours included). */
  readonly groupSize: number;
  /** The group holds keys other than matcher/hooks. */
  readonly groupExtraKeys: boolean;
}

/** How a registry files handlers and where they keep their command line (a RegistrySpec's part that ownership needs). */
export type RegistryShape = Pick<RegistrySpec, "layout" | "commandFields">;

const GROUPED: RegistryShape = { layout: "grouped" };

/** ownedEntries(hooks, binary, shape) → every handler of ours in a `hooks` object, in file order. */
export function ownedEntries(hooks: unknown, binaryPath: string, shape: RegistryShape = GROUPED): OwnedEntry[] {
  const layout = shape.layout;
  const found: OwnedEntry[] = [];
  if (!isJsonObject(hooks)) return found;
  for (const [event, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) continue;
    list.forEach((item, g) => {
      if (layout === "flat") {
        // Windsurf, Copilot: each element is a handler; there is no group to share or to keep.
        // A Copilot handler carries its own matcher, which is what the row's matcher becomes.
        const ownership = ownershipOf(item, binaryPath, shape.commandFields);
        if (ownership === "foreign") return;
        const matcher = isJsonObject(item) ? item.matcher : undefined;
        found.push({ event, group: g, handler: 0, ownership, value: item, matcher, groupSize: 1, groupExtraKeys: false });
        return;
      }
      if (!isJsonObject(item) || !Array.isArray(item.hooks)) return;
      const group = item;
      const handlers = group.hooks as unknown[];
      handlers.forEach((handler, h) => {
        const ownership = ownershipOf(handler, binaryPath, shape.commandFields);
        if (ownership === "foreign") return;
        found.push({
          event,
          group: g,
          handler: h,
          ownership,
          value: handler,
          matcher: group.matcher,
          groupSize: handlers.length,
          groupExtraKeys: Object.keys(group).some((key) => key !== "matcher" && key !== "hooks"),
        });
      });
    });
  }
  return found;
}

export type RowState = "in step" | "missing" | "differs" | "duplicated" | "legacy";

export interface RowVerdict {
  readonly row: Registration;
  readonly state: RowState;
}

export interface RegistryVerdict {
  readonly state: "in step" | "drifted" | "absent";
  readonly rows: readonly RowVerdict[];
  /** Entries of ours under events we do not register (or no longer register). */
  readonly unexpected: readonly OwnedEntry[];
  readonly owned: readonly OwnedEntry[];
}

/** judgeRegistry(hooks, registry, binary, platform) → per-row state and the registry's overall state. */
export function judgeRegistry(hooks: unknown, registry: RegistrySpec, binaryPath: string, platform: NodeJS.Platform): RegistryVerdict {
  const owned = ownedEntries(hooks, binaryPath, registry);
  const rows = registry.rows.map((row): RowVerdict => {
    const here = owned.filter((entry) => entry.event === row.wireEvent);
    if (here.length === 0) return { row, state: "missing" };
    if (here.length > 1) return { row, state: "duplicated" };
    const entry = here[0]!;
    if (entry.ownership === "legacy") return { row, state: "legacy" };
    return { row, state: entryInStep(entry, row, registry.handler(row, binaryPath, platform)) ? "in step" : "differs" };
  });
  const expected = new Set(registry.rows.map((row) => row.wireEvent));
  const unexpected = owned.filter((entry) => !expected.has(entry.event));
  const state = owned.length === 0 ? "absent" : rows.every((r) => r.state === "in step") && unexpected.length === 0 ? "in step" : "drifted";
  return { state, rows, unexpected, owned };
}

function entryInStep(entry: OwnedEntry, row: Registration, wanted: JsonObject): boolean {
  return sameJson(entry.value, wanted) && entry.matcher === row.matcher && !entry.groupExtraKeys;
}

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

export type PlanResult = { readonly ok: true; readonly plan: RegistryPlan } | { readonly ok: false; readonly problem: string };

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

/**
 * planRegistry(file, registry, binary, platform, mode, record) → the edit, computed entirely
 * in memory. Install keeps an entry that is already exactly right (so a second install changes
 * no byte), replaces a stale one where it stands (hosts run entries in order: a stale entry
 * moved to the end would run after the user's), removes the other entries of ours and appends
 * what is missing. Uninstall removes every entry of ours and prunes only the containers
 * install recorded as its own; a file install created that holds nothing else is deleted.
 */
export function planRegistry(
  file: Exclude<RegistryFile, { kind: "refused" }>,
  registry: RegistrySpec,
  binaryPath: string,
  platform: NodeJS.Platform,
  mode: "install" | "uninstall",
  record?: InstallRecord,
): PlanResult {
  const hooks = file.kind === "present" ? file.hooks : undefined;
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

  const original = file.kind === "present" ? file.text : "";
  const bom = original.startsWith(BOM) ? BOM : "";
  const body = original.slice(bom.length);
  const blank = body.trim() === "";
  const style: TextStyle = blank ? DEFAULT_STYLE : detectStyle(body);
  // First record of this file: containers only entries of ours (or the bash hooks') keep alive
  // were put there by an installer of ours, so uninstall may remove them again.
  const added: string[][] = mode === "install" && !record ? emptiedBy(body, verdict.owned, registry.layout, style) : [];
  if (edits.length === 0 && appended.length === 0) return { ok: true, plan: { removals: [], additions: [], text: original, deleteFile: false, added } };

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
  const deleteFile = mode === "uninstall" && record?.created === true && sameJson(parsedValue(text), registry.skeleton ?? {});
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
    (a, b) => keys.indexOf(b.entry.event) - keys.indexOf(a.entry.event) || place(b) - place(a) || b.entry.handler - a.entry.handler,
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
function emptiedBy(text: string, entries: readonly OwnedEntry[], layout: RegistrySpec["layout"], style: TextStyle): string[][] {
  if (entries.length === 0 || text.trim() === "") return [];
  const before = hooksValue(text) ?? {};
  const after = hooksValue(applyEdits(text, entries.map((entry) => ({ kind: "remove", entry })), layout, style, { event: () => true, hooks: () => true }));
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

/**
 * How to undo one write of this run: the file's bytes, mode and owner before it (or that it
 * did not exist, with the directories the write created), and the same for its backup.
 */
export interface Undo {
  readonly target: string;
  readonly before: { readonly kind: "absent"; readonly createdDirs: readonly string[] } | { readonly kind: "present"; readonly text: string; readonly mode: number; readonly owner: Owner };
  readonly backup?: { readonly path: string; readonly before: { readonly bytes: Uint8Array; readonly mode: number; readonly owner: Owner } | undefined };
}

/**
 * backupPath(file) → `<target>.velesdb-backup`: beside the bytes it copies, so behind a link it
 * sits in the target's directory, which already guards the original (docs/decisions.md#installer: a backup of a
 * file in a root-only directory once landed in the directory of the user who made the link).
 */
export const backupPath = (file: Extract<WritableFile, { kind: "present" }>): string => `${file.target}${BACKUP_SUFFIX}`;

/** A backup's mode: the original's read and write bits, never more (no execute, no set-id bits). */
const backupMode = (mode: number): number => mode & 0o666;

/**
 * writeUserFile(file, text | null, backup) → how to undo it. A present file is first backed up to
 * backupPath(file) with its own owner and group and at most its mode, then replaced by a temp file + fsync + rename with the same owner, group and mode; a
 * new file is created 0600, owned like its directory; `null` deletes the file (uninstall of a
 * file install created and that holds nothing else). A symlinked file is written at its
 * target and the link stays a link. Throws on any failure; what was done is undone by undo().
 */
export function writeUserFile(file: WritableFile, text: string | null, backup = true): Undo {
  if (file.kind === "absent") {
    if (text === null) return { target: file.target, before: { kind: "absent", createdDirs: [] } };
    const createdDirs = makeDirectories(path.dirname(file.target), file.owner);
    const undo: Undo = { target: file.target, before: { kind: "absent", createdDirs } };
    try {
      writeAtomically(file.target, text, 0o600, file.owner);
    } catch (error) {
      removeDirectories(createdDirs);
      throw error;
    }
    return undo;
  }
  const before = { kind: "present" as const, text: file.text, mode: file.mode, owner: file.owner };
  if (text === null) {
    fs.rmSync(file.target);
    return { target: file.target, before };
  }
  let undo: Undo = { target: file.target, before };
  if (backup) {
    const backup = backupPath(file);
    undo = { ...undo, backup: { path: backup, before: snapshotOf(backup) } };
    writeAtomically(backup, file.text, backupMode(file.mode), file.owner);
  }
  try {
    // Another program may rewrite the file between our read and our rename (Claude Code rewrites
    // ~/.claude.json while it runs): what changed meanwhile is never overwritten with a plan made
    // from older bytes. The check runs once the backup and the new bytes are on disk, just
    // before the rename (issue 30, item 2: checked before them, a rewrite landing during the
    // milliseconds of the backup and the fsyncs was undone in 3 of 3 trials).
    writeAtomically(file.target, text, file.mode, file.owner, () => confirmUnchanged(file.target, file.text));
  } catch (error) {
    // The target is as it was (the rename never happened); only the backup changed.
    try {
      if (undo.backup) restoreBackup(undo.backup);
    } catch {
      // The backup holds the same bytes as the untouched file: harmless if it stays.
    }
    throw error;
  }
  return undo;
}

/** The error code of a write refused because the file changed after it was read (shown as the reason). */
export const CHANGED_MEANWHILE = "it changed while velesdb-hooks was editing it; run the command again";

/**
 * confirmUnchanged(file, text) → a check to run just before the rename: throws CHANGED_MEANWHILE
 * when the file no longer holds `text`. The bytes are compared first (a read of the whole file,
 * tens of milliseconds at 60 MB), pinned by the file's identity before and after that read; the
 * check returned compares only that identity again (one stat), so what a rewriter can still slip
 * in unseen is what lands between that stat and the rename: the platform offers no
 * compare-and-rename, and this is the smallest window it leaves (docs/hardening.md, measured).
 */
function confirmUnchanged(file: string, text: string): () => void {
  const changed = () => Object.assign(new Error("changed meanwhile"), { code: CHANGED_MEANWHILE });
  const pinned = identityOf(file);
  let same = false;
  try {
    same = pinned !== undefined && fs.readFileSync(file, "utf8") === text && identityOf(file) === pinned;
  } catch {
    same = false;
  }
  if (!same) throw changed();
  return () => {
    if (identityOf(file) !== pinned) throw changed();
  };
}

/** identityOf(file) → device, inode, size and change times in nanoseconds: a rename over it or a write into it changes one of them. */
function identityOf(file: string): string | undefined {
  try {
    const st = fs.statSync(file, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/** undoWrite(undo): the file and its backup as they were before this run. Throws when that fails. */
export function undoWrite(undo: Undo): void {
  const { before } = undo;
  if (before.kind === "present") writeAtomically(undo.target, before.text, before.mode, before.owner);
  else {
    fs.rmSync(undo.target, { force: true });
    removeDirectories(before.createdDirs);
  }
  if (undo.backup) restoreBackup(undo.backup);
}

function restoreBackup(backup: NonNullable<Undo["backup"]>): void {
  if (backup.before) writeAtomically(backup.path, backup.before.bytes, backup.before.mode, backup.before.owner);
  else fs.rmSync(backup.path, { force: true });
}

function snapshotOf(file: string): { bytes: Uint8Array; mode: number; owner: Owner } | undefined {
  try {
    // A link at the backup name is replaced, never followed; nor is anything but a regular file read.
    const read = readBoundedFile(file, MAX_READ_BYTES, { followLink: false });
    if (!read.ok) return undefined;
    return { bytes: read.bytes, mode: read.stat.mode & 0o7777, owner: { uid: read.stat.uid, gid: read.stat.gid } };
  } catch {
    return undefined;
  }
}

const NO_FOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/**
 * A seam for the race test (docs/decisions.md#installer): code in the same process may set it to act
 * between a directory's creation and its hand-over. Nothing outside the process (no variable,
 * no file) can set it, so a production run never pauses there.
 */
export const RACE_TEST_HOOKS: { afterMkdir?: (dir: string) => void } = {};

/**
 * makeDirectories(dir, owner, mode) → the directories it created (outermost first), each with
 * that mode (0700 by default) and owned like the file will be. Root hands each one over through
 * a descriptor (handOver), never by its name: chown by name follows a link that the user
 * swapped in for the new directory (docs/decisions.md#installer).
 */
export function makeDirectories(dir: string, owner: Owner, mode = 0o700): string[] {
  const missing: string[] = [];
  for (let current = dir; !fs.existsSync(current); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  const created: string[] = [];
  try {
    for (const d of missing) {
      fs.mkdirSync(d, { mode });
      RACE_TEST_HOOKS.afterMkdir?.(d);
      if (mayChown(owner)) handOver(d, owner);
      created.push(d);
    }
  } catch (error) {
    removeDirectories(created);
    throw error;
  }
  return created;
}

/**
 * handOver(dir, owner): the directory just made, opened without following a link and checked
 * to still be a directory of ours (only this process's uid can have made it), is given to
 * `owner` through that descriptor. A link or another directory in its place fails the
 * creation and is left as it is: it is not ours to remove.
 */
function handOver(dir: string, owner: Owner): void {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | NO_FOLLOW);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isDirectory() || st.uid !== processIds()?.uid) {
      throw Object.assign(new Error(`${dir} was replaced while it was being made`), { code: "replaced while being made" });
    }
    fs.fchownSync(fd, owner.uid, owner.gid);
  } finally {
    fs.closeSync(fd);
  }
}

function removeDirectories(created: readonly string[]): void {
  for (const d of [...created].reverse()) {
    try {
      fs.rmdirSync(d);
    } catch {
      // Something else was put there meanwhile: leave it.
    }
  }
}

/** tempBeside("/d/f") → "/d/.f.velesdb-tmp-<pid>-<random>": the name an atomic write or copy is made under before its rename. */
function tempBeside(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.velesdb-tmp-${process.pid}-${randomHex()}`);
}

/**
 * writeAtomically(target, content, mode, owner?): a new file created O_EXCL|O_NOFOLLOW beside
 * the target, given `owner` (when that is not us and we may: root) and `mode`, written,
 * fsynced, renamed over the target (which replaces a link at that name rather than writing
 * through it), then the directory is fsynced. `beforeRename`, when given, runs once the bytes are
 * on disk and returns the last check, which runs immediately before the rename; either may throw
 * to leave the target as it is.
 */
export function writeAtomically(target: string, content: string | Uint8Array, mode: number, owner?: Owner, beforeRename?: () => () => void): void {
  const dir = path.dirname(target);
  const temp = tempBeside(target);
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    // Owner first: chown clears set-id bits, so the mode goes on after it.
    if (owner && mayChown(owner)) fs.fchownSync(fd, owner.uid, owner.gid);
    fs.fchmodSync(fd, mode);
    fs.writeFileSync(fd, content);
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  try {
    // The slow part of the caller's check first, then its last step and the rename back to back.
    const lastCheck = beforeRename?.();
    lastCheck?.();
    fs.renameSync(temp, target);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dir);
}

/**
 * copyAtomically(source, target, mode, owner): writeAtomically for a whole file, copied by the
 * kernel (copy_file_range) instead of read into memory: the binary is ~110 MB, and reading it
 * whole made every install hold it in RAM and copy it twice. The temporary name is created with
 * O_CREAT|O_EXCL (COPYFILE_EXCL), so the copy never goes through a link planted there; it is then
 * reopened without following links and must still be the one-link regular file of the source's
 * size that was just made before it gets its owner and mode and is renamed over the target.
 */
export function copyAtomically(source: string, target: string, mode: number, owner?: Owner): void {
  const dir = path.dirname(target);
  const temp = tempBeside(target);
  const size = fs.statSync(source).size;
  let fd: number | undefined;
  try {
    fs.copyFileSync(source, temp, fs.constants.COPYFILE_EXCL);
    fd = fs.openSync(temp, fs.constants.O_RDWR | (fs.constants.O_NOFOLLOW ?? 0));
    const st = fs.fstatSync(fd);
    // (Windows reports no link count worth checking: no links there to plant.)
    if (!st.isFile() || (process.platform !== "win32" && st.nlink !== 1) || st.size !== size) throw new Error(`${temp} changed while it was being written`);
    if (owner && mayChown(owner)) fs.fchownSync(fd, owner.uid, owner.gid);
    fs.fchmodSync(fd, mode);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temp, target);
  } catch (error) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dir);
}

/** mayChown(owner) → true when a file we create would not already carry that owner and group and we are root. */
function mayChown(owner: Owner): boolean {
  const ids = processIds();
  if (!ids || (owner.uid === ids.uid && owner.gid === ids.gid)) return false;
  return ids.uid === 0;
}

/** processIds() → effective uid, gid and groups; undefined where there are none (Windows). */
function processIds(): { uid: number; gid: number; groups: readonly number[] } | undefined {
  if (process.platform === "win32" || !process.geteuid || !process.getegid || !process.getgroups) return undefined;
  return { uid: process.geteuid(), gid: process.getegid(), groups: process.getgroups() };
}

/**
 * ownerProblem(stat) → why a rewrite by this process would hand the file to someone else: only
 * root can give a new file another owner, and a user only a group they are in. Refused before
 * any change, naming the owner.
 */
function ownerProblem(st: fs.Stats): string | undefined {
  const ids = processIds();
  if (!ids || ids.uid === 0) return undefined;
  if (st.uid !== ids.uid) {
    return `is owned by uid ${st.uid}${userName(st.uid)}, not by the user running velesdb-hooks (uid ${ids.uid}); run it as the file's owner so the file keeps its owner`;
  }
  if (st.gid !== ids.gid && !ids.groups.includes(st.gid)) {
    return `belongs to group gid ${st.gid}, which this user is not in; a rewrite would change its group: run it as a member of that group`;
  }
  return undefined;
}

/** userName(1000) → " (alice)" from /etc/passwd, or "" when it is not there. */
function userName(uid: number): string {
  try {
    const passwd = readBoundedFile("/etc/passwd", MAX_READ_BYTES, { followLink: true });
    for (const line of passwd.ok ? passwd.bytes.toString("utf8").split("\n") : []) {
      const [name, , id] = line.split(":");
      if (name && id === String(uid)) return ` (${name})`;
    }
  } catch {
    // No passwd file (containers, other systems): the number says it.
  }
  return "";
}

/** ownerOfNearest(dir) → the owner of the nearest directory that exists (a new file's owner). */
export function ownerOfNearest(dir: string): Owner {
  for (let current = dir; ; current = path.dirname(current)) {
    try {
      const st = fs.statSync(current);
      return { uid: st.uid, gid: st.gid };
    } catch {
      if (path.dirname(current) === current) break;
    }
  }
  const ids = processIds();
  return { uid: ids?.uid ?? 0, gid: ids?.gid ?? 0 };
}

function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, fs.constants.O_RDONLY);
    fs.fsyncSync(fd);
  } catch {
    // Not every platform lets a directory be opened or fsynced (Windows); the rename is done.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** A backup that is a directory (or otherwise not replaceable by rename) is found before any write. */
function backupProblem(registryPath: string): string | undefined {
  try {
    const st = fs.lstatSync(`${registryPath}${BACKUP_SUFFIX}`);
    if (st.isDirectory()) return `has a backup path (${path.basename(registryPath)}${BACKUP_SUFFIX}) that is a directory`;
  } catch {
    // Absent: the backup will be created.
  }
  return undefined;
}

function inOurTree(target: string, ourTreePath: string): boolean {
  let tree = ourTreePath;
  try {
    tree = fs.realpathSync.native(ourTreePath);
  } catch {
    // Our tree does not exist yet; compare with the path as configured.
  }
  return isInside(target, tree) || isInside(target, ourTreePath);
}

// The installer's modules take errorCode from here; it is the core's, not a second copy.
export { errorCode };

function randomHex(): string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
