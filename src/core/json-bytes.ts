// JSON.parse for a large payload given as UTF-8 bytes, without JSC's own cost on long strings.
// JSON.parse(text) of a 5 MB Bash result (one string literal with a `\n` every 40 bytes) builds
// that string in a buffer that doubles as it grows, then copies it to its exact size: ~2.5× the
// string at its peak, on top of the text and the stdin bytes
// (docs/performance/2026-12-02-compression-memory.md: the hook peaked at 6.8×
// the payload). Here no text of the whole document is made: each long string literal is decoded
// a piece at a time by JSON.parse itself (so validation, escapes and invalid UTF-8 are exactly
// its own), each decoded piece written back as UTF-8 over the raw bytes it came from, which it
// never outgrows (an escape is longer than what it stands for), and one toString of the decoded
// span gives the string at its exact size. The rest of the document, with a placeholder for each
// long literal, is small and goes to JSON.parse whole.
//
// Same value, same failures as JSON.parse(bytes.toString("utf8")):
// - the literals are found by their quotes: outside strings, valid JSON has a quote only where a
//   string starts and no backslash at all, so in a valid document every literal found is a string
//   token; in an invalid one, what is found either fails in a piece or leaves a skeleton that fails;
// - a cut between pieces is never inside an escape, never between an escaped high surrogate and
//   what follows it, never before a UTF-8 continuation byte (the decoder resynchronises on the
//   same bytes as in the whole text);
// - a piece with a lone surrogate has no UTF-8 form: from there on the literal goes to JSON.parse.
// Measured against JSC's JSON.parse on 5 MB (Bun 1.4.4, compiled binary): a loop in JS over the
// bytes instead of JSON.parse per piece cost ~5 MB more RSS, the optimising JIT's own memory.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const LETTER_U = 0x75;

/** A string literal from this many bytes of content on is decoded in place, this many bytes per JSON.parse call. */
export const LONG_LITERALS = { minBytes: 64 * 1024, pieceBytes: 64 * 1024 } as const;
/** How far past a piece's end a cut is looked for: longer than an escaped surrogate pair. */
const MAX_CUT_SCAN = 16;
/** More string literals than this: a document of many strings, parsed whole (a Bash payload has a dozen or two). */
const MAX_SCANNED_LITERALS = 10_000;

/**
 * A long string literal of the document left as the UTF-8 bytes it was decoded to, not made a
 * string: asked for by the one rule that can work on bytes (Claude's Bash compression: a 5 MB
 * output made a string holds the output twice at once, its bytes and its text;
 * docs/performance/2026-12-02-compression-memory.md).
 * `text()` is the string JSON.parse would have given; JSON.stringify writes that string too, and
 * the bytes are not an enumerable property, so a walk over the payload never goes into them.
 */
export class Utf8Literal {
  readonly #bytes: Buffer;

  constructor(bytes: Buffer) {
    this.#bytes = bytes;
  }

  /** The literal's value as UTF-8 (always well-formed: only a literal decoded whole in place is kept as bytes). */
  get bytes(): Buffer {
    return this.#bytes;
  }

  text(): string {
    return this.#bytes.toString("utf8");
  }

  toJSON(): string {
    return this.text();
  }
}

/** A path of two keys from the document's root object, e.g. ["tool_response", "stdout"]. */
export type FieldPath = readonly [string, string];

/**
 * parseJsonBytes(bytes) → JSON.parse(bytes.toString("utf8")), the same value, or a throw where
 * that throws. The long string literals are unescaped over their own bytes: `bytes` is garbage
 * afterwards, unless `keepAsBytes` names a field whose long literal then stays in them, as a
 * Utf8Literal instead of a string (a literal that could not be decoded in place stays a string).
 */
export function parseJsonBytes(
  bytes: Buffer,
  sizes: { readonly minBytes: number; readonly pieceBytes: number } = LONG_LITERALS,
  keepAsBytes?: FieldPath,
): unknown {
  const literals = longLiterals(bytes, sizes.minBytes);
  if (literals === undefined || literals.length === 0) return JSON.parse(bytes.toString("utf8"));
  const marker = `\u0000velesdb-long-literal-${crypto.getRandomValues(new Uint32Array(3)).join("-")}-`;
  const decoded: Array<string | readonly [number, number]> = [];
  const skeleton: string[] = [];
  let from = 0;
  for (const [open, close] of literals) {
    skeleton.push(bytes.toString("utf8", from, open), JSON.stringify(marker + decoded.length));
    decoded.push(decodeLiteralInPlace(bytes, open, close, sizes.pieceBytes));
    from = close + 1;
  }
  skeleton.push(bytes.toString("utf8", from));
  const root: unknown = JSON.parse(skeleton.join(""));
  const isMarker = (value: unknown): value is string => typeof value === "string" && value.startsWith(marker);
  const index = (value: string): number => Number(value.slice(marker.length));
  const field = keepAsBytes === undefined ? undefined : fieldAt(root, keepAsBytes);
  const kept = isMarker(field) ? index(field) : -1;
  const literalValue = (at: number): string | Utf8Literal => {
    const literal = decoded[at]!;
    if (typeof literal === "string") return literal;
    return at === kept
      ? new Utf8Literal(bytes.subarray(literal[0], literal[1]))
      : bytes.toString("utf8", literal[0], literal[1]);
  };
  if (isMarker(root)) return literalValue(index(root));
  // The markers are put back by an iterative walk, not a JSON.parse reviver: JSC's reviver
  // recurses, and overflowed its stack on a 1 MiB payload nested 74 804 deep that JSON.parse
  // itself accepts (fuzz seed 1884534106, dsh/stop: the payload was taken for "not JSON").
  const holders: object[] = root !== null && typeof root === "object" ? [root] : [];
  for (let holder = holders.pop(); holder !== undefined; holder = holders.pop()) {
    for (const key of Object.keys(holder)) {
      const item: unknown = (holder as Record<string, unknown>)[key];
      // defineProperty, as JSON.parse makes them: an own "__proto__" stays a plain own property.
      if (isMarker(item))
        Object.defineProperty(holder, key, {
          value: literalValue(index(item)),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      else if (item !== null && typeof item === "object") holders.push(item);
    }
  }
  return root;
}

/** fieldAt(root, ["tool_response", "stdout"]) → root.tool_response.stdout when both are own properties of objects, else undefined. */
function fieldAt(root: unknown, [outer, inner]: FieldPath): unknown {
  const holder = isPlainObject(root) && Object.hasOwn(root, outer) ? root[outer] : undefined;
  return isPlainObject(holder) && Object.hasOwn(holder, inner) ? holder[inner] : undefined;
}

/** isPlainObject({}) → true; arrays, null and every other value → false. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * longLiterals(bytes) → [open quote, close quote] of each string value with at least
 * minBytes of content (keys stay in the skeleton); undefined when the document has
 * too many strings to be worth it or its quotes do not pair up (it then goes to JSON.parse whole).
 */
function longLiterals(bytes: Buffer, minBytes: number): Array<readonly [number, number]> | undefined {
  const found: Array<readonly [number, number]> = [];
  let scanned = 0;
  for (let at = bytes.indexOf(QUOTE); at >= 0; at = bytes.indexOf(QUOTE, at)) {
    const close = closingQuote(bytes, at);
    if (close < 0) return undefined;
    if (++scanned > MAX_SCANNED_LITERALS) return undefined;
    if (close - at - 1 >= minBytes && !isKey(bytes, close)) found.push([at, close]);
    at = close + 1;
  }
  return found;
}

/** closingQuote(bytes, open) → the index of the quote that ends the literal opened at `open`, or -1. */
function closingQuote(bytes: Buffer, open: number): number {
  for (let at = bytes.indexOf(QUOTE, open + 1); at >= 0; at = bytes.indexOf(QUOTE, at + 1)) {
    // The quote ends the literal unless an odd run of backslashes escapes it.
    let run = 0;
    while (bytes[at - 1 - run] === BACKSLASH && at - 1 - run > open) run++;
    if (run % 2 === 0) return at;
  }
  return -1;
}

/** isKey(bytes, close) → true when the literal ending at `close` is followed (after JSON whitespace) by a colon. */
function isKey(bytes: Buffer, close: number): boolean {
  let at = close + 1;
  while (bytes[at] === 0x20 || bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x09) at++;
  return bytes[at] === COLON;
}

/** A full collection after this much work (or an eighth of the whole, if larger). */
const COLLECT_EVERY = 1024 * 1024;

/**
 * collectingAlong(total) → a function to call with each amount of work done (bytes or chars
 * out of `total`); after every max(1 MiB, total / 8) of it (`least` instead of 1 MiB when
 * given), it forces a full collection. Work
 * that leaves its garbage a piece at a time (decoding a long literal, escaping the archive)
 * would otherwise let it pile up: JSC collects by the volume allocated, which let a 5 MB
 * payload's pieces reach ~20 MB of RSS before the first collection. A full collection of the
 * hook's small heap costs ~1 ms of CPU (measured); an eighth of the whole bounds their number.
 */
export function collectingAlong(total: number, least: number = COLLECT_EVERY): (done: number) => void {
  const every = Math.max(least, total / 8);
  let since = 0;
  return (done) => {
    since += done;
    if (since < every) return;
    Bun.gc(true);
    since = 0;
  };
}

/**
 * decodeLiteralInPlace(bytes, open, close) → the span of `bytes` that holds, as UTF-8, the string
 * the literal between these quotes stands for; or that string, when it could not be decoded in
 * place. Its content is decoded a piece at a time by JSON.parse, each piece written back as UTF-8
 * from open + 1 on, over raw bytes already read; one toString of the span is the string.
 * A piece that has no UTF-8 form (a lone surrogate escape) or would outgrow its raw bytes
 * (invalid UTF-8 becomes U+FFFD, three bytes for one) sends the rest of the literal to one
 * JSON.parse, appended to what was decoded so far.
 */
function decodeLiteralInPlace(
  bytes: Buffer,
  open: number,
  close: number,
  pieceBytes: number,
): string | readonly [number, number] {
  const start = open + 1;
  // Each piece leaves its text and its value as garbage.
  const collect = collectingAlong(close - start);
  let written = start;
  let from = start;
  while (from < close) {
    let to = Math.min(close, from + pieceBytes);
    // A cut is found within one escape pair (12 bytes) unless every position is forbidden: a run
    // of escaped high surrogates, say (fuzz: 3 MB of "\ud800" took 0.5 s of scanning here). The
    // rest of such a literal goes to JSON.parse whole, as a lone surrogate would send it anyway.
    const scanLimit = Math.min(close, to + MAX_CUT_SCAN);
    while (to < scanLimit && !canCut(bytes, to, from)) to++;
    if (to < close && !canCut(bytes, to, from))
      return bytes.toString("utf8", start, written) + parsePiece(bytes, from, close);
    const piece = parsePiece(bytes, from, to);
    const length = Buffer.byteLength(piece, "utf8");
    if (written + length > to || !isWellFormed(piece))
      return bytes.toString("utf8", start, written) + parsePiece(bytes, from, close);
    bytes.write(piece, written, length, "utf8");
    written += length;
    collect(to - from);
    from = to;
  }
  return [start, written];
}

/**
 * canCut(bytes, at, tokenStart) → true when a piece may end before bytes[at]: not before a UTF-8
 * continuation byte, not inside an escape (just after its backslash or within the hex digits of
 * \uXXXX), not just after an escaped high surrogate (its low half may follow). `tokenStart` is a
 * position known to begin a token of the string: backslashes are counted from there.
 */
function canCut(bytes: Buffer, at: number, tokenStart: number): boolean {
  if ((bytes[at]! & 0xc0) === 0x80) return false;
  if (startsEscape(bytes, at - 1, tokenStart)) return false;
  for (let back = 2; back <= 5; back++) {
    if (bytes[at - back + 1] === LETTER_U && startsEscape(bytes, at - back, tokenStart)) return false;
  }
  const high = at - 6;
  return !(
    bytes[high + 1] === LETTER_U &&
    startsEscape(bytes, high, tokenStart) &&
    (bytes[high + 2]! | 0x20) === 0x64 &&
    isHighSurrogateDigit(bytes[high + 3]!)
  );
}

/** startsEscape(bytes, at, tokenStart) → true when bytes[at] is a backslash that an even run of backslashes back to tokenStart precedes. */
function startsEscape(bytes: Buffer, at: number, tokenStart: number): boolean {
  if (at < tokenStart || bytes[at] !== BACKSLASH) return false;
  let run = 1;
  while (at - run >= tokenStart && bytes[at - run] === BACKSLASH) run++;
  return run % 2 === 1;
}

/** isWellFormed("a\ud800") → false: String.prototype.isWellFormed (ES2024, in Bun; the project's lib is ES2022). */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/** isHighSurrogateDigit(byte) → true for the third hex digit of D800–DBFF: 8, 9, a, b (either case). */
function isHighSurrogateDigit(byte: number): boolean {
  const lower = byte | 0x20;
  return byte === 0x38 || byte === 0x39 || lower === 0x61 || lower === 0x62;
}

/** parsePiece(bytes, from, to) → JSON.parse of the string literal whose content is bytes[from, to). */
function parsePiece(bytes: Buffer, from: number, to: number): string {
  // The quotes are lent by the bytes on either side (decoded output or raw input): put back after.
  const before = bytes[from - 1]!;
  const after = bytes[to]!;
  bytes[from - 1] = QUOTE;
  bytes[to] = QUOTE;
  try {
    return JSON.parse(bytes.toString("utf8", from - 1, to + 1)) as string;
  } finally {
    bytes[from - 1] = before;
    bytes[to] = after;
  }
}
