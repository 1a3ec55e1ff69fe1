// Minimal text edits on a JSON-with-comments registry (docs/contract.md §9 "Formatting"). A user's
// settings file carries their comments, key order and indentation; rewriting it from a parsed
// value would destroy all three, so every change here is one splice of the original text,
// located with jsonc-parser's syntax tree and scanner. Two properties are kept on purpose:
// - appending a child and removing it again gives back the original bytes, so
//   uninstall ∘ install is the identity on everything that is not ours;
// - an inserted child copies the indentation of its neighbours (or of its container plus the
//   file's indentation unit), so what we add looks like what was there.
// Reading and checking a text (its nesting, its syntax, keys given twice) is jsonc-parse.ts's.
import { createScanner, findNodeAtLocation, parseTree, type JSONPath, type Node } from "jsonc-parser";
import { PARSE_OPTIONS } from "./jsonc-parse.ts";

// jsonc-parser's SyntaxKind is an ambient const enum, which isolated modules cannot read.
const COMMA_TOKEN = 5;
const COLON_TOKEN = 6;
const LINE_BREAK_TRIVIA = 14;
const WHITESPACE_TRIVIA = 15;
const EOF_TOKEN = 17;

export interface TextStyle {
  /** "\n" or "\r\n", as the file already uses. */
  readonly eol: string;
  /** One level of indentation: a tab or N spaces, as the file already uses (default two spaces). */
  readonly indent: string;
  /** No space after any `,` or `:` in the file: a one-line child is written the same way. */
  readonly compact: boolean;
}

/**
 * detectStyle(text) → the line ending and indentation unit the file already uses. The unit is
 * the dominant one: tabs only when more lines start with a tab than with spaces (one stray tab
 * line in a space-indented file used to make every inserted line tab-indented), and for spaces
 * the smallest indentation seen.
 */
export function detectStyle(text: string): TextStyle {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const compact = !separatorFollowedBySpace(text);
  let tabLines = 0;
  let spaceLines = 0;
  let smallest = Infinity;
  for (const line of text.split(/\r?\n/)) {
    const lead = /^([ \t]+)\S/.exec(line)?.[1];
    if (!lead) continue;
    if (lead.startsWith("\t")) {
      tabLines++;
      continue;
    }
    spaceLines++;
    smallest = Math.min(smallest, /^ */.exec(lead)![0].length);
  }
  if (tabLines > spaceLines) return { eol, indent: "\t", compact };
  return { eol, indent: Number.isFinite(smallest) && smallest > 0 ? " ".repeat(Math.min(smallest, 8)) : "  ", compact };
}

/** DEFAULT_STYLE: what a new registry is written with (JSON.stringify's two-space layout). */
export const DEFAULT_STYLE: TextStyle = { eol: "\n", indent: "  ", compact: false };

function separatorFollowedBySpace(text: string): boolean {
  const scanner = createScanner(text, false);
  let previous = -1;
  for (;;) {
    const token = scanner.scan();
    if (token === EOF_TOKEN) return false;
    if (
      (previous === COMMA_TOKEN || previous === COLON_TOKEN) &&
      (token === WHITESPACE_TRIVIA || token === LINE_BREAK_TRIVIA)
    )
      return true;
    previous = token;
  }
}

/** nodeAt(text, ["hooks","Stop",0]) → the node at that path in the current text, if any. */
export function nodeAt(text: string, jsonPath: JSONPath): Node | undefined {
  const root = parseTree(text, [], PARSE_OPTIONS);
  return root ? findNodeAtLocation(root, jsonPath) : undefined;
}

/**
 * removeAt(text, path) → text without the value at `path` (an array element, or an object
 * property with its key), its separating comma and the whitespace that only served it.
 * Comments next to it stay.
 */
export function removeAt(text: string, jsonPath: JSONPath): string {
  const node = nodeAt(text, jsonPath);
  if (!node?.parent) throw new Error(`nothing to remove at ${JSON.stringify(jsonPath)}`);
  const child = node.parent.type === "property" ? node.parent : node;
  const container = child.parent;
  if (!container?.children) throw new Error(`no container at ${JSON.stringify(jsonPath)}`);
  const kids = container.children;
  const index = kids.indexOf(child);
  const start = child.offset;
  const end = child.offset + child.length;
  const open = container.offset;
  const close = container.offset + container.length - 1;

  if (kids.length === 1) {
    const trailingComma = findToken(text, end, close, COMMA_TOKEN);
    const afterComma = trailingComma >= 0 ? trailingComma + 1 : end;
    if (onlyWhitespace(text, open + 1, start) && onlyWhitespace(text, afterComma, close)) {
      return text.slice(0, open + 1) + text.slice(close); // `{ only }` → `{}`
    }
    return splice(text, [[start, afterComma]]);
  }
  if (index < kids.length - 1) {
    // `child, ⏎ next` → `next`: the child, its comma and the whitespace after that comma.
    const next = kids[index + 1]!;
    const comma = findToken(text, end, next.offset, COMMA_TOKEN);
    let stop = comma >= 0 ? comma + 1 : end;
    while (stop < next.offset && isBlank(text.charCodeAt(stop))) stop++;
    return splice(text, [[start, stop]]);
  }
  // The last of several: `prev, ⏎ child` → `prev`. The comma before it and the whitespace just
  // in front of it go; a comment between the two stays where it was.
  const previous = kids[index - 1]!;
  const comma = findToken(text, previous.offset + previous.length, start, COMMA_TOKEN);
  let lead = start;
  const floor = comma >= 0 ? comma + 1 : previous.offset + previous.length;
  while (lead > floor && isBlank(text.charCodeAt(lead - 1))) lead--;
  return comma >= 0
    ? splice(text, [
        [comma, comma + 1],
        [lead, end],
      ])
    : splice(text, [[lead, end]]);
}

/** appendToArray(text, ["hooks","Stop"], value, style) → text with `value` as the array's last element. */
export function appendToArray(text: string, arrayPath: JSONPath, value: unknown, style: TextStyle): string {
  const array = nodeAt(text, arrayPath);
  if (array?.type !== "array") throw new Error(`no array at ${JSON.stringify(arrayPath)}`);
  return appendChild(text, array, (indent) => render(value, indent, style), JSON.stringify(value), style);
}

/** addProperty(text, ["hooks"], "Stop", value, style) → text with `"Stop": value` as the object's last property. */
export function addProperty(text: string, objectPath: JSONPath, key: string, value: unknown, style: TextStyle): string {
  const object = objectPath.length === 0 ? parseTree(text, [], PARSE_OPTIONS) : nodeAt(text, objectPath);
  if (object?.type !== "object") throw new Error(`no object at ${JSON.stringify(objectPath)}`);
  const name = JSON.stringify(key);
  const inline = `${name}${style.compact ? ":" : ": "}${JSON.stringify(value)}`;
  return appendChild(text, object, (indent) => `${name}: ${render(value, indent, style)}`, inline, style);
}

/**
 * replaceAt(text, ["hooks","Stop",1], value, style) → text with the value at that path replaced
 * in place: a value that starts its own line is rendered at that line's indentation, one inside
 * a one-line container stays on that line. Comments and separators around it stay.
 */
export function replaceAt(text: string, jsonPath: JSONPath, value: unknown, style: TextStyle): string {
  const node = nodeAt(text, jsonPath);
  if (!node) throw new Error(`nothing to replace at ${JSON.stringify(jsonPath)}`);
  const rendered = startsLine(text, node.offset)
    ? render(value, lineIndentAt(text, node.offset), style)
    : JSON.stringify(value);
  return text.slice(0, node.offset) + rendered + text.slice(node.offset + node.length);
}

/**
 * insertIntoArray(text, ["hooks","Stop"], 2, value, style) → text with `value` as element 2
 * (in front of the element there, or appended when the array is that long), laid out like
 * that element: on its own line at its indentation, or inline in a one-line array.
 */
export function insertIntoArray(
  text: string,
  arrayPath: JSONPath,
  index: number,
  value: unknown,
  style: TextStyle,
): string {
  const array = nodeAt(text, arrayPath);
  if (array?.type !== "array") throw new Error(`no array at ${JSON.stringify(arrayPath)}`);
  const next = array.children?.[index];
  if (!next) return appendToArray(text, arrayPath, value, style);
  if (!startsLine(text, next.offset))
    return insert(text, next.offset, `${JSON.stringify(value)},${style.compact ? "" : " "}`);
  const indent = lineIndentAt(text, next.offset);
  return insert(text, next.offset, `${render(value, indent, style)},${style.eol}${indent}`);
}

function appendChild(
  text: string,
  container: Node,
  multiline: (indent: string) => string,
  inline: string,
  style: TextStyle,
): string {
  const kids = container.children ?? [];
  const open = container.offset;
  const close = container.offset + container.length - 1;
  if (kids.length === 0) {
    const outer = lineIndentAt(text, open);
    const inner = outer + style.indent;
    if (onlyWhitespace(text, open + 1, close)) {
      return text.slice(0, open + 1) + style.eol + inner + multiline(inner) + style.eol + outer + text.slice(close);
    }
    // Only comments inside: add after the opening bracket, leave the comments below it.
    return text.slice(0, open + 1) + style.eol + inner + multiline(inner) + text.slice(open + 1);
  }
  const last = kids[kids.length - 1]!;
  const lastEnd = last.offset + last.length;
  const trailingComma = findToken(text, lastEnd, close, COMMA_TOKEN);
  if (!startsLine(text, last.offset)) {
    // Written on one line (`[a, b]`): stay on that line.
    const gap = style.compact ? "" : " ";
    return trailingComma >= 0
      ? insert(text, trailingComma + 1, `${gap}${inline},`)
      : insert(text, lastEnd, `,${gap}${inline}`);
  }
  const indent = lineIndentAt(text, last.offset);
  const addition = style.eol + indent + multiline(indent);
  return trailingComma >= 0 ? insert(text, trailingComma + 1, `${addition},`) : insert(text, lastEnd, `,${addition}`);
}

/** render(value, "    ", style) → pretty JSON whose continuation lines start at `indent`. */
function render(value: unknown, indent: string, style: TextStyle): string {
  return JSON.stringify(value, null, style.indent)
    .split("\n")
    .join(style.eol + indent);
}

/** findToken(text, from, to, kind) → offset of the first token of that kind in [from, to), skipping trivia; -1 if none. */
function findToken(text: string, from: number, to: number, kind: number): number {
  const scanner = createScanner(text, false);
  scanner.setPosition(from);
  for (;;) {
    const token = scanner.scan();
    const offset = scanner.getTokenOffset();
    if (token === EOF_TOKEN || offset >= to) return -1;
    if (token === kind) return offset;
  }
}

function onlyWhitespace(text: string, from: number, to: number): boolean {
  const scanner = createScanner(text, false);
  scanner.setPosition(from);
  for (;;) {
    const token = scanner.scan();
    if (token === EOF_TOKEN || scanner.getTokenOffset() >= to) return true;
    if (token !== WHITESPACE_TRIVIA && token !== LINE_BREAK_TRIVIA) return false;
  }
}

function startsLine(text: string, offset: number): boolean {
  for (let i = offset - 1; i >= 0; i--) {
    const c = text[i];
    if (c === "\n" || c === "\r") return true;
    if (c !== " " && c !== "\t") return false;
  }
  return true;
}

function lineIndentAt(text: string, offset: number): string {
  let lineStart = offset;
  while (lineStart > 0 && text[lineStart - 1] !== "\n" && text[lineStart - 1] !== "\r") lineStart--;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))![0];
}

const isBlank = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13;

function insert(text: string, at: number, addition: string): string {
  return text.slice(0, at) + addition + text.slice(at);
}

/** splice(text, [[from, to], …]) → text without those ranges (non-overlapping, any order). */
function splice(text: string, ranges: ReadonlyArray<readonly [number, number]>): string {
  let result = text;
  for (const [from, to] of [...ranges].sort((a, b) => b[0] - a[0])) result = result.slice(0, from) + result.slice(to);
  return result;
}
