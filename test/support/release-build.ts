// One run of `bun scripts/build-all.ts` (every target: archives, SHA256SUMS, install scripts,
// the npm packages) shared by the test files that need the whole release: test/release.test.ts
// checks the assets, test/npm-registry.test.ts publishes the npm packages. All seven targets
// cost about a minute of CPU and ~1 GB of disk, so one test run builds them once.
//
// `npm test` runs `bun test --parallel` through scripts/test.ts, which names a directory for the
// run (VH_TEST_RUN_DIR) and removes it when bun test is done. Under --parallel every test file
// has its own module registry, in whichever worker process runs it, so the build is shared
// through that directory: the first file to ask takes a lock (mkdir is atomic) and builds, the
// others wait for its result file. Without a run directory (`bun test <file>` by hand) the build
// belongs to this process: test files share it through this module when they run in one
// process, and the global afterAll of test/support/teardown.ts (bunfig.toml's preload) removes it.
//
// The output directory is seeded with what an earlier build leaves behind (assets of another
// version, a file that is not ours), so the release test can prove which ones build:all removes.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { testRunDir } from "./test-run.ts";

const ROOT = path.resolve(import.meta.dir, "..", "..");

/** The repository build:all is told it releases from (--repo): install.sh, install.ps1 and the npm launcher name it. */
export const RELEASE_REPO = "acme/velesdb-hooks";
export const STALE_ASSETS = [
  "velesdb-hooks-0.0.0-linux-x64",
  "velesdb-hooks-0.0.0-windows-x64.exe",
  "velesdb-hooks-0.0.0-darwin-arm64.tar.gz",
];
export const NOT_OURS = "notes.txt";

export interface ReleaseBuild {
  readonly out: string;
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly seconds: number;
}

/** How long a file waits for another worker's build before it gives up (the build takes 1–3 minutes). */
const WAIT_LIMIT_MS = 20 * 60_000;

let pending: Promise<ReleaseBuild> | undefined;
let ownedDir: string | undefined;

/** sharedReleaseBuild() → build:all's run into a temporary directory, made once per test run. */
export function sharedReleaseBuild(): Promise<ReleaseBuild> {
  pending ??= sharedThroughRunDir() ?? build(ownDirectory());
  return pending;
}

function ownDirectory(): string {
  ownedDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-build-all-")));
  return ownedDir;
}

/** sharedThroughRunDir() → the run's one build (made here or by another worker), or undefined without a run directory. */
function sharedThroughRunDir(): Promise<ReleaseBuild> | undefined {
  const runDir = testRunDir();
  if (!runDir) return undefined;
  const out = path.join(runDir, "build-all");
  const resultFile = path.join(runDir, "build-all.json");
  try {
    fs.mkdirSync(out); // the lock: exactly one worker creates it
  } catch {
    return waitForResult(resultFile);
  }
  return build(out).then(
    (result) => {
      writeResult(resultFile, result);
      return result;
    },
    (error: unknown) => {
      const failed = { out, exitCode: -1, stdout: "", stderr: `build:all could not run: ${String(error)}`, seconds: 0 };
      writeResult(resultFile, failed);
      return failed;
    },
  );
}

function writeResult(file: string, result: ReleaseBuild): void {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(result));
  fs.renameSync(`${file}.tmp`, file);
}

async function waitForResult(file: string): Promise<ReleaseBuild> {
  const started = Date.now();
  while (!fs.existsSync(file)) {
    if (Date.now() - started > WAIT_LIMIT_MS)
      return {
        out: path.dirname(file),
        exitCode: -1,
        stdout: "",
        stderr: "gave up waiting for another worker's build:all",
        seconds: 0,
      };
    await Bun.sleep(250);
  }
  return JSON.parse(fs.readFileSync(file, "utf8")) as ReleaseBuild;
}

async function build(out: string): Promise<ReleaseBuild> {
  for (const stale of STALE_ASSETS) fs.writeFileSync(path.join(out, stale), "an asset of an earlier build\n");
  fs.writeFileSync(path.join(out, NOT_OURS), "not ours\n");
  const started = performance.now();
  const child = Bun.spawn(
    [process.execPath, path.join(ROOT, "scripts", "build-all.ts"), "--out", out, "--repo", RELEASE_REPO],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { out, exitCode, stdout, stderr, seconds: (performance.now() - started) / 1000 };
}

/** removeSharedReleaseBuild() → a build this process made for itself deleted (after the last test file; a later caller builds again). A run directory's build stays: scripts/test.ts removes it. */
export async function removeSharedReleaseBuild(): Promise<void> {
  if (pending) await pending.catch(() => undefined);
  if (ownedDir) fs.rmSync(ownedDir, { recursive: true, force: true });
  pending = undefined;
  ownedDir = undefined;
}
