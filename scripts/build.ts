// bun run build → dist/velesdb-hooks for this machine, with the release flags of docs/contract.md §11.
// `--no-compile-autoload-dotenv` and `--no-compile-autoload-bunfig` are not optional: the
// binary runs inside whatever repository the agent works in, and without them a `.env` or a
// `bunfig.toml` there (whose `preload` runs code) would be loaded into every hook.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export const ROOT = path.resolve(import.meta.dir, "..");
export const COMPILE_FLAGS = [
  "--compile",
  "--minify",
  "--bytecode",
  "--format=esm",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  // Each `await import("…")` becomes a chunk embedded in the executable and loaded on demand,
  // so a hook evaluates only its own event's code (measured: ~0.5 ms of a ~5 ms hook).
  "--splitting",
  // A hook is run-once code: at the normal tier-up thresholds the engine starts a JIT thread
  // and compiles node:fs's start-up helper in every process, ~1.2 ms of ~10 ms of CPU
  // (BUN_JSC_reportCompileTimes=1, docs/performance/2026-12-02-io-floor.md). Ten times the
  // thresholds keeps every hook in the
  // interpreter; a long compression still reaches the JIT (5 MB: same CPU time, measured).
  "--compile-jit-policy=10",
] as const;

export function packageVersion(): string {
  return JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version as string;
}

/** compileBinary(entry, outfile, extra) → runs `bun build` with the release flags; throws on failure. */
export function compileBinary(entry: string, outfile: string, extra: readonly string[] = []): void {
  const { args, staging } = compileCommand(entry, outfile, extra);
  const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  finishCompile(entry, outfile, staging, result.status);
}

/** compileBinaryAsync(entry, outfile, extra) → compileBinary without blocking: builds of several targets can overlap. */
export async function compileBinaryAsync(entry: string, outfile: string, extra: readonly string[] = []): Promise<void> {
  const { args, staging } = compileCommand(entry, outfile, extra);
  const child = Bun.spawn([process.execPath, ...args], {
    cwd: ROOT,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "inherit",
  });
  finishCompile(entry, outfile, staging, await child.exited);
}

function compileCommand(entry: string, outfile: string, extra: readonly string[]): { args: string[]; staging: string } {
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  // Build beside the target and rename over it: a binary being run (by a test, a benchmark
  // or an agent) is never half-written, and Linux refuses to write a running executable.
  const staging = `${outfile}.building-${process.pid}-${++compileCount}${path.extname(outfile)}`;
  return { args: ["build", ...COMPILE_FLAGS, ...extra, entry, "--outfile", staging], staging };
}

let compileCount = 0;

function finishCompile(entry: string, outfile: string, staging: string, status: number | null): void {
  if (status !== 0) {
    fs.rmSync(staging, { force: true });
    throw new Error(`bun build failed for ${entry} (exit ${status})`);
  }
  fs.renameSync(staging, outfile);
}

export function versionDefine(version: string): string[] {
  return ["--define", `VELESDB_HOOKS_BUILD_VERSION=${JSON.stringify(version)}`];
}

if (import.meta.main) {
  const outfile = path.join(ROOT, "dist", process.platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks");
  compileBinary(path.join(ROOT, "src", "cli.ts"), outfile, versionDefine(packageVersion()));
  console.log(`built ${path.relative(ROOT, outfile)} ${packageVersion()}`);
}
