// Shared by the compression tests and the compression benchmark: where the fake compilers
// live, the compiled binaries (the realistic compiler, the hook itself), Bash payloads in the
// shape Claude sends them, and a check that no process we started is still alive.
import * as fs from "node:fs";
import * as path from "node:path";
import { compileBinary, ROOT } from "../../scripts/build.ts";

export const COMPILERS = path.join(ROOT, "fixtures", "compilers");
/** A PATH without bun on it, as a hook started by a host may well have. */
export const PLAIN_PATH = "/usr/bin:/bin";

/** fake("medium") → the absolute path of fixtures/compilers/medium.sh. */
export const fake = (name: string): string => path.join(COMPILERS, `${name}.sh`);

const BUILT = path.join(ROOT, "dist", "compress-test");

function fresh(outfile: string, sources: readonly string[]): boolean {
  if (!fs.existsSync(outfile)) return false;
  const built = fs.statSync(outfile).mtimeMs;
  return sources.every((file) => fs.statSync(file).mtimeMs < built);
}

function sourcesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(dir, f));
}

/** realisticCompiler() → dist/compress-test/realistic-compiler, rebuilt when its source changed. */
export function realisticCompiler(): string {
  const source = path.join(COMPILERS, "realistic.ts");
  const outfile = path.join(BUILT, "realistic-compiler");
  if (!fresh(outfile, [source])) compileBinary(source, outfile);
  return outfile;
}

export interface HookCommand {
  readonly binary: string;
  readonly args: readonly string[];
}

/**
 * hookCommand() → `velesdb-hooks claude post-tool-use`, compiled with the release flags into
 * dist/compress-test (rebuilt when a source changed), so a concurrent `bun run build` never
 * swaps the binary in the middle of a test.
 */
export function hookCommand(): HookCommand {
  const entry = path.join(ROOT, "src", "cli.ts");
  const outfile = path.join(BUILT, "velesdb-hooks");
  if (!fresh(outfile, sourcesUnder(path.join(ROOT, "src")))) compileBinary(entry, outfile);
  return { binary: outfile, args: ["claude", "post-tool-use"] };
}

/** bashPayload(stdout, {…}) → a Claude PostToolUse payload for Bash (shape of the recorded one). */
export function bashPayload(
  stdout: string,
  options: { cwd: string; sessionId?: string; response?: Record<string, unknown>; toolName?: string },
): Record<string, unknown> {
  return {
    session_id: options.sessionId ?? "0d6f7a52-compress-test",
    transcript_path: path.join(options.cwd, "transcript.jsonl"),
    cwd: options.cwd,
    permission_mode: "default",
    hook_event_name: "PostToolUse",
    tool_name: options.toolName ?? "Bash",
    tool_input: { command: "cargo build", description: "build" },
    tool_response: {
      stdout,
      stderr: "",
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
      ...options.response,
    },
    tool_use_id: "toolu_compress_test",
    duration_ms: 1234,
  };
}

/**
 * realisticLog(bytes) → a long build log: the same progress lines over and over, with a few
 * distinct warnings, errors, URLs and hashes that a faithful compilation must keep.
 */
export function realisticLog(bytes: number): string {
  const crates = ["serde", "tokio", "hyper", "regex", "rand", "syn", "quote", "libc", "bytes", "memchr"];
  const parts: string[] = [];
  let size = 0;
  let i = 0;
  while (size < bytes) {
    const crate = crates[i % crates.length]!;
    let line = `   Compiling ${crate} (registry) ... done`;
    if (i % 20_000 === 7) line = `warning: unused import in ${crate}/src/lib.rs:${i}`;
    if (i % 50_000 === 11)
      line = `error[E0308]: mismatched types at src/main.rs:${i}, see https://doc.rust-lang.org/error_codes/E0308.html`;
    if (i % 45_000 === 13) line = `note: build artifact 9f2c1ab${(i % 997).toString(16)} cached`;
    parts.push(line);
    size += line.length + 1;
    i++;
  }
  return `${parts.join("\n")}\n`;
}

/** pidsFrom(file) → the pids a fake wrote to $VELESDB_FAKE_PID_FILE (empty when none). */
export function pidsFrom(file: string): number[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
}

/** isAlive(pid) → true for a live process; a zombie awaiting its reaper counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true;
  }
}

/** waitUntilGone(pids) → the pids still alive after up to `ms` (empty when all are gone). */
export async function waitUntilGone(pids: readonly number[], ms = 3000): Promise<number[]> {
  const until = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < until) {
    await Bun.sleep(50);
    alive = alive.filter(isAlive);
  }
  return alive;
}

/** killQuietly(pids): test cleanup when an assertion already failed; never throws. */
export function killQuietly(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}
