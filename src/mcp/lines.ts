// Newline-delimited JSON-RPC, the MCP stdio framing (one message per line, no embedded
// newline). Lines are long: velesdb-memory 0.17.0's tools/list answer is ~123 KB, and a
// save_working_context may carry a whole summary, so chunks are joined as bytes and split only
// at "\n". The cap is the one the server itself applies (rmcp 3.11 src/transport/async_rw.rs,
// DEFAULT_MAX_LINE_LENGTH = 16 MiB): a longer line is dropped, as the server would drop it.

export const MAX_LINE_BYTES = 16 * 1024 * 1024;

export type LineEvent =
  | { readonly kind: "line"; readonly text: string }
  | { readonly kind: "oversized"; readonly bytes: number };

/**
 * LineSplitter(maxBytes): push(chunk) → the complete lines it finished (and each line over
 * maxBytes it dropped). Pushing "\n" finishes the line still open.
 */
export class LineSplitter {
  constructor(private readonly maxBytes: number = MAX_LINE_BYTES) {}

  private parts: Buffer[] = [];
  private size = 0;
  /** Inside a line past the cap: bytes are counted and thrown away up to its newline. */
  private dropping = false;

  push(chunk: Buffer): LineEvent[] {
    const events: LineEvent[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, nl));
      events.push(this.finish());
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
    return events.filter((e) => e.kind === "oversized" || e.text.trim() !== "");
  }

  private take(piece: Buffer): void {
    this.size += piece.length;
    if (this.size > this.maxBytes) {
      this.dropping = true;
      this.parts = [];
      return;
    }
    if (!this.dropping && piece.length > 0) this.parts.push(Buffer.from(piece));
  }

  private finish(): LineEvent {
    const event: LineEvent = this.dropping
      ? { kind: "oversized", bytes: this.size }
      : { kind: "line", text: Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "") };
    this.parts = [];
    this.size = 0;
    this.dropping = false;
    return event;
  }
}

export type JsonRpcId = string | number;
export type JsonRpcMessage = Record<string, unknown>;

/** parseMessage(line) → the JSON-RPC object, or undefined (not JSON, an array batch, a scalar). */
export function parseMessage(line: string): JsonRpcMessage | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRpcMessage) : undefined;
  } catch {
    return undefined;
  }
}

/** idOf(message) → its id when it is a valid JSON-RPC id (a string or a number); null and absent are none. */
export function idOf(message: JsonRpcMessage): JsonRpcId | undefined {
  const id = message.id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined;
}

export const isRequest = (m: JsonRpcMessage): boolean => typeof m.method === "string" && idOf(m) !== undefined;
export const isNotification = (m: JsonRpcMessage): boolean => typeof m.method === "string" && !Object.hasOwn(m, "id");
export const isResponse = (m: JsonRpcMessage): boolean =>
  typeof m.method !== "string" && (Object.hasOwn(m, "result") || Object.hasOwn(m, "error"));

/** idKey(7) / idKey("7") → distinct map keys: a number and a string id are different requests. */
export const idKey = (id: JsonRpcId): string => JSON.stringify(id);

/**
 * withTopLevelId('{"jsonrpc":"2.0","id":7,"result":…}', 3) → the same bytes with only the
 * top-level id replaced; undefined when the line has none. Messages are never re-serialised:
 * velesdb-memory sends u64 ids as JSON numbers (`"id":16439525647125867986`, beside `id_str`),
 * which a JSON.parse/stringify round trip rounds — and a client comparing a tool's text with its
 * structuredContent then sees two different answers (measured: Copilot CLI 1.0.102 then hands
 * both to its hooks, and the recall no longer reads as one).
 */
export function withTopLevelId(line: string, id: JsonRpcId): string | undefined {
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      const end = stringEnd(line, i);
      if (end < 0) return undefined;
      if (depth === 1 && line.slice(i, end + 1) === '"id"') {
        let colon = end + 1;
        while (/\s/.test(line[colon] ?? "")) colon++;
        if (line[colon] === ":") {
          let start = colon + 1;
          while (/\s/.test(line[start] ?? "")) start++;
          const valueEnd = line[start] === '"' ? stringEnd(line, start) + 1 : scalarEnd(line, start);
          if (valueEnd <= start) return undefined;
          return line.slice(0, start) + JSON.stringify(id) + line.slice(valueEnd);
        }
      }
      i = end;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
  }
  return undefined;
}

/** stringEnd(text, at) → the index of the quote closing the string opened at `at`, or -1. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/** scalarEnd(text, at) → the index just after a number, true, false or null starting at `at`. */
function scalarEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length && !/[\s,}\]]/.test(text[i]!)) i++;
  return i;
}

/** JSON-RPC 2.0, section 5.1: -32000..-32099 are the implementation's own server errors. */
export const SERVER_STOPPED = -32000;
/** A request the server did not answer within the broker's deadline (VELESDB_HOOKS_MCP_CALL_MS). */
export const CALL_TIMED_OUT = -32001;
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;

export function errorLine(id: JsonRpcId | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
}

/** oneLine(text) → its first non-empty line, trimmed, at most 300 characters (for causes and stderr). */
export function oneLine(text: string): string {
  const line =
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => l !== "") ?? "";
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
