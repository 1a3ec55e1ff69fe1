// An exclusive claim on one name, for processes that cannot flock (Bun and Node have none):
// the installer's lock (src/install/files/lock.ts) and the hand-off of a Stop's checkpoint batch
// (checkpoint.ts). The claim file appears whole or not at all — the owner's pid and process
// start time are written to a private temp file, which is then hard-linked to the name (link
// fails when the name exists), so taking it is one atomic step. A claim whose process is gone,
// or whose pid now belongs to a process started at another time (pid reuse, Linux), is stale;
// it is removed only by whoever holds the short-lived `<name>.break` file, after checking that
// the claim is still the very one judged stale, so two processes can never both take over.
import * as fs from "node:fs";
import { readBoundedFile } from "./bounded-read.ts";
import { errorCode, uniqueSuffix } from "./state.ts";

const BREAK_SUFFIX = ".break";
/** A break file older than this was left by a process that died in the few microseconds it holds one. */
const STALE_BREAK_MS = 10_000;
/** A claim file without a readable owner (not ours: ours appear whole) is stale after this long. */
const UNREADABLE_CLAIM_MS = 10_000;
/** Attempts when the claim vanishes or is broken between our steps; each is a few system calls. */
const ATTEMPTS = 5;

export interface ClaimOwner {
  readonly pid: number;
  /** The process's start time as the kernel counts it (Linux), "" elsewhere. */
  readonly started: string;
}

export type ClaimAttempt =
  | { readonly state: "claimed"; release(): void }
  /** A live process holds it (owner undefined: a file we cannot read, younger than the bound). */
  | { readonly state: "held"; readonly owner: ClaimOwner | undefined }
  /** The claim file cannot be created: the errno code (ENOENT: its directory is gone). */
  | { readonly state: "failed"; readonly code: string };

let self: ClaimOwner | undefined;

/** tryClaim(file) → claimed (release when done), held by a live process, or failed. Never waits, never throws. */
export function tryClaim(file: string): ClaimAttempt {
  self ??= { pid: process.pid, started: processStartTime(process.pid) };
  const me = self;
  let owner: ClaimOwner | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const taken = tryCreate(file, me);
    if (taken === "taken") return { state: "claimed", release: () => release(file, me) };
    if (taken !== "exists") return { state: "failed", code: taken };
    const found = readOwner(file);
    if (found === "absent") continue; // Released meanwhile: try again at once.
    if (isStale(found, file)) {
      breakStale(file, found);
      continue;
    }
    owner = found === "unreadable" ? undefined : found;
    return { state: "held", owner };
  }
  return { state: "held", owner };
}

/** release: the claim goes if it is still ours. */
function release(file: string, me: ClaimOwner): void {
  const now = readOwner(file);
  if (typeof now === "object" && now.pid === me.pid && now.started === me.started) fs.rmSync(file, { force: true });
}

/** tryCreate(file, me) → "taken", "exists", or the errno code that stops us. The file appears whole: a temp file hard-linked to the name. */
function tryCreate(file: string, me: ClaimOwner): "taken" | "exists" | string {
  const temp = `${file}.${process.pid}-${uniqueSuffix()}`;
  try {
    fs.writeFileSync(temp, `${JSON.stringify(me)}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    return errorCode(error) ?? "error";
  }
  try {
    fs.linkSync(temp, file);
    return "taken";
  } catch (error) {
    const code = errorCode(error);
    return code === "EEXIST" ? "exists" : (code ?? "error");
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** readOwner(file) → who holds the claim, "absent", or "unreadable" (not a claim of ours: anything else at that name). */
function readOwner(file: string): ClaimOwner | "absent" | "unreadable" {
  const read = readBoundedFile(file, 4096, { followLink: false });
  if (!read.ok) return read.code === "ENOENT" ? "absent" : "unreadable";
  try {
    const value = JSON.parse(read.bytes.toString("utf8")) as Partial<ClaimOwner>;
    if (Number.isSafeInteger(value.pid) && (value.pid as number) > 0 && typeof value.started === "string")
      return { pid: value.pid as number, started: value.started };
  } catch {
    // Falls through: unreadable.
  }
  return "unreadable";
}

function isStale(owner: ClaimOwner | "unreadable", file: string): boolean {
  if (owner === "unreadable") return ageMs(file) > UNREADABLE_CLAIM_MS;
  if (!isAlive(owner.pid)) return true;
  // Same pid, another process (the holder died and its pid was given out again).
  const started = processStartTime(owner.pid);
  return owner.started !== "" && started !== "" && started !== owner.started;
}

/** breakStale(file, judged): removes the claim, only while holding the break file and only if it is still the one judged stale. */
function breakStale(file: string, judged: ClaimOwner | "unreadable"): void {
  const breakPath = `${file}${BREAK_SUFFIX}`;
  let fd: number;
  try {
    fd = fs.openSync(
      breakPath,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0),
      0o600,
    );
  } catch {
    // Someone else is breaking it (or died doing so: its file goes once old enough).
    if (ageMs(breakPath) > STALE_BREAK_MS) {
      try {
        fs.rmSync(breakPath, { force: true });
      } catch {
        // Not a file of ours (a directory): the claim stays held.
      }
    } else Bun.sleepSync(2);
    return;
  }
  try {
    const now = readOwner(file);
    const same =
      now === judged ||
      (typeof now === "object" &&
        typeof judged === "object" &&
        now.pid === judged.pid &&
        now.started === judged.started);
    if (same) fs.rmSync(file, { force: true });
  } catch {
    // Not removable (a directory planted at the name): it stays held, and the caller says so.
  } finally {
    fs.closeSync(fd);
    fs.rmSync(breakPath, { force: true });
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
