// Who holds a velesdb-memory store. velesdb-memory 0.17.0 opens its store through velesdb-core
// 8.0.0, which takes an exclusive flock(2) on `<data dir>/velesdb.lock` (velesdb-core
// src/database/mod.rs:251-254, fs2::try_lock_exclusive) and, after three 500 ms retries,
// prints `[velesdb-memory] another velesdb-memory process holds <data dir> — kill it …` and
// exits 1 (velesdb-memory src/daemon_startup.rs:108-133). The message names the directory, not
// the process: check and doctor find the process through the kernel's lock table
// (/proc/locks lists each flock with its pid and the locked file's device and inode), so the
// line can say "locked by pid N (its command line)". Elsewhere (macOS, Windows) there is no
// such table to read without a helper, and the line says the holder was not identified.
import * as fs from "node:fs";
import * as path from "node:path";
import { printable } from "../paths.ts";

/** velesdb-core 8.0.0's lock file inside the data directory (src/database/mod.rs:251). */
export const STORE_LOCK_FILE = "velesdb.lock";
/** A command line is shown, not dumped: this many characters at most. */
const MAX_COMMAND_LINE = 160;

export interface LockHolder {
  readonly pid: number;
  /** The holder's command line, printable, cut at MAX_COMMAND_LINE; "" when unreadable. */
  readonly commandLine: string;
}

/**
 * storeLockHolder("/home/u/.velesdb-memory") → the process holding the store's flock, read from
 * /proc/locks; undefined when no holder can be found (not Linux, the lock already released, a
 * pid in another pid namespace).
 */
export function storeLockHolder(storeDir: string, procRoot = "/proc"): LockHolder | undefined {
  let st: fs.Stats;
  let table: string;
  try {
    st = fs.statSync(path.join(storeDir, STORE_LOCK_FILE));
    table = fs.readFileSync(path.join(procRoot, "locks"), "utf8");
  } catch {
    return undefined;
  }
  // Linux's new_encode_dev, which /proc/locks prints as major:minor in hex.
  const major = (st.dev >> 8) & 0xfff;
  const minor = (st.dev & 0xff) | ((st.dev >> 12) & 0xfff00);
  for (const line of table.split("\n")) {
    // `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1311774 0 EOF` (a blocked waiter has `->` after the number).
    const fields = /^\d+:\s+FLOCK\s+\S+\s+WRITE\s+(\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
    if (!fields) continue;
    if (Number(fields[4]) !== st.ino || parseInt(fields[2]!, 16) !== major || parseInt(fields[3]!, 16) !== minor)
      continue;
    const pid = Number(fields[1]);
    return { pid, commandLine: commandLineOf(pid, procRoot) };
  }
  return undefined;
}

/** commandLineOf(4242) → "velesdb-memory" / "/usr/bin/velesdb-memory --http": NULs as spaces, printable, bounded. */
function commandLineOf(pid: number, procRoot: string): string {
  let raw: string;
  try {
    const fd = fs.openSync(path.join(procRoot, String(pid), "cmdline"), "r");
    try {
      const buffer = Buffer.alloc(4096);
      const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
      raw = buffer.subarray(0, length).toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return "";
  }
  const words = raw.split("\0").filter((word) => word !== "");
  const line = words.join(" ");
  return printable(line.length > MAX_COMMAND_LINE ? `${line.slice(0, MAX_COMMAND_LINE)}…` : line);
}
