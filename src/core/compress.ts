// Claude PostToolUse compression (docs/contract.md §8, gates 2–12; gate 1, recall evidence, runs before
// this; gates 2–5, which read only the payload, are compress-gates.ts). An oversized Bash
// result is replaced by a compiled view before it enters the transcript, with the complete
// original archived and named in a footer.
// Policy: fail open. Compression is advisory, so every surprise — a knob we cannot read, no
// compiler, a hung or crashed one, an answer we do not recognise, state we cannot trust —
// passes the result through untouched, with one stderr line where something was refused.
// The gates run cheapest first: the allowlist and the shape cost nothing, the size check
// costs a byte count, and only then do we touch the filesystem or spawn anything.
import * as fs from "node:fs";
import * as path from "node:path";
import { compileText, probeCompiler, readRisk, readTokens, resolveCompiler, COMPILE_TIMEOUT_MS, type CompilerAnswer, type Risk } from "./compiler.ts";
import { bashOutputGates, type BashGates } from "./compress-gates.ts";
import { pass, type Decision } from "./decision.ts";
import type { HookInput } from "./hook-input.ts";
import { UNKNOWN_SESSION } from "./payload.ts";
import { ensurePrivateSubdirectory, errorCode } from "./state.ts";
import { noteStat } from "./stats-note.ts";
import { compressionFooter } from "./texts.ts";
import { collectingAlong, Utf8Literal } from "./json-bytes.ts";
import { stdinChunks } from "./watchdog.ts";

/**
 * The whole hook must answer inside Claude's 30 s PostToolUse timeout: when the host kills
 * us, our compiler (in its own process group) would outlive us. So probe + compile + retry
 * share one deadline below that, on top of each call's own bound (probe knob, 20 s compile).
 */
export const HOOK_DEADLINE_MS = 25_000;
/** A persisted output larger than this is not read into memory; the host's file stays as it is. */
export const MAX_PERSISTED_BYTES = 64 * 1024 * 1024;
const FOOTER_SEPARATOR = "\n\n";
/** From this size on, a forced collection before compiling pays for itself in peak memory. */
const LARGE_OUTPUT_BYTES = 1024 * 1024;

/**
 * compressBashOutput(input) → replaceOutput with the compiled view, or pass (with a note when
 * refused). `gates` is what bashOutputGates said, when the caller already ran it.
 */
export async function compressBashOutput(input: HookInput, gates: BashGates = bashOutputGates(input)): Promise<Decision> {
  const startedAt = performance.now();
  const timeLeft = (bound: number): number => Math.min(bound, HOOK_DEADLINE_MS - (performance.now() - startedAt));
  if (gates.kind === "decided") return gates.decision;
  const { toolName, response, settings } = gates;

  // Gate 4 for a persisted output: the host's file, read whole up to the cap.
  const persisted = "persisted" in gates.output ? gates.output.persisted : undefined;
  let text: string | Uint8Array;
  let bytes: number;
  if ("persisted" in gates.output) {
    const read = readPersistedOutput(gates.output.persisted, settings.minBytes);
    if (read.kind === "refused") return pass(read.problem);
    if (read.kind === "small") return pass();
    text = read.bytes;
    bytes = read.bytes.length;
  } else {
    ({ text, bytes } = gates.output);
  }

  // What parsing the payload left (its pieces, and the stdin bytes unless they hold the output)
  // is garbage; collecting it now, before we spawn the compiler and serialise the archive, keeps
  // the peak lower (measured on 5 MB: 55–63 MB peak RSS without this, 46–48 MB with, when stdin
  // was decoded to one text; ~1 ms).
  if (bytes >= LARGE_OUTPUT_BYTES) Bun.gc(true);

  // Gate 6: a compiler that resolves and passed the probe (cached in private state).
  const store = input.state();
  if (!store.safe) return pass(`compression off: state unavailable (${store.cause}: ${store.problem})`);
  const compiler = resolveCompiler(input.env);
  if (!compiler.ok) return pass(`compression off: ${compiler.problem}`);
  const sessionId = input.sessionId ?? UNKNOWN_SESSION;
  const probe = await probeCompiler(store, sessionId, compiler.path, timeLeft(settings.probeTimeoutMs), input.env);
  if (!probe.capable) return pass(`compression off: ${probe.problem}`);

  // Gates 7 and 8: compile, and retry once at the ceiling when the budget was too tight.
  const budget = persisted !== undefined ? Math.min(settings.budget, settings.persistedBudget) : settings.budget;
  const query = `${toolName} output`;
  const attempts = settings.budgetMax > budget ? [budget, settings.budgetMax] : [budget];
  // Gate 10's archive is written before the first compilation, and judged in its turn below.
  // Not beside the compilation: it is synchronous work on the one JavaScript thread, so beside
  // only meant the compiler's stdin waited for it (measured at 5 MB: the last stdin byte came
  // the archive's ~30 ms later); written first, its garbage is collected before the spawn (peak
  // RSS 0.9 MB lower). Every refusal from here on removes it, so what stays on disk is exactly
  // what the gates in order would leave.
  const ownArchive = persisted === undefined;
  const archived: ArchiveResult = ownArchive ? writeArchiveSafely(store.dir, response) : { ok: true, path: persisted };
  if (ownArchive && bytes >= LARGE_OUTPUT_BYTES) Bun.gc(true);
  const refuse = (problem: string): Decision => {
    if (ownArchive && archived.ok) removeQuietly(archived.path);
    return pass(`compression refused: ${problem}`);
  };
  let answer: CompilerAnswer | undefined;
  let risk: Risk | undefined;
  for (const attemptBudget of attempts) {
    const remaining = timeLeft(COMPILE_TIMEOUT_MS);
    if (remaining <= 0) return refuse("no time left before the host's hook timeout");
    const compiled = await compileText(compiler.path, text, attemptBudget, query, input.env, remaining);
    if (!compiled.ok) return refuse(compiled.problem);
    const read = readRisk(compiled.answer.risk);
    if (!read.ok) return refuse(read.problem);
    answer = compiled.answer;
    risk = read.risk;
    if (risk !== "high") break;
  }
  if (answer === undefined || risk === undefined) return refuse("no compilation");
  if (risk === "high") return refuse(`fidelity risk high at ${attempts.join(" and ")} tokens`);

  // Gate 9: something to ship.
  if (typeof answer.content !== "string" || answer.content === "") return refuse("the compilation is empty");
  const content = answer.content;

  // Gate 10: the archive. Nothing is deleted: the original must stay readable after we replace it.
  if (!archived.ok) return pass(`compression refused: ${archived.problem}`);
  const archivePath = archived.path;

  // Gate 11: net gain. The saving must pay for the footer (one token per byte) plus the margin;
  // otherwise the archive goes (it would only duplicate what the model already sees).
  const counts = readTokens(answer);
  if (!counts.ok) return refuse(counts.problem);
  const footer = FOOTER_SEPARATOR + compressionFooter({ ...counts.tokens, risk, bytesCompiled: bytes, archivePath });
  const required = settings.minSaved + Buffer.byteLength(footer, "utf8");
  if (counts.tokens.tokensSaved < required) {
    return refuse(`saving ${counts.tokens.tokensSaved} tokens is below the ${required} needed (margin ${settings.minSaved} plus the footer)`);
  }

  // Gate 12: the host's object with stdout replaced; persisted keys go, so the host shows it inline.
  const { persistedOutputPath: _path, persistedOutputSize: _size, ...kept } = response;
  const toolResponse = { ...kept, stdout: content + footer };
  // An inline output's archive already proved the object serialises. A persisted output's did
  // not: a field nested too deep for JSON.stringify would make the encoder throw
  // (docs/development/testing.md#deep-fuzzing).
  const unserialisable = ownArchive ? "" : serialisationProblem(toolResponse);
  if (unserialisable) return refuse(`the tool_response cannot be serialised (${unserialisable})`);
  noteStat("compression", { outcome: "replaced", bytesIn: bytes, bytesOut: Buffer.byteLength(toolResponse.stdout, "utf8"), tokensSaved: counts.tokens.tokensSaved });
  return { kind: "replaceOutput", toolResponse };
}

/** serialisationProblem(value) → why JSON.stringify throws on it (nesting too deep), or "" when it does not. */
function serialisationProblem(value: unknown): string {
  try {
    JSON.stringify(value);
    return "";
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * writeArchiveSafely(stateDir, original) → writeArchive's result, never a throw: a failure is
 * gate 10's refusal, given in its turn after the compilation's gates. (It once ran in a
 * setImmediate callback, where a throw killed the hook: the fuzzer
 * (docs/development/testing.md#deep-fuzzing) sent a Bash result
 * with a field nested 100 000 deep, which JSON.stringify cannot write back.)
 */
function writeArchiveSafely(stateDir: string, original: Record<string, unknown>): ArchiveResult {
  try {
    return writeArchive(stateDir, original);
  } catch (error) {
    return { ok: false, problem: `the original cannot be archived (${error instanceof Error ? error.message : String(error)})` };
  }
}

type PersistedRead =
  | { readonly kind: "read"; readonly bytes: Buffer }
  | { readonly kind: "small" }
  | { readonly kind: "refused"; readonly problem: string };

/**
 * readPersistedOutput(file, minBytes) → the host's saved output, read whole and bounded. It must
 * be an absolute path to a regular file (a link is not followed); a file under minBytes is
 * reported as small before a byte of it is read.
 */
export function readPersistedOutput(file: string, minBytes: number): PersistedRead {
  if (!path.isAbsolute(file) || file.includes("\0")) return { kind: "refused", problem: "persistedOutputPath is not an absolute path" };
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO planted at that path must not wait for a writer.
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { kind: "refused", problem: "persistedOutputPath is not a regular file" };
    if (st.size < minBytes) return { kind: "small" };
    if (st.size > MAX_PERSISTED_BYTES) {
      return { kind: "refused", problem: `persisted output is ${st.size} bytes, above the ${MAX_PERSISTED_BYTES} this hook reads` };
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
    return { kind: "refused", problem: `persistedOutputPath ${why}` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export type ArchiveResult = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly problem: string };

const ARCHIVE_DIR = "tool-output";
/**
 * Output characters (or bytes) escaped and written at a time, and how much of that between full
 * collections (or an eighth of the output). A slice of bytes leaves its text and its escaped
 * text as garbage, where a slice of a string shares the string's buffer: at 5 MB, 64 KiB and
 * 512 KiB measured 1.2 MB lower than 256 KiB and 1 MiB; 32 KiB slices were higher again.
 */
const ARCHIVE_CHUNK_CHARS = 64 * 1024;
const ARCHIVE_COLLECT_EVERY = 512 * 1024;
const ARCHIVE_PREFIX = "velesdb-output.";

/**
 * writeArchive(stateDir, original) → `<state>/tool-output/velesdb-output.<random>` holding the
 * original tool_response as JSON, mode 0600. The name is random and the file is created with
 * O_EXCL|O_NOFOLLOW, so a link planted at any name is never followed: creation fails on it
 * and we try a fresh name. The directory must be ours and not a link; a looser mode is repaired.
 */
export function writeArchive(stateDir: string, original: Record<string, unknown>, randomName: () => string = randomArchiveName): ArchiveResult {
  const dir = path.join(stateDir, ARCHIVE_DIR);
  const dirProblem = ensurePrivateSubdirectory(stateDir, ARCHIVE_DIR);
  if (dirProblem) return { ok: false, problem: `archive directory ${dirProblem}` };
  const pieces = archivePieces(original);
  for (let attempt = 0; attempt < 4; attempt++) {
    const file = path.join(dir, ARCHIVE_PREFIX + randomName());
    let fd: number | undefined;
    try {
      fd = fs.openSync(
        file,
        fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0),
        0o600,
      );
    } catch (error) {
      if (errorCode(error) === "EEXIST") continue;
      return { ok: false, problem: `archive ${file} cannot be created (${errorCode(error)})` };
    }
    try {
      // A regular file takes each piece whole; a short write (a full disk) is a failure, not
      // something to resume.
      for (const piece of pieces()) {
        const written = fs.writeSync(fd, piece);
        if (written !== Buffer.byteLength(piece, "utf8")) throw Object.assign(new Error("short write"), { code: "ENOSPC" });
      }
      return { ok: true, path: file };
    } catch (error) {
      removeQuietly(file);
      return { ok: false, problem: `archive ${file} cannot be written (${errorCode(error)})` };
    } finally {
      fs.closeSync(fd);
    }
  }
  return { ok: false, problem: `no free archive name in ${dir}` };
}

/**
 * archivePieces(original) → a generator of the archive's JSON text, piece by piece: exactly
 * JSON.stringify(original), but the output (stdout, nearly all of a large result) is escaped a
 * slice at a time. Serialising it whole held the JSON string and its UTF-8 copy at once, two
 * more full copies of the output at the hook's peak
 * (docs/performance/2026-12-02-compression-memory.md: 6.3× a 5 MB payload in RSS).
 */
export function archivePieces(original: Record<string, unknown>): () => Generator<string> {
  const stdout = original.stdout;
  const output = stdout instanceof Utf8Literal ? stdout.bytes : typeof stdout === "string" ? stdout : undefined;
  // A marker no JSON text of the original can hold (the random part is never in the input);
  // where the skeleton does not hold it exactly once, the original is serialised whole.
  const marker = `\u0000velesdb-archive-${randomArchiveName()}`;
  // A copy with the marker in stdout's place (same key order), not a replacer: JSON.stringify
  // calls a Utf8Literal's toJSON before any replacer sees it, which would make the whole text.
  const skeleton = JSON.stringify(output === undefined ? original : { ...original, stdout: marker });
  const markerJson = JSON.stringify(marker);
  const at = skeleton.indexOf(markerJson);
  if (output === undefined || at < 0 || skeleton.indexOf(markerJson, at + 1) >= 0) {
    const whole = JSON.stringify(original);
    return function* () {
      yield whole;
    };
  }
  return function* () {
    yield skeleton.slice(0, at + 1);
    // Each escaped slice (and its UTF-8 copy in writeSync) is garbage once written.
    const collect = collectingAlong(output.length, ARCHIVE_COLLECT_EVERY);
    for (const slice of typeof output === "string" ? stdinChunks(output, ARCHIVE_CHUNK_CHARS) : utf8Slices(output, ARCHIVE_CHUNK_CHARS)) {
      yield JSON.stringify(slice).slice(1, -1);
      collect(slice.length);
    }
    yield skeleton.slice(at + markerJson.length - 1);
  };
}

/** utf8Slices(bytes, size) → the text of well-formed UTF-8 bytes, about `size` bytes at a time, never cutting a character. */
export function* utf8Slices(bytes: Uint8Array, size: number): Generator<string> {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let from = 0; from < view.length; ) {
    let to = Math.min(view.length, from + size);
    // Back off continuation bytes (10xxxxxx) so the cut falls before a character's first byte.
    while (to < view.length && to > from && (view[to]! & 0xc0) === 0x80) to--;
    if (to === from) {
      // One character longer than the slice: take it whole.
      to = from + 1;
      while (to < view.length && (view[to]! & 0xc0) === 0x80) to++;
    }
    yield view.toString("utf8", from, to);
    from = to;
  }
}

/** 24 hex digits from the Web Crypto global (node:crypto would add ~2 ms to every hook start). */
function randomArchiveName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function removeQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    // Already gone; nothing else to undo.
  }
}
