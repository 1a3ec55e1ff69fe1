// Hostile state (docs/contract.md §3.3, §10): the state directory lives in a shared temp directory, so a
// link, a foreign owner or loose permissions must make it "unsafe" — never followed, never
// written through — and a linked marker is never evidence. Each hostile row has a healthy
// twin proving the same hook does use state when it is safe.
import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { openStateStore } from "../src/core/state.ts";
import {
  additionalContextOf,
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  type Sandbox,
} from "./support/hook-runner.ts";
import { IS_ROOT, testIf } from "./support/requires.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("state");
});
afterEach(() => box.cleanup());

const stopRun = (host: "claude" | "codex", overrides: Record<string, unknown> = {}) =>
  runBinary(
    [host, "stop"],
    loadPayload(host, "stop.first", { cwd: box.workspace, session_id: "hostile", ...overrides }),
    {
      env: box.env,
      cwd: box.workspace,
    },
  );
const stop = (host: "claude" | "codex", overrides: Record<string, unknown> = {}) =>
  parseOneJsonAnswer(stopRun(host, overrides).stdout);
/**
 * What a Stop in this (not opted-in) workspace says about broken state: no continuation
 * (docs/decisions.md#the-learning-loop), so the stderr line, plus Claude's systemMessage (the line the user sees).
 */
function stateProblem(host: "claude" | "codex", overrides: Record<string, unknown> = {}): string {
  const run = stopRun(host, overrides);
  const answer = parseOneJsonAnswer(run.stdout);
  expect(continuationText(answer)).toBeUndefined();
  if (host === "claude") expect(answer.systemMessage).toEqual(expect.stringContaining("Stop reminders are off"));
  else expect(answer).toEqual({});
  return `${run.stderr}${(answer.systemMessage as string | undefined) ?? ""}`;
}
const continuationText = (answer: Record<string, unknown>) =>
  (answer.reason as string | undefined) ?? additionalContextOf(answer);

type Setup = (stateDir: string, elsewhere: string) => void;
const HOSTILE_STATE_DIRECTORIES: ReadonlyArray<readonly [string, Setup, RegExp]> = [
  [
    "a symlink to a directory elsewhere",
    (dir, elsewhere) => fs.symlinkSync(elsewhere, dir),
    /linked: state directory .* is a symlink/,
  ],
  ["a regular file", (dir) => fs.writeFileSync(dir, "not a dir"), /storage: state directory .* is not a directory/],
  [
    "mode 0755",
    (dir) => fs.mkdirSync(dir, { mode: 0o755 }) ?? fs.chmodSync(dir, 0o755),
    /storage: .* has mode 755, not 700/,
  ],
  [
    "owned by another user",
    (dir) => {
      fs.mkdirSync(dir, { mode: 0o700 });
      fs.chownSync(dir, 4242, 4242);
    },
    /storage: .* owned by another user/,
  ],
];

describe("unsafe state directory", () => {
  test.each(HOSTILE_STATE_DIRECTORIES)("%s: never used, never written through", (label, setup, cause) => {
    if (label === "owned by another user" && !IS_ROOT) return; // chown needs root
    const elsewhere = path.join(box.root, "elsewhere");
    fs.mkdirSync(elsewhere, { mode: 0o700 });
    setup(box.stateDir, elsewhere);
    const before = snapshot(box.root);

    // Stop says why on stderr (and to the user on Claude) and never continues: this workspace
    // is not opted in (test/stop-state.test.ts covers an opted-in one).
    for (const host of ["claude", "codex"] as const) {
      expect(stateProblem(host)).toMatch(/state unavailable/);
      expect(stateProblem(host)).toMatch(cause);
      expect(stateProblem(host, { stop_hook_active: true })).toMatch(cause);
    }
    // SessionStart and PreCompact need no state: full guidance.
    const start = runBinary(
      ["claude", "session-start"],
      loadPayload("claude", "session-start.startup", { cwd: box.workspace }),
      {
        env: box.env,
      },
    );
    expect(additionalContextOf(parseOneJsonAnswer(start.stdout))).toContain("load_working_context(");
    const compact = runBinary(
      ["claude", "pre-compact"],
      loadPayload("claude", "pre-compact.auto", { cwd: box.workspace }),
      { env: box.env },
    );
    expect(compact.stdout).toContain("save_working_context(");

    expect(snapshot(box.root)).toEqual(before);
  });

  test("positive control: a fresh state directory is created 0700 and used", () => {
    expect(fs.existsSync(box.stateDir)).toBe(false);
    expect(continuationText(stop("claude"))).not.toMatch(/unavailable/);
    expect(fs.lstatSync(box.stateDir).mode & 0o777).toBe(0o700);
    expect(stop("claude")).toEqual({});
  });

  test("VELESDB_HOOKS_STATE_DIR is honoured; a relative value is unsafe", () => {
    const custom = path.join(box.root, "custom-state");
    const env = { ...box.env, VELESDB_HOOKS_STATE_DIR: custom };
    const run = (overrides: Record<string, unknown>, e = env) =>
      parseOneJsonAnswer(
        runBinary(["claude", "stop"], loadPayload("claude", "stop.first", { cwd: box.workspace, ...overrides }), {
          env: e,
        }).stdout,
      );
    expect(continuationText(run({ session_id: "c1" }))).not.toMatch(/unavailable/);
    expect(fs.readdirSync(custom).filter((name) => name !== "stats")).toHaveLength(1); // beside the stats records (docs/stats.md)
    expect(fs.existsSync(box.stateDir)).toBe(false);
    const relative = run({ session_id: "c2" }, { ...box.env, VELESDB_HOOKS_STATE_DIR: "relative/state" });
    expect(relative.systemMessage).toMatch(/not an absolute path/);
  });
});

describe("linked or foreign markers", () => {
  test("a marker that is a symlink to a file elsewhere is never followed nor counted", () => {
    fs.mkdirSync(box.stateDir, { mode: 0o700 });
    const victim = path.join(box.root, "victim.txt");
    fs.writeFileSync(victim, "precious\n");
    // stop-<cksum of "hostile">.marker
    const marker = path.join(box.stateDir, `stop-${cksumOf("hostile")}.marker`);
    fs.symlinkSync(victim, marker);

    expect(stateProblem("claude")).toMatch(/read failed: linked: .* is a symlink/);
    expect(stateProblem("claude", { stop_hook_active: true })).toMatch(/is a symlink/);
    expect(fs.readFileSync(victim, "utf8")).toBe("precious\n");
    expect(fs.lstatSync(marker).isSymbolicLink()).toBe(true);

    // Positive control: the same session with a real marker passes straight away.
    fs.unlinkSync(marker);
    fs.writeFileSync(marker, "1\n", { mode: 0o600 });
    expect(stop("claude")).toEqual({});
  });

  test("a marker that is a directory is malformed state, never replaced", () => {
    fs.mkdirSync(box.stateDir, { mode: 0o700 });
    const marker = path.join(box.stateDir, `codex-stop-${cksumOf("hostile")}.marker`);
    fs.mkdirSync(marker);
    expect(stateProblem("codex")).toMatch(/read failed: malformed: .* is not a regular file/);
    expect(fs.statSync(marker).isDirectory()).toBe(true);
  });

  testIf(IS_ROOT, "root")("a marker owned by another user is not evidence", () => {
    fs.mkdirSync(box.stateDir, { mode: 0o700 });
    const marker = path.join(box.stateDir, `stop-${cksumOf("hostile")}.marker`);
    fs.writeFileSync(marker, "1\n", { mode: 0o600 });
    fs.chownSync(marker, 4242, 4242);
    expect(stateProblem("claude")).toMatch(/owned by another user/);
  });
});

/** snapshot(dir) → every path below dir with its type, mode and content hash. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    const st = fs.lstatSync(p);
    const rel = path.relative(dir, p) || ".";
    if (st.isSymbolicLink()) out[rel] = `link:${fs.readlinkSync(p)}`;
    else if (st.isDirectory()) {
      out[rel] = `dir:${(st.mode & 0o777).toString(8)}:${st.uid}`;
      for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    } else out[rel] = `file:${(st.mode & 0o777).toString(8)}:${Bun.hash(fs.readFileSync(p)).toString(16)}`;
  };
  walk(dir);
  return out;
}

function cksumOf(text: string): string {
  const out = Bun.spawnSync(["cksum"], { stdin: Buffer.from(text) })
    .stdout.toString()
    .trim()
    .split(/\s+/);
  return `${out[0]}-${out[1]}`;
}

describe("openStateStore: one lstat of an existing state directory (docs/performance/2026-12-02-io-floor.md)", () => {
  test("an existing private directory is inspected once; a missing one is created and inspected", () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-state-lstat-")));
    const dir = path.join(root, "state");
    const lstat = spyOn(fs, "lstatSync");
    const callsOn = () => lstat.mock.calls.filter(([p]) => p === dir).length;
    try {
      const first = openStateStore(dir);
      expect(first.safe && first.created).toBe(true);
      const afterCreate = callsOn();
      // Positive control: the spy sees the store's lstat calls at all.
      expect(afterCreate).toBeGreaterThanOrEqual(2);
      lstat.mockClear();
      expect(openStateStore(dir)).toEqual({ safe: true, dir });
      expect(callsOn()).toBe(1);
      // Same verdicts as before: a loose mode is still refused from that one lstat.
      fs.chmodSync(dir, 0o755);
      expect(openStateStore(dir)).toMatchObject({ safe: false, cause: "storage" });
    } finally {
      lstat.mockRestore();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
