// Writing a user's file under the user-settings write policy (docs/contract.md §9): the file is
// backed up beside its bytes first, written by temp + fsync + rename with its own owner, group
// and mode, never over a change another program made since it was read, and every write of a run
// can be undone (the file, its backup, the directories it created) when a later one fails.
import * as fs from "node:fs";
import * as path from "node:path";
import { readBoundedFile } from "../../core/bounded-read.ts";
import { makeDirectories, removeDirectories, writeAtomically } from "./atomic-write.ts";
import type { Owner } from "./file-owner.ts";
import { BACKUP_SUFFIX, MAX_READ_BYTES, type WritableFile } from "./safe-read.ts";

/**
 * How to undo one write of this run: the file's bytes, mode and owner before it (or that it
 * did not exist, with the directories the write created), and the same for its backup.
 */
export interface Undo {
  readonly target: string;
  readonly before:
    | { readonly kind: "absent"; readonly createdDirs: readonly string[] }
    | { readonly kind: "present"; readonly text: string; readonly mode: number; readonly owner: Owner };
  readonly backup?: {
    readonly path: string;
    readonly before: { readonly bytes: Uint8Array; readonly mode: number; readonly owner: Owner } | undefined;
  };
}

/**
 * backupPath(file) → `<target>.velesdb-backup`: beside the bytes it copies, so behind a link it
 * sits in the target's directory, which already guards the original (docs/decisions.md#installer: a backup of a
 * file in a root-only directory once landed in the directory of the user who made the link).
 */
export const backupPath = (file: Extract<WritableFile, { kind: "present" }>): string =>
  `${file.target}${BACKUP_SUFFIX}`;

/** A backup's mode: the original's read and write bits, never more (no execute, no set-id bits). */
const backupMode = (mode: number): number => mode & 0o666;

/**
 * writeUserFile(file, text | null, backup) → how to undo it. A present file is first backed up to
 * backupPath(file) with its own owner and group and at most its mode, then replaced by a temp file + fsync + rename with the same owner, group and mode; a
 * new file is created 0600, owned like its directory; `null` deletes the file (uninstall of a
 * file install created and that holds nothing else). A symlinked file is written at its
 * target and the link stays a link. Throws on any failure; what was done is undone by undo().
 */
export function writeUserFile(file: WritableFile, text: string | null, backup = true): Undo {
  if (file.kind === "absent") {
    if (text === null) return { target: file.target, before: { kind: "absent", createdDirs: [] } };
    const createdDirs = makeDirectories(path.dirname(file.target), file.owner);
    const undo: Undo = { target: file.target, before: { kind: "absent", createdDirs } };
    try {
      writeAtomically(file.target, text, 0o600, file.owner);
    } catch (error) {
      removeDirectories(createdDirs);
      throw error;
    }
    return undo;
  }
  const before = { kind: "present" as const, text: file.text, mode: file.mode, owner: file.owner };
  if (text === null) {
    fs.rmSync(file.target);
    return { target: file.target, before };
  }
  let undo: Undo = { target: file.target, before };
  if (backup) {
    const backup = backupPath(file);
    undo = { ...undo, backup: { path: backup, before: snapshotOf(backup) } };
    writeAtomically(backup, file.text, backupMode(file.mode), file.owner);
  }
  try {
    // Another program may rewrite the file between our read and our rename (Claude Code rewrites
    // ~/.claude.json while it runs): what changed meanwhile is never overwritten with a plan made
    // from older bytes. The check runs once the backup and the new bytes are on disk, just
    // before the rename (docs/hardening.md §2: checked before them, a rewrite landing during the
    // milliseconds of the backup and the fsyncs was undone in 3 of 3 trials).
    writeAtomically(file.target, text, file.mode, file.owner, () => confirmUnchanged(file.target, file.text));
  } catch (error) {
    // The target is as it was (the rename never happened); only the backup changed.
    try {
      if (undo.backup) restoreBackup(undo.backup);
    } catch {
      // The backup holds the same bytes as the untouched file: harmless if it stays.
    }
    throw error;
  }
  return undo;
}

/** The error code of a write refused because the file changed after it was read (shown as the reason). */
export const CHANGED_MEANWHILE = "it changed while velesdb-hooks was editing it; run the command again";

/**
 * confirmUnchanged(file, text) → a check to run just before the rename: throws CHANGED_MEANWHILE
 * when the file no longer holds `text`. The bytes are compared first (a read of the whole file,
 * tens of milliseconds at 60 MB), pinned by the file's identity before and after that read; the
 * check returned compares only that identity again (one stat), so what a rewriter can still slip
 * in unseen is what lands between that stat and the rename: the platform offers no
 * compare-and-rename, and this is the smallest window it leaves (docs/hardening.md, measured).
 */
function confirmUnchanged(file: string, text: string): () => void {
  const changed = () => Object.assign(new Error("changed meanwhile"), { code: CHANGED_MEANWHILE });
  const pinned = identityOf(file);
  let same = false;
  try {
    same = pinned !== undefined && fs.readFileSync(file, "utf8") === text && identityOf(file) === pinned;
  } catch {
    same = false;
  }
  if (!same) throw changed();
  return () => {
    if (identityOf(file) !== pinned) throw changed();
  };
}

/** identityOf(file) → device, inode, size and change times in nanoseconds: a rename over it or a write into it changes one of them. */
function identityOf(file: string): string | undefined {
  try {
    const st = fs.statSync(file, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/** undoWrite(undo): the file and its backup as they were before this run. Throws when that fails. */
export function undoWrite(undo: Undo): void {
  const { before } = undo;
  if (before.kind === "present") writeAtomically(undo.target, before.text, before.mode, before.owner);
  else {
    fs.rmSync(undo.target, { force: true });
    removeDirectories(before.createdDirs);
  }
  if (undo.backup) restoreBackup(undo.backup);
}

function restoreBackup(backup: NonNullable<Undo["backup"]>): void {
  if (backup.before) writeAtomically(backup.path, backup.before.bytes, backup.before.mode, backup.before.owner);
  else fs.rmSync(backup.path, { force: true });
}

function snapshotOf(file: string): { bytes: Uint8Array; mode: number; owner: Owner } | undefined {
  try {
    // A link at the backup name is replaced, never followed; nor is anything but a regular file read.
    const read = readBoundedFile(file, MAX_READ_BYTES, { followLink: false });
    if (!read.ok) return undefined;
    return { bytes: read.bytes, mode: read.stat.mode & 0o7777, owner: { uid: read.stat.uid, gid: read.stat.gid } };
  } catch {
    return undefined;
  }
}
