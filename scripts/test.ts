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
// `--tier=unit` (`npm run test:unit`) runs the fast tier instead of every file: the core, hosts
// and installer tests against the built binary, without the suites that drive real host CLIs,
// build or serve release assets, or run under Wine (OUTSIDE_UNIT_TIER, with why each is out).
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

/**
 * The files the unit tier leaves out, each with why: a repository path, a folder ending in "/",
 * or "*" and the end of a file name. Every other test file is in the tier, so a new file runs
 * there until it is named here.
 */
export const OUTSIDE_UNIT_TIER: ReadonlyArray<readonly [string, string]> = [
  ["test/e2e/", "the real host CLIs against mock model APIs, and the double checked against the real velesdb-memory"],
  // A host's own e2e suite lives in its folder, test/hosts/<host>/ (docs/development/testing.md#a-hosts-folder).
  ["*.e2e.test.ts", "a host's e2e suite: its real CLI against a mock model API"],
  ["test/e2e-host-bins.test.ts", "how the e2e suites find the host CLIs"],
  ["test/windows/", "the windows-x64 release asset under Wine"],
  ["test/release.test.ts", "builds and packs every release asset"],
  ["test/npm-registry.test.ts", "publishes the npm packages to a local registry and installs them"],
  ["test/install-sh.test.ts", "install.sh against a release asset served locally, under three shells"],
  ["test/install-ps1.test.ts", "install.ps1 against the release build's asset names"],
  ["test/fuzz.test.ts", "the property run, minutes of CPU; its regressions (test/fuzz-regressions.test.ts) stay in"],
];

/** leftOutBy("test/e2e/", "test/e2e/x.test.ts") → true: whether one OUTSIDE_UNIT_TIER name covers a repository path. */
export function leftOutBy(name: string, file: string): boolean {
  if (name.startsWith("*")) return file.endsWith(name.slice(1));
  return name.endsWith("/") ? file.startsWith(name) : file === name;
}

/** unitTierFiles(root) → "./test/…" for every test file outside OUTSIDE_UNIT_TIER (the ./ makes bun test take a path, not a filter). */
export function unitTierFiles(root: string): string[] {
  const out = (file: string) => OUTSIDE_UNIT_TIER.some(([name]) => leftOutBy(name, file));
  const files: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = path.posix.join(rel, entry.name);
      if (entry.isDirectory() && entry.name !== "node_modules") walk(child);
      else if (entry.isFile() && entry.name.endsWith(".test.ts") && !out(child)) files.push(`./${child}`);
    }
  };
  walk("test");
  return files.sort();
}

/** runTests(argv) → bun test's exit code, over the files `--tier=unit` selects or every file. */
async function runTests(argv: readonly string[]): Promise<number> {
  const unit = argv.includes("--tier=unit");
  const passed = argv.filter((a) => a !== "--tier=unit");
  const workers = workerCount();
  const runDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-test-run-")));
  // The unit tier starts its slowest files first from the same timings file (--update-timings merges into it).
  const args = [
    "test",
    "--timeout",
    "60000",
    ...(workers > 1 ? [`--parallel=${workers}`, `--timings=${TIMINGS}`] : []),
    ...passed,
    ...(unit ? unitTierFiles(ROOT) : []),
  ];
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
  return exitCode;
}

if (import.meta.main) process.exit(await runTests(process.argv.slice(2)));
