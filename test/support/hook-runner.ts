// Run the compiled binary the way a host does: payload on stdin, private HOME and TMPDIR,
// exit code + stdout + stderr back. Every test gets a fresh sandbox so no state leaks
// between cases, and none of this machine's real state directories is ever touched.
import { expect } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const REPO_ROOT = path.resolve(import.meta.dir, "..", "..");
// VELESDB_HOOKS_TEST_BINARY lets a developer run the suite against another build (a release
// asset, or a deliberately broken build when checking that the tests can fail).
export const BINARY =
  process.env.VELESDB_HOOKS_TEST_BINARY ??
  path.join(REPO_ROOT, "dist", process.platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks");
export const FIXTURES = path.join(REPO_ROOT, "fixtures");

export interface Sandbox {
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  /** A workspace directory to use as the payload cwd. */
  readonly workspace: string;
  /** The default state directory the hooks will use in this sandbox. */
  readonly stateDir: string;
  readonly env: Record<string, string>;
  cleanup(): void;
}

/** makeSandbox() → a fresh temp tree with HOME, TMPDIR and a workspace, and the env to use it. */
export function makeSandbox(label = "case"): Sandbox {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `vh-${label}-`)));
  const home = path.join(root, "home");
  const tmp = path.join(root, "tmp");
  const workspace = path.join(root, "ws", "project");
  for (const dir of [home, tmp, workspace]) fs.mkdirSync(dir, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
  };
  return {
    root,
    home,
    tmp,
    workspace,
    stateDir: path.join(tmp, `velesdb-agent-hooks-${process.getuid?.() ?? 0}`),
    env,
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

export interface HookRun {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** runBinary(["claude","stop"], payload, {env, cwd}) → what the host would see (compared whole by many tests). */
export function runBinary(
  args: readonly string[],
  stdin: string | Uint8Array | Record<string, unknown>,
  options: { env: Record<string, string>; cwd?: string; timeoutMs?: number },
): HookRun {
  const { cpuMs: _cpuMs, ...run } = runBinaryTimed(args, stdin, options);
  return run;
}

/** runBinaryTimed(…) → runBinary's result plus the hook's user + system CPU time (wall time on a shared machine says little). */
export function runBinaryTimed(
  args: readonly string[],
  stdin: string | Uint8Array | Record<string, unknown>,
  options: { env: Record<string, string>; cwd?: string; timeoutMs?: number },
): HookRun & { readonly cpuMs: number } {
  const input = typeof stdin === "string" || stdin instanceof Uint8Array ? stdin : JSON.stringify(stdin);
  const result = Bun.spawnSync([BINARY, ...args], {
    stdin: typeof input === "string" ? Buffer.from(input) : input,
    env: options.env,
    cwd: options.cwd ?? options.env.HOME,
    timeout: options.timeoutMs ?? 20_000,
    stdout: "pipe",
    stderr: "pipe",
  });
  return {
    exitCode: result.exitCode ?? -1,
    stdout: result.stdout.toString(),
    stderr: result.stderr.toString(),
    cpuMs: result.resourceUsage ? Number(result.resourceUsage.cpuTime.total) / 1000 : Number.NaN,
  };
}

/** loadPayload("claude", "stop.first", {cwd}) → the fixture with `overrides` applied. */
export function loadPayload(
  host: string,
  name: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const file = path.join(FIXTURES, "payloads", host, `${name}.json`);
  const payload = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  return { ...payload, ...overrides };
}

/** parseOneJsonAnswer(stdout) → the single JSON object, asserting nothing else was printed. */
export function parseOneJsonAnswer(stdout: string): Record<string, unknown> {
  if (!stdout.endsWith("\n") || stdout.indexOf("\n") !== stdout.length - 1) {
    throw new Error(`expected exactly one line of JSON, got ${JSON.stringify(stdout.slice(0, 200))}`);
  }
  const value = JSON.parse(stdout) as unknown;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new Error("answer is not a JSON object");
  return value as Record<string, unknown>;
}

/** writeConfig(dir, {project:"p"}) → writes `.velesdb-hooks.json` there. */
export function writeConfig(dir: string, config: unknown): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, ".velesdb-hooks.json");
  fs.writeFileSync(file, typeof config === "string" ? config : JSON.stringify(config));
  return file;
}

/** additionalContextOf(answer) → hookSpecificOutput.additionalContext, or undefined. */
export function additionalContextOf(answer: Record<string, unknown>): string | undefined {
  const specific = answer.hookSpecificOutput as Record<string, unknown> | undefined;
  return typeof specific?.additionalContext === "string" ? specific.additionalContext : undefined;
}

/** expectUsageError(run, /…/) → exit 64, nothing on stdout, one prefixed stderr line matching the pattern (docs/contract.md §2). */
export function expectUsageError(run: HookRun, message: RegExp): void {
  expect(run.exitCode).toBe(64);
  expect(run.stdout).toBe("");
  expect(run.stderr).toMatch(message);
  expect(run.stderr.trim().split("\n")).toHaveLength(1);
  expect(run.stderr.startsWith("velesdb-hooks: ")).toBe(true);
}

/** What a host reads from one hook run that exited 0. */
export interface HookAnswer {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The one JSON object printed; reading it throws when stdout is anything else (silence included). */
  readonly json: Record<string, unknown>;
}

/**
 * hook(box, "kilo", "stop", payload) → the answer, the one way every host's tests run a hook
 * (test/hosts/<host>/, docs/development/testing.md#a-hosts-folder): the sandbox's env with `env`
 * over it, run from `cwd` (the sandbox root unless given). A non-zero exit throws with the host,
 * the event and stderr; the cases that expect one (Windsurf's exit 2) use runBinary.
 */
export function hook(
  box: Sandbox,
  host: string,
  event: string,
  payload: Record<string, unknown>,
  env: Record<string, string> = {},
  cwd: string = box.root,
): HookAnswer {
  const run = runBinary([host, event], payload, { env: { ...box.env, ...env }, cwd });
  if (run.exitCode !== 0) throw new Error(`${host} ${event} exited ${run.exitCode}: ${run.stderr}`);
  return {
    exitCode: run.exitCode,
    stdout: run.stdout,
    stderr: run.stderr,
    get json() {
      return parseOneJsonAnswer(run.stdout);
    },
  };
}

/** repository(box, "a", true) → a repository under the sandbox, opted in to the learning loop or not. */
export function repository(box: Sandbox, name: string, optedIn: boolean): string {
  const dir = path.join(box.root, "repos", name);
  writeConfig(dir, { project: name, ...(optedIn ? { enforce_learning_loop: true } : {}) });
  return dir;
}
