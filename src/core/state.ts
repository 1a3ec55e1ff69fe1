// The private state store (docs/contract.md §3.3): small markers and record sets that hooks keep between
// invocations. One rule for writes and reads alike: a file counts only when it is a regular
// file, not a link, owned by this user, inside a 0700 directory of ours. Everything else is
// "malformed" or "linked" state — never evidence, never followed, never overwritten — because
// the state directory sits in a shared temp directory where another user (or a prompt-injected
// tool call) can plant links that would otherwise turn a marker write into a file clobber.
import * as fs from "node:fs";
import * as path from "node:path";
import { posixCksum } from "./cksum.ts";

const IS_WINDOWS = process.platform === "win32";
const currentUid = (): number => (typeof process.getuid === "function" ? process.getuid() : -1);

export type UnsafeCause = "storage" | "linked";

export type StateStore =
  | {
      readonly safe: true;
      readonly dir: string;
      /** This call created the directory. */
      readonly created?: boolean;
      /** Every directory this call created, outermost first (only with `created`). */
      readonly createdDirectories?: readonly string[];
    }
  | { readonly safe: false; readonly dir: string; readonly cause: UnsafeCause; readonly problem: string };

/**
 * defaultStateDirectory(env) → `$VELESDB_HOOKS_STATE_DIR`, else `${TMPDIR:-/tmp}/velesdb-agent-hooks-<uid>`.
 * The default is the bash reference's own location, so swapping implementations mid-session
 * keeps every marker. A relative override is returned as given; openStateStore refuses it.
 */
export function defaultStateDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.VELESDB_HOOKS_STATE_DIR;
  if (override !== undefined && override !== "") return override;
  if (IS_WINDOWS) {
    const temp = env.TEMP || env.TMP || "C:\\Windows\\Temp";
    return path.join(temp, `velesdb-agent-hooks-${env.USERNAME || "user"}`);
  }
  const tmp = env.TMPDIR && env.TMPDIR !== "" ? env.TMPDIR : "/tmp";
  return path.join(tmp, `velesdb-agent-hooks-${currentUid()}`);
}

/**
 * openStateStore(dir, anchor?) → a safe store (created 0700 when missing) or an unsafe one saying why.
 * `anchor`, when given, must already be a directory, and `dir` must lie below it: the part of
 * `dir` below the anchor is created one component at a time, see openAnchoredStateStore.
 */
export function openStateStore(dir: string, anchor?: string): StateStore {
  if (!path.isAbsolute(dir))
    return { safe: false, dir, cause: "storage", problem: `state directory ${dir} is not an absolute path` };
  if (anchor !== undefined) return openAnchoredStateStore(dir, anchor);
  let created = false;
  const existing = lstatOrNull(dir);
  if (existing === null) {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      created = true;
    } catch (mkdirError) {
      return {
        safe: false,
        dir,
        cause: "storage",
        problem: `state directory ${dir} cannot be created (${errorCode(mkdirError)})`,
      };
    }
  }
  // The lstat that found the directory is the one checked: a second one cost every hook a
  // system call for the same answer (docs/performance/2026-12-02-io-floor.md).
  const store = checkStateDirectory(dir, existing === null || existing === "error" ? undefined : existing);
  return store.safe && created ? { ...store, created, createdDirectories: [dir] } : store;
}

/**
 * openAnchoredStateStore("/ws/.velesdb-hooks/state", "/ws") → the store inside the workspace.
 * The DeepSeek bridge's state lives in `<payload cwd>/.velesdb-hooks`, and everything below the
 * workspace is repository content: git commits symlinks, so a `.velesdb-hooks` linking to
 * another repository would have had our markers and a `.gitignore` of `*` written there. So:
 * the anchor is resolved once, each component below it is lstat()ed and created with a
 * non-recursive mkdir, a link, a non-directory or another user's directory is refused, and the
 * result must still resolve inside the resolved anchor. A payload naming a workspace that does
 * not exist (deleted, mistyped, fuzzed: docs/failure-modes.md) makes state unavailable, nothing created.
 */
function openAnchoredStateStore(dir: string, anchor: string): StateStore {
  const unsafe = (cause: UnsafeCause, problem: string): StateStore => ({ safe: false, dir, cause, problem });
  const below = path.relative(anchor, dir);
  if (below === "" || below.startsWith("..") || path.isAbsolute(below))
    return unsafe("storage", `state directory ${dir} is not inside ${anchor}`);
  let resolvedAnchor: string;
  try {
    resolvedAnchor = fs.realpathSync.native(anchor);
    if (!fs.statSync(resolvedAnchor).isDirectory())
      throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
  } catch {
    return unsafe("storage", `state directory ${dir} is not created: ${anchor} is not a directory`);
  }
  let current = resolvedAnchor;
  const createdDirectories: string[] = [];
  for (const component of below.split(path.sep)) {
    current = path.join(current, component);
    let st = lstatOrNull(current);
    if (st === null) {
      try {
        fs.mkdirSync(current, { mode: 0o700 });
        createdDirectories.push(current);
      } catch (error) {
        if (errorCode(error) !== "EEXIST")
          return unsafe("storage", `state directory ${current} cannot be created (${errorCode(error)})`);
      }
      st = lstatOrNull(current);
    }
    if (st === "error" || st === null) return unsafe("storage", `state directory ${current} cannot be inspected`);
    if (st.isSymbolicLink()) return unsafe("linked", `state directory ${current} is a symlink`);
    if (!st.isDirectory()) return unsafe("storage", `state directory ${current} is not a directory`);
    if (!IS_WINDOWS && st.uid !== currentUid())
      return unsafe("storage", `state directory ${current} is owned by another user`);
  }
  // A component swapped for a link between our lstat and our mkdir of the next one still
  // cannot take the store outside the workspace.
  let resolved: string;
  try {
    resolved = fs.realpathSync.native(current);
  } catch (error) {
    return unsafe("storage", `state directory ${current} cannot be resolved (${errorCode(error)})`);
  }
  if (resolved !== current)
    return unsafe("linked", `state directory ${current} resolves to ${resolved}, outside ${resolvedAnchor}`);
  const store = checkStateDirectory(current);
  return store.safe && createdDirectories.length > 0 ? { ...store, created: true, createdDirectories } : store;
}

/** checkStateDirectory(dir, known?) → safe when dir (as `known`, its lstat, says) is a real directory, ours, mode 0700. */
function checkStateDirectory(dir: string, known?: fs.Stats): StateStore {
  const unsafe = (cause: UnsafeCause, problem: string): StateStore => ({ safe: false, dir, cause, problem });
  let st: fs.Stats;
  try {
    st = known ?? fs.lstatSync(dir);
  } catch (error) {
    return unsafe("storage", `state directory ${dir} cannot be inspected (${errorCode(error)})`);
  }
  if (st.isSymbolicLink()) return unsafe("linked", `state directory ${dir} is a symlink`);
  if (!st.isDirectory()) return unsafe("storage", `state directory ${dir} is not a directory`);
  if (!IS_WINDOWS) {
    if (st.uid !== currentUid()) return unsafe("storage", `state directory ${dir} is owned by another user`);
    if ((st.mode & 0o777) !== 0o700) {
      return unsafe("storage", `state directory ${dir} has mode ${(st.mode & 0o777).toString(8)}, not 700`);
    }
  }
  return { safe: true, dir };
}

export type PrivateRead =
  | { readonly state: "absent" }
  | { readonly state: "present"; readonly content: string }
  | { readonly state: "linked" | "malformed"; readonly path: string; readonly problem: string };

/** readPrivateFile(p) → its content only when p is a regular, unlinked file this user owns. */
export function readPrivateFile(filePath: string, maxBytes = 1 << 20): PrivateRead {
  let st: fs.Stats | undefined;
  try {
    // An absent file is the common case (no marker yet): answered without an exception, each of
    // which costs a few KB of heap (docs/performance/2026-12-02-io-floor.md, see lstatOrNull).
    st = fs.lstatSync(filePath, { throwIfNoEntry: false });
  } catch (error) {
    // ENOENT comes back as undefined (below); a path through a regular file still throws ENOTDIR.
    if (errorCode(error) === "ENOTDIR") return { state: "absent" };
    return { state: "malformed", path: filePath, problem: `cannot be inspected (${errorCode(error)})` };
  }
  if (st === undefined) return { state: "absent" };
  if (st.isSymbolicLink()) return { state: "linked", path: filePath, problem: "is a symlink" };
  if (!st.isFile()) return { state: "malformed", path: filePath, problem: "is not a regular file" };
  if (!IS_WINDOWS && st.uid !== currentUid())
    return { state: "malformed", path: filePath, problem: "is owned by another user" };
  if (st.size > maxBytes) return { state: "malformed", path: filePath, problem: "is too large" };
  let fd: number | undefined;
  try {
    fd = fs.openSync(filePath, fs.constants.O_RDONLY | noFollowFlag());
    return { state: "present", content: fs.readFileSync(fd, "utf8") };
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { state: "absent" };
    if (errorCode(error) === "ELOOP") return { state: "linked", path: filePath, problem: "is a symlink" };
    return { state: "malformed", path: filePath, problem: `cannot be read (${errorCode(error)})` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export type WriteOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly cause: "linked" | "malformed" | "storage"; readonly problem: string };

/**
 * writePrivateFile(target, content): new 0600 file created O_EXCL|O_NOFOLLOW beside the target,
 * then renamed over it. A target that is a link or not a regular file is left alone. No fsync:
 * these markers live for one session in a temp directory (docs/contract.md §3.3).
 */
export function writePrivateFile(target: string, content: string | Uint8Array): WriteOutcome {
  const existing = lstatOrNull(target);
  if (existing === "error") return { ok: false, cause: "storage", problem: `${target} cannot be inspected` };
  if (existing?.isSymbolicLink()) return { ok: false, cause: "linked", problem: `${target} is a symlink` };
  if (existing && !existing.isFile())
    return { ok: false, cause: "malformed", problem: `${target} is not a regular file` };
  const temp = `${target}.tmp-${process.pid}-${uniqueSuffix()}`;
  let fd: number | undefined;
  try {
    fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | noFollowFlag(), 0o600);
    // TextEncoder, not Buffer.from: the first Buffer.from of a string in a process costs ~0.3 M
    // instructions, 3–5% of a state-writing hook (docs/performance/2026-12-02-bench-guard.md).
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    for (let offset = 0; offset < bytes.length; ) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temp, target);
    return { ok: true };
  } catch (error) {
    if (fd !== undefined) fs.closeSync(fd);
    try {
      fs.unlinkSync(temp);
    } catch {
      // The temp file may never have been created; nothing else to clean.
    }
    return { ok: false, cause: "storage", problem: `${target} cannot be written (${errorCode(error)})` };
  }
}

/**
 * createExclusiveFile(target, content) → true when this call created target and wrote it whole.
 * O_CREAT|O_EXCL|O_NOFOLLOW: whatever already sits at that name (a file, a planted link) is
 * left as it is. For files we place beside the state, not state itself (no temp + rename).
 */
export function createExclusiveFile(target: string, content: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(
      target,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | noFollowFlag(),
      0o600,
    );
    const bytes = new TextEncoder().encode(content); // not Buffer.from: see writePrivateFile
    for (let offset = 0; offset < bytes.length; ) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * ensurePrivateSubdirectory(stateDir, "tool-output") → null when `<stateDir>/<name>` is (now) a
 * 0700 directory of ours and not a link, else why not. Called only inside a safe store, where
 * nobody else can rename entries: a directory of ours with a looser mode (an older tool, a
 * user's `mkdir`) is repaired to 0700 through its own descriptor rather than refused forever,
 * which stderr alone (hosts do not show it) would never have explained. A link, a
 * non-directory or another user's directory is refused.
 */
export function ensurePrivateSubdirectory(stateDir: string, name: string): string | null {
  const dir = path.join(stateDir, name);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (errorCode(error) !== "EEXIST") return `${dir} cannot be created (${errorCode(error)})`;
  }
  const st = lstatOrNull(dir);
  if (st === null || st === "error") return `${dir} cannot be inspected`;
  if (st.isSymbolicLink()) return `${dir} is a symlink`;
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (IS_WINDOWS) return null;
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | noFollowFlag());
    const opened = fs.fstatSync(fd);
    if (!opened.isDirectory()) return `${dir} is not a directory`;
    if (opened.uid !== currentUid()) return `${dir} is owned by another user`;
    if ((opened.mode & 0o777) !== 0o700) fs.fchmodSync(fd, 0o700);
    return null;
  } catch (error) {
    if (errorCode(error) === "ELOOP") return `${dir} is a symlink`;
    return `${dir} cannot be made private (${errorCode(error)})`;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** markerPath(store, "stop", id) → `<dir>/stop-<cksum>.marker`. */
export function markerPath(store: { dir: string }, kind: string, identity: string): string {
  return path.join(store.dir, `${kind}-${posixCksum(identity)}.marker`);
}

/** recordsPath(store, "learning-dirty", id) → `<dir>/learning-dirty-<cksum>.records`. */
export function recordsPath(store: { dir: string }, kind: string, identity: string): string {
  return path.join(store.dir, `${kind}-${posixCksum(identity)}.records`);
}

/** Per-repository identities join the session and the config root with a newline (docs/contract.md §3.3). */
export const repositoryIdentity = (sessionId: string, configRoot: string): string => `${sessionId}\n${configRoot}`;

export function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? "error";
}

/** isDirectory(p) → true when p resolves (links followed) to a directory. */
export function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * lstatOrNull(p) → the lstat, null when nothing is there, "error" otherwise. ENOENT comes back
 * as undefined, not as an exception: each thrown error costs ~3 KB of heap, and a hook that
 * grows its heap past ~1.2 MB makes the engine start a thread that pre-faults memory, ~0.8 ms
 * of CPU (BUN_JSC_useWarmUpMarkedBlocks, measured on the compiled binary, docs/performance/2026-12-02-io-floor.md).
 */
function lstatOrNull(p: string): fs.Stats | null | "error" {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false }) ?? null;
  } catch {
    return "error";
  }
}

function noFollowFlag(): number {
  return fs.constants.O_NOFOLLOW ?? 0;
}

let tempCount = 0;

/**
 * uniqueSuffix() → "mx6ae26o-1": with the pid beside it, a name no other live process makes. Not
 * random, and it need not be: temp files are created O_EXCL in a private 0700 directory, so a
 * clash can only fail a write, never redirect one, and only a dead process with the same pid
 * in the same millisecond could clash. crypto.getRandomValues cost every state write ~0.1 ms
 * of CPU to initialise (docs/performance/2026-12-02-bench-guard.md).
 */
export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}-${++tempCount}`;
}
