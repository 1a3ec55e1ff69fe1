// Root acting in another user's home (docs/decisions.md#installer): `sudo` keeping HOME, a
// provisioning script. Everything below that home is the user's to arrange, links included,
// and a link of theirs once sent root's edit into a root-owned settings file (whose new entries
// run a binary the install had just handed to that user) and put a backup of a file the user
// could not read into the user's directory. So when the process's effective uid is not the
// home's owner, every link on the way to a file the installer reads or writes, and whatever it
// leads to, must belong to the home's owner; else that client is refused before any change.
// A link the user could neither have made nor replaced — root's own, in a directory the user
// cannot write (`/home -> /var/home`) — is the system's and is followed; the links inside
// where it leads are judged again.
import * as fs from "node:fs";
import * as path from "node:path";
import type { InstallerClient } from "../client.ts";
import { shown, type InstallerContext } from "../paths.ts";
import { errorCode } from "../../core/state.ts";
import { ownerOfNearest, type Owner } from "./file-owner.ts";

/** Kernels give up after 40 links in one lookup (Linux MAXSYMLINKS); so do we. */
const MAX_LINKS = 40;

/**
 * foreignHomeOwner(home) → the home's owner when this process runs as someone else (root
 * installing for a user); undefined in one's own home and where there are no uids (Windows).
 */
export function foreignHomeOwner(home: string): Owner | undefined {
  if (process.platform === "win32" || typeof process.geteuid !== "function") return undefined;
  const owner = ownerOfNearest(home);
  return owner.uid === process.geteuid() ? undefined : owner;
}

/** Why a path may not be reached in this run (what follows its name); undefined: it may. */
export type Reach = (p: string) => string | undefined;

/** reachFor(ctx) → the rule for this run's home: in one's own home every path may be reached. */
export function reachFor(ctx: InstallerContext): Reach {
  const owner = foreignHomeOwner(ctx.home);
  return owner ? (p) => linkProblem(p, owner, (shownPath) => shown(ctx, shownPath)) : () => undefined;
}

/**
 * clientFiles(ctx, client, registry, withSections) → every file acting on a client reads or
 * writes: its registry, its sections, the MCP server file install --mcp writes (docs/mcp-server.md), what
 * it also reads.
 */
export function clientFiles(
  ctx: InstallerContext,
  client: InstallerClient,
  registryPath: string,
  withSections = true,
): string[] {
  const sections = withSections ? (client.sections ?? []).map((section) => section.path(ctx)) : [];
  const mcpFile = withSections ? client.mcp?.files[0].path(ctx) : undefined;
  return [registryPath, ...sections, ...(mcpFile?.ok ? [mcpFile.path] : []), ...(client.alsoReads?.(ctx) ?? [])];
}

/**
 * linkProblem(file, owner, show) → why a process acting in `owner`'s home must not follow the
 * way to `file` (text that follows the file's name), or undefined. Components that do not
 * exist yet end the walk: they will be created, as directories of the owner's.
 */
export function linkProblem(file: string, owner: Owner, show: (p: string) => string): string | undefined {
  const problem = walk(path.resolve(file), owner, show, { links: MAX_LINKS });
  if (problem === undefined) return undefined;
  return `${problem} (uid ${owner.uid}); run as uid ${process.geteuid?.() ?? 0}, velesdb-hooks follows only the home owner's links to the home owner's files`;
}

function walk(file: string, owner: Owner, show: (p: string) => string, budget: { links: number }): string | undefined {
  const { root } = path.parse(file);
  let current = root;
  for (const part of file.slice(root.length).split(path.sep)) {
    if (part === "") continue;
    const next = path.join(current, part);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(next);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return undefined;
      return `cannot be inspected at ${show(next)} (${code})`;
    }
    if (!st.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (--budget.links < 0) return "leads through too many links";
    const users = ownerMayWrite(current, owner);
    if (users && st.uid !== owner.uid)
      return `leads through ${show(next)}, a link owned by uid ${st.uid}, not by the home's owner`;
    const destination = path.resolve(current, fs.readlinkSync(next));
    const inner = walk(destination, owner, show, budget);
    if (inner !== undefined) return inner;
    let real: string;
    let target: fs.Stats;
    try {
      real = fs.realpathSync.native(next);
      target = fs.statSync(real);
    } catch {
      if (!users) return undefined; // The system's dangling link: what reads it fails on its own.
      return `leads through the link ${show(next)} to ${show(destination)}, which does not exist`;
    }
    if (users && target.uid !== owner.uid) {
      return `leads through the link ${show(next)} to ${show(real)}, which belongs to uid ${target.uid}, not to the home's owner`;
    }
    current = real;
  }
  return undefined;
}

/**
 * ownerMayWrite(dir, owner) → whether `owner` could have put (or swapped) an entry in `dir`:
 * theirs, or writable by a group or everyone (group membership is not looked up: counted as
 * theirs, which refuses more, never less).
 */
function ownerMayWrite(dir: string, owner: Owner): boolean {
  try {
    const st = fs.lstatSync(dir);
    return st.uid === owner.uid || (st.mode & 0o022) !== 0;
  } catch {
    return true;
  }
}
