// One private world per hook process: HOME, TMPDIR and the process cwd inside a fresh temp
// tree, three repositories (opted in, plain, broken config), and a snapshot of everything that
// is not state, so "never writes outside the state directory" is checked file by file.
// Payload strings name sandbox paths through a placeholder (@SB@, filled in when a case is
// encoded), so one generated payload is the same test in every sandbox and replays from its seed.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { BINARY, REPO_ROOT } from "./hook-runner.ts";

/** The token generated payloads use for the sandbox root. */
export const SANDBOX_TOKEN = "@SB@";
/** The project name of the opted-in repository (ws/repo). */
export const GUARDED_PROJECT = "fuzz-guarded";
/** A PATH without bun on it, as a hook started by a host may well have. */
export const PLAIN_PATH = "/usr/bin:/bin";
/** A loopback port nothing listens on: the SessionStart freshness check finds no daemon, fast. */
export const NO_DAEMON_URL = "http://127.0.0.1:9/mcp";

export interface FuzzSandbox {
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  /** The default state directory of claude, codex and windsurf in this sandbox. */
  readonly stateDir: string;
  readonly repo: string;
  readonly plain: string;
  readonly broken: string;
  readonly env: Record<string, string>;
  cleanup(): void;
}

export interface SandboxOptions {
  readonly parent?: string;
  /** Extra environment (a compiler, knobs). */
  readonly env?: Record<string, string>;
}

/** makeFuzzSandbox() → a fresh tree: home/, tmp/, ws/repo (enforced), ws/plain, ws/broken. */
export function makeFuzzSandbox(label: string, options: SandboxOptions = {}): FuzzSandbox {
  const parent = options.parent ?? os.tmpdir();
  const root = fs.realpathSync(fs.mkdtempSync(path.join(parent, `vh-${label}-`)));
  const home = path.join(root, "home");
  const tmp = path.join(root, "tmp");
  const repo = path.join(root, "ws", "repo");
  const plain = path.join(root, "ws", "plain");
  const broken = path.join(root, "ws", "broken");
  for (const dir of [home, tmp, path.join(repo, "src"), plain, broken]) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(repo, ".velesdb-hooks.json"),
    JSON.stringify({ project: GUARDED_PROJECT, enforce_learning_loop: true }),
  );
  fs.writeFileSync(path.join(repo, "src", "main.ts"), "export const x = 1;\n");
  fs.writeFileSync(path.join(broken, ".velesdb-hooks.json"), '{"enforce_learning_loop": true,');
  return {
    root,
    home,
    tmp,
    stateDir: path.join(tmp, `velesdb-agent-hooks-${process.getuid?.() ?? 0}`),
    repo,
    plain,
    broken,
    env: {
      PATH: PLAIN_PATH,
      HOME: home,
      TMPDIR: tmp,
      LANG: "C.UTF-8",
      VELESDB_MCP_URL: NO_DAEMON_URL,
      ...options.env,
    },
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * resolvedCwd(payload, processCwd) → the directory the hook will treat as cwd (docs/contract.md §3.1): the
 * payload's non-empty string cwd without NUL, resolved against the process cwd; else the process
 * cwd. Written independently of src/core/payload.ts: it is the oracle, not the code under test.
 */
export function resolvedCwd(payload: unknown, processCwd: string): string {
  const cwd =
    payload !== null && typeof payload === "object" && !Array.isArray(payload)
      ? (payload as Record<string, unknown>).cwd
      : undefined;
  if (typeof cwd !== "string" || cwd === "" || cwd.includes("\0")) return processCwd;
  return path.resolve(processCwd, cwd);
}

/** isInside(child, dir) → true when child is dir or below it (lexically). */
export function isInside(child: string, dir: string): boolean {
  const rel = path.relative(dir, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

export type Snapshot = Map<string, string>;

/**
 * snapshot(root, excluded) → every path under root except the excluded subtrees, with its type,
 * mode and owner (files: also size and mtime; directories: their entries show any change).
 */
export function snapshot(root: string, excluded: readonly string[]): Snapshot {
  const out: Snapshot = new Map();
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      if (excluded.some((ex) => full === ex)) continue;
      let st: fs.Stats;
      try {
        st = fs.lstatSync(full);
      } catch {
        continue;
      }
      const kind = st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
      const detail = kind === "file" ? `${st.size}:${st.mtimeMs}` : kind === "link" ? fs.readlinkSync(full) : "";
      out.set(path.relative(root, full), `${kind}:${(st.mode & 0o7777).toString(8)}:${st.uid}:${detail}`);
      if (kind === "dir") walk(full);
    }
  };
  walk(root);
  return out;
}

/** snapshotChanges(before, after) → one line per path that appeared, vanished or changed. */
export function snapshotChanges(before: Snapshot, after: Snapshot): string[] {
  const changes: string[] = [];
  for (const [p, v] of after) {
    const was = before.get(p);
    if (was === undefined) changes.push(`created ${p}`);
    else if (was !== v) changes.push(`changed ${p}`);
  }
  for (const p of before.keys()) if (!after.has(p)) changes.push(`removed ${p}`);
  return changes;
}

export interface Spawned {
  readonly exitCode: number;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMs: number;
  readonly timedOut: boolean;
}

/** spawnHook(["claude","stop"], bytes, {env, cwd, boundMs}) → the answer, killed (and marked) past the bound. */
export async function spawnHook(
  args: readonly string[],
  stdin: Uint8Array,
  options: { env: Record<string, string>; cwd: string; boundMs: number; binary?: string },
): Promise<Spawned> {
  const started = performance.now();
  const child = Bun.spawn([options.binary ?? BINARY, ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: options.env,
    cwd: options.cwd,
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, options.boundMs);
  // Write stdin without blocking on a hook that stops reading: its exit or the bound ends it.
  const writing = (async () => {
    try {
      child.stdin.write(stdin);
      await child.stdin.end();
    } catch {
      // EPIPE: the hook exited before reading everything; its answer is judged as it is.
    }
  })();
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  clearTimeout(timer);
  await writing;
  // The timer alone is not the judge: when the event loop runs late (a loaded CI machine), the
  // exit can be handled before a due timer fires, and a run far past the bound was reported as
  // within it (docs/hardening.md#tests-that-could-not-fail). The time measured decides as well.
  const elapsedMs = performance.now() - started;
  return {
    exitCode,
    signal: child.signalCode === null ? null : String(child.signalCode),
    stdout,
    stderr,
    elapsedMs,
    timedOut: timedOut || elapsedMs > options.boundMs,
  };
}

/** The fake compiler the fuzzer gives PostToolUse: capable, faithful at risk medium. */
export const FAKE_COMPILER = path.join(REPO_ROOT, "fixtures", "compilers", "medium.sh");
