// One run of `bun scripts/build-all.ts` (every target: archives, SHA256SUMS, install scripts,
// the npm packages) shared by the test files that need the whole release: test/release.test.ts
// checks the assets, test/npm-registry.test.ts publishes the npm packages. All seven targets
// cost about a minute of CPU and ~1 GB of disk, so a `bun test` process builds them once (test
// files share their modules in one run), and the global afterAll of test/support/teardown.ts
// (bunfig.toml's preload) removes the directory after the last file.
//
// The output directory is seeded with what an earlier build leaves behind (assets of another
// version, a file that is not ours), so the release test can prove which ones build:all removes.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const ROOT = path.resolve(import.meta.dir, "..", "..");

/** The repository build:all is told it releases from (--repo): install.sh, install.ps1 and the npm launcher name it. */
export const RELEASE_REPO = "acme/velesdb-hooks";
export const STALE_ASSETS = ["velesdb-hooks-0.0.0-linux-x64", "velesdb-hooks-0.0.0-windows-x64.exe", "velesdb-hooks-0.0.0-darwin-arm64.tar.gz"];
export const NOT_OURS = "notes.txt";

export interface ReleaseBuild {
  readonly out: string;
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly seconds: number;
}

let pending: Promise<ReleaseBuild> | undefined;
let outDir: string | undefined;

/** sharedReleaseBuild() → build:all's run into a temporary directory, started by the first caller of this process. */
export function sharedReleaseBuild(): Promise<ReleaseBuild> {
  pending ??= build();
  return pending;
}

async function build(): Promise<ReleaseBuild> {
  const out = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-build-all-")));
  outDir = out;
  for (const stale of STALE_ASSETS) fs.writeFileSync(path.join(out, stale), "an asset of an earlier build\n");
  fs.writeFileSync(path.join(out, NOT_OURS), "not ours\n");
  const started = performance.now();
  const child = Bun.spawn([process.execPath, path.join(ROOT, "scripts", "build-all.ts"), "--out", out, "--repo", RELEASE_REPO], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { out, exitCode, stdout, stderr, seconds: (performance.now() - started) / 1000 };
}

/** removeSharedReleaseBuild() → the build's directory deleted (after the last test file; a later caller builds again). */
export async function removeSharedReleaseBuild(): Promise<void> {
  if (pending) await pending.catch(() => undefined);
  if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
  pending = undefined;
  outDir = undefined;
}
