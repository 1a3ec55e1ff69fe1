// Command-output compression (docs/contract.md §8; docs/compression.md), one pass: the gates that cost
// nothing ran in compress-gates.ts; here the output is read (inline, or the host's saved file),
// shaped (compress-shape.ts: signal lines kept, the rest folded, sized to the budget), compiled
// by `velesdb-memory compile-stdin`, verified (every signal line must be in what the model will
// read), archived (compress-archive.ts), and answered with the archive named in a footer. No
// host's payload is read here: each host module hands over a CommandOutput and puts the text
// back in its own shape.
// Policy: fail open. Compression is advisory, so every surprise — no compiler, a hung or crashed
// one, an answer we do not recognise, a signal line missing, state we cannot trust — passes the
// output through untouched, with one stderr line where something was refused.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  compileText,
  probeCompiler,
  readRisk,
  resolveCompiler,
  tokenCountsProblem,
  COMPILE_TIMEOUT_MS,
  type Risk,
} from "./compiler.ts";
import { removeQuietly, writeArchiveSafely, type ArchiveResult } from "./compress-archive.ts";
import { missingSignal, shapeOutput } from "./compress-shape.ts";
import { pass, type Decision } from "./decision.ts";
import type { HookInput } from "./hook-input.ts";
import { compressionDeadlineMs } from "./host-timeouts.ts";
import { UNKNOWN_SESSION } from "./payload.ts";
import { errorCode } from "./state.ts";
import { noteStat } from "./stats-note.ts";
import { compressionFooter } from "./texts.ts";
import { estimateTokens } from "./token-estimate.ts";

export interface CompressionSettings {
  readonly minBytes: number;
  readonly probeTimeoutMs: number;
  readonly budget: number;
  readonly budgetMax: number;
  readonly persistedBudget: number;
  readonly minSaved: number;
}

/**
 * What a host hands compression (docs/compression.md): the command's output as the model would
 * read it, in no host's wire shape. Each host module builds one from its own payload and puts the
 * compiled text back in its own answer; nothing here knows a host.
 */
export interface CommandOutput {
  /** The tool's name in the allowlist (`VELESDB_HOOK_COMPRESS_TOOLS`): every host's shell tool is "Bash". */
  readonly toolName: string;
  /** The command line, when the host says it: part of the query, and of the view's first line. */
  readonly command?: string;
  /** The standard output (a large payload's as bytes, never made a string before it is needed). */
  readonly stdout: string | Uint8Array;
  /** The standard error, when the host keeps it apart (Claude): the model reads it too. */
  readonly stderr?: string;
  /** The host's file with the whole standard output, when the inline text is cut. */
  readonly saved?: SavedOutput;
  /** What the archive holds (as JSON): the host's own result object, so nothing of it is lost. */
  readonly original: Record<string, unknown>;
  /**
   * The PostToolUse timeout the host is registered with, in seconds (its descriptor's): the
   * deadline compression keeps is derived from it here (src/core/host-timeouts.ts), so a small
   * output, which the gates answer before this module is loaded, loads neither.
   */
  readonly timeoutS: number;
}

/** A host's file holding the complete output. */
export interface SavedOutput {
  readonly path: string;
  /**
   * True when the host deletes it when its session ends (Copilot): we then archive its content,
   * so the path our footer names outlives the session. Otherwise the file is the archive.
   */
  readonly temporary: boolean;
  /** trust(stats) → why the opened file is not the host's own (checked on the open descriptor), or "". */
  readonly trust?: (stats: import("node:fs").Stats) => string;
}

/** The answer of compression: the text that replaces the output, or the pass to answer instead. */
export type Compression =
  | { readonly kind: "compiled"; readonly text: string; readonly note?: string }
  | { readonly kind: "untouched"; readonly decision: Decision };

/** A saved output larger than this is not read into memory; the host's file stays as it is. */
export const MAX_PERSISTED_BYTES = 64 * 1024 * 1024;
const FOOTER_SEPARATOR = "\n\n";
/** Between the two streams in the view: the model read both (Claude's Bash result has both). */
export const STDERR_SEPARATOR = "[stderr]";
/** The view is sized to this share of the budget: compile-stdin adds a joiner per fragment. */
const VIEW_SHARE_OF_BUDGET = 0.9;
/** Time kept for the archive and the answer after the last compilation. */
const ARCHIVE_RESERVE_MS = 300;

const untouched = (problem?: string): Compression => ({ kind: "untouched", decision: pass(problem) });

/**
 * compressOutput(input, output, settings) → the compiled view and its footer, or why the output
 * passes through. The gates in order: read, state and compiler, shape, compile, verify, archive,
 * net gain.
 */
export async function compressOutput(
  input: HookInput,
  output: CommandOutput,
  settings: CompressionSettings,
): Promise<Compression> {
  // From here: the hook's start-up before this point (tens of ms) is inside the deadline's margin.
  const deadlineAt = performance.now() + compressionDeadlineMs(output.timeoutS);
  const timeLeft = (bound: number): number => Math.min(bound, deadlineAt - performance.now());

  // Read: the host's saved file (whole, bounded, and only when it is the host's own), else the inline text.
  let stdout: string;
  let bytes: number;
  if (output.saved !== undefined) {
    const read = readSavedOutput(output.saved.path, settings.minBytes, output.saved.trust);
    if (read.kind === "refused") return untouched(read.problem);
    if (read.kind === "small") return untouched();
    stdout = read.bytes.toString("utf8");
    bytes = read.bytes.length;
  } else {
    stdout =
      typeof output.stdout === "string"
        ? output.stdout
        : Buffer.from(output.stdout.buffer, output.stdout.byteOffset, output.stdout.byteLength).toString("utf8");
    bytes = typeof output.stdout === "string" ? Buffer.byteLength(stdout, "utf8") : output.stdout.length;
  }
  const stderr = output.stderr ?? "";
  bytes += Buffer.byteLength(stderr, "utf8");
  const text = stderr === "" ? stdout : `${stdout.replace(/\n$/, "")}\n${STDERR_SEPARATOR}\n${stderr}`;

  // A compiler that resolves and passed the probe (cached in private state).
  const store = input.state();
  if (!store.safe) return untouched(`compression off: state unavailable (${store.cause}: ${store.problem})`);
  const compiler = resolveCompiler(input.env);
  if (!compiler.ok) return untouched(`compression off: ${compiler.problem}`);
  const probe = await probeCompiler(
    store,
    input.sessionId ?? UNKNOWN_SESSION,
    compiler.path,
    timeLeft(settings.probeTimeoutMs),
    input.env,
  );
  if (!probe.capable) return untouched(`compression off: ${probe.problem}`);

  // Shape, compile, verify; once more at the ceiling when the budget was too tight for the signal.
  // A saved output (the host cut it for being large) starts at the persisted budget (docs/contract.md §8).
  const first = output.saved === undefined ? settings.budget : Math.min(settings.budget, settings.persistedBudget);
  const budgets = settings.budgetMax > first ? [first, settings.budgetMax] : [first];
  const query = output.command
    ? `${output.toolName} output of ${output.command.slice(0, 200)}`
    : `${output.toolName} output`;
  let problem = "no compilation";
  let shipped: { content: string; risk: Risk; signal: number; originalTokens: number } | undefined;
  // What parsing the payload left is garbage; collecting it before the shaping's own lines and
  // numbers are made keeps the peak lower (as before the archive below).
  if (bytes >= LARGE_OUTPUT_BYTES) Bun.gc(true);
  for (const budget of budgets) {
    const shaped = shapeOutput(text, Math.floor(budget * VIEW_SHARE_OF_BUDGET));
    if (bytes >= LARGE_OUTPUT_BYTES) Bun.gc(true);
    if (!shaped.ok) {
      problem = shaped.problem;
      continue;
    }
    const remaining = timeLeft(COMPILE_TIMEOUT_MS) - ARCHIVE_RESERVE_MS;
    if (remaining <= 0) return untouched("compression refused: no time left before the host's hook timeout");
    const compiled = await compileText(compiler.path, shaped.view.text, budget, query, input.env, remaining);
    if (!compiled.ok) return untouched(`compression refused: ${compiled.problem}`);
    const risk = readRisk(compiled.answer.risk);
    if (!risk.ok) return untouched(`compression refused: ${risk.problem}`);
    const counts = tokenCountsProblem(compiled.answer);
    if (counts) return untouched(`compression refused: ${counts}`);
    const content = compiled.answer.content;
    if (typeof content !== "string" || content === "")
      return untouched("compression refused: the compilation is empty");
    // The fidelity rule: every signal line, verbatim, in what the model will read.
    const missing = missingSignal(content, shaped.view.signal);
    if (missing.length === 0) {
      shipped = {
        content,
        risk: risk.risk,
        signal: shaped.view.signal.length,
        originalTokens: shaped.view.originalTokens,
      };
      break;
    }
    problem = `the compilation at ${budget} tokens left out ${missing.length} of ${shaped.view.signal.length} signal lines`;
  }
  if (shipped === undefined) return untouched(`compression refused: ${problem}`);
  if (timeLeft(ARCHIVE_RESERVE_MS) <= 0)
    return untouched("compression refused: no time left before the host's hook timeout");

  // Archive: written only now, so a hook killed while compiling leaves nothing behind. Nothing is
  // deleted: the original must stay readable after we replace it.
  const ownArchive = output.saved === undefined || output.saved.temporary;
  const original = output.saved?.temporary ? { ...output.original, stdout } : output.original;
  if (ownArchive && bytes >= LARGE_OUTPUT_BYTES) Bun.gc(true);
  const archived: ArchiveResult = ownArchive
    ? writeArchiveSafely(store.dir, original)
    : { ok: true, path: output.saved!.path };
  if (!archived.ok) return untouched(`compression refused: ${archived.problem}`);

  // Net gain, in compile-stdin's own token estimate: the original against the view and footer.
  const tokensIn = shipped.originalTokens;
  const draft = (tokensOut: number): string =>
    FOOTER_SEPARATOR +
    compressionFooter({
      tokensIn,
      tokensOut,
      tokensSaved: tokensIn - tokensOut,
      risk: shipped.risk,
      bytesCompiled: bytes,
      signalLines: shipped.signal,
      archivePath: archived.path,
    });
  const tokensOut = Math.ceil(estimateTokens(shipped.content + draft(0)));
  const saved = tokensIn - tokensOut;
  if (saved < settings.minSaved) {
    if (ownArchive) removeQuietly(archived.path);
    return untouched(
      `compression refused: saving ${saved} tokens (footer included) is below the ${settings.minSaved} margin`,
    );
  }
  noteStat("compression", {
    outcome: "replaced",
    bytesIn: bytes,
    bytesOut: Buffer.byteLength(shipped.content + draft(tokensOut), "utf8"),
    tokensSaved: saved,
  });
  return { kind: "compiled", text: shipped.content + draft(tokensOut) };
}

/** From this size on, a forced collection before the archive pays for itself in peak memory. */
const LARGE_OUTPUT_BYTES = 1024 * 1024;

type PersistedRead =
  | { readonly kind: "read"; readonly bytes: Buffer }
  | { readonly kind: "small" }
  | { readonly kind: "refused"; readonly problem: string };

/**
 * readSavedOutput(file, minBytes, trust?) → the host's saved output, read whole and bounded. It
 * must be an absolute path to a regular file (a link is not followed) that `trust` accepts, judged
 * on the opened descriptor so the file cannot be swapped between the check and the read; a file
 * under minBytes is reported as small before a byte of it is read.
 */
export function readSavedOutput(file: string, minBytes: number, trust?: (stats: fs.Stats) => string): PersistedRead {
  if (!path.isAbsolute(file) || file.includes("\0"))
    return { kind: "refused", problem: "the host's saved output is not an absolute path" };
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO planted at that path must not wait for a writer.
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { kind: "refused", problem: "the host's saved output is not a regular file" };
    const distrust = trust?.(st) ?? "";
    if (distrust)
      return { kind: "refused", problem: `the saved output named in the result is not the host's own: ${distrust}` };
    if (st.size < minBytes) return { kind: "small" };
    if (st.size > MAX_PERSISTED_BYTES) {
      return {
        kind: "refused",
        problem: `persisted output is ${st.size} bytes, above the ${MAX_PERSISTED_BYTES} this hook reads`,
      };
    }
    const bytes = Buffer.allocUnsafe(st.size);
    let filled = 0;
    while (filled < bytes.length) {
      const n = fs.readSync(fd, bytes, filled, bytes.length - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return filled < minBytes ? { kind: "small" } : { kind: "read", bytes: bytes.subarray(0, filled) };
  } catch (error) {
    const code = errorCode(error);
    const why = code === "ELOOP" ? "is a symlink" : `cannot be read (${code})`;
    return { kind: "refused", problem: `the host's saved output ${why}` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
