// The owner-only channel between fronts and their broker (docs/shared-memory.md, "Channel"):
// a Unix socket in a 0700 directory of ours, `~/.velesdb-hooks/run` (or below the hooks' state
// directory, which may sit in a shared temp directory: runtime.ts mcpRuntimeDirectory) — so the
// directory is checked with lstat (state.ts: not a link, ours, private) before anything is
// created or connected there, exactly as the hooks' own state is.
// Who may bind the socket, or replace one a killed broker left, is decided by a start lock: a
// file made with link(2) (atomic, never follows or replaces), naming its holder's pid, taken
// over only when that pid is gone.
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { ensurePrivateSubdirectory, errorCode, openStateStore } from "../core/state.ts";
import { LineSplitter, parseMessage } from "./lines.ts";
import { processAlive, type McpRuntimePaths } from "./runtime.ts";

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
 * acquireStartLock(lockPath, waitMs) → the lock, or why not within waitMs. A holder whose pid is
 * gone (a broker killed while starting) loses it; a live holder is waited for.
 */
export async function acquireStartLock(lockPath: string, waitMs: number): Promise<StartLock> {
  const deadline = Date.now() + waitMs;
  const mine = `${lockPath}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(mine, `${process.pid}\n`, { mode: 0o600, flag: "wx" });
  try {
    for (;;) {
      try {
        fs.linkSync(mine, lockPath);
        return { ok: true, release: () => releaseLock(lockPath) };
      } catch (error) {
        if (errorCode(error) !== "EEXIST")
          return { ok: false, problem: `the start lock ${lockPath} cannot be taken (${errorCode(error)})` };
      }
      const holder = lockHolder(lockPath);
      if (holder !== undefined && !processAlive(holder)) {
        fs.rmSync(lockPath, { force: true });
        continue;
      }
      if (Date.now() >= deadline)
        return { ok: false, problem: `the start lock ${lockPath} is held by pid ${holder ?? "?"}` };
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    fs.rmSync(mine, { force: true });
  }
}

function lockHolder(lockPath: string): number | undefined {
  try {
    const st = fs.lstatSync(lockPath);
    if (!st.isFile()) return undefined;
    const pid = Number.parseInt(fs.readFileSync(lockPath, "utf8"), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Only the lock this process holds is removed. */
function releaseLock(lockPath: string): void {
  if (lockHolder(lockPath) === process.pid) fs.rmSync(lockPath, { force: true });
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
