// A large JSON file edited through a small stand-in (docs/hardening.md §8). ~/.claude.json keeps
// every project Claude Code has seen with its prompt history: 41 MB and 60 MB files were found,
// and `install --mcp` built jsonc-parser's syntax tree of the whole file several times over
// (read, plan, verify): 10–22 s and 2.6–3.4 GB resident. Only the path to the servers table
// matters (`mcpServers`, `projects.<cwd>.mcpServers`), so the edit runs on a stand-in text: the
// file with every value off those paths replaced by the line breaks the value held, then `0`
// (line numbers, and so every message's "line N", stay those of the file). The stand-in's
// edit is one splice, mapped back onto the file's own bytes, and the result is narrowed again
// and must be exactly the edited stand-in, so nothing outside the splice can have changed.
import { checkJsoncSyntax, MAX_NESTING, type ParsedJsonc } from "./jsonc-parse.ts";

/** One stretch of the stand-in and the stretch of the file it stands for (equal text when kept). */
interface Segment {
  readonly from: number;
  readonly to: number;
  readonly fileFrom: number;
  readonly fileTo: number;
  readonly kept: boolean;
}

export interface Narrowed {
  /** The stand-in text (the file's BOM kept). */
  readonly text: string;
  readonly segments: readonly Segment[];
}

const BOM = "\uFEFF";

/**
 * narrowJsonc(text, paths) → the stand-in keeping every object member on a prefix of one of
 * `paths` (the member at a whole path kept as it is), or the file's syntax error (as
 * parseJsonc reports it, on the whole file). The file must parse before anything is narrowed.
 */
export function narrowJsonc(
  text: string,
  paths: readonly (readonly string[])[],
): { ok: true; narrowed: Narrowed } | Extract<ParsedJsonc, { ok: false }> {
  const key = JSON.stringify(paths);
  if (last && last.text === text && last.key === key) return last.result;
  const result = narrowValid(text, paths);
  last = { text, key, result };
  return result;
}

/** The last narrowing: install reads the file, then plans its edit on the very same string. */
let last: { text: string; key: string; result: ReturnType<typeof narrowJsonc> } | undefined;

function narrowValid(text: string, paths: readonly (readonly string[])[]): ReturnType<typeof narrowJsonc> {
  const bom = text.startsWith(BOM) ? BOM.length : 0;
  const body = text.slice(bom);
  // Claude writes strict JSON, which the engine's own parser checks in a tenth of the time and
  // none of the garbage of jsonc-parser's scanner; JSONC, a broken file and one nested too deep
  // get jsonc-parser's verdict, with its line and column.
  if (!(isStrictJson(body) && !new Walker(body).nestedTooDeep())) {
    const syntax = checkJsoncSyntax(body);
    if (!syntax.ok) return syntax;
  }
  const pieces: string[] = [];
  const segments: Segment[] = [];
  let reduced = 0;
  let copiedTo = 0;
  const keepUpTo = (end: number) => {
    if (end > copiedTo) {
      pieces.push(text.slice(copiedTo, end));
      segments.push({ from: reduced, to: reduced + end - copiedTo, fileFrom: copiedTo, fileTo: end, kept: true });
      reduced += end - copiedTo;
    }
    copiedTo = end;
  };
  const standIn = (start: number, end: number) => {
    keepUpTo(start);
    const breaks = text.slice(start, end).replace(/[^\r\n]+/g, "");
    // The line breaks first: an edit after the member starts where the literal ends, at the piece's end.
    const piece = `${breaks}0`;
    pieces.push(piece);
    segments.push({ from: reduced, to: reduced + piece.length, fileFrom: start, fileTo: end, kept: false });
    reduced += piece.length;
    copiedTo = end;
  };
  const walker = new Walker(text);
  const walk = (at: number, prefix: readonly string[]): number => {
    // An object on a path: each member is kept, walked into, or stood in for.
    at = walker.skipTrivia(at);
    if (text[at] !== "{") return walker.skipValue(at);
    at = walker.skipTrivia(at + 1);
    while (text[at] !== "}") {
      if (text[at] === ",") {
        at = walker.skipTrivia(at + 1);
        continue;
      }
      const keyEnd = walker.skipString(at);
      const key = JSON.parse(text.slice(at, keyEnd)) as string;
      at = walker.skipTrivia(keyEnd);
      at = walker.skipTrivia(at + 1); // the colon
      const here = [...prefix, key];
      const onPath = paths.some((p) => p.length >= here.length && here.every((part, i) => p[i] === part));
      const whole = paths.some((p) => p.length === here.length && here.every((part, i) => p[i] === part));
      const end = whole ? walker.skipValue(at) : onPath ? walk(at, here) : walker.skipValue(at);
      if (!onPath) standIn(at, end);
      at = walker.skipTrivia(end);
    }
    return at + 1;
  };
  const start = walker.skipTrivia(bom);
  if (start < text.length) walk(start, []);
  keepUpTo(text.length);
  return { ok: true, narrowed: { text: pieces.join(""), segments } };
}

/**
 * widen(file, narrowed, editedStandIn, paths) → the file's text with the stand-in's edit made
 * on it, or undefined when the edit touches a stood-in value or the result does not narrow
 * back to exactly the edited stand-in (then nothing is written).
 */
export function widen(
  file: string,
  narrowed: Narrowed,
  edited: string,
  paths: readonly (readonly string[])[],
): string | undefined {
  const before = narrowed.text;
  if (edited === before) return file;
  const limit = Math.min(before.length, edited.length);
  let prefix = 0;
  while (prefix < limit && before.charCodeAt(prefix) === edited.charCodeAt(prefix)) prefix++;
  let suffix = 0;
  while (
    suffix < limit - prefix &&
    before.charCodeAt(before.length - 1 - suffix) === edited.charCodeAt(edited.length - 1 - suffix)
  )
    suffix++;
  const end = before.length - suffix;
  // The edit is the servers table's (verified on the stand-in): a stood-in value is never part of it.
  if (narrowed.segments.some((segment) => !segment.kept && segment.from < end && segment.to > prefix)) return undefined;
  const from = toFile(narrowed.segments, prefix);
  const to = toFile(narrowed.segments, end);
  if (from === undefined || to === undefined) return undefined;
  const result = file.slice(0, from) + edited.slice(prefix, edited.length - suffix) + file.slice(to);
  const again = narrowJsonc(result, paths);
  return again.ok && again.narrowed.text === edited ? result : undefined;
}

/** toFile(segments, offset) → the file offset of a stand-in offset outside every stood-in value (segments share their ends, which map alike). */
function toFile(segments: readonly Segment[], offset: number): number | undefined {
  let low = 0;
  let high = segments.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (segments[mid]!.to < offset) low = mid + 1;
    else high = mid;
  }
  const segment = segments[low];
  if (!segment) return offset;
  if (segment.kept) return segment.fileFrom + (offset - segment.from);
  if (offset === segment.from) return segment.fileFrom;
  if (offset === segment.to) return segment.fileTo;
  return undefined;
}

function isStrictJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A cursor over text already known to be valid JSONC: skips whitespace, comments, strings and whole values. */
class Walker {
  constructor(private readonly text: string) {}

  skipTrivia(at: number): number {
    const text = this.text;
    for (;;) {
      const c = text.charCodeAt(at);
      if (
        c === 0x20 ||
        c === 0x0a ||
        c === 0x0d ||
        c === 0x09 ||
        c === 0x0b ||
        c === 0x0c ||
        c === 0xa0 ||
        c === 0xfeff ||
        (c >= 0x2000 && c <= 0x200b) ||
        c === 0x2028 ||
        c === 0x2029 ||
        c === 0x3000
      )
        at++;
      else if (c === 0x2f && text.charCodeAt(at + 1) === 0x2f) {
        const end = text.indexOf("\n", at);
        at = end < 0 ? text.length : end;
      } else if (c === 0x2f && text.charCodeAt(at + 1) === 0x2a) {
        const end = text.indexOf("*/", at + 2);
        at = end < 0 ? text.length : end + 2;
      } else return at;
    }
  }

  /** skipString(at) → the offset after the string literal starting at `at`. */
  skipString(at: number): number {
    const text = this.text;
    for (let i = at + 1; ; ) {
      const quote = text.indexOf('"', i);
      if (quote < 0) return text.length;
      let backslashes = 0;
      while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
      if (backslashes % 2 === 0) return quote + 1;
      i = quote + 1;
    }
  }

  /** nestedTooDeep() → whether objects and arrays nest deeper than MAX_NESTING anywhere (strings skipped; the text is strict JSON). */
  nestedTooDeep(): boolean {
    const text = this.text;
    let depth = 0;
    for (let i = 0; i < text.length; ) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i = this.skipString(i);
        continue;
      }
      if (c === 0x7b || c === 0x5b) {
        if (++depth > MAX_NESTING) return true;
      } else if (c === 0x7d || c === 0x5d) depth--;
      i++;
    }
    return false;
  }

  /** skipValue(at) → the offset after the value starting at `at` (an object or array whole). */
  skipValue(at: number): number {
    const text = this.text;
    const first = text.charCodeAt(at);
    if (first === 0x22) return this.skipString(at);
    if (first !== 0x7b && first !== 0x5b) {
      let i = at;
      while (i < text.length && !/[\s,}\]/]/.test(text[i]!)) i++;
      return i;
    }
    let depth = 0;
    for (let i = at; i < text.length; ) {
      const c = text.charCodeAt(i);
      if (c === 0x22) i = this.skipString(i);
      else if (c === 0x2f && (text.charCodeAt(i + 1) === 0x2f || text.charCodeAt(i + 1) === 0x2a))
        i = this.skipTrivia(i);
      else {
        if (c === 0x7b || c === 0x5b) depth++;
        else if (c === 0x7d || c === 0x5d) {
          depth--;
          if (depth === 0) return i + 1;
        }
        i++;
      }
    }
    return text.length;
  }
}
