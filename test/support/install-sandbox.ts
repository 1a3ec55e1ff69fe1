// A fake home per installer test, and the compiled binary run inside it. The binary is
// snapshotted once per test file: `install` copies the *running* executable, and other work
// may rebuild dist/ while a suite runs, which would otherwise make "installed copy differs"
// appear out of nowhere.
import { afterAll } from "bun:test";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { HostName } from "../../src/hosts/index.ts";
import { USER_MCP_COMMAND } from "../hosts/profile.ts";
import { PROFILED_HOSTS, PROFILES } from "../hosts/profiles.ts";

export const REPO_ROOT = path.resolve(import.meta.dir, "..", "..");
const DIST_BINARY = path.join(REPO_ROOT, "dist", process.platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks");

let snapshot: { dir: string; binary: string } | undefined;

/** snapshotBinary() → a private copy of dist/velesdb-hooks, made once per test file. */
export function snapshotBinary(): string {
  if (snapshot) return snapshot.binary;
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-bin-")));
  const binary = path.join(dir, "velesdb-hooks");
  // A hard link pins the current build as well as a copy does (rebuilds rename a new file
  // over dist/, they never write into this inode) without 110 MB per test file.
  try {
    fs.linkSync(DIST_BINARY, binary);
  } catch {
    fs.copyFileSync(DIST_BINARY, binary);
    fs.chmodSync(binary, 0o755);
  }
  snapshot = { dir, binary };
  return binary;
}

// bun test never runs process "exit" handlers, so the ~110 MB copy is removed when the test
// file that made it is done (this module is loaded once per test file).
afterAll(() => {
  if (snapshot) fs.rmSync(snapshot.dir, { recursive: true, force: true });
  snapshot = undefined;
});

export interface Run {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface InstallSandbox {
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  readonly env: Record<string, string>;
  readonly claudeSettings: string;
  readonly codexHooks: string;
  readonly codexConfig: string;
  /** ~/.codeium/windsurf/hooks.json and the global rules file beside it. */
  readonly windsurfHooks: string;
  readonly windsurfRules: string;
  /** The dsh client's default hooks.json, ~/.dsh/velesdb-hooks.json. */
  readonly dshHooks: string;
  readonly stableBinary: string;
  /** run(["install", "--client", "claude"]) → the compiled binary's exit code and output. */
  run(
    args: readonly string[],
    options?: { env?: Record<string, string | undefined>; cwd?: string; stdin?: string },
  ): Run;
  /** runAsync: the same without blocking this process (needed when the test serves HTTP itself). */
  runAsync(args: readonly string[], options?: { env?: Record<string, string | undefined>; cwd?: string }): Promise<Run>;
  cleanup(): void;
}

/** A client the sandbox can prepare: every host (test/hosts/profiles.ts). */
export type SandboxClient = HostName;

/** The directory whose presence makes `install` (no --client) pick each client (its profile's homeDir). */
export const CLIENT_HOME_DIRS: Readonly<Record<SandboxClient, string>> = Object.fromEntries(
  PROFILED_HOSTS.map((host) => [host, PROFILES[host].homeDir]),
) as Record<SandboxClient, string>;

/**
 * The velesdb-memory MCP server a user configured, in the files each agent reads it from when
 * that file is not the hooks registry itself (docs/mcp-server.md: `check` fails on hooks without a
 * server): each profile's userMcp. Gemini's and Qwen's servers live in the registry, so their
 * tests write them.
 */
export { USER_MCP_COMMAND };
export const USER_MCP_FILES: Readonly<Partial<Record<SandboxClient, readonly [string, string]>>> = Object.fromEntries(
  PROFILED_HOSTS.flatMap((host) => {
    const server = PROFILES[host].userMcp;
    return server ? [[host, server]] : [];
  }),
);

/** The TOML table of USER_MCP_FILES.codex, for a test that writes its own config.toml. */
export const USER_MCP_TOML = USER_MCP_FILES.codex![1];

/**
 * makeInstallSandbox("x", {homeName, clients, mcp}) → a temp tree with HOME (optionally an
 * awkward name), TMPDIR and each client's home (default ~/.claude and ~/.codex), each with a
 * velesdb-memory MCP server the user configured (USER_MCP_FILES) unless `mcp` is false.
 */
export function makeInstallSandbox(
  label: string,
  options: { homeName?: string; clients?: readonly SandboxClient[]; mcp?: boolean } = {},
): InstallSandbox {
  const binary = snapshotBinary();
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `vh-${label}-`)));
  const home = path.join(root, options.homeName ?? "home");
  const tmp = path.join(root, "tmp");
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(tmp, { recursive: true });
  for (const client of options.clients ?? ["claude", "codex"]) {
    fs.mkdirSync(path.join(home, CLIENT_HOME_DIRS[client]), { recursive: true });
    const server = USER_MCP_FILES[client];
    if (server && options.mcp !== false) fs.writeFileSync(path.join(home, server[0]), server[1]);
  }
  const env: Record<string, string> = {
    PATH: "/usr/bin:/bin",
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
    SHELL: "/bin/sh",
    VELESDB_HOOK_FRESHNESS: "off",
    // USER_MCP_COMMAND (/bin/sh) is a stand-in that answers nothing: the suites about servers
    // that are started (test/server-probe.test.ts) turn the probe back on.
    VELESDB_HOOKS_SERVER_PROBE: "off",
  };
  const merged = (extra?: Record<string, string | undefined>): Record<string, string> => {
    const result: Record<string, string> = { ...env };
    for (const [key, value] of Object.entries(extra ?? {})) {
      if (value === undefined) delete result[key];
      else result[key] = value;
    }
    return result;
  };
  return {
    root,
    home,
    tmp,
    env,
    claudeSettings: path.join(home, ".claude", "settings.json"),
    codexHooks: path.join(home, ".codex", "hooks.json"),
    codexConfig: path.join(home, ".codex", "config.toml"),
    windsurfHooks: path.join(home, ".codeium", "windsurf", "hooks.json"),
    windsurfRules: path.join(home, ".codeium", "windsurf", "memories", "global_rules.md"),
    dshHooks: path.join(home, ".dsh", "velesdb-hooks.json"),
    stableBinary: path.join(home, ".velesdb-hooks", "bin", "velesdb-hooks"),
    run(args, runOptions = {}) {
      const result = Bun.spawnSync([binary, ...args], {
        env: merged(runOptions.env),
        cwd: runOptions.cwd ?? home,
        stdin: runOptions.stdin !== undefined ? Buffer.from(runOptions.stdin) : "ignore",
        stdout: "pipe",
        stderr: "pipe",
        timeout: 60_000,
      });
      return { exitCode: result.exitCode ?? -1, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
    },
    async runAsync(args, runOptions = {}) {
      const child = Bun.spawn([binary, ...args], {
        env: merged(runOptions.env),
        cwd: runOptions.cwd ?? home,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, exitCode] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      return { exitCode, stdout, stderr };
    },
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * treeDigest(dir) → one hash over every path below `dir`: its type, mode, size, content (or
 * link target) and mtime. Equal digests mean nothing was created, removed, changed or touched.
 */
export function treeDigest(dir: string): string {
  const hash = createHash("sha256");
  const walk = (current: string): void => {
    for (const name of fs.readdirSync(current).sort()) {
      const p = path.join(current, name);
      const st = fs.lstatSync(p);
      hash.update(`${path.relative(dir, p)}\0${st.mode}\0${st.mtimeMs}\0`);
      if (st.isSymbolicLink()) hash.update(`link:${fs.readlinkSync(p)}\0`);
      else if (st.isDirectory()) walk(p);
      else hash.update(fs.readFileSync(p));
    }
  };
  walk(dir);
  return hash.digest("hex");
}

/** write(p, text, mode) → creates parents and the file with exactly that mode. */
/**
 * runSessionStartThroughBash(box, command) → `bash -c <command>` on a SessionStart payload from a
 * repository configured as project "atlas", session "main": how Gemini CLI and Qwen Code run a
 * registered command line on Unix, for checking that the quoting we wrote survives the shell.
 */
export function runSessionStartThroughBash(
  box: InstallSandbox,
  command: string,
): { exitCode: number | null; stdout: string } {
  const repo = path.join(box.root, "repo");
  write(path.join(repo, ".velesdb-hooks.json"), JSON.stringify({ project: "atlas", session: "main" }));
  const payload = JSON.stringify({ session_id: "s1", cwd: repo, hook_event_name: "SessionStart", source: "startup" });
  const run = Bun.spawnSync(["bash", "-c", command], { stdin: Buffer.from(payload), env: box.env, cwd: repo });
  return { exitCode: run.exitCode, stdout: run.stdout.toString() };
}

export function write(p: string, text: string, mode = 0o644): void {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  fs.chmodSync(p, mode);
}

export const read = (p: string): string => fs.readFileSync(p, "utf8");
export const modeOf = (p: string): number => fs.statSync(p).mode & 0o777;
