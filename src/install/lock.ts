// One lock for the installer's tree (issue 19, items 3 and 4). install and uninstall read the
// record of files at their start and write it at their end, and uninstall decides that nothing
// names the binary before it deletes it: two of them at once lost each other's records (three
// installs kept 1 of 3 records in 8 of 8 runs) or left Gemini entries naming a binary just
// deleted. Each of them now runs whole while it holds `<our tree>/install.lock`.
//
// Bun and Node have no flock, so the lock is a file that appears whole or not at all: our
// pid and process start time are written to a private temp file, which is then hard-linked to
// the lock's name (link fails when the name exists). A lock whose process is gone, or whose pid
// now belongs to a process started at another time (pid reuse, Linux), is stale; it is removed
// only by whoever holds the short-lived `install.lock.break` file, after checking that the lock
// is still the very one judged stale, so two waiters can never both take over. A live holder is
// waited for up to a bound, then the command stops with one line naming it.
import * as fs from "node:fs";
import * as path from "node:path";
import { readBoundedFile } from "../core/bounded-read.ts";
import { errorCode, makeDirectories, ownerOfNearest } from "./registry.ts";

export const LOCK_NAME = "install.lock";
const BREAK_SUFFIX = ".break";
/** How long a command waits for another one by default: far above one install (≈1 s with a first copy of the binary). */
const DEFAULT_WAIT_MS = 60_000;
/** A break file older than this was left by a process that died in the few microseconds it holds one. */
const STALE_BREAK_MS = 10_000;
/** A lock file without a readable owner (not ours: ours appear whole) is stale after this long. */
const UNREADABLE_LOCK_MS = 10_000;

export interface HeldLock {
  release(): void;
}

export type LockResult = { readonly ok: true; readonly lock: HeldLock } | { readonly ok: false; readonly problem: string };

interface LockOwner {
  readonly pid: number;
  /** The process's start time as the kernel counts it (Linux), "" elsewhere. */
  readonly started: string;
}

/**
 * acquireInstallerLock(tree, waitMs) → the held lock, or (after waiting up to waitMs for a live
 * holder) why not, in one line. Creates the tree when it is missing (like install would); the
 * caller releases the lock when done, and a tree left empty goes again.
 */
export function acquireInstallerLock(tree: string, waitMs = DEFAULT_WAIT_MS, shownTree = tree): LockResult {
  const lockPath = path.join(tree, LOCK_NAME);
  const me: LockOwner = { pid: process.pid, started: processStartTime(process.pid) };
  const deadline = Date.now() + waitMs;
  let pause = 5;
  let holder: LockOwner | undefined;
  for (;;) {
    try {
      makeDirectories(tree, ownerOfNearest(tree), 0o755);
    } catch (error) {
      // EEXIST: another command made it in the same instant (the last holder's release had
      // removed it); anything else stops us.
      if (errorCode(error) !== "EEXIST" || Date.now() >= deadline) return { ok: false, problem: `cannot create ${shownTree} for its lock (${errorCode(error)})` };
      continue;
    }
    const taken = tryCreate(lockPath, me);
    if (taken === "taken") return { ok: true, lock: { release: () => release(lockPath, me, tree) } };
    if (taken === "ENOENT") continue; // The tree went with the last holder's release: make it again.
    if (taken !== "exists") return { ok: false, problem: `cannot create ${path.join(shownTree, LOCK_NAME)} (${taken})` };
    const found = readOwner(lockPath);
    if (found === "absent") continue; // Released meanwhile: try again at once.
    if (isStale(found, lockPath)) {
      breakStale(lockPath, found);
      continue;
    }
    holder = found === "unreadable" ? undefined : found;
    if (Date.now() >= deadline) break;
    Bun.sleepSync(Math.min(pause, Math.max(1, deadline - Date.now())));
    pause = Math.min(pause * 2, 100);
  }
  const who = holder ? `velesdb-hooks (pid ${holder.pid})` : "another velesdb-hooks";
  return {
    ok: false,
    problem: `${who} is installing or uninstalling (it holds ${path.join(shownTree, LOCK_NAME)}); waited ${Math.round(waitMs / 1000)} s: run this again when it is done`,
  };
}

/** tryCreate(lock, me) → "taken", "exists", or the errno code that stops us. The file appears whole: a temp file hard-linked to the name. */
function tryCreate(lockPath: string, me: LockOwner): "taken" | "exists" | string {
  const temp = `${lockPath}.${process.pid}-${Math.random().toString(16).slice(2)}`;
  try {
    fs.writeFileSync(temp, `${JSON.stringify(me)}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    return errorCode(error) ?? "error";
  }
  try {
    fs.linkSync(temp, lockPath);
    return "taken";
  } catch (error) {
    const code = errorCode(error);
    return code === "EEXIST" ? "exists" : (code ?? "error");
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** readOwner(lock) → who holds it, "absent", or "unreadable" (not a lock of ours, or cut). */
function readOwner(lockPath: string): LockOwner | "absent" | "unreadable" {
  const read = readBoundedFile(lockPath, 4096, { followLink: false });
  if (!read.ok) return read.code === "ENOENT" ? "absent" : "unreadable";
  try {
    const value = JSON.parse(read.bytes.toString("utf8")) as Partial<LockOwner>;
    if (Number.isSafeInteger(value.pid) && (value.pid as number) > 0 && typeof value.started === "string") return { pid: value.pid as number, started: value.started };
  } catch {
    // Falls through: unreadable.
  }
  return "unreadable";
}

function isStale(owner: LockOwner | "unreadable", lockPath: string): boolean {
  if (owner === "unreadable") return ageMs(lockPath) > UNREADABLE_LOCK_MS;
  if (!isAlive(owner.pid)) return true;
  // Same pid, another process (the holder died and its pid was given out again).
  const started = processStartTime(owner.pid);
  return owner.started !== "" && started !== "" && started !== owner.started;
}

/** breakStale(lock, judged): removes the lock, only while holding the break file and only if it is still the one judged stale. */
function breakStale(lockPath: string, judged: LockOwner | "unreadable"): void {
  const breakPath = `${lockPath}${BREAK_SUFFIX}`;
  let fd: number;
  try {
    fd = fs.openSync(breakPath, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
  } catch {
    // Someone else is breaking it (or died doing so: its file goes once old enough).
    if (ageMs(breakPath) > STALE_BREAK_MS) fs.rmSync(breakPath, { force: true });
    else Bun.sleepSync(2);
    return;
  }
  try {
    const now = readOwner(lockPath);
    const same = now === judged || (typeof now === "object" && typeof judged === "object" && now.pid === judged.pid && now.started === judged.started);
    if (same) fs.rmSync(lockPath, { force: true });
  } finally {
    fs.closeSync(fd);
    fs.rmSync(breakPath, { force: true });
  }
}

/**
 * release: the lock goes if it is still ours; then the tree goes when it is empty — made only
 * for the lock, or emptied by an uninstall (whose own attempt failed while the lock was there).
 */
function release(lockPath: string, me: LockOwner, tree: string): void {
  const now = readOwner(lockPath);
  if (typeof now === "object" && now.pid === me.pid && now.started === me.started) fs.rmSync(lockPath, { force: true });
  try {
    fs.rmdirSync(tree);
  } catch {
    // Not empty (the binary, the record, a waiter's lock) or gone: leave it.
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return errorCode(error) === "EPERM";
  }
}

/** processStartTime(pid) → field 22 of /proc/<pid>/stat (clock ticks since boot), "" where there is no /proc. */
function processStartTime(pid: number): string {
  if (process.platform !== "linux") return "";
  const read = readBoundedFile(`/proc/${pid}/stat`, 4096, { followLink: false });
  if (!read.ok) return "";
  const text = read.bytes.toString("utf8");
  // The command name (field 2) may hold spaces and parentheses: count from the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return fields[19] ?? "";
}

function ageMs(p: string): number {
  try {
    return Date.now() - fs.lstatSync(p).mtimeMs;
  } catch {
    return 0;
  }
}
