// One lock for the installer's tree (docs/decisions.md#installer-second-trial-from-outside).
// install and uninstall read the
// record of files at their start and write it at their end, and uninstall decides that nothing
// names the binary before it deletes it: two of them at once lost each other's records (three
// installs kept 1 of 3 records in 8 of 8 runs) or left Gemini entries naming a binary just
// deleted. Each of them now runs whole while it holds `<our tree>/install.lock`.
//
// The lock is a claim file (src/core/claim.ts: appears whole, stale when its process is gone or
// its pid was reused, broken by one process only). A live holder is waited for up to a bound,
// then the command stops with one line naming it.
import * as fs from "node:fs";
import * as path from "node:path";
import { tryClaim, type ClaimOwner } from "../../core/claim.ts";
import { errorCode } from "../../core/state.ts";
import { makeDirectories } from "./atomic-write.ts";
import { ownerOfNearest } from "./file-owner.ts";

export const LOCK_NAME = "install.lock";
/** How long a command waits for another one by default: far above one install (≈1 s with a first copy of the binary). */
const DEFAULT_WAIT_MS = 60_000;

export interface HeldLock {
  release(): void;
}

export type LockResult =
  | { readonly ok: true; readonly lock: HeldLock }
  | { readonly ok: false; readonly problem: string };

/**
 * acquireInstallerLock(tree, waitMs) → the held lock, or (after waiting up to waitMs for a live
 * holder) why not, in one line. Creates the tree when it is missing (like install would); the
 * caller releases the lock when done, and a tree left empty goes again.
 */
export function acquireInstallerLock(tree: string, waitMs = DEFAULT_WAIT_MS, shownTree = tree): LockResult {
  const lockPath = path.join(tree, LOCK_NAME);
  const deadline = Date.now() + waitMs;
  let pause = 5;
  let holder: ClaimOwner | undefined;
  for (;;) {
    try {
      makeDirectories(tree, ownerOfNearest(tree), 0o755);
    } catch (error) {
      // EEXIST: another command made it in the same instant (the last holder's release had
      // removed it); anything else stops us.
      if (errorCode(error) !== "EEXIST" || Date.now() >= deadline)
        return { ok: false, problem: `cannot create ${shownTree} for its lock (${errorCode(error)})` };
      continue;
    }
    const attempt = tryClaim(lockPath);
    if (attempt.state === "claimed") return { ok: true, lock: { release: () => release(attempt, tree) } };
    if (attempt.state === "failed" && attempt.code === "ENOENT") continue; // The tree went with the last holder's release: make it again.
    if (attempt.state === "failed")
      return { ok: false, problem: `cannot create ${path.join(shownTree, LOCK_NAME)} (${attempt.code})` };
    holder = attempt.owner;
    const intruder = notALock(lockPath, path.join(shownTree, LOCK_NAME));
    if (intruder) return { ok: false, problem: intruder };
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

/**
 * notALock(lockPath, shown) → the refusal when something other than a regular file sits at the
 * lock's name. Our claims are regular files; a directory there (docs/hardening.md §7) can never be
 * released, so waiting for it only cost the full bound before blaming "another velesdb-hooks".
 * A link or a FIFO is not ours either: named, never followed, never removed by us.
 */
function notALock(lockPath: string, shown: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(lockPath);
  } catch {
    return undefined; // Gone meanwhile: the next attempt takes it.
  }
  if (st.isFile()) return undefined;
  const what = st.isDirectory() ? "a directory" : st.isSymbolicLink() ? "a symlink" : "not a regular file";
  const remove = st.isDirectory() ? `rm -r ${shown}` : `rm ${shown}`;
  return `${shown} is ${what}, not a lock velesdb-hooks made: remove it (${remove}), then run this again`;
}

/**
 * release: the lock goes (if it is still ours); then the tree goes when it is empty — made only
 * for the lock, or emptied by an uninstall (whose own attempt failed while the lock was there).
 */
function release(claim: { release(): void }, tree: string): void {
  claim.release();
  try {
    fs.rmdirSync(tree);
  } catch {
    // Not empty (the binary, the record, a waiter's lock) or gone: leave it.
  }
}
