// Reading the hook payload (docs/contract.md §3.1): all of stdin (up to 64 MiB) synchronously, parsed once.
// Hosts add fields every release, so nothing here validates a whole payload: each hook asks
// for the few fields it uses, and a field of the wrong type reads as absent, never as a throw.
import * as fs from "node:fs";
import * as path from "node:path";
import { isPlainObject, parseJsonBytes, type FieldPath } from "./json-bytes.ts";
import { pauseForPipe } from "./output.ts";

// The JSON-object test lives with the JSON parser; the rules import it from here, beside the field readers.
export { isPlainObject };

export type Payload = Readonly<Record<string, unknown>>;

export interface PayloadReading {
  /** The payload object; `{}` when stdin was empty, not JSON, or not a JSON object. */
  readonly payload: Payload;
  /** Why the input was not a usable object, for one stderr line; "" when it was. */
  readonly problem: string;
  /** True when stdin held more than MAX_STDIN_BYTES: the hook must pass without reading it. */
  readonly oversized?: boolean;
}

/**
 * The most stdin a hook reads: 64 MiB. Real payloads stay far below it (the largest seen are
 * tool outputs of a few MB; Claude saves bigger ones to a file and sends the path), and a hook
 * must not spend seconds and hundreds of MB on 100 MB of garbage before its host times it out.
 */
export const MAX_STDIN_BYTES = 64 * 1024 * 1024;

/**
 * readPayloadFromStdin() → the stdin JSON object, or `{}` with the reason it was unusable.
 * `keepAsBytes` names a field that a large payload (≥ 1 MiB) gives as a Utf8Literal when its
 * value is a long string: the caller's rule reads it as bytes (json-bytes.ts).
 */
export function readPayloadFromStdin(keepAsBytes?: FieldPath): PayloadReading {
  let bytes: Buffer | undefined;
  try {
    // A hook started by hand from a terminal would wait forever on the keyboard. Hosts always
    // pipe the payload; a character device (a terminal, /dev/null) carries none. This check
    // costs one fstat, where importing node:tty for isatty() cost ~2 ms of a ~5 ms hook.
    if (fs.fstatSync(0).isCharacterDevice())
      return { payload: {}, problem: "stdin was empty (a terminal or a device, not a hook payload)" };
    bytes = readStdinBytes(0, MAX_STDIN_BYTES);
  } catch {
    return { payload: {}, problem: "stdin could not be read" };
  }
  if (bytes === undefined)
    return {
      payload: {},
      problem: `stdin is larger than ${MAX_STDIN_BYTES / 1024 / 1024} MiB: not read, passing`,
      oversized: true,
    };
  if (bytes.length < LARGE_PAYLOAD_BYTES) return parsePayload(bytes.toString("utf8"));
  // Nothing keeps the bytes once this returns, unless the field kept as bytes is in them: the
  // collection compression forces before it compiles frees them (detaching the buffer here as
  // well measured no lower).
  return parseLargePayload(bytes, keepAsBytes);
}

/** From this size on, stdin is parsed by parseJsonBytes: its long strings are decoded in place. */
const LARGE_PAYLOAD_BYTES = 1024 * 1024;

/**
 * parseLargePayload(bytes) → parsePayload(bytes.toString("utf8")), without holding the text, the
 * bytes and the parsed strings at once (json-bytes.ts). `bytes` is garbage afterwards, unless a
 * Utf8Literal of the field to keep as bytes now holds them.
 */
function parseLargePayload(bytes: Buffer, keepAsBytes: FieldPath | undefined): PayloadReading {
  let value: unknown;
  try {
    value = parseJsonBytes(bytes, undefined, keepAsBytes);
  } catch {
    // Whitespace alone is an empty stdin, as for a small payload (bytes whose long strings were
    // decoded in place still hold their quotes, so they are not taken for whitespace).
    return bytes.toString("utf8").trim() === ""
      ? { payload: {}, problem: "stdin was empty" }
      : { payload: {}, problem: "stdin is not JSON" };
  }
  return isPlainObject(value)
    ? { payload: value, problem: "" }
    : { payload: {}, problem: "stdin is JSON but not an object" };
}

/**
 * readStdinBytes(fd, limit) → all of stdin, or undefined as soon as more than `limit` bytes
 * arrived. Most payloads fit the first 64 KiB read. A larger one goes into one buffer of
 * limit + 1 bytes, left uninitialised (the system commits only the pages a read touches):
 * no list of chunks to concatenate, no copy as it grows, and an oversized payload never costs
 * more than the cap.
 */
function readStdinBytes(fd: number, limit: number): Buffer | undefined {
  const first = Buffer.allocUnsafe(Math.min(64 * 1024, limit + 1));
  const firstFilled = readUntilFullOrEnd(fd, first, 0);
  if (firstFilled < first.length) return first.subarray(0, firstFilled);
  const whole = Buffer.allocUnsafe(limit + 1);
  first.copy(whole);
  const filled = readUntilFullOrEnd(fd, whole, firstFilled);
  return filled > limit ? undefined : whole.subarray(0, filled);
}

/** readUntilFullOrEnd(fd, buffer, filled) → how many bytes of buffer hold input once it is full or stdin ended. */
function readUntilFullOrEnd(fd: number, buffer: Buffer, filled: number): number {
  // Waits start at 20 µs and double up to 2 ms: a host writes its payload right after the
  // spawn, and a flat 2 ms sleep on the first empty read cost every hook ~2 ms (bench).
  let waitMs = 0.02;
  while (filled < buffer.length) {
    let count: number;
    try {
      count = fs.readSync(fd, buffer, filled, buffer.length - filled, null);
    } catch (error) {
      // A non-blocking pipe with nothing in it yet: wait for the writer, as readFileSync did.
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      pauseForPipe(waitMs);
      waitMs = Math.min(waitMs * 2, 2);
      continue;
    }
    if (count === 0) break;
    filled += count;
    waitMs = 0.02;
  }
  return filled;
}

/** parsePayload('{"cwd":"/x"}') → { payload: {cwd:"/x"}, problem: "" }. */
export function parsePayload(text: string): PayloadReading {
  if (text.trim() === "") return { payload: {}, problem: "stdin was empty" };
  const payload = parseJsonObject(text);
  if (payload) return { payload, problem: "" };
  // Parse again only to tell the two failures apart in the one diagnostic line.
  try {
    JSON.parse(text);
    return { payload: {}, problem: "stdin is JSON but not an object" };
  } catch {
    return { payload: {}, problem: "stdin is not JSON" };
  }
}

/** parseJsonObject('{"a":1}') → the object; undefined for invalid JSON or any non-object value. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** stringField(p, "cwd") → the value when it is a non-empty string, else undefined. */
export function stringField(payload: Payload, key: string): string | undefined {
  const value = payload[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** objectField(p, "tool_input") → the value when it is a JSON object, else undefined. */
export function objectField(payload: Payload, key: string): Record<string, unknown> | undefined {
  const value = payload[key];
  return isPlainObject(value) ? value : undefined;
}

/** payloadCwd(p) → the payload's absolute `cwd`, else the process cwd (Windsurf sends none). */
export function payloadCwd(payload: Payload): string {
  const cwd = stringField(payload, "cwd");
  // A NUL byte cannot reach a path syscall without throwing; such a cwd is no cwd.
  if (cwd === undefined || cwd.includes("\0")) return process.cwd();
  return path.resolve(process.cwd(), cwd);
}

export const UNKNOWN_SESSION = "unknown-session";

/** payloadSessionId(p) → `session_id` when it is a non-empty string. */
export function payloadSessionId(payload: Payload, key = "session_id"): string | undefined {
  return stringField(payload, key);
}
