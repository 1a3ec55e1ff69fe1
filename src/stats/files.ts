// Where the stats records are and what is there, for `stats`, `stats --reset`, doctor and
// uninstall (docs/stats.md). Read-only but for removeDayFiles, and careful the way the state
// store is (src/core/state.ts): the state directory must be ours, 0700 and not a link, the stats
// directory a real directory, and only names of the form <day>.jsonl are read or removed, as
// regular files this user owns; anything else there is left alone and never followed.
import * as fs from "node:fs";
import * as path from "node:path";
import { defaultStateDirectory, readPrivateFile } from "../core/state.ts";
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

/** statsLocation(env) → the stats directory and its day files (oldest first), or why it is not read. */
export function statsLocation(env: NodeJS.ProcessEnv): StatsLocation {
  const stateDir = defaultStateDirectory(env);
  const dir = path.join(stateDir, STATS_DIRECTORY);
  if (!path.isAbsolute(stateDir))
    return { state: "unsafe", dir, problem: `the state directory ${stateDir} is not an absolute path` };
  const state = fs.lstatSync(stateDir, { throwIfNoEntry: false });
  if (state === undefined) return { state: "absent", dir };
  if (state.isSymbolicLink() || !state.isDirectory())
    return { state: "unsafe", dir, problem: `the state directory ${stateDir} is not a directory (or is a link)` };
  if (!IS_WINDOWS && (state.uid !== uid() || (state.mode & 0o777) !== 0o700)) {
    return { state: "unsafe", dir, problem: `the state directory ${stateDir} is not this user's with mode 700` };
  }
  const stats = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (stats === undefined) return { state: "absent", dir };
  if (stats.isSymbolicLink() || !stats.isDirectory())
    return { state: "unsafe", dir, problem: `${dir} is not a directory (or is a link)` };
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

/** readDayFile(file) → its text, or undefined when it is no longer a regular file of ours (or too large). */
export function readDayFile(file: DayFile): string | undefined {
  // A day's file stops at MAX_DAY_BYTES plus the lines of hooks that checked its size at once.
  const read = readPrivateFile(file.path, MAX_DAY_BYTES + 256 * 1024);
  return read.state === "present" ? read.content : undefined;
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
