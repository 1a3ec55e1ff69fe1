// Reading a user's file the installer may later write (a registry, Codex's config.toml, a rules
// file, an MCP file) without trusting it: a link is followed only to a regular file outside our
// own tree, a size is never believed (the read stops one byte past the bound), and a file a
// rewrite by this process would hand to another owner is refused before anything changes. Every
// refusal names the file and the reason; nothing here prints a file's content (settings hold
// tokens). The write side is user-file-write.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { readBoundedFile } from "../../core/bounded-read.ts";
import { errorCode } from "../../core/state.ts";
import { ownerOfNearest, processIds, type Owner } from "./file-owner.ts";
import { isInside } from "../paths.ts";

export const BACKUP_SUFFIX = ".velesdb-backup";
/**
 * The most the installer reads of any file it did not write itself (a registry, Codex's
 * config.toml, a rules file, a backup, its own record): hosts' settings are kilobytes, and a
 * bound keeps a link to a huge or endless file from costing more
 * (docs/decisions.md#installer-second-trial-from-outside).
 */
export const MAX_READ_BYTES = 16 << 20;

/** A user file we may write (a registry or Windsurf's rules file), as the write policy needs it. */
export type WritableFile =
  | {
      readonly kind: "absent";
      readonly path: string;
      readonly target: string;
      /** Who a new file belongs to: the nearest existing directory's owner (it matters when root installs into a user's home). */
      readonly owner: Owner;
    }
  | {
      readonly kind: "present";
      readonly path: string;
      /** Where the bytes live: the link's resolved target for a symlinked file. */
      readonly target: string;
      readonly linked: boolean;
      /** The bytes as read (a BOM included). */
      readonly text: string;
      readonly mode: number;
      readonly owner: Owner;
    };

/** A user file as found on disk; `refused` means no command may change it. */
export type UserFile = WritableFile | { readonly kind: "refused"; readonly path: string; readonly problem: string };

/**
 * readUserFile(path, ourTree) → the file, or why it must not be touched. Never throws. A link
 * is followed to a regular file (written there later); a broken link, a directory, something
 * that is not a regular file, a link into our own tree and a backup name taken by a directory
 * are refused; so is a file larger than `maxBytes` (default MAX_READ_BYTES; its size is never
 * trusted: the read stops one byte past the limit).
 */
export function readUserFile(filePath: string, ourTreePath: string, maxBytes?: number): UserFile {
  const refused = (problem: string): UserFile => ({ kind: "refused", path: filePath, problem });
  let linkStat: fs.Stats;
  try {
    linkStat = fs.lstatSync(filePath);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT")
      return { kind: "absent", path: filePath, target: filePath, owner: ownerOfNearest(path.dirname(filePath)) };
    if (code === "ENOTDIR") return refused("sits under something that is not a directory");
    return refused(`cannot be inspected (${code})`);
  }
  let target = filePath;
  let stat = linkStat;
  const linked = linkStat.isSymbolicLink();
  if (linked) {
    try {
      stat = fs.statSync(filePath);
      target = fs.realpathSync.native(filePath);
    } catch (error) {
      return refused(
        errorCode(error) === "ENOENT"
          ? "is a symlink to a file that does not exist"
          : `is a symlink that cannot be followed (${errorCode(error)})`,
      );
    }
  }
  if (stat.isDirectory()) return refused(linked ? "is a symlink to a directory" : "is a directory");
  if (!stat.isFile())
    return refused(linked ? "is a symlink to something that is not a regular file" : "is not a regular file");
  if (inOurTree(target, ourTreePath))
    return refused("resolves into velesdb-hooks' own directory; point it at a file of its own");
  const owner = ownerProblem(stat);
  if (owner) return refused(owner);
  const backup = backupProblem(target);
  if (backup) return refused(backup);
  // The bytes come from the file whose kind was just checked (a FIFO swapped in since would
  // otherwise hang the read): `target` is resolved, so a link there now is refused.
  const read = readBoundedFile(target, maxBytes ?? MAX_READ_BYTES, { followLink: false });
  if (!read.ok) return refused(read.problem);
  const text = read.bytes.toString("utf8");
  return {
    kind: "present",
    path: filePath,
    target,
    linked,
    text,
    mode: stat.mode & 0o7777,
    owner: { uid: stat.uid, gid: stat.gid },
  };
}

/**
 * ownerProblem(stat) → why a rewrite by this process would hand the file to someone else: only
 * root can give a new file another owner, and a user only a group they are in. Refused before
 * any change, naming the owner.
 */
function ownerProblem(st: fs.Stats): string | undefined {
  const ids = processIds();
  if (!ids || ids.uid === 0) return undefined;
  if (st.uid !== ids.uid) {
    return `is owned by uid ${st.uid}${userName(st.uid)}, not by the user running velesdb-hooks (uid ${ids.uid}); run it as the file's owner so the file keeps its owner`;
  }
  if (st.gid !== ids.gid && !ids.groups.includes(st.gid)) {
    return `belongs to group gid ${st.gid}, which this user is not in; a rewrite would change its group: run it as a member of that group`;
  }
  return undefined;
}

/** userName(1000) → " (alice)" from /etc/passwd, or "" when it is not there. */
function userName(uid: number): string {
  try {
    const passwd = readBoundedFile("/etc/passwd", MAX_READ_BYTES, { followLink: true });
    for (const line of passwd.ok ? passwd.bytes.toString("utf8").split("\n") : []) {
      const [name, , id] = line.split(":");
      if (name && id === String(uid)) return ` (${name})`;
    }
  } catch {
    // No passwd file (containers, other systems): the number says it.
  }
  return "";
}

/** A backup that is a directory (or otherwise not replaceable by rename) is found before any write. */
function backupProblem(registryPath: string): string | undefined {
  try {
    const st = fs.lstatSync(`${registryPath}${BACKUP_SUFFIX}`);
    if (st.isDirectory())
      return `has a backup path (${path.basename(registryPath)}${BACKUP_SUFFIX}) that is a directory`;
  } catch {
    // Absent: the backup will be created.
  }
  return undefined;
}

function inOurTree(target: string, ourTreePath: string): boolean {
  let tree = ourTreePath;
  try {
    tree = fs.realpathSync.native(ourTreePath);
  } catch {
    // Our tree does not exist yet; compare with the path as configured.
  }
  return isInside(target, tree) || isInside(target, ourTreePath);
}
