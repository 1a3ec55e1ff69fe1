// Where things live, from the environment the installer was started with (docs/contract.md §9):
// our own tree ($VELESDB_HOOKS_HOME, default ~/.velesdb-hooks) with the stable binary in
// bin/, and each client's home ($CLAUDE_CONFIG_DIR, $CODEX_HOME). A relative override is
// refused rather than resolved against the cwd: the hosts read these variables from other
// working directories, so a relative value would point each of them somewhere else.
import * as path from "node:path";
import { homeDirectory } from "../core/home.ts";
import { hasUnsafeText, readerJson } from "../core/texts.ts";

export interface InstallerContext {
  readonly env: NodeJS.ProcessEnv;
  readonly home: string;
  readonly platform: NodeJS.Platform;
  readonly cwd: string;
  /** `--config PATH`, already absolute, for the one client that takes it (its `configFile`); undefined: its default file. */
  readonly configPath?: string;
}

export type Resolved = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly problem: string };

/** installerContext(process.env) → the home directory and platform every path derives from. */
export function installerContext(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): InstallerContext {
  const platform = process.platform;
  return { env, home: homeDirectory(env), platform, cwd };
}

/** absoluteOverride(ctx, "CODEX_HOME", fallback) → the variable when set and absolute, the fallback when unset. */
export function absoluteOverride(ctx: InstallerContext, variable: string, fallback: string): Resolved {
  const value = ctx.env[variable];
  if (value === undefined || value === "") return { ok: true, path: fallback };
  if (!path.isAbsolute(value)) {
    return { ok: false, problem: `${variable} is set to a relative path; set it to an absolute path (or unset it)` };
  }
  return { ok: true, path: path.normalize(value) };
}

/** ourTree(ctx) → $VELESDB_HOOKS_HOME, else ~/.velesdb-hooks. */
export function ourTree(ctx: InstallerContext): Resolved {
  return absoluteOverride(ctx, "VELESDB_HOOKS_HOME", path.join(ctx.home, ".velesdb-hooks"));
}

/** stableBinaryPath(ctx) → <our tree>/bin/velesdb-hooks(.exe): the path every entry names. */
export function stableBinaryPath(ctx: InstallerContext): Resolved {
  const tree = ourTree(ctx);
  if (!tree.ok) return tree;
  return {
    ok: true,
    path: path.join(tree.path, "bin", ctx.platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks"),
  };
}

/**
 * shown(ctx, "/home/u/.claude/settings.json") → "~/.claude/settings.json", for output users
 * paste into issues; a path that is not plainly printable comes out as a quoted string (see
 * printable), since paths come from files (the record of files, --config) and directory names.
 */
export function shown(ctx: InstallerContext, p: string): string {
  const home = ctx.home.replace(/[\\/]+$/, "");
  if (home !== "" && (p === home || p.startsWith(home + path.sep))) return printable(`~${p.slice(home.length)}`);
  return printable(p);
}

/**
 * printable("Stop") → Stop; printable("x\u001b[2J\nforged") → "x\u001b[2J\nforged": a value read
 * from a file (a path, an event key) as it is when every character is printable, else as a
 * JSON string with every control and line separator escaped, so it can never move the cursor,
 * ring, or forge a line of the report (docs/decisions.md#installer-second-trial-from-outside).
 */
export function printable(value: string): string {
  return hasUnsafeText(value) || value.includes('"') ? readerJson(value) : value;
}

/** isInside("/a/b", "/a") → true: `child` is `parent` or below it. */
export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** quoted("a\u001b[2J") → `"a\u001b[2J"`: always a JSON string, with DEL, the C1 controls and line separators escaped (the texts' own rule). */
export const quoted = (value: string): string => readerJson(value);
