// The binary artefact (docs/contract.md §9 "Binary"): `install` copies the running executable to one
// stable path and every entry names that path, so an upgrade replaces one file and no entry's
// bytes change — which matters for Codex, whose trust is the hash of those bytes.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { errorCode } from "../core/state.ts";
import { copyAtomically, makeDirectories } from "./files/atomic-write.ts";
import { ownerOfNearest } from "./files/file-owner.ts";

export type RunningBinary =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly problem: string };

/**
 * runningBinary() → the executable to install: process.execPath inside a compiled binary.
 * From source, execPath is the Bun runtime itself, which must never be installed as a hook.
 */
export function runningBinary(): RunningBinary {
  const main = typeof Bun !== "undefined" ? Bun.main : "";
  const compiled = main.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(main);
  if (!compiled) {
    return {
      ok: false,
      problem: "this is velesdb-hooks running from source; build it (bun run build) and run dist/velesdb-hooks install",
    };
  }
  return { ok: true, path: process.execPath };
}

export type BinaryState =
  | { readonly state: "in step" }
  | { readonly state: "absent" }
  | { readonly state: "drifted"; readonly problem: string }
  /** Something that install must not replace (a link, a directory). */
  | { readonly state: "blocked"; readonly problem: string };

/** inspectBinary(stable, running) → whether the stable path holds exactly the running binary. */
export function inspectBinary(stablePath: string, running: RunningBinary): BinaryState {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(stablePath);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT") return { state: "absent" };
    return { state: "blocked", problem: `cannot be inspected (${code})` };
  }
  if (st.isSymbolicLink())
    return { state: "blocked", problem: "is a symlink; remove it so install can place the binary" };
  if (!st.isFile())
    return { state: "blocked", problem: "is not a regular file; remove it so install can place the binary" };
  if (process.platform !== "win32" && (st.mode & 0o111) === 0)
    return { state: "drifted", problem: "is not executable" };
  if (!running.ok) return { state: "in step" }; // Nothing to compare with: present and executable is all we can say.
  if (sameFile(running.path, stablePath) || sameBytes(running.path, stablePath)) return { state: "in step" };
  return { state: "drifted", problem: "differs from this velesdb-hooks" };
}

/**
 * placeBinary(running, stable) → copies (in the kernel) by temp file + fsync + rename; "unchanged" when already
 * there. The binary and the directories made for it belong to the nearest existing directory's
 * owner: root installing into a user's home must not leave a tree that user cannot remove.
 */
export function placeBinary(runningPath: string, stablePath: string): "copied" | "unchanged" {
  removeMovedAside();
  if (sameFile(runningPath, stablePath) || sameBytes(runningPath, stablePath)) return "unchanged";
  const owner = ownerOfNearest(path.dirname(stablePath));
  makeDirectories(path.dirname(stablePath), owner, 0o755);
  copyAtomically(runningPath, stablePath, 0o755, owner);
  return "copied";
}

/**
 * removeBinary(stable, tree): the binary, then bin/ and the tree itself when they are left empty.
 * → where a running binary was moved instead of deleted (Windows), else undefined.
 */
export function removeBinary(stablePath: string, treePath: string): string | undefined {
  removeMovedAside();
  let movedTo: string | undefined;
  try {
    fs.rmSync(stablePath, { force: true });
  } catch (error) {
    // Windows refuses to delete an executable while it runs, and `uninstall` is usually run by
    // the installed binary itself (or a host is running a hook): the command exited 1 and left
    // the 113 MB file behind (docs/development/testing.md#windows-run-under-wine; Bun reports
    // EFAULT under Wine). Renaming a running image
    // is allowed, so it moves to the temp directory, where the next install or uninstall
    // deletes it (as does Windows' own temp clean-up).
    if (process.platform !== "win32") throw error;
    movedTo = path.join(os.tmpdir(), `${MOVED_ASIDE_PREFIX}${process.pid}-${Date.now()}.exe`);
    try {
      fs.renameSync(stablePath, movedTo);
    } catch {
      throw error; // Another volume, say: report the deletion that failed.
    }
  }
  for (const dir of [path.dirname(stablePath), treePath]) {
    try {
      fs.rmdirSync(dir);
    } catch {
      // Not empty (the user keeps something there) or already gone: leave it.
    }
  }
  return movedTo;
}

const MOVED_ASIDE_PREFIX = "velesdb-hooks-removed-";
const MOVED_ASIDE = /^velesdb-hooks-removed-\d+-\d+\.exe$/;

/** removeMovedAside(): deletes binaries an earlier uninstall moved to the temp directory (Windows only); one still running stays. */
function removeMovedAside(): void {
  if (process.platform !== "win32") return;
  let names: string[];
  try {
    names = fs.readdirSync(os.tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    if (!MOVED_ASIDE.test(name)) continue;
    try {
      fs.rmSync(path.join(os.tmpdir(), name));
    } catch {
      // Still running (a hook started before the uninstall): the next run tries again.
    }
  }
}

function sameFile(a: string, b: string): boolean {
  try {
    const sa = fs.statSync(a);
    const sb = fs.statSync(b);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

function sameBytes(a: string, b: string): boolean {
  let fa: number | undefined;
  let fb: number | undefined;
  try {
    if (fs.statSync(a).size !== fs.statSync(b).size) return false;
    fa = fs.openSync(a, "r");
    fb = fs.openSync(b, "r");
    const chunk = 1 << 20;
    const ba = Buffer.alloc(chunk);
    const bb = Buffer.alloc(chunk);
    for (;;) {
      const na = fs.readSync(fa, ba, 0, chunk, null);
      const nb = fs.readSync(fb, bb, 0, chunk, null);
      if (na !== nb) return false;
      if (na === 0) return true;
      if (!ba.subarray(0, na).equals(bb.subarray(0, nb))) return false;
    }
  } catch {
    return false;
  } finally {
    if (fa !== undefined) fs.closeSync(fa);
    if (fb !== undefined) fs.closeSync(fb);
  }
}
