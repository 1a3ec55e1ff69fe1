// runWithWatchdog(command, args, stdin, { timeoutMs, maxStdoutBytes }) → one outcome, always.
// Every call to `velesdb-memory compile-stdin` goes through here (docs/contract.md §7). Why not the
// `timeout` binary: it is absent from stock macOS and Windows, and it only kills its direct
// child. Why this much care: a velesdb-memory released before compile-stdin ignores the
// subcommand and starts its MCP server on the piped stdin, i.e. never returns; without a
// deadline every Bash call then hangs until the host kills the hook. Four rules follow:
// - the child gets its own process group (detached), so the deadline kills the whole group,
//   grandchildren included, not only the process we started;
// - the deadline is armed before the first stdin byte is written, and stdin is written in
//   chunks, each flushed before the next, so a child that never reads cannot block us (its
//   pipe just stays full until the group dies; EPIPE is expected, not an error);
// - we answer at the deadline without waiting for pipe EOF: a grandchild that inherited
//   stdout keeps the pipe open after its parent died;
// - nothing throws: a spawn failure, a bad bound, an overflow are outcomes like any other.
// Bun.spawn, not node:child_process: the Node module loads its stream and event machinery into
// the hook, which raised the peak RSS of every compression (a 20 KB result compressed: 25.0 →
// 23.5 MB in the bench; docs/performance/2026-12-02-compression-memory.md measures the 5 MB ratio
// with that fixed cost in it). `detached`
// is setsid(2) there.
// A hook the host kills (SIGKILL at its timeout: docs/compression.md#host-deadlines-and-a-killed-hook) runs no code, so its own group
// kill never happens and a detached child lived on. On Linux the child is therefore started
// through util-linux's setpriv, which sets PR_SET_PDEATHSIG (the kernel sends SIGKILL when we die),
// then setsid(1), which makes it a group leader as `detached` did. Bun's own `detached` spawn
// loses a parent-death signal set this way (measured, Bun 1.4.4: the child outlived a SIGKILLed
// parent; without `detached` it died with it), hence the two steps. Elsewhere: `detached`.
import * as fs from "node:fs";
import { noteStat } from "./stats-note.ts";

export interface WatchdogOptions {
  /** Deadline from spawn, in milliseconds (finite, ≥ 0). */
  readonly timeoutMs: number;
  /** stdout beyond this many bytes ends the run as a failure (finite integer, ≥ 0). */
  readonly maxStdoutBytes: number;
  readonly env?: NodeJS.ProcessEnv;
  /** Between SIGTERM and SIGKILL; short, because the caller is a hook on the user's clock. */
  readonly killGraceMs?: number;
}

/** How a run ended. `ok` is true only for exit code 0 within the deadline and the stdout cap. */
export interface WatchdogOutcome {
  readonly ok: boolean;
  readonly timedOut: boolean;
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Why the program could not be run (spawn failure or an invalid bound), else null. */
  readonly spawnError: string | null;
  readonly stdout: string;
  /** True when stdout went past maxStdoutBytes (the run was stopped there). */
  readonly stdoutOverflow: boolean;
  /** The first bytes of stderr, for a one-line diagnostic. */
  readonly stderr: string;
}

const STDIN_CHUNK_BYTES = 64 * 1024;
const STDIN_CHUNK_CHARS = 32 * 1024;
const STDERR_KEEP_BYTES = 2048;
const DEFAULT_KILL_GRACE_MS = 200;
/** After the child exits, how long stdout may take to reach EOF before we stop waiting. */
const EOF_GRACE_MS = 100;

/** boundProblem(5, "timeoutMs") → null; boundProblem(NaN, "timeoutMs") → "timeoutMs must be … got NaN (number)". */
export function boundProblem(value: unknown, name: string, integer = false): string | null {
  const valid =
    typeof value === "number" && Number.isFinite(value) && value >= 0 && (!integer || Number.isInteger(value));
  if (valid) return null;
  const shown = typeof value === "number" ? String(value) : (JSON.stringify(value) ?? String(value));
  return `${name} must be a finite ${integer ? "integer" : "number"} >= 0, got ${shown} (${typeof value})`;
}

/**
 * deadlineCheck(startedAt, now, timeoutMs) → { expired, remainingMs }. Pure, so the rule is
 * tested with fixed numbers: deadlineCheck(1000, 1500, 2000) → { expired: false, remainingMs: 1500 }.
 * A timer may fire a little early; the caller re-arms for the remainder instead of trusting it.
 */
export function deadlineCheck(
  startedAt: number,
  now: number,
  timeoutMs: number,
): { expired: boolean; remainingMs: number } {
  const remainingMs = Math.max(0, startedAt + timeoutMs - now);
  return { expired: remainingMs === 0, remainingMs };
}

/** stdinChunks("…", chars?) → the input as slices to write one at a time; never splits a surrogate pair. */
export function* stdinChunks(input: string | Uint8Array, chars = STDIN_CHUNK_CHARS): Generator<string | Uint8Array> {
  if (typeof input !== "string") {
    for (let offset = 0; offset < input.length; offset += STDIN_CHUNK_BYTES)
      yield input.subarray(offset, offset + STDIN_CHUNK_BYTES);
    return;
  }
  let offset = 0;
  while (offset < input.length) {
    let end = Math.min(offset + chars, input.length);
    // A high surrogate at the cut would be encoded alone as U+FFFD; keep the pair together.
    const last = input.charCodeAt(end - 1);
    if (end < input.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    yield input.slice(offset, end);
    offset = end;
  }
}

export async function runWithWatchdog(
  command: string,
  args: readonly string[],
  stdin: string | Uint8Array,
  options: WatchdogOptions,
): Promise<WatchdogOutcome> {
  const problem =
    boundProblem(options.timeoutMs, "timeoutMs") ??
    boundProblem(options.maxStdoutBytes, "maxStdoutBytes", true) ??
    (options.killGraceMs === undefined ? null : boundProblem(options.killGraceMs, "killGraceMs"));
  if (problem) return failure(problem);
  return new Promise((resolve) => new Run(command, args, stdin, options, resolve).start());
}

function failure(spawnError: string): WatchdogOutcome {
  return {
    ok: false,
    timedOut: false,
    exitCode: null,
    signal: null,
    spawnError,
    stdout: "",
    stdoutOverflow: false,
    stderr: "",
  };
}

type Child = Bun.Subprocess<"pipe", "pipe", "pipe">;

/** One supervised child. All state lives here so every ending goes through settle() once. */
class Run {
  private child: Child | undefined;
  private readonly startedAt = performance.now();
  private readonly stdoutChunks: Uint8Array[] = [];
  private stdoutBytes = 0;
  private stderrText = "";
  private stdoutOverflow = false;
  private timedOut = false;
  private exitCode: number | null = null;
  private signal: string | null = null;
  private exited = false;
  private stdoutEnded = false;
  private settled = false;
  private killing = false;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly readers: Array<{ cancel(): Promise<void> }> = [];

  constructor(
    private readonly command: string,
    private readonly args: readonly string[],
    private readonly stdin: string | Uint8Array,
    private readonly options: WatchdogOptions,
    private readonly resolve: (outcome: WatchdogOutcome) => void,
  ) {}

  start(): void {
    let child: Child;
    const tied = deathTiedPrefix(this.command);
    try {
      child = Bun.spawn([...tied, this.command, ...this.args], {
        detached: tied.length === 0,
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        env: (this.options.env ?? process.env) as Record<string, string>,
        windowsHide: true,
        onExit: (proc, code) => this.onExit(code, proc.signalCode === null ? null : String(proc.signalCode)),
      });
    } catch (error) {
      this.resolve(failure(describeError(error)));
      return;
    }
    this.child = child;
    // The deadline exists before a single stdin byte is written (docs/contract.md §7).
    this.armDeadline();
    void this.readToEnd(
      child.stdout,
      (chunk) => this.onStdout(chunk),
      () => this.onStdoutEnd(),
    );
    void this.readToEnd(
      child.stderr,
      (chunk) => this.onStderr(chunk),
      () => {},
    );
    void this.writeStdin(child.stdin);
  }

  /** readToEnd(stream, onChunk, onEnd) → every chunk, then onEnd once, on EOF or on a pipe error alike; never rejects. */
  private async readToEnd(
    stream: ReadableStream<Uint8Array>,
    onChunk: (chunk: Uint8Array) => void,
    onEnd: () => void,
  ): Promise<void> {
    try {
      const reader = stream.getReader();
      this.readers.push(reader);
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        onChunk(next.value);
      }
    } catch {
      // A pipe closed under us: the end of this stream, nothing more.
    }
    onEnd();
  }

  private armDeadline(): void {
    const check = deadlineCheck(this.startedAt, performance.now(), this.options.timeoutMs);
    if (check.expired) {
      this.timedOut = true;
      noteStat("timeout", true);
      this.terminate();
      return;
    }
    this.later(check.remainingMs, () => this.armDeadline());
  }

  private async writeStdin(sink: Bun.FileSink): Promise<void> {
    try {
      for (const chunk of stdinChunks(this.stdin)) {
        if (this.settled || this.killing) return;
        // Both answer a number when the pipe took the bytes at once, else a promise that settles
        // once it did (or rejects: EPIPE). Awaited, so no rejection goes unhandled, and we wait for
        // the child to read; if it never does, the deadline ends the run.
        await sink.write(chunk);
        await sink.flush();
      }
      await sink.end();
    } catch {
      // EPIPE and friends: the child closed its stdin or died. That is its business, not a crash.
    }
  }

  private onStdout(chunk: Uint8Array): void {
    if (this.settled || this.stdoutOverflow) return;
    if (this.stdoutBytes + chunk.length > this.options.maxStdoutBytes) {
      this.stdoutOverflow = true;
      this.terminate();
      return;
    }
    this.stdoutChunks.push(chunk);
    this.stdoutBytes += chunk.length;
  }

  private onStderr(chunk: Uint8Array): void {
    if (this.stderrText.length < STDERR_KEEP_BYTES)
      this.stderrText += Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString(
        "utf8",
        0,
        STDERR_KEEP_BYTES,
      );
  }

  private onStdoutEnd(): void {
    this.stdoutEnded = true;
    if (this.exited && !this.killing) this.settle(null);
  }

  private onExit(code: number | null, signal: string | null): void {
    this.exited = true;
    this.exitCode = code;
    this.signal = signal;
    if (this.killing) return;
    if (this.stdoutEnded) {
      this.settle(null);
      return;
    }
    // The child is gone but its stdout is still open: a grandchild inherited it. Give the
    // last bytes a moment to arrive, then kill what is left of the group and answer.
    this.later(EOF_GRACE_MS, () => {
      this.killGroup("SIGKILL");
      this.settle(null);
    });
  }

  /** SIGTERM to the whole group, SIGKILL after the grace, then answer without waiting for EOF. */
  private terminate(): void {
    if (this.killing || this.settled) return;
    this.killing = true;
    this.killGroup("SIGTERM");
    this.later(this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, () => {
      this.killGroup("SIGKILL");
      this.settle(null);
    });
  }

  private killGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      // A negative pid names the process group the detached child leads (POSIX kill(2)).
      if (process.platform === "win32") this.child?.kill(signal);
      else process.kill(-pid, signal);
    } catch {
      // ESRCH: the group is already empty.
    }
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
  }

  private settle(spawnError: string | null): void {
    if (this.settled) return;
    this.settled = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const child = this.child;
    if (child) {
      // Release our pipe ends so neither a stuck reader nor a grandchild keeps this process alive.
      for (const reader of this.readers) reader.cancel().catch(() => {});
      try {
        void Promise.resolve(child.stdin.end()).catch(() => {});
      } catch {
        // already closed
      }
      child.unref();
    }
    const stdout = Buffer.concat(this.stdoutChunks, this.stdoutBytes).toString("utf8");
    this.stdoutChunks.length = 0;
    const ok = spawnError === null && !this.timedOut && !this.stdoutOverflow && this.exitCode === 0;
    this.resolve({
      ok,
      timedOut: this.timedOut,
      exitCode: this.exitCode,
      signal: this.signal,
      spawnError,
      stdout,
      stdoutOverflow: this.stdoutOverflow,
      stderr: this.stderrText.slice(0, STDERR_KEEP_BYTES),
    });
  }
}

const SETPRIV = "/usr/bin/setpriv";
const SETSID = "/usr/bin/setsid";
let tieAvailable: boolean | undefined;

/**
 * deathTiedPrefix(command) → `[setpriv, --pdeathsig, KILL, --, setsid]` on Linux when both are
 * installed and the command is an executable file (so a missing one is still a spawn error of
 * its own, not setsid's exit 127), else [] (spawned detached).
 */
export function deathTiedPrefix(command: string): string[] {
  if (process.platform !== "linux") return [];
  tieAvailable ??= isExecutable(SETPRIV) && isExecutable(SETSID);
  return tieAvailable && isExecutable(command) ? [SETPRIV, "--pdeathsig", "KILL", "--", SETSID] : [];
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function describeError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
