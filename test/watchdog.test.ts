// The watchdog (docs/contract.md §7): every ending is one outcome, a hung child and its grandchildren die
// at the deadline, and nothing the child does with its pipes can block or crash the caller.
// Each negative sits beside its positive control: a slow child that finishes in time is left
// alone; a child that reads its 5 MB gets every byte; a child that never reads gets killed.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compileBinary, ROOT } from "../scripts/build.ts";
import { boundProblem, deadlineCheck, runWithWatchdog, stdinChunks } from "../src/core/watchdog.ts";
import { fake, killQuietly, PLAIN_PATH, pidsFrom, waitUntilGone } from "./support/compress-fixtures.ts";

const FIVE_MB = 5 * 1024 * 1024;
const env = (extra: Record<string, string> = {}) => ({ PATH: PLAIN_PATH, ...extra });
const sh = (script: string) => ["/bin/sh", ["-c", script]] as const;

let dir: string;
beforeAll(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-watchdog-")));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let pidFiles: string[] = [];
afterEach(() => {
  for (const file of pidFiles) killQuietly(pidsFrom(file));
  pidFiles = [];
});
function pidFile(): string {
  const file = path.join(dir, `pids-${pidFiles.length}-${Date.now()}`);
  pidFiles.push(file);
  return file;
}

describe("the pure parts", () => {
  test.each([
    ["before the deadline", 1000, 1500, 2000, { expired: false, remainingMs: 1500 }],
    ["exactly at the deadline", 1000, 3000, 2000, { expired: true, remainingMs: 0 }],
    ["past the deadline", 1000, 9000, 2000, { expired: true, remainingMs: 0 }],
    ["a zero timeout", 1000, 1000, 0, { expired: true, remainingMs: 0 }],
    ["a clock that has not moved", 50, 50, 10, { expired: false, remainingMs: 10 }],
  ])("deadlineCheck: %s", (_label, started, now, timeout, expected) => {
    expect(deadlineCheck(started, now, timeout)).toEqual(expected);
  });

  test.each([
    [5, null],
    [0, null],
    [Number.NaN, "timeoutMs must be a finite number >= 0, got NaN (number)"],
    [-1, "timeoutMs must be a finite number >= 0, got -1 (number)"],
    [Number.POSITIVE_INFINITY, "timeoutMs must be a finite number >= 0, got Infinity (number)"],
    ["5", 'timeoutMs must be a finite number >= 0, got "5" (string)'],
    [undefined, "timeoutMs must be a finite number >= 0, got undefined (undefined)"],
  ])("boundProblem(%p)", (value, expected) => {
    expect(boundProblem(value, "timeoutMs")).toBe(expected);
  });

  test("stdinChunks keeps every character and never splits a surrogate pair", () => {
    const text = `${"a".repeat(32 * 1024 - 1)}😀${"é".repeat(70_000)}😀`;
    const chunks = [...stdinChunks(text)] as string[];
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.join("")).toBe(text);
    for (const chunk of chunks) expect(Buffer.from(chunk, "utf8").toString("utf8")).toBe(chunk);
  });
});

describe("runWithWatchdog", () => {
  test("positive control: a child that answers gives ok with its stdout", async () => {
    const outcome = await runWithWatchdog(...sh("cat; echo done"), "hello\n", {
      timeoutMs: 10_000,
      maxStdoutBytes: 1024,
      env: env(),
    });
    expect(outcome).toEqual({
      ok: true,
      timedOut: false,
      exitCode: 0,
      signal: null,
      spawnError: null,
      stdout: "hello\ndone\n",
      stdoutOverflow: false,
      stderr: "",
    });
  });

  test("a non-zero exit is an outcome, with the first stderr bytes", async () => {
    const outcome = await runWithWatchdog(...sh("echo broken >&2; exit 3"), "", {
      timeoutMs: 10_000,
      maxStdoutBytes: 1024,
      env: env(),
    });
    expect(outcome).toMatchObject({ ok: false, timedOut: false, exitCode: 3, spawnError: null, stderr: "broken\n" });
  });

  test("a program that does not exist is a spawnError, not a throw", async () => {
    const outcome = await runWithWatchdog(path.join(dir, "no-such-program"), [], "x", {
      timeoutMs: 5000,
      maxStdoutBytes: 1024,
    });
    expect(outcome.ok).toBe(false);
    expect(outcome.spawnError).toContain("ENOENT");
  });

  test.each([
    [
      "timeoutMs NaN",
      { timeoutMs: Number.NaN, maxStdoutBytes: 10 },
      "timeoutMs must be a finite number >= 0, got NaN (number)",
    ],
    ["timeoutMs negative", { timeoutMs: -5, maxStdoutBytes: 10 }, "got -5 (number)"],
    [
      "maxStdoutBytes fractional",
      { timeoutMs: 5, maxStdoutBytes: 1.5 },
      "maxStdoutBytes must be a finite integer >= 0, got 1.5 (number)",
    ],
  ])("an invalid bound (%s) is rejected before anything runs", async (_label, options, message) => {
    const witness = path.join(dir, `ran-${Math.random()}`);
    const outcome = await runWithWatchdog(...sh(`touch '${witness}'`), "", { ...options, env: env() });
    expect(outcome.ok).toBe(false);
    expect(outcome.spawnError).toContain(message);
    await Bun.sleep(100);
    expect(fs.existsSync(witness)).toBe(false);
  });

  test("a slow child that finishes inside the deadline is left alone", async () => {
    const outcome = await runWithWatchdog(...sh("sleep 0.5; echo finished"), "", {
      timeoutMs: 8000,
      maxStdoutBytes: 1024,
      env: env(),
    });
    expect(outcome).toMatchObject({ ok: true, timedOut: false, stdout: "finished\n" });
  });

  test("a hung child is killed at the deadline", async () => {
    const started = performance.now();
    const outcome = await runWithWatchdog(...sh("sleep 60"), "", { timeoutMs: 1000, maxStdoutBytes: 1024, env: env() });
    const elapsed = performance.now() - started;
    expect(outcome).toMatchObject({ ok: false, timedOut: true, spawnError: null });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(5000);
  });

  test("positive control: a child that reads gets all 5 MB, byte for byte", async () => {
    const payload = new Uint8Array(FIVE_MB).fill(0x62);
    const outcome = await runWithWatchdog(...sh("wc -c"), payload, {
      timeoutMs: 20_000,
      maxStdoutBytes: 1024,
      env: env(),
    });
    expect(outcome.ok).toBe(true);
    expect(Number(outcome.stdout.trim())).toBe(FIVE_MB);
  });

  test("a string is sent as UTF-8, whole", async () => {
    const text = `${"line with é and 😀\n".repeat(50_000)}`;
    const outcome = await runWithWatchdog(...sh("wc -c"), text, {
      timeoutMs: 20_000,
      maxStdoutBytes: 1024,
      env: env(),
    });
    expect(Number(outcome.stdout.trim())).toBe(Buffer.byteLength(text, "utf8"));
  });

  test("5 MB to a child that never reads stdin cannot block: it dies at the deadline", async () => {
    const pids = pidFile();
    const started = performance.now();
    const outcome = await runWithWatchdog(
      fake("hangs"),
      ["compile-stdin", "--budget", "4096"],
      new Uint8Array(FIVE_MB),
      {
        timeoutMs: 2000,
        maxStdoutBytes: 1024,
        env: env({ VELESDB_FAKE_PID_FILE: pids }),
      },
    );
    expect(outcome).toMatchObject({ ok: false, timedOut: true });
    expect(performance.now() - started).toBeLessThan(5000);
    // hangs.sh records itself and a grandchild holding stdout: the group kill took both.
    expect(pidsFrom(pids).length).toBe(2);
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
  });

  test("a child that closes stdin early (EPIPE) neither throws nor blocks", async () => {
    const outcome = await runWithWatchdog(...sh("exec 0<&-; sleep 0.2; echo fine"), new Uint8Array(FIVE_MB), {
      timeoutMs: 10_000,
      maxStdoutBytes: 1024,
      env: env(),
    });
    expect(outcome).toMatchObject({ ok: true, stdout: "fine\n" });
  });

  test("a grandchild holding the pipes after the child exits does not keep us waiting", async () => {
    const pids = pidFile();
    const started = performance.now();
    const outcome = await runWithWatchdog(fake("leaves-grandchild"), [], "x", {
      timeoutMs: 30_000,
      maxStdoutBytes: 1024,
      env: env({ VELESDB_FAKE_PID_FILE: pids }),
    });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(outcome).toMatchObject({ timedOut: false, exitCode: 0, stdout: "" });
    expect(pidsFrom(pids).length).toBe(2);
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
  });

  test("a child that ignores SIGTERM is killed after the grace", async () => {
    const pids = pidFile();
    const outcome = await runWithWatchdog(...sh(`trap '' TERM; echo $$ >'${pids}'; while :; do sleep 1; done`), "", {
      timeoutMs: 500,
      maxStdoutBytes: 1024,
      env: env(),
    });
    expect(outcome.timedOut).toBe(true);
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
  });

  test("stdout past the cap stops the run; under the cap it is kept", async () => {
    const over = await runWithWatchdog(...sh("head -c 200000 /dev/zero; sleep 30"), "", {
      timeoutMs: 20_000,
      maxStdoutBytes: 1000,
      env: env(),
    });
    expect(over).toMatchObject({ ok: false, stdoutOverflow: true, timedOut: false });
    const under = await runWithWatchdog(...sh("head -c 1000 /dev/zero"), "", {
      timeoutMs: 20_000,
      maxStdoutBytes: 1000,
      env: env(),
    });
    expect(under).toMatchObject({ ok: true, stdoutOverflow: false });
    expect(under.stdout.length).toBe(1000);
  });
});

describe("in the compiled binary", () => {
  let binary: string;
  beforeAll(() => {
    binary = path.join(ROOT, "dist", "compress-test", "watchdog-entry");
    compileBinary(path.join(ROOT, "test", "support", "compress-watchdog-entry.ts"), binary);
  });

  const run = (
    timeoutMs: number,
    stdinBytes: number,
    command: string,
    args: string[],
    extraEnv: Record<string, string>,
  ) => {
    const started = performance.now();
    const result = Bun.spawnSync([binary, String(timeoutMs), String(stdinBytes), command, ...args], {
      env: env(extraEnv),
      stdout: "pipe",
      stderr: "pipe",
      timeout: 20_000,
    });
    return {
      wallMs: performance.now() - started,
      exitCode: result.exitCode,
      outcome: JSON.parse(result.stdout.toString()),
    };
  };

  test("positive control: a reading child gets 5 MB", () => {
    const result = run(20_000, FIVE_MB, "/bin/sh", ["-c", "wc -c"], {});
    expect(result.outcome).toMatchObject({ ok: true, stdoutBytes: String(FIVE_MB).length + 1 });
  });

  test("5 MB to a never-reading child with a grandchild: answered within 5 s, nothing left", async () => {
    const pids = pidFile();
    const result = run(2000, FIVE_MB, fake("hangs"), ["compile-stdin", "--budget", "4096"], {
      VELESDB_FAKE_PID_FILE: pids,
    });
    expect(result.exitCode).toBe(0);
    expect(result.outcome).toMatchObject({ ok: false, timedOut: true });
    expect(result.wallMs).toBeLessThan(5000);
    expect(pidsFrom(pids).length).toBe(2);
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
  });

  test("a grandchild left holding the pipes: answered at once, nothing left", async () => {
    const pids = pidFile();
    const result = run(30_000, FIVE_MB, fake("leaves-grandchild"), [], { VELESDB_FAKE_PID_FILE: pids });
    expect(result.outcome).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(result.wallMs).toBeLessThan(5000);
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
  });
});
