// The stats record (docs/stats.md): one line of JSON appended per hook call to
// `<private state directory>/stats/<UTC day>.jsonl`, read back by `velesdb-hooks stats`.
// Why this shape:
// - Hooks run concurrently (a model may send 50 edits at once), so each record is one write(2)
//   of one whole line to a file opened O_APPEND: the kernel places every such write at the end
//   atomically, so no line is lost or cut into another. A line stays far below PIPE_BUF (4096,
//   the size POSIX promises atomic for pipes; regular files on Linux take the inode lock for
//   the whole write) because MAX_LINE_BYTES caps it.
// - It must cost the hot path nothing a benchmark can see: no directory listing, no rename, no
//   exception on the common path (each costs heap, state.ts lstatOrNull); four system calls
//   beyond the state directory's lstat (lstat the stats directory, open, fstat, write+close).
// - It is bounded: a day's file stops growing at MAX_DAY_BYTES, and the day files older than
//   KEEP_DAYS are removed when a new day's file is started (the only time a listing is paid).
// - Counts, names and durations only (src/core/stats-note.ts, which holds the record's shape):
//   never a payload, a command, an output or a path. The session is kept as a hash, only to
//   follow one session's refusal to its recall and its edit.
// Best effort and silent: a stats problem never changes an answer or prints a line.
import * as fs from "node:fs";
import * as path from "node:path";
import { noted, type StatsRecord } from "./stats-note.ts";
import { defaultStateDirectory, openStateStore } from "./state.ts";

export const STATS_DIRECTORY = "stats";
/** A day's file is not appended to past this size: ~12 000 records (a record is 120–250 bytes). */
export const MAX_DAY_BYTES = 2 * 1024 * 1024;
/** Day files older than this many days are removed when a new day's file is created. */
export const KEEP_DAYS = 30;
/**
 * No record line is longer: well under PIPE_BUF (4096), so one write(2) is one whole line.
 * Only the project name is free text, cut at 120 characters (stats-note.ts), each at most 6
 * bytes once escaped: 720 bytes, everything else under 300 (test/stats.test.ts).
 */
export const MAX_LINE_BYTES = 1024;
const IS_WINDOWS = process.platform === "win32";
// The file type bits of st_mode (a link is neither a directory nor a regular file): read off
// the mode rather than through Stats' methods, each of which is one more function run.
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;

/** recordLine(record, nowMs, durationMs) → the line to append (newline included), its time and duration set. */
export function recordLine(
  record: Partial<StatsRecord> & { t: number; ms: number },
  nowMs: number,
  durationMs: number,
): string {
  record.t = Math.floor(nowMs / 1000);
  record.ms = Math.round(durationMs * 100) / 100;
  return `${JSON.stringify(record)}\n`;
}

/**
 * appendHookRecord(env) → true when this hook call's record was appended. Never throws.
 * `nowMs` and `durationMs` are the caller's clock (the entry: Date.now() and performance.now(),
 * whose origin is the process start).
 *
 * Few functions on purpose, with the state directory's checks (ours, 0700, not a link; state.ts)
 * made on one lstat and the file types read off st_mode: each function run costs the heap its
 * compiled form, and the commonest hooks sit just under the size at which the engine starts its
 * block warm-up thread (~0.8 ms of CPU; docs/performance/2026-12-02-io-floor.md; docs/stats.md
 * has what this costs). Inside a safe state directory no other user can plant anything, so the
 * stats directory needs only to be a directory (not a link), and the file is opened O_NOFOLLOW.
 * Only a missing state directory goes through openStateStore, which creates it.
 */
export function appendHookRecord(
  env: NodeJS.ProcessEnv,
  clock?: { readonly nowMs: number; readonly durationMs?: number },
): boolean {
  // Off is answered here, before the engine links writeRecord's body (it links a function whole
  // on its first call, however early the call returns).
  return env.VELESDB_HOOK_STATS !== "off" && writeRecord(env, clock);
}

function writeRecord(
  env: NodeJS.ProcessEnv,
  clock?: { readonly nowMs: number; readonly durationMs?: number },
): boolean {
  try {
    const nowMs = clock?.nowMs ?? Date.now();
    const durationMs = clock?.durationMs ?? performance.now();
    const stateDir = defaultStateDirectory(env);
    if (!path.isAbsolute(stateDir)) return false;
    const state = fs.lstatSync(stateDir, { throwIfNoEntry: false });
    if (state === undefined) {
      if (!openStateStore(stateDir).safe) return false;
    } else if (
      (state.mode & S_IFMT) !== S_IFDIR ||
      (!IS_WINDOWS && (state.uid !== process.getuid!() || (state.mode & 0o777) !== 0o700))
    ) {
      return false;
    }
    const dir = `${stateDir}${path.sep}${STATS_DIRECTORY}`;
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (st === undefined) {
      // Hooks started at once on a new state directory race to create this one: losing the
      // race is no failure, once what won is a directory.
      try {
        fs.mkdirSync(dir, { mode: 0o700 });
      } catch {
        if (((fs.lstatSync(dir, { throwIfNoEntry: false })?.mode ?? 0) & S_IFMT) !== S_IFDIR) return false;
      }
    } else if ((st.mode & S_IFMT) !== S_IFDIR) return false;
    const file = `${dir}${path.sep}${new Date(nowMs).toISOString().slice(0, 10)}.jsonl`;
    const fd = fs.openSync(
      file,
      fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | (fs.constants.O_NOFOLLOW ?? 0),
      0o600,
    );
    try {
      const opened = fs.fstatSync(fd);
      if ((opened.mode & S_IFMT) !== S_IFREG || opened.size >= MAX_DAY_BYTES) return false;
      // One write of the whole line: O_APPEND makes it land at the end, in one piece.
      // Written as a string (encoded natively); a line is ASCII unless the project name is not,
      // and only then is its UTF-8 length counted to check the write was whole.
      const line = recordLine(noted, nowMs, durationMs);
      const written = fs.writeSync(fd, line);
      if (written !== line.length && written !== Buffer.byteLength(line, "utf8")) return false;
      // The first record of a day starts the day's file: the one moment old days are pruned
      // (not in a stats directory this call created: it holds nothing older). The bench's first
      // Stop, which starts from no state directory at all, paid the listing in every run.
      if (opened.size === 0 && st !== undefined) pruneOldDays(dir, nowMs);
      return true;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/**
 * pruneOldDays(dir, now) → how many day files older than KEEP_DAYS were removed; any other name
 * is left alone. Its pattern is made here, not at module level: this module is evaluated by
 * every hook, and a regular expression made there costs every one of them its heap.
 */
export function pruneOldDays(dir: string, nowMs: number, keepDays = KEEP_DAYS): number {
  const oldest = new Date(nowMs - (keepDays - 1) * 86_400_000).toISOString().slice(0, 10);
  const dayFile = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;
  let removed = 0;
  for (const name of fs.readdirSync(dir)) {
    const day = dayFile.exec(name)?.[1];
    if (day === undefined || day >= oldest) continue;
    try {
      fs.unlinkSync(path.join(dir, name));
      removed++;
    } catch {
      // Removed by a concurrent first record of the day.
    }
  }
  return removed;
}
