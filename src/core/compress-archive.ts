// The archive of compression (compress.ts, docs/compression.md step 6): the host's original
// result written as JSON, mode 0600, under `<state>/tool-output/`, once the compiled view has
// passed verification, so the path the footer names holds every byte the model no longer reads.
// Apart from compress.ts because it is its own file-system concern (a fresh name opened with
// O_EXCL|O_NOFOLLOW, never a link followed) and its own memory bound: a large output is escaped
// a slice at a time (docs/performance/2026-12-02-compression-memory.md).
import * as fs from "node:fs";
import * as path from "node:path";
import { collectingAlong, Utf8Literal } from "./json-bytes.ts";
import { ensurePrivateSubdirectory, errorCode } from "./state.ts";
import { stdinChunks } from "./watchdog.ts";

/**
 * writeArchiveSafely(stateDir, original) → writeArchive's result, never a throw: a failure is a
 * refusal like any other (the fuzzer sent a result with a field nested 100 000 deep, which
 * JSON.stringify cannot write back).
 */
export function writeArchiveSafely(stateDir: string, original: Record<string, unknown>): ArchiveResult {
  try {
    return writeArchive(stateDir, original);
  } catch (error) {
    return {
      ok: false,
      problem: `the original cannot be archived (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

export type ArchiveResult =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly problem: string };

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
export function writeArchive(
  stateDir: string,
  original: Record<string, unknown>,
  randomName: () => string = randomArchiveName,
): ArchiveResult {
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
        if (written !== Buffer.byteLength(piece, "utf8"))
          throw Object.assign(new Error("short write"), { code: "ENOSPC" });
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
    for (const slice of typeof output === "string"
      ? stdinChunks(output, ARCHIVE_CHUNK_CHARS)
      : utf8Slices(output, ARCHIVE_CHUNK_CHARS)) {
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

export function removeQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    // Already gone; nothing else to undo.
  }
}
