// Who a file the installer writes belongs to (docs/decisions.md#installer: `sudo install` once took
// users' settings away from them): a new file is owned like the nearest directory that exists,
// a rewritten one keeps its owner and group, and only root may hand a file to someone else.
// Shared by reading (safe-read.ts refuses what a rewrite would give away) and writing
// (atomic-write.ts hands new files and directories over).
import * as fs from "node:fs";
import * as path from "node:path";

/** A file's owner and group, kept across a rewrite (docs/decisions.md#installer: `sudo install` took users' settings away from them). */
export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** mayChown(owner) → true when a file we create would not already carry that owner and group and we are root. */
export function mayChown(owner: Owner): boolean {
  const ids = processIds();
  if (!ids || (owner.uid === ids.uid && owner.gid === ids.gid)) return false;
  return ids.uid === 0;
}

/** processIds() → effective uid, gid and groups; undefined where there are none (Windows). */
export function processIds(): { uid: number; gid: number; groups: readonly number[] } | undefined {
  if (process.platform === "win32" || !process.geteuid || !process.getegid || !process.getgroups) return undefined;
  return { uid: process.geteuid(), gid: process.getegid(), groups: process.getgroups() };
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
