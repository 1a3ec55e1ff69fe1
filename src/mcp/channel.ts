// The owner-only channel between fronts and their broker (docs/shared-memory.md, "Channel"):
// a Unix socket in a 0700 directory of ours, `~/.velesdb-hooks/run` (or below the hooks' state
// directory, which may sit in a shared temp directory: runtime.ts mcpRuntimeDirectory) — so the
// directory is checked with lstat (state.ts: not a link, ours, private) before anything is
// created or connected there, exactly as the hooks' own state is.
// Who may bind the socket, or replace one a killed broker left, is decided by a start lock: a
// file made with link(2) (atomic, never follows or replaces), naming its holder's pid and start
// time, taken over only when it is stale (acquireStartLock).
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { ensurePrivateSubdirectory, errorCode, openStateStore } from "../core/state.ts";
import { LineSplitter, parseMessage } from "./lines.ts";
import { processAlive, type McpRuntimePaths } from "../core/mcp-runtime.ts";

/** The key of the first line each way: the front's greeting and the broker's answer. */
export const HELLO_KEY = "velesdbHooksBroker";

/**
 * The first line each way. A client says "hello" (a session: it counts, and is answered "ready"
 * or "failed" once the server has started or failed) or "probe" (a starting broker asking
 * whether one runs: answered "alive" at once, never counted); a broker says "retry" when it is
 * stopping: start or reach the next one.
 */
export interface Hello {
  readonly [HELLO_KEY]: "hello" | "probe" | "ready" | "failed" | "alive" | "retry";
  readonly store: string;
  /** In a session's hello: the velesdb-memory it would start (absent: it starts none). */
  readonly server?: string;
  readonly cause?: string;
}

/**
 * openRuntimeDirectory(paths) → ok when paths.dir is (now) a private directory of ours (0700,
 * ours, not a link). What holds it is checked by what it is (runtime.ts mcpRuntimeDirectory):
 * the hooks' state directory must itself be private, as for any state; `~/.velesdb-hooks` is
 * the user's own (it also holds the installed binary, often mode 755): it must be a directory
 * of ours that no one else may write to, made 0700 when missing.
 */
export function openRuntimeDirectory(
  paths: Pick<McpRuntimePaths, "dir" | "holder">,
): { ok: true } | { ok: false; problem: string } {
  const parent = path.dirname(paths.dir);
  if (paths.holder === "state") {
    const store = openStateStore(parent);
    if (!store.safe) return { ok: false, problem: store.problem };
  } else {
    const problem = ownedDirectory(parent);
    if (problem !== undefined) return { ok: false, problem };
  }
  const problem = ensurePrivateSubdirectory(parent, path.basename(paths.dir));
  return problem === null ? { ok: true } : { ok: false, problem };
}

/** ownedDirectory(dir) → undefined when dir is (now) a directory of ours that group and others cannot write, else why not. */
function ownedDirectory(dir: string): string | undefined {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (errorCode(error) !== "EEXIST") return `${dir} cannot be created (${errorCode(error)})`;
  }
  let st: fs.Stats;
  try {
    // Followed: a link the user made in their own home (a dotfiles checkout) is theirs to make.
    st = fs.statSync(dir);
  } catch (error) {
    return `${dir} cannot be inspected (${errorCode(error)})`;
  }
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) return `${dir} is owned by another user`;
  if ((st.mode & 0o022) !== 0)
    return `${dir} can be written by other users (mode ${(st.mode & 0o777).toString(8)}); chmod go-w it`;
  return undefined;
}

export type StartLock = { ok: true; release(): void } | { ok: false; problem: string };

/**
 * The longest a start lock is ever held: a broker holds it while it checks for another broker
 * and binds (about a second), or while it stops its server (SIGTERM after 3 s, SIGKILL after 6 s:
 * broker.ts stop). Older than this, its holder is stuck or is not ours (docs/hardening.md, 4.5).
 */
const LOCK_MAX_HOLD_MS = 20_000;
/** A lock that says nothing readable is never one of ours (it is written whole, then linked): after this grace, stale. */
const LOCK_GARBAGE_GRACE_MS = 1000;
/** A takeover in progress whose maker died: after this, the next one may start. */
const LOCK_BREAKER_STALE_MS = 5000;

/** What a start lock holds: its holder's pid, the process's start time (or "-"), a token of this take. */
interface LockRecord {
  readonly pid: number;
  readonly started: string;
  readonly token: string;
}

/**
 * processStartTime(pid) → when the process started, in clock ticks since boot (/proc/<pid>/stat,
 * field 22), or "-" where there is no /proc (macOS): with the pid, it names one process for good,
 * so a lock whose pid now belongs to another process (reused after a crash or a reboot) is stale.
 */
export function processStartTime(pid: number | "self"): string {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ")".
    const started = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    return started !== undefined && /^\d+$/.test(started) ? started : "-";
  } catch {
    return "-";
  }
}

/** parseLock("123 4567 k3j\n") → its record; "123\n", the form before start times were kept, has no start time. */
function parseLock(text: string): LockRecord | undefined {
  const match = /^(\d{1,10})(?: (\d+|-) ([0-9a-z]+))?\n$/.exec(text);
  if (!match) return undefined;
  const pid = Number(match[1]);
  return pid > 0 ? { pid, started: match[2] ?? "-", token: match[3] ?? "" } : undefined;
}

type LockView =
  | { readonly kind: "absent" }
  | { readonly kind: "held"; readonly holder: string }
  | { readonly kind: "stale"; readonly why: string; readonly seen: string }
  | { readonly kind: "foreign"; readonly problem: string };

/**
 * viewLock(lockPath) → what is at the lock's name: nothing; a live holder; a stale lock (its pid
 * gone, its pid reused by another process, nothing readable past a short grace, or held past
 * LOCK_MAX_HOLD_MS); or something that is not a lock file at all, which is never removed.
 */
function viewLock(lockPath: string, now: number): LockView {
  let st: fs.Stats | undefined;
  let text: string;
  try {
    st = fs.lstatSync(lockPath, { throwIfNoEntry: false });
    if (st === undefined) return { kind: "absent" };
    if (!st.isFile())
      return { kind: "foreign", problem: `the start lock ${lockPath} is not a regular file; remove it` };
    text = st.size > 256 ? "" : fs.readFileSync(lockPath, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { kind: "absent" };
    return { kind: "foreign", problem: `the start lock ${lockPath} cannot be read (${errorCode(error)})` };
  }
  const seen = `${st.ino}:${st.mtimeMs}:${text}`;
  const age = now - st.mtimeMs;
  const record = parseLock(text);
  if (record === undefined)
    return age > LOCK_GARBAGE_GRACE_MS || age < -LOCK_MAX_HOLD_MS
      ? { kind: "stale", why: "it names no holder", seen }
      : { kind: "held", holder: "a process still writing it" };
  if (!processAlive(record.pid)) return { kind: "stale", why: `its holder (pid ${record.pid}) is gone`, seen };
  if (record.started !== "-") {
    const started = processStartTime(record.pid);
    if (started !== "-" && started !== record.started)
      return { kind: "stale", why: `pid ${record.pid} is now another process`, seen };
  }
  if (age > LOCK_MAX_HOLD_MS || age < -LOCK_MAX_HOLD_MS)
    return { kind: "stale", why: `pid ${record.pid} has held it for ${Math.round(age / 1000)} s`, seen };
  return { kind: "held", holder: `pid ${record.pid}` };
}

/**
 * breakStaleLock(lockPath, seen) → the stale lock is gone (or changed: look again). One process at
 * a time takes a lock over, under a second exclusive file: without it, two sessions that both saw
 * the stale lock could each remove it, the second removing the fresh lock the first had just
 * taken, and both would start a broker. Under it, the lock is removed only if it is still the
 * one seen stale (inode, time and content).
 */
function breakStaleLock(lockPath: string, seen: string): void {
  const breaker = `${lockPath}.break`;
  try {
    fs.writeFileSync(breaker, `${process.pid}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if (errorCode(error) !== "EEXIST") return;
    const st = fs.lstatSync(breaker, { throwIfNoEntry: false });
    if (st?.isFile() && Date.now() - st.mtimeMs > LOCK_BREAKER_STALE_MS) fs.rmSync(breaker, { force: true });
    return;
  }
  try {
    const view = viewLock(lockPath, Date.now());
    if (view.kind === "stale" && view.seen === seen) fs.rmSync(lockPath, { force: true });
  } finally {
    fs.rmSync(breaker, { force: true });
  }
}

/**
 * acquireStartLock(lockPath, waitMs) → the lock, or why not within waitMs (naming the lock file).
 * The lock is a file made with link(2) — atomic, never follows or replaces — holding the pid,
 * the process's start time and a token; a stale one (viewLock) is taken over, a live holder is
 * waited for. A stale lock used to block every later session: one naming a live pid that was not
 * a broker (a reused pid), or an empty one, was waited for forever (docs/hardening.md, 4.5).
 */
export async function acquireStartLock(lockPath: string, waitMs: number): Promise<StartLock> {
  const deadline = Date.now() + waitMs;
  const token = Math.random().toString(36).slice(2) || "0";
  const content = `${process.pid} ${processStartTime("self")} ${token}\n`;
  const mine = `${lockPath}.${process.pid}.${token}`;
  try {
    fs.writeFileSync(mine, content, { mode: 0o600, flag: "wx" });
  } catch (error) {
    return { ok: false, problem: `the start lock ${lockPath} cannot be prepared (${errorCode(error)})` };
  }
  try {
    for (;;) {
      try {
        fs.linkSync(mine, lockPath);
        return { ok: true, release: () => releaseLock(lockPath, content) };
      } catch (error) {
        if (errorCode(error) !== "EEXIST")
          return { ok: false, problem: `the start lock ${lockPath} cannot be taken (${errorCode(error)})` };
      }
      const view = viewLock(lockPath, Date.now());
      if (view.kind === "foreign") return { ok: false, problem: view.problem };
      if (view.kind === "stale") {
        breakStaleLock(lockPath, view.seen);
        continue;
      }
      if (Date.now() >= deadline)
        return {
          ok: false,
          problem: `the start lock ${lockPath} is held by ${view.kind === "held" ? view.holder : "another process"}`,
        };
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    fs.rmSync(mine, { force: true });
  }
}

/** describeStartLock(lockPath) → who holds the lock now, for a front that gave up waiting; undefined when free. */
export function describeStartLock(lockPath: string): string | undefined {
  const view = viewLock(lockPath, Date.now());
  if (view.kind === "held") return `the start lock ${lockPath} is held by ${view.holder}`;
  if (view.kind === "foreign") return view.problem;
  return undefined;
}

/** Only the lock this take made is removed (a lock taken over from this process is another's now). */
function releaseLock(lockPath: string, content: string): void {
  try {
    if (fs.readFileSync(lockPath, "utf8") === content) fs.rmSync(lockPath, { force: true });
  } catch {
    // Gone already.
  }
}

export type BrokerPresence = "none" | "live" | "stopping";

/**
 * brokerAt(socketPath, ms) → whether a broker listens there: "none" (nothing, or a stale socket
 * that refuses), "live", or "stopping" (it answered that it is going: wait for it to finish,
 * it still holds the store's server). The question is a greeting of its own ("probe"), which a
 * broker answers without counting it as a client: a plain connect-and-close did count, and a
 * broker started with a short idle time (check's probe, VELESDB_HOOKS_MCP_IDLE_MS=0) took the
 * question for its last client leaving and stopped under the sessions it had just greeted
 * (docs/hardening.md, 4.2). A broker that accepts and says nothing in time (an older one, which
 * does not know "probe", or one too busy) counts as live: it holds the name.
 */
export function brokerAt(socketPath: string, ms: number): Promise<BrokerPresence> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    const lines = new LineSplitter();
    let connected = false;
    const done = (answer: BrokerPresence): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(connected ? "live" : "none"), ms);
    socket.once("connect", () => {
      connected = true;
      socket.write(`${JSON.stringify({ [HELLO_KEY]: "probe", store: "" } satisfies Hello)}\n`);
    });
    socket.on("data", (chunk: Buffer) => {
      for (const event of lines.push(chunk)) {
        if (event.kind !== "line") continue;
        const said = (parseMessage(event.text) as Partial<Hello> | undefined)?.[HELLO_KEY];
        done(said === "retry" ? "stopping" : "live");
        return;
      }
    });
    socket.once("close", () => done(connected ? "live" : "none"));
    socket.once("error", () => done(connected ? "live" : "none"));
  });
}
