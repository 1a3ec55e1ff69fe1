// parseJsonBytes (src/core/json-bytes.ts, docs/performance/2026-12-02-compression-memory.md): a
// large payload's long string literals
// are decoded a piece at a time over their own bytes. The contract is JSC's own JSON.parse of
// the whole UTF-8 text: the same value, or a throw where it throws. Checked here against it on
// generated documents, with literals and pieces a few bytes long so that every cut rule (escapes,
// \uXXXX digits, surrogate pairs, UTF-8 continuation bytes) is crossed thousands of times.
// Seen failing: with either the continuation-byte rule or the after-a-backslash rule taken out of
// canCut, the property fails within 200 documents.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { isDeepStrictEqual } from "node:util";
import { LONG_LITERALS, parseJsonBytes, Utf8Literal } from "../src/core/json-bytes.ts";

const SMALL = { minBytes: 8, pieceBytes: 5 } as const;

/** What JSON.parse of the whole text gives: the value, or that it throws. */
function reference(bytes: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(bytes.toString("utf8")) };
  } catch {
    return { ok: false };
  }
}

function ours(
  bytes: Buffer,
  sizes: { minBytes: number; pieceBytes: number },
): { ok: true; value: unknown } | { ok: false } {
  try {
    // A copy: parseJsonBytes decodes over the bytes it is given.
    return { ok: true, value: parseJsonBytes(Buffer.from(bytes), sizes) };
  } catch {
    return { ok: false };
  }
}

// String content as JSON text: plain runs, every escape, escaped surrogates (paired, lone,
// reversed), raw non-ASCII, and content that is not valid JSON (raw control characters,
// unknown escapes, short \u, a stray backslash).
const VALID_ATOMS = [
  "plain",
  " ",
  "line\\n",
  '\\"',
  "\\\\",
  "\\/",
  "\\b\\f\\r\\t",
  "\\u00e9",
  "\\u20AC",
  "\\ud83d\\ude00",
  "\\uDBFF\\uDFFF",
  "é",
  "€",
  "😀",
  "\\u0000",
];
const LONE_ATOMS = ["\\uD83D", "\\uDE00", "\\uD800\\u0041", "\\ude00\\ud83d"];
const INVALID_ATOMS = ["\t", "\u0001", "\n", "\\x", "\\u12", "\\u12G4", "\\"];
const atom = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...VALID_ATOMS) },
  { weight: 2, arbitrary: fc.constantFrom(...LONE_ATOMS) },
  { weight: 1, arbitrary: fc.constantFrom(...INVALID_ATOMS) },
);
const content = fc.array(atom, { minLength: 0, maxLength: 30 }).map((parts) => parts.join(""));

/** Documents where long literals sit as values, keys, array items, the whole document, or in broken syntax. */
const documentText = fc
  .tuple(content, content, content, fc.nat(7))
  .map(
    ([a, b, c, shape]) =>
      [
        `{"tool_response":{"stdout":"${a}","stderr":"${b}","interrupted":false},"n":1}`,
        ` [ "${a}" , {"k" : "${b}"}, "${c}" ] `,
        `"${a}"`,
        `{"${a}": "${b}"}`,
        `{"a":"${a}",}`,
        `{"a":"${a}" "b":"${b}"}`,
        `{"a":x"${a}"}`,
        `{"a":"${a}"`,
      ][shape]!,
  );

/** Bytes of a document, sometimes with raw bytes that are not UTF-8 or one byte overwritten. */
const documentBytes = fc
  .tuple(documentText, fc.boolean(), fc.option(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { freq: 4 }))
  .map(([text, latin1, damage]) => {
    const bytes = Buffer.from(text, latin1 ? "latin1" : "utf8");
    if (damage && bytes.length > 0) bytes[damage[0] % bytes.length] = damage[1];
    return bytes;
  });

describe("parseJsonBytes is JSON.parse of the whole text", () => {
  test("generated documents: the same value, or a throw where JSON.parse throws (fast-check, pinned seed)", () => {
    const seen = { parsed: 0, refused: 0 };
    fc.assert(
      fc.property(documentBytes, (bytes) => {
        const expected = reference(bytes);
        const actual = ours(bytes, SMALL);
        seen[expected.ok ? "parsed" : "refused"]++;
        return (
          expected.ok === actual.ok && (!expected.ok || !actual.ok || isDeepStrictEqual(actual.value, expected.value))
        );
      }),
      { seed: 22_03, numRuns: 3000 },
    );
    // Both outcomes were exercised, not only one.
    expect(seen.parsed).toBeGreaterThan(250);
    expect(seen.refused).toBeGreaterThan(250);
  });

  test("a 5 MB Bash result at the real sizes: the same object", () => {
    const line = '   Compiling serde (registry) ... done \\u00e9\\t\\"quoted\\" 😀\\n';
    const text = `{"session_id":"s","tool_name":"Bash","tool_response":{"stdout":"${line.repeat(80_000)}","stderr":"${"warning\\n".repeat(20_000)}","interrupted":false,"isImage":false}}`;
    const bytes = Buffer.from(text);
    expect(bytes.length).toBeGreaterThan(5_000_000);
    const expected = JSON.parse(text);
    const actual = parseJsonBytes(Buffer.from(bytes)) as typeof expected;
    expect(actual.tool_response.stdout.length).toBe(expected.tool_response.stdout.length);
    expect(isDeepStrictEqual(actual, expected)).toBe(true);
  });

  test("a long literal among 10 or 20 000 other strings (past the scan bound: parsed whole): the same value", () => {
    const long = "x\\n".repeat(LONG_LITERALS.minBytes);
    for (const count of [10, 20_000]) {
      const text = `{"stdout":"${long}","names":[${Array.from({ length: count }, (_, i) => `"n${i}"`).join(",")}]}`;
      expect(isDeepStrictEqual(parseJsonBytes(Buffer.from(text)), JSON.parse(text))).toBe(true);
    }
  });

  test("a lone surrogate deep in a long literal: the same string (the rest goes to JSON.parse)", () => {
    const text = `{"stdout":"${"a\\n".repeat(LONG_LITERALS.pieceBytes)}\\ud800${"b\\n".repeat(10)}"}`;
    const actual = parseJsonBytes(Buffer.from(text)) as { stdout: string };
    expect(actual).toEqual(JSON.parse(text));
    expect(actual.stdout).toContain("\ud800b");
  });

  test("a literal that is one run of escaped high surrogates (no place to cut a piece): the same string", () => {
    // Every position follows an escaped high surrogate: the cut search gives up after a few bytes
    // and the rest goes to JSON.parse (it used to scan all 18 MB of a fuzz case, 0.5 s of CPU).
    const text = `{"effort":{"":"${"\\ud800".repeat(LONG_LITERALS.pieceBytes)}"},"x":"${"c".repeat(LONG_LITERALS.minBytes)}\\ud83d"}`;
    const actual = parseJsonBytes(Buffer.from(text));
    expect(isDeepStrictEqual(actual, JSON.parse(text))).toBe(true);
    expect((actual as { effort: Record<string, string> }).effort[""]!.length).toBe(LONG_LITERALS.pieceBytes);
  });

  test("nesting deeper than a recursive walk survives (100 000 levels, fuzz seed 1884534106): parsed, as JSON.parse parses it", () => {
    const depth = 100_000;
    const long = "é\\n".repeat(LONG_LITERALS.minBytes);
    const text = `{"session_id":"${long}","deep":${"[".repeat(depth)}1${"]".repeat(depth)}}`;
    const levels = (value: unknown): number => {
      let count = 0;
      for (let item = value; Array.isArray(item); item = item[0]) count++;
      return count;
    };
    const expected = JSON.parse(text) as { session_id: string; deep: unknown };
    // Why no reviver: JSC's recurses, and this document overflows its stack.
    expect(() => JSON.parse(text, (_key, value: unknown) => value)).toThrow();
    const actual = parseJsonBytes(Buffer.from(text)) as { session_id: string; deep: unknown };
    expect(actual.session_id).toBe(expected.session_id);
    expect(levels(actual.deep)).toBe(depth);
  });

  test("an own __proto__ key holding a long literal stays an own property, the prototype untouched", () => {
    const long = "x\\n".repeat(LONG_LITERALS.minBytes);
    const text = `{"__proto__":{"a":"${long}"},"b":["${long}"]}`;
    const actual = parseJsonBytes(Buffer.from(text)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(actual)).toBe(Object.prototype);
    expect(Object.hasOwn(actual, "__proto__")).toBe(true);
    expect(isDeepStrictEqual(actual, JSON.parse(text))).toBe(true);
  });

  test("invalid UTF-8 in a long literal: the same U+FFFD as decoding the whole text", () => {
    const bytes = Buffer.concat([
      Buffer.from('{"stdout":"'),
      Buffer.alloc(LONG_LITERALS.minBytes, 0x61),
      Buffer.from([0xe2, 0x82, 0x5c, 0x6e, 0xff, 0x80]),
      Buffer.from('"}'),
    ]);
    expect(parseJsonBytes(Buffer.from(bytes))).toEqual(JSON.parse(bytes.toString("utf8")));
  });

  test("a raw control character in a long literal throws, as JSON.parse does (positive control: escaped, it parses)", () => {
    const raw = `{"stdout":"${"x".repeat(LONG_LITERALS.minBytes)}\n"}`;
    expect(() => JSON.parse(raw)).toThrow();
    expect(() => parseJsonBytes(Buffer.from(raw))).toThrow();
    const escaped = `{"stdout":"${"x".repeat(LONG_LITERALS.minBytes)}\\n"}`;
    expect(parseJsonBytes(Buffer.from(escaped))).toEqual(JSON.parse(escaped));
  });
});

/** materialise(value) → the value with every Utf8Literal replaced by its text (the documents here nest a few levels). */
function materialise(value: unknown): unknown {
  if (value instanceof Utf8Literal) return value.text();
  if (Array.isArray(value)) return value.map(materialise);
  if (value !== null && typeof value === "object") {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      Object.defineProperty(copy, key, {
        value: materialise(item),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return copy;
  }
  return value;
}

/** utf8Literals(value) → every Utf8Literal inside value, with the key it sits under. */
function utf8Literals(value: unknown, key = ""): Array<{ key: string; literal: Utf8Literal }> {
  if (value instanceof Utf8Literal) return [{ key, literal: value }];
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, item]) => utf8Literals(item, k));
}

describe("keepAsBytes: the long literal of one field stays as its UTF-8 bytes (docs/performance/2026-12-02-compression-memory.md)", () => {
  const FIELD = ["tool_response", "stdout"] as const;
  /** Mostly Bash-shaped documents (the field kept is there), then the general ones. */
  const validContent = fc
    .array(fc.constantFrom(...VALID_ATOMS), { minLength: 0, maxLength: 30 })
    .map((parts) => parts.join(""));
  const stdoutContent = fc.oneof({ weight: 3, arbitrary: validContent }, { weight: 1, arbitrary: content });
  const bashShaped = fc
    .tuple(stdoutContent, content, fc.boolean())
    .map(([a, b, latin1]) =>
      Buffer.from(
        `{"tool_response":{"stdout":"${a}","stderr":"${b}","interrupted":false},"n":1}`,
        latin1 ? "latin1" : "utf8",
      ),
    );
  const documents = fc.oneof({ weight: 3, arbitrary: bashShaped }, { weight: 1, arbitrary: documentBytes });

  test("generated documents: JSON.parse's value, that field a Utf8Literal of the same text (fast-check, pinned seed)", () => {
    const seen = { kept: 0, parsed: 0 };
    fc.assert(
      fc.property(documents, (bytes) => {
        const expected = reference(bytes);
        let actual: { ok: true; value: unknown } | { ok: false };
        try {
          actual = { ok: true, value: parseJsonBytes(Buffer.from(bytes), SMALL, FIELD) };
        } catch {
          actual = { ok: false };
        }
        if (expected.ok !== actual.ok) return false;
        if (!expected.ok || !actual.ok) return true;
        seen.parsed++;
        const kept = utf8Literals(actual.value);
        // Only ever the one field, and its bytes are exactly the UTF-8 of JSON.parse's string.
        for (const { key, literal } of kept) {
          const holder = (expected.value as { tool_response?: { stdout?: unknown } }).tool_response;
          if (
            key !== "stdout" ||
            typeof holder?.stdout !== "string" ||
            !literal.bytes.equals(Buffer.from(holder.stdout, "utf8"))
          )
            return false;
        }
        seen.kept += kept.length;
        return isDeepStrictEqual(materialise(actual.value), expected.value);
      }),
      { seed: 22_04, numRuns: 3000 },
    );
    // Positive control: the field was kept as bytes in many documents, not never.
    expect(seen.kept).toBeGreaterThan(500);
    expect(seen.parsed).toBeGreaterThan(1000);
  });

  test("a 5 MB Bash result: stdout is a Utf8Literal, JSON.stringify writes the same text, a walk finds no bytes in it", () => {
    const line = '   Compiling serde (registry) ... done \\u00e9\\t\\"quoted\\" 😀\\n';
    const text = `{"session_id":"s","tool_response":{"stdout":"${line.repeat(80_000)}","stderr":"${"warning\\n".repeat(20_000)}","interrupted":false,"isImage":false}}`;
    const expected = JSON.parse(text);
    const actual = parseJsonBytes(Buffer.from(text), LONG_LITERALS, FIELD) as {
      tool_response: { stdout: unknown; stderr: unknown };
    };
    expect(actual.tool_response.stdout).toBeInstanceOf(Utf8Literal);
    expect(typeof actual.tool_response.stderr).toBe("string"); // long too, but not the field kept
    expect((actual.tool_response.stdout as Utf8Literal).text()).toBe(expected.tool_response.stdout);
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
    expect(Object.values(actual.tool_response.stdout as object)).toEqual([]);
  });

  test("the same field name elsewhere, or a literal that could not be decoded in place, stays a string", () => {
    const long = "x\\n".repeat(LONG_LITERALS.minBytes);
    for (const text of [
      `{"outer":{"tool_response":{"stdout":"${long}"}}}`,
      `{"tool_response":[{"stdout":"${long}"}]}`,
      `{"tool_response":{"stderr":"${long}"},"stdout":"${long}"}`,
      `{"tool_response":{"stdout":"${long}\\ud800"}}`,
    ]) {
      const actual = parseJsonBytes(Buffer.from(text), LONG_LITERALS, FIELD);
      expect(utf8Literals(actual)).toEqual([]);
      expect(isDeepStrictEqual(actual, JSON.parse(text))).toBe(true);
    }
    // Positive control: at its place, the same literal is kept.
    expect(
      utf8Literals(parseJsonBytes(Buffer.from(`{"tool_response":{"stdout":"${long}"}}`), LONG_LITERALS, FIELD)).length,
    ).toBe(1);
  });
});
