// The installer's file-system primitives: a file written or copied whole under a temporary
// name beside its target, fsynced and renamed over it (a reader sees the old bytes or the new,
// never half), and the directories a new file needs, each handed to the file's owner through a
// descriptor. Used for user files (user-file-write.ts), the binary (binary.ts) and the lock
// (lock.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { mayChown, processIds, type Owner } from "./file-owner.ts";

const NO_FOLLOW = fs.constants.O_NOFOLLOW ?? 0;

/**
 * A seam for the race test (docs/decisions.md#installer): code in the same process may set it to act
 * between a directory's creation and its hand-over. Nothing outside the process (no variable,
 * no file) can set it, so a production run never pauses there.
 */
export const RACE_TEST_HOOKS: { afterMkdir?: (dir: string) => void } = {};

/**
 * makeDirectories(dir, owner, mode) → the directories it created (outermost first), each with
 * that mode (0700 by default) and owned like the file will be. Root hands each one over through
 * a descriptor (handOver), never by its name: chown by name follows a link that the user
 * swapped in for the new directory (docs/decisions.md#installer).
 */
export function makeDirectories(dir: string, owner: Owner, mode = 0o700): string[] {
  const missing: string[] = [];
  for (let current = dir; !fs.existsSync(current); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  const created: string[] = [];
  try {
    for (const d of missing) {
      fs.mkdirSync(d, { mode });
      RACE_TEST_HOOKS.afterMkdir?.(d);
      if (mayChown(owner)) handOver(d, owner);
      created.push(d);
    }
  } catch (error) {
    removeDirectories(created);
    throw error;
  }
  return created;
}

/**
 * handOver(dir, owner): the directory just made, opened without following a link and checked
 * to still be a directory of ours (only this process's uid can have made it), is given to
 * `owner` through that descriptor. A link or another directory in its place fails the
 * creation and is left as it is: it is not ours to remove.
 */
function handOver(dir: string, owner: Owner): void {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | NO_FOLLOW);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isDirectory() || st.uid !== processIds()?.uid) {
      throw Object.assign(new Error(`${dir} was replaced while it was being made`), {
        code: "replaced while being made",
      });
    }
    fs.fchownSync(fd, owner.uid, owner.gid);
  } finally {
    fs.closeSync(fd);
  }
}

/** removeDirectories(created): what makeDirectories made, innermost first; one holding something else stays. */
export function removeDirectories(created: readonly string[]): void {
  for (const d of [...created].reverse()) {
    try {
      fs.rmdirSync(d);
    } catch {
      // Something else was put there meanwhile: leave it.
    }
  }
}

/** tempBeside("/d/f") → "/d/.f.velesdb-tmp-<pid>-<random>": the name an atomic write or copy is made under before its rename. */
function tempBeside(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.velesdb-tmp-${process.pid}-${randomHex()}`);
}

/**
 * writeAtomically(target, content, mode, owner?): a new file created O_EXCL|O_NOFOLLOW beside
 * the target, given `owner` (when that is not us and we may: root) and `mode`, written,
 * fsynced, renamed over the target (which replaces a link at that name rather than writing
 * through it), then the directory is fsynced. `beforeRename`, when given, runs once the bytes are
 * on disk and returns the last check, which runs immediately before the rename; either may throw
 * to leave the target as it is.
 */
export function writeAtomically(
  target: string,
  content: string | Uint8Array,
  mode: number,
  owner?: Owner,
  beforeRename?: () => () => void,
): void {
  const dir = path.dirname(target);
  const temp = tempBeside(target);
  const fd = fs.openSync(
    temp,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0),
    0o600,
  );
  try {
    // Owner first: chown clears set-id bits, so the mode goes on after it.
    if (owner && mayChown(owner)) fs.fchownSync(fd, owner.uid, owner.gid);
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
    // The slow part of the caller's check first, then its last step and the rename back to back.
    const lastCheck = beforeRename?.();
    lastCheck?.();
    fs.renameSync(temp, target);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dir);
}

/**
 * copyAtomically(source, target, mode, owner): writeAtomically for a whole file, copied by the
 * kernel (copy_file_range) instead of read into memory: the binary is ~110 MB, and reading it
 * whole made every install hold it in RAM and copy it twice. The temporary name is created with
 * O_CREAT|O_EXCL (COPYFILE_EXCL), so the copy never goes through a link planted there; it is then
 * reopened without following links and must still be the one-link regular file of the source's
 * size that was just made before it gets its owner and mode and is renamed over the target.
 */
export function copyAtomically(source: string, target: string, mode: number, owner?: Owner): void {
  const dir = path.dirname(target);
  const temp = tempBeside(target);
  const size = fs.statSync(source).size;
  let fd: number | undefined;
  try {
    fs.copyFileSync(source, temp, fs.constants.COPYFILE_EXCL);
    fd = fs.openSync(temp, fs.constants.O_RDWR | (fs.constants.O_NOFOLLOW ?? 0));
    const st = fs.fstatSync(fd);
    // (Windows reports no link count worth checking: no links there to plant.)
    if (!st.isFile() || (process.platform !== "win32" && st.nlink !== 1) || st.size !== size)
      throw new Error(`${temp} changed while it was being written`);
    if (owner && mayChown(owner)) fs.fchownSync(fd, owner.uid, owner.gid);
    fs.fchmodSync(fd, mode);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temp, target);
  } catch (error) {
    if (fd !== undefined) fs.closeSync(fd);
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

function randomHex(): string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
