// Where the stats records are and what is there, for `stats`, `stats --reset`, doctor and
// uninstall (docs/stats.md). Read-only but for removeDayFiles, and careful the way the state
// store is (src/core/state.ts): the state directory must be ours, 0700 and not a link, the stats
// directory a real directory, and only names of the form <day>.jsonl are read or removed, as
// regular files this user owns; anything else there is left alone and never followed.
import * as fs from "node:fs";
import * as path from "node:path";
import { defaultStateDirectory, readPrivateFile } from "../core/state.ts";
import { hasUnsafeText, readerJson } from "../core/texts.ts";
import { KEEP_DAYS, MAX_DAY_BYTES, STATS_DIRECTORY } from "../core/stats-record.ts";

/** The name of a day's file of records: `<UTC day>.jsonl` (src/core/stats-record.ts). */
export const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

/** statsEnabled(env) → false only for VELESDB_HOOK_STATS=off, the one value the hooks obey. */
export function statsEnabled(env: NodeJS.ProcessEnv): boolean {
  return env.VELESDB_HOOK_STATS !== "off";
}

/** utcDay(ms) → "2026-12-02": the day file a record made at `ms` goes to. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export interface DayFile {
  readonly day: string;
  readonly path: string;
  readonly bytes: number;
}

export type StatsLocation =
  | { readonly state: "absent"; readonly dir: string }
  | { readonly state: "unsafe"; readonly dir: string; readonly problem: string }
  | { readonly state: "ok"; readonly dir: string; readonly files: readonly DayFile[] };

const IS_WINDOWS = process.platform === "win32";
const uid = (): number => (typeof process.getuid === "function" ? process.getuid() : -1);

/** statsLocation(env) → the stats directory and its day files (oldest first), or why it is not read. Never throws. */
export function statsLocation(env: NodeJS.ProcessEnv): StatsLocation {
  const stateDir = defaultStateDirectory(env);
  const dir = path.join(stateDir, STATS_DIRECTORY);
  try {
    return locate(stateDir, dir);
  } catch (error) {
    // A state directory below a regular file (ENOTDIR), a name too long, a loop of links: the
    // listing throws where a missing one answers undefined, and `stats` once stopped with an
    // internal error (docs/hardening.md §4.7).
    const code = (error as { code?: unknown }).code;
    return {
      state: "unsafe",
      dir,
      problem: `the state directory ${shownPath(stateDir)} cannot be inspected${typeof code === "string" ? ` (${code})` : ""}`,
    };
  }
}

function locate(stateDir: string, dir: string): StatsLocation {
  if (!path.isAbsolute(stateDir))
    return { state: "unsafe", dir, problem: `the state directory ${shownPath(stateDir)} is not an absolute path` };
  const state = fs.lstatSync(stateDir, { throwIfNoEntry: false });
  if (state === undefined) return { state: "absent", dir };
  if (state.isSymbolicLink() || !state.isDirectory())
    return {
      state: "unsafe",
      dir,
      problem: `the state directory ${shownPath(stateDir)} is not a directory (or is a link)`,
    };
  if (!IS_WINDOWS && (state.uid !== uid() || (state.mode & 0o777) !== 0o700)) {
    return {
      state: "unsafe",
      dir,
      problem: `the state directory ${shownPath(stateDir)} is not this user's with mode 700`,
    };
  }
  const stats = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (stats === undefined) return { state: "absent", dir };
  if (stats.isSymbolicLink() || !stats.isDirectory())
    return { state: "unsafe", dir, problem: `${shownPath(dir)} is not a directory (or is a link)` };
  const files: DayFile[] = [];
  for (const name of fs.readdirSync(dir).sort()) {
    const day = DAY_FILE.exec(name)?.[1];
    if (day === undefined) continue;
    const file = path.join(dir, name);
    const st = fs.lstatSync(file, { throwIfNoEntry: false });
    if (st === undefined || !st.isFile() || (!IS_WINDOWS && st.uid !== uid())) continue;
    files.push({ day, path: file, bytes: st.size });
  }
  return { state: "ok", dir, files };
}

/** A day's file stops at MAX_DAY_BYTES plus the lines of hooks that checked its size at once: what `stats` reads at most. */
export const MAX_READ_BYTES = MAX_DAY_BYTES + 256 * 1024;

/**
 * readDayFile(file) → its text; "gone" when it vanished since the listing (a --reset, the day's
 * pruning); else why it was not read, for a line that names it. A file over MAX_READ_BYTES was
 * not written by the hooks alone, and once read as "no records" without a word (docs/hardening.md §4.7).
 */
export function readDayFile(
  file: DayFile,
):
  | { readonly state: "read"; readonly text: string }
  | { readonly state: "gone" }
  | { readonly state: "not read"; readonly problem: string } {
  const read = readPrivateFile(file.path, MAX_READ_BYTES);
  if (read.state === "present") return { state: "read", text: read.content };
  if (read.state === "absent") return { state: "gone" };
  if (read.problem !== "is too large") return { state: "not read", problem: read.problem };
  let bytes = file.bytes;
  try {
    bytes = fs.lstatSync(file.path, { throwIfNoEntry: false })?.size ?? bytes;
  } catch {
    // The listing's size, then.
  }
  return {
    state: "not read",
    problem: `is ${humanBytes(bytes)}, over the read limit of ${humanBytes(MAX_READ_BYTES)} (the hooks stop a day's file at ${humanBytes(MAX_DAY_BYTES)})`,
  };
}

/** removeDayFiles(location) → the files and bytes removed; the stats directory goes too once empty. */
export function removeDayFiles(location: StatsLocation & { state: "ok" }): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const file of location.files) {
    try {
      fs.unlinkSync(file.path);
      files++;
      bytes += file.bytes;
    } catch {
      // Gone already, or not removable: it stays, and the next listing shows it.
    }
  }
  try {
    fs.rmdirSync(location.dir);
  } catch {
    // Not empty (a file that is not ours, a record appended meanwhile): left as it is.
  }
  return { files, bytes };
}

/** shownPath(p) → p as it is, or as a JSON string when it holds a control or bidirectional character (the state directory comes from the environment). */
export const shownPath = (p: string): string => (hasUnsafeText(p) ? readerJson(p) : p);

/** humanBytes(41_234) → "40.3 KB" (doctor's sizes too). */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** statsLocationLine(env) → doctor's one line: where the records are, how big, the bounds, or that they are off. */
export function statsLocationLine(env: NodeJS.ProcessEnv): string {
  const bounds = `kept ${KEEP_DAYS} days, at most ${humanBytes(MAX_DAY_BYTES)} a day`;
  const off = statsEnabled(env) ? "" : "; recording is off (VELESDB_HOOK_STATS=off)";
  const location = statsLocation(env);
  if (location.state === "absent") return `${location.dir}: no records yet (${bounds})${off}`;
  if (location.state === "unsafe") return `not recorded: ${location.problem}${off}`;
  const total = location.files.reduce((sum, f) => sum + f.bytes, 0);
  const span = location.files.length > 0 ? `, ${location.files[0]!.day} to ${location.files.at(-1)!.day}` : "";
  return `${location.dir}: ${location.files.length} day ${location.files.length === 1 ? "file" : "files"}, ${humanBytes(total)}${span} (${bounds}; \`velesdb-hooks stats\` shows them)${off}`;
}

/** statsKeptLine(env) → uninstall's line: the records stay, and where, when there are any. */
export function statsKeptLine(env: NodeJS.ProcessEnv): string | undefined {
  const location = statsLocation(env);
  if (location.state !== "ok" || location.files.length === 0) return undefined;
  return `stats records kept (your history): ${location.dir}; \`velesdb-hooks stats --reset\` removes them`;
}
