// The stats record (issue 32, docs/stats.md): one line of JSON appended per hook call to
// `<private state directory>/stats/<UTC day>.jsonl`, read back by `velesdb-hooks stats`.
// Why this shape:
// - Hooks run concurrently (a model may issue 50 edits at once), so each record is one write(2)
//   of one whole line to a file opened O_APPEND: the kernel places every such write at the end
//   atomically, so no line is lost or cut into another. A line stays far below PIPE_BUF (4096,
//   the size POSIX promises atomic for pipes; regular files on Linux take the inode lock for
//   the whole write) because MAX_LINE_BYTES caps it.
// - It must cost the hot path nothing a benchmark can see: no directory listing, no rename, no
//   exception on the common path (each costs heap, state.ts lstatOrNull); four system calls
//   beyond the state directory's lstat (lstat the stats directory, open, fstat, write+close).
// - It is bounded: a day's file stops growing at MAX_DAY_BYTES, and the day files older than
//   KEEP_DAYS are removed when a new day's file is started (the only time a listing is paid).
// - Counts, names and durations only (src/core/stats-note.ts): never a payload, a command, an
//   output or a path. The session is kept as its cksum, only to follow one session's refusal
//   to its recall and its edit.
// Best effort and silent: a stats problem never changes an answer or prints a line.
import * as fs from "node:fs";
import * as path from "node:path";
import { posixCksum } from "./cksum.ts";
import { notedFacts, type HookFacts } from "./stats-note.ts";
import { defaultStateDirectory, openStateStore } from "./state.ts";

export const STATS_DIRECTORY = "stats";
/** A day's file is not appended to past this size: ~12 000 records (a record is 120–250 bytes). */
export const MAX_DAY_BYTES = 2 * 1024 * 1024;
/** Day files older than this many days are removed when a new day's file is created. */
export const KEEP_DAYS = 30;
/** No record line is longer: well under PIPE_BUF (4096), so one write(2) is one whole line. */
export const MAX_LINE_BYTES = 1024;
const MAX_PROJECT_CHARS = 120;
export const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;

/** The record as stored: short keys, every field but v, t, h, e and ms optional. */
export interface StatsRecord {
  readonly v: 1;
  /** Seconds since the epoch, when the answer was written. */
  readonly t: number;
  readonly h: string;
  readonly e: string;
  /** The hook's own time in ms: from process start to the answer written. */
  readonly ms: number;
  readonly d?: string;
  readonly p?: string;
  /** cksum of the host session id. */
  readonly s?: string;
  readonly err?: 1;
  readonly to?: 1;
  readonly lost?: 1;
  readonly g?: "refused" | "allowed";
  readonly r?: "ok" | "failed";
  readonly ck?: "asked" | "sent";
  readonly c?: "replaced" | "passed";
  readonly why?: string;
  readonly bi?: number;
  readonly bo?: number;
  readonly tk?: number;
}

/** statsEnabled(env) → false only for VELESDB_HOOK_STATS=off. */
export function statsEnabled(env: NodeJS.ProcessEnv): boolean {
  return env.VELESDB_HOOK_STATS !== "off";
}

/** statsDirectory(env) → `<private state directory>/stats`, the one place every host's records go. */
export function statsDirectory(env: NodeJS.ProcessEnv): string {
  return path.join(defaultStateDirectory(env), STATS_DIRECTORY);
}

/** utcDay(ms) → "2026-12-02": the day file a record made at `ms` goes to. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** recordLine(facts, nowMs, durationMs) → the line to append (newline included). */
export function recordLine(facts: Readonly<HookFacts>, nowMs: number, durationMs: number): string {
  const c = facts.compression;
  const record: StatsRecord = {
    v: 1,
    t: Math.floor(nowMs / 1000),
    h: facts.host ?? "unknown",
    e: facts.event ?? "unknown",
    ms: Math.round(durationMs * 100) / 100,
    ...(facts.decision ? { d: facts.decision } : {}),
    ...(facts.project !== undefined ? { p: facts.project.slice(0, MAX_PROJECT_CHARS) } : {}),
    ...(facts.session !== undefined ? { s: posixCksum(facts.session) } : {}),
    ...(facts.error ? { err: 1 as const } : {}),
    ...(facts.timeout ? { to: 1 as const } : {}),
    ...(facts.answerLost ? { lost: 1 as const } : {}),
    ...(facts.guard ? { g: facts.guard } : {}),
    ...(facts.recall ? { r: facts.recall } : {}),
    ...(facts.checkpoint !== undefined ? { ck: facts.checkpoint } : {}),
    ...(c ? { c: c.outcome } : {}),
    ...(c?.reason ? { why: c.reason } : {}),
    ...(c?.bytesIn !== undefined ? { bi: c.bytesIn } : {}),
    ...(c?.bytesOut !== undefined ? { bo: c.bytesOut } : {}),
    ...(c?.tokensSaved !== undefined ? { tk: c.tokensSaved } : {}),
  };
  const line = `${JSON.stringify(record)}\n`;
  // Only a project name can make a line long (120 characters, each up to 6 bytes escaped).
  return Buffer.byteLength(line, "utf8") <= MAX_LINE_BYTES ? line : `${JSON.stringify({ ...record, p: "(name too long)" })}\n`;
}

/**
 * appendHookRecord(env) → true when this hook call's record was appended. Never
 * throws. `nowMs` and `durationMs` are the caller's clock (the entry: Date.now() and
 * performance.now(), whose origin is the process start).
 */
export function appendHookRecord(env: NodeJS.ProcessEnv, nowMs = Date.now(), durationMs = performance.now()): boolean {
  if (!statsEnabled(env)) return false;
  try {
    return appendLine(env, recordLine(notedFacts(), nowMs, durationMs), utcDay(nowMs), nowMs);
  } catch {
    return false;
  }
}

function appendLine(env: NodeJS.ProcessEnv, line: string, day: string, nowMs: number): boolean {
  // The state directory's own checks (ours, 0700, not a link): inside it nobody else can plant
  // anything, so the stats directory needs only to be a real directory, and the file O_NOFOLLOW.
  const store = openStateStore(defaultStateDirectory(env));
  if (!store.safe) return false;
  const dir = path.join(store.dir, STATS_DIRECTORY);
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (st === undefined) fs.mkdirSync(dir, { mode: 0o700 });
  else if (!st.isDirectory() || st.isSymbolicLink()) return false;
  const file = path.join(dir, `${day}.jsonl`);
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    const opened = fs.fstatSync(fd);
    if (!opened.isFile() || opened.size >= MAX_DAY_BYTES) return false;
    // One write of the whole line: O_APPEND makes it land at the end, in one piece.
    const bytes = Buffer.from(line, "utf8");
    if (fs.writeSync(fd, bytes) !== bytes.length) return false;
    // The first record of a day starts the day's file: the one moment old days are pruned.
    if (opened.size === 0) pruneOldDays(dir, nowMs);
    return true;
  } finally {
    fs.closeSync(fd);
  }
}

/** pruneOldDays(dir, now) → how many day files older than KEEP_DAYS were removed; other names are left alone. */
export function pruneOldDays(dir: string, nowMs: number, keepDays = KEEP_DAYS): number {
  const oldest = utcDay(nowMs - (keepDays - 1) * 86_400_000);
  let removed = 0;
  for (const name of fs.readdirSync(dir)) {
    const day = DAY_FILE.exec(name)?.[1];
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
