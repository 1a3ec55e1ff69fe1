// A client's registry (settings.json, hooks.json) under the user-settings write policy of
// STYLE point 8: read, merge at hook granularity, write back — never replace the `hooks`
// object, never touch an entry that is not ours, keep the file's mode, follow a symlinked
// registry to its target, write by temp + fsync + rename, and refuse (before anything changes)
// whatever cannot be merged safely. Users' top complaints about hook installers are clobbered
// or duplicated hooks and hooks that silently never fire; every refusal here names the file
// and the reason, and nothing here ever prints the file's content (settings hold tokens).
import * as fs from "node:fs";
import * as path from "node:path";
import { getNodeValue } from "jsonc-parser";
import { errorCode } from "../core/state.ts";
import { entryFor, type Registration, type RegistrySpec } from "./clients/client.ts";
import { isJsonObject, ownershipOf, sameJson, type JsonObject } from "./entries.ts";
import { addProperty, appendToArray, DEFAULT_STYLE, detectStyle, duplicateKey, parseJsonc, removeAt, type TextStyle } from "./jsonc-edit.ts";
import { isInside } from "./paths.ts";

export const BACKUP_SUFFIX = ".velesdb-backup";
/** The top-level key every client's registry files its hooks under. */
const HOOKS_KEY = "hooks";
const BOM = "\uFEFF";

/** A user file we may write (a registry or Windsurf's rules file), as the write policy needs it. */
export type WritableFile =
  | { readonly kind: "absent"; readonly path: string; readonly target: string }
  | {
      readonly kind: "present";
      readonly path: string;
      /** Where the bytes live: the link's resolved target for a symlinked file. */
      readonly target: string;
      readonly linked: boolean;
      /** The bytes as read (a BOM included). */
      readonly text: string;
      readonly mode: number;
    };

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
 * are refused.
 */
export function readUserFile(filePath: string, ourTreePath: string): UserFile {
  const refused = (problem: string): UserFile => ({ kind: "refused", path: filePath, problem });
  let linkStat: fs.Stats;
  try {
    linkStat = fs.lstatSync(filePath);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT") return { kind: "absent", path: filePath, target: filePath };
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
  const backup = backupProblem(filePath);
  if (backup) return refused(backup);
  let text: string;
  try {
    text = fs.readFileSync(target, "utf8");
  } catch (error) {
    return refused(`cannot be read (${errorCode(error)})`);
  }
  return { kind: "present", path: filePath, target, linked, text, mode: stat.mode & 0o7777 };
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
        // Windsurf: each element is a handler; there is no group to share or to keep.
        const ownership = ownershipOf(item, binaryPath, shape.commandFields);
        if (ownership === "foreign") return;
        found.push({ event, group: g, handler: 0, ownership, value: item, matcher: undefined, groupSize: 1, groupExtraKeys: false });
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
  /** Entries of ours to take out (legacy, stale, duplicated, misplaced — or all of them on uninstall). */
  readonly removals: readonly OwnedEntry[];
  /** Rows to (re)write. */
  readonly additions: readonly Registration[];
  /** The registry text after the change; equal to the input when nothing changes. */
  readonly text: string;
}

export type PlanResult = { readonly ok: true; readonly plan: RegistryPlan } | { readonly ok: false; readonly problem: string };

/**
 * planRegistry(file, registry, binary, platform, "install" | "uninstall") → the edit, computed
 * entirely in memory. Install keeps an entry that is already exactly right (so a second
 * install changes no byte) and replaces every other entry of ours; uninstall removes them all.
 */
export function planRegistry(
  file: Exclude<RegistryFile, { kind: "refused" }>,
  registry: RegistrySpec,
  binaryPath: string,
  platform: NodeJS.Platform,
  mode: "install" | "uninstall",
): PlanResult {
  const hooks = file.kind === "present" ? file.hooks : undefined;
  const verdict = judgeRegistry(hooks, registry, binaryPath, platform);
  const keep = new Set(verdict.rows.filter((r) => r.state === "in step").map((r) => r.row.wireEvent));
  const removals = mode === "uninstall" ? verdict.owned : verdict.owned.filter((entry) => !keep.has(entry.event));
  const additions = mode === "uninstall" ? [] : registry.rows.filter((row) => !keep.has(row.wireEvent));
  for (const row of additions) {
    const existing = isJsonObject(hooks) ? hooks[row.wireEvent] : undefined;
    if (existing !== undefined && !Array.isArray(existing)) {
      return { ok: false, problem: `has a "hooks.${row.wireEvent}" value that is not a list` };
    }
  }
  const original = file.kind === "present" ? file.text : "";
  if (removals.length === 0 && additions.length === 0) return { ok: true, plan: { removals, additions, text: original } };

  const bom = original.startsWith(BOM) ? BOM : "";
  const body = original.slice(bom.length);
  const blank = body.trim() === "";
  const style: TextStyle = blank ? DEFAULT_STYLE : detectStyle(body);
  // A new file starts with the client's skeleton (`{}` for most).
  let text = blank ? JSON.stringify(registry.skeleton ?? {}, null, style.indent) : body;
  const refill = new Set(additions.map((row) => row.wireEvent));
  text = removeEntries(text, removals, refill, additions.length > 0, registry.layout);
  for (const row of additions) text = addEntry(text, row, entryFor(registry, row, binaryPath, platform), style);
  if (blank) text += style.eol;
  return { ok: true, plan: { removals, additions, text: bom + text } };
}

/**
 * removeEntries: last entry first, so the paths of the ones before stay valid. A handler
 * that is alone in its group takes the group with it (in the flat layout every handler is
 * its own element), an event left without groups loses its
 * key, and `hooks` left empty loses its key — unless install is about to refill that event
 * (or `hooks`), which keeps a replaced entry where the user had it.
 */
function removeEntries(text: string, removals: readonly OwnedEntry[], refill: ReadonlySet<string>, refillHooks: boolean, layout: RegistrySpec["layout"]): string {
  let current = text;
  const hooksValue = (): JsonObject => {
    const parsed = parseJsonc(current);
    const value: unknown = parsed.ok && parsed.root ? getNodeValue(parsed.root) : {};
    return isJsonObject(value) && isJsonObject(value.hooks) ? value.hooks : {};
  };
  const keys = Object.keys(hooksValue());
  const ordered = [...removals].sort((a, b) => keys.indexOf(b.event) - keys.indexOf(a.event) || b.group - a.group || b.handler - a.handler);
  for (const entry of ordered) {
    const hooks = hooksValue();
    const groups = hooks[entry.event] as unknown[];
    const handlers = layout === "flat" ? [entry.value] : ((groups[entry.group] as JsonObject).hooks as unknown[]);
    if (handlers.length > 1) {
      current = removeAt(current, ["hooks", entry.event, entry.group, "hooks", entry.handler]);
    } else if (groups.length > 1 || refill.has(entry.event)) {
      current = removeAt(current, ["hooks", entry.event, entry.group]);
    } else if (Object.keys(hooks).length > 1 || refillHooks) {
      current = removeAt(current, ["hooks", entry.event]);
    } else {
      current = removeAt(current, ["hooks"]);
    }
  }
  return current;
}

/** addEntry(text, row, entry, style): `entry` (a group, or a bare handler in the flat layout) appended under row.wireEvent. */
function addEntry(text: string, row: Registration, group: JsonObject, style: TextStyle): string {
  const parsed = parseJsonc(text);
  const value: unknown = parsed.ok && parsed.root ? getNodeValue(parsed.root) : {};
  const root = isJsonObject(value) ? value : {};
  if (!isJsonObject(root.hooks)) return addProperty(text, [], "hooks", { [row.wireEvent]: [group] }, style);
  if (root.hooks[row.wireEvent] === undefined) return addProperty(text, ["hooks"], row.wireEvent, [group], style);
  return appendToArray(text, ["hooks", row.wireEvent], group, style);
}

/**
 * writeRegistry(file, text): back up the current bytes to `<name>.velesdb-backup` (beside the
 * name the client reads), then replace the target by a private temp file + fsync + rename,
 * with the existing mode (0600 for a new file). A symlinked registry is written at its target
 * and the link stays a link. Returns the backup path, if one was written.
 */
export function writeRegistry(file: WritableFile, text: string): string | undefined {
  let backup: string | undefined;
  if (file.kind === "present") {
    backup = `${file.path}${BACKUP_SUFFIX}`;
    writeAtomically(backup, file.text, 0o600);
  } else {
    fs.mkdirSync(path.dirname(file.target), { recursive: true, mode: 0o700 });
  }
  writeAtomically(file.target, text, file.kind === "present" ? file.mode : 0o600);
  return backup;
}

/**
 * writeAtomically(target, content, mode): a new file created O_EXCL|O_NOFOLLOW beside the
 * target, chmod'ed to `mode`, written, fsynced, renamed over the target (which replaces a
 * link at that name rather than writing through it), then the directory is fsynced.
 */
export function writeAtomically(target: string, content: string | Uint8Array, mode: number): void {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.velesdb-tmp-${process.pid}-${randomHex()}`);
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
  try {
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
    fs.renameSync(temp, target);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dir);
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
