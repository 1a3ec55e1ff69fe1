// `npm test`'s runner: `bun test` over every test file, several files at once (--parallel), the
// slowest started first (--timings, test/timings.json), with one directory for the run
// (VH_TEST_RUN_DIR) that test files share things through and that is removed when bun test ends.
//
// Why parallel: most of the suite's wall time is waiting (a host CLI talking to a mock model, a
// hook's watchdog bound, a quiet period that proves nothing more is coming), so on the 2 cores
// CI has, three workers keep both busy where one left them half idle. Under --parallel each file
// runs in a fresh global object with its own module registry, so what several files share (the
// release build: test/support/release-build.ts) goes through the run directory, not a module.
//
// Arguments are passed on to bun test (`npm test -- test/install.test.ts`). VH_TEST_WORKERS sets
// the number of workers (1: one process, the files in turn, as plain `bun test` does).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const ROOT = path.resolve(import.meta.dir, "..");
const TIMINGS = path.join(ROOT, "test", "timings.json");

/** workerCount() → VH_TEST_WORKERS when it is a whole number ≥ 1, else one more than the cores (at least 3). */
function workerCount(): number {
  const asked = process.env.VH_TEST_WORKERS;
  if (asked !== undefined && /^[1-9][0-9]?$/.test(asked)) return Number(asked);
  return Math.max(3, os.availableParallelism() + 1);
}

const workers = workerCount();
const runDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-test-run-")));
const args = ["test", "--timeout", "60000", ...(workers > 1 ? [`--parallel=${workers}`, `--timings=${TIMINGS}`] : []), ...process.argv.slice(2)];
const child = Bun.spawn([process.execPath, ...args], {
  cwd: ROOT,
  stdio: ["inherit", "inherit", "inherit"],
  env: { ...process.env, VH_TEST_RUN_DIR: runDir },
});
// A signal to this runner (Ctrl-C reaches the whole process group, a CI's cancel only us) is
// passed on to bun test, and the runner waits for it to end, so the run directory still goes.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
const exitCode = await child.exited;
fs.rmSync(runDir, { recursive: true, force: true });
process.exit(exitCode);
