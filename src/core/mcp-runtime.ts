// Where the shared-memory broker of one velesdb-memory store lives, and what it last said about
// itself (docs/shared-memory.md). velesdb-memory is single-writer (its store takes
// an exclusive lock: velesdb-memory 0.17.0 src/daemon_startup.rs, open_through_lock_retries), so
// every session reaches the one server of a store through a broker keyed by that store. This
// module owns the names — the broker, the front, the guard and doctor all go through it, never
// through a path of their own — and reads the status file for the guard's refusal text, so it
// stays small: only fs and path, already on every hook's path (test/hot-path.test.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { posixCksum } from "./cksum.ts";
import { defaultStateDirectory, readPrivateFile, writePrivateFile } from "./state.ts";

/** The private directory (0700) below the hooks' state directory that holds every broker's files when the home cannot (mcpRuntimeDirectory). */
export const MCP_RUNTIME_SUBDIRECTORY = "mcp";
/** velesdb-memory 0.17.0 src/daemon_startup.rs default_store_path(): `~/.velesdb-memory`. */
const DEFAULT_STORE_NAME = ".velesdb-memory";

export type StoreResolution =
  | { readonly ok: true; readonly store: string }
  | { readonly ok: false; readonly problem: string };

/**
 * resolveStore(env, cwd) → the absolute store directory velesdb-memory would open: VELESDB_MEMORY_PATH
 * (relative to cwd, as the server resolves it from its working directory), else `$HOME/.velesdb-memory`
 * (HOME, then USERPROFILE: default_store_path()). The server's last resort, `./velesdb-memory-store`
 * with no home, would be a different store per working directory: refused, as is an empty variable.
 * The path is the real one (realStorePath): one store reached through a link is still one store,
 * with one broker and one server (velesdb-memory locks the directory it opens, whatever its name).
 */
export function resolveStore(env: NodeJS.ProcessEnv, cwd: string): StoreResolution {
  const given = env.VELESDB_MEMORY_PATH;
  if (given !== undefined) {
    if (given.trim() === "")
      return { ok: false, problem: "VELESDB_MEMORY_PATH is set but empty; set it to the store directory or unset it" };
    return { ok: true, store: realStorePath(path.resolve(cwd, given)) };
  }
  const home = env.HOME || env.USERPROFILE;
  if (!home)
    return { ok: false, problem: "neither HOME nor VELESDB_MEMORY_PATH is set, so the store cannot be located" };
  return { ok: true, store: realStorePath(path.join(path.resolve(home), DEFAULT_STORE_NAME)) };
}

/**
 * realStorePath("/home/u/link-to-store") → "/data/store": the deepest part of the path that
 * exists, resolved with realpath, and the rest (a store not created yet) appended as given, so a
 * store reached through a link and the same store named directly get one name — and one broker
 * — before and after the server first creates it. Nothing is created. A path that cannot be
 * resolved at all (a loop, no permission) is kept as given: the server then says what is wrong.
 */
export function realStorePath(absolute: string): string {
  const rest: string[] = [];
  let existing = absolute;
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(existing), ...rest);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = path.dirname(existing);
      // Only a missing part is walked past; a dangling link or a loop stays as it is named.
      if ((code !== "ENOENT" && code !== "ENOTDIR") || parent === existing || isLink(existing)) return absolute;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

export interface McpRuntimePaths {
  /** The private directory of every broker of this user. */
  readonly dir: string;
  /**
   * What holds dir, and so how dir is checked before use (channel.ts openRuntimeDirectory):
   * "home", a directory of the user's own home (`~/.velesdb-hooks`), where no other user can
   * create anything; "state", the hooks' state directory, which may sit in a shared temp
   * directory and must itself be a private directory of ours (state.ts openStateStore).
   */
  readonly holder: "home" | "state";
  /** The broker's Unix socket (mode 0600). */
  readonly socket: string;
  /** `<hash>.status.json`, written atomically by the broker. */
  readonly status: string;
  /** The start lock: who may bind the socket or replace a stale one. */
  readonly lock: string;
  /** What the last front of this store ran (its server, a checksum of its settings): a hook may start a broker from it (memory-client.ts). */
  readonly front: string;
  /** The broker's own stderr and its server's, truncated at each start. */
  readonly log: string;
  /** The store these paths belong to, or undefined when it cannot be located. */
  readonly store: string | undefined;
}

/** `~/.velesdb-hooks/run`: beside the installed binary (docs/shared-memory.md "The channel"). */
const HOME_RUNTIME = [".velesdb-hooks", "run"] as const;
/**
 * The longest socket path every Unix takes: sun_path is 104 bytes on macOS and the BSDs (108 on
 * Linux), NUL included. A longer home gets the state directory instead (see mcpRuntimeDirectory).
 */
export const MAX_SOCKET_PATH_BYTES = 103;
/** m<crc>-<length>.sock at its longest: a 10-digit CRC, a store path of up to 99 999 bytes. */
const LONGEST_SOCKET_NAME = "m4294967295-99999.sock";

/**
 * mcpRuntimeDirectory(env) → where the broker's files live, and what holds that place:
 * - `$VELESDB_HOOKS_STATE_DIR/mcp` when that variable is set (tests, a user who moved the state);
 * - else `<real $HOME>/.velesdb-hooks/run`: in the user's own home, so no other user can take
 *   the name first. The shared temp directory could be squatted: another local user who made
 *   `/tmp/velesdb-agent-hooks-<uid>` before us denied every session its memory (the checks
 *   refuse a directory that is not ours, rightly, and then nothing works). HOME, not
 *   XDG_RUNTIME_DIR: the store is found through HOME too, and every host hands HOME to its MCP
 *   servers, while Codex (0.169.0) passes them an allow-list of variables (its binary names
 *   XDG_RUNTIME_DIR only in its D-Bus library) —
 *   a front started by Codex and one started by Claude Code would have had two brokers for one
 *   store, the second server locked out. HOME is resolved (realpath), so one home reached
 *   through a link is one place;
 * - else, or when a socket there would be longer than MAX_SOCKET_PATH_BYTES, the state
 *   directory's `mcp/` (`${TMPDIR:-/tmp}/velesdb-agent-hooks-<uid>`), checked as before.
 */
export function mcpRuntimeDirectory(env: NodeJS.ProcessEnv): Pick<McpRuntimePaths, "dir" | "holder"> {
  const inState = { dir: path.join(defaultStateDirectory(env), MCP_RUNTIME_SUBDIRECTORY), holder: "state" as const };
  // Windows has no front (front.ts refuses there): its paths stay where they were.
  if (env.VELESDB_HOOKS_STATE_DIR || process.platform === "win32") return inState;
  const home = env.HOME || env.USERPROFILE;
  if (!home || !path.isAbsolute(home)) return inState;
  let realHome = home;
  try {
    realHome = fs.realpathSync.native(home);
  } catch {
    // A home that does not exist yet is used as named; the directory check says what is wrong.
  }
  const dir = path.join(realHome, ...HOME_RUNTIME);
  // The longest name a checksum gives, so where the files live does not depend on the store.
  if (new TextEncoder().encode(path.join(dir, LONGEST_SOCKET_NAME)).length > MAX_SOCKET_PATH_BYTES) return inState;
  return { dir, holder: "home" };
}

/**
 * mcpRuntimePaths(env) → the files of the broker for env's store (no file is touched). The name
 * is the store's POSIX cksum, short because a Unix socket path is limited to ~104 bytes; two
 * stores with one checksum are told apart by the broker's greeting, which names its store.
 */
export function mcpRuntimePaths(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): McpRuntimePaths {
  const resolved = resolveStore(env, cwd);
  const { dir, holder } = mcpRuntimeDirectory(env);
  const base = path.join(dir, `m${resolved.ok ? posixCksum(resolved.store) : "none"}`);
  return {
    dir,
    holder,
    socket: `${base}.sock`,
    status: `${base}.status.json`,
    lock: `${base}.lock`,
    front: `${base}.front.json`,
    log: `${base}.log`,
    store: resolved.ok ? resolved.store : undefined,
  };
}

/** The status file's content (docs/shared-memory.md, "Status file"). */
export interface McpStatusRecord {
  readonly state: "running" | "failed";
  readonly pid: number;
  readonly server: string;
  readonly store: string;
  /** One line: the server's own first stderr line, or what the broker saw (a lock, a timeout). */
  readonly cause: string;
  readonly at: string;
}

export type McpStatus =
  | { readonly state: "absent"; readonly cause?: string }
  | {
      readonly state: "running" | "failed";
      readonly pid: number;
      readonly cause: string;
      readonly at: string;
      readonly server: string;
      readonly store: string;
    };

/**
 * readMcpStatus(env) → what the broker of env's store last wrote: "running" (its pid is alive),
 * "failed" (the cause in one line), or "absent" (no broker ran, it exited when idle, or it was
 * killed: a "running" record whose pid is gone). The file counts only as private state does
 * (state.ts readPrivateFile: a regular file of ours, not a link). Never throws.
 */
export function readMcpStatus(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): McpStatus {
  const paths = mcpRuntimePaths(env, cwd);
  const read = readPrivateFile(paths.status, 64 * 1024);
  if (read.state === "absent") return { state: "absent" };
  if (read.state !== "present") return { state: "absent", cause: `${paths.status} ${read.problem}` };
  const record = parseStatus(read.content);
  if (!record) return { state: "absent", cause: `${paths.status} is not a broker status` };
  if (record.state === "running" && !processAlive(record.pid))
    return { state: "absent", cause: `the broker (pid ${record.pid}) is gone` };
  return record;
}

function parseStatus(text: string): McpStatusRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (r.state !== "running" && r.state !== "failed") return undefined;
  if (typeof r.pid !== "number" || !Number.isSafeInteger(r.pid) || r.pid <= 0) return undefined;
  for (const key of ["server", "store", "cause", "at"]) if (typeof r[key] !== "string") return undefined;
  // One line of at most 300 characters reaches a model-facing text: nothing more is believed.
  const cause = (r.cause as string).split(/\r?\n/)[0]!.slice(0, 300);
  return {
    state: r.state,
    pid: r.pid,
    server: r.server as string,
    store: r.store as string,
    cause,
    at: r.at as string,
  };
}

/** processAlive(pid) → signal 0 reaches it (EPERM: alive, another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** isSocketOfOurs(p) → p is a socket (not a link) owned by this user. */
export function isSocketOfOurs(p: string): boolean {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  return st?.isSocket() === true && (typeof process.getuid !== "function" || st.uid === process.getuid());
}

/** What a front records for the hooks (memory-client.ts): the server it runs and a checksum of its server settings. */
export interface FrontRecord {
  readonly server: string;
  readonly settings: string;
}

/**
 * serverSettingsDigest(env) → a checksum of the VELESDB_MEMORY_* variables (the store's path
 * aside, which names the broker itself), never their values: equal digests mean a broker
 * started from either environment runs its server with the same settings.
 */
export function serverSettingsDigest(env: NodeJS.ProcessEnv): string {
  const pairs = Object.keys(env)
    .filter((key) => key.startsWith("VELESDB_MEMORY_") && key !== "VELESDB_MEMORY_PATH")
    .sort()
    .map((key) => `${key}=${env[key]}`);
  return `${posixCksum(pairs.join("\n"))}-${pairs.length}`;
}

/** recordFront(paths, server, env): the front says which server it runs, for a hook that finds no broker. Best effort. */
export function recordFront(paths: McpRuntimePaths, server: string, env: NodeJS.ProcessEnv): void {
  const text = `${JSON.stringify({ server, settings: serverSettingsDigest(env) } satisfies FrontRecord)}\n`;
  const read = readPrivateFile(paths.front, 8 * 1024);
  if (read.state === "present" && read.content === text) return;
  writePrivateFile(paths.front, text);
}

/** readFrontRecord(paths) → what the last front of this store recorded, when it is a record of ours. */
export function readFrontRecord(paths: McpRuntimePaths): FrontRecord | undefined {
  const read = readPrivateFile(paths.front, 8 * 1024);
  if (read.state !== "present") return undefined;
  try {
    const record = JSON.parse(read.content) as Partial<FrontRecord> | null;
    return typeof record?.server === "string" && path.isAbsolute(record.server) && typeof record.settings === "string"
      ? { server: record.server, settings: record.settings }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * sharedMemoryAbsent(env, cwd) → why no broker can serve a hook for env's store, or undefined
 * when a front of ours has run for it or a broker listens there: only then does a hook reach
 * for the broker (memory-client.ts). A few lstats, so a hook of a user without `install --mcp`
 * loads none of the client's code (docs/contract.md §12). `unset`: nothing was ever set up, the
 * user's choice (an agent wired to velesdb-memory directly), not a fault to report.
 */
export function sharedMemoryAbsent(
  env: NodeJS.ProcessEnv,
  cwd: string,
): { readonly why: string; readonly unset: boolean } | undefined {
  if (process.platform === "win32")
    return { why: "the shared velesdb-memory does not run on Windows yet", unset: false };
  const store = resolveStore(env, cwd);
  if (!store.ok) return { why: store.problem, unset: false };
  const paths = mcpRuntimePaths(env, cwd);
  // A runtime directory that is not a plain one (a planted link) is set up wrong, not absent:
  // the client refuses it and the hook says so. A state directory that is not a directory at
  // all (ENOTDIR) is the state rules' to report, not this check's.
  const dir = lstatQuietly(paths.dir);
  const setUp =
    dir !== undefined &&
    (!dir.isDirectory() || lstatQuietly(paths.front) !== undefined || lstatQuietly(paths.socket) !== undefined);
  return setUp
    ? undefined
    : {
        why: "no shared velesdb-memory is set up for this store (`velesdb-hooks install --mcp` sets one up)",
        unset: true,
      };
}

function lstatQuietly(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
