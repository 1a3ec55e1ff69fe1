// Reading a JSON-with-comments file (a registry, an MCP file) before anything trusts or edits
// it: the syntax tree with the nesting bounded, a syntax check that holds no tree, and keys
// given twice, each refusal with a line and column, never the content. Apart from the edits
// (jsonc-edit.ts), which splice a text these have accepted: the readers that never edit
// (registry-file.ts, mcp-read.ts, json-narrow.ts) need only this.
import {
  createScanner,
  parseTree,
  printParseErrorCode,
  visit,
  type Node,
  type ParseError,
  type ParseErrorCode,
} from "jsonc-parser";

// jsonc-parser's SyntaxKind is an ambient const enum, which isolated modules cannot read.
const EOF_TOKEN = 17;
const OPEN_BRACE_TOKEN = 1;
const CLOSE_BRACE_TOKEN = 2;
const OPEN_BRACKET_TOKEN = 3;
const CLOSE_BRACKET_TOKEN = 4;

/**
 * How deep a registry may nest objects and arrays. jsonc-parser's tree and our walks over it
 * recurse per level, and a settings.json nested 200 000 deep overflowed the stack
 * (docs/decisions.md#installer-second-trial-from-outside:
 * `install` printed an internal error and exited 0). Real settings nest a handful of levels.
 */
export const MAX_NESTING = 512;

export type ParsedJsonc =
  | { readonly ok: true; readonly root: Node | undefined }
  | { readonly ok: false; readonly line: number; readonly column: number; readonly code: string };

export const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true } as const;

/** parseJsonc(text) → its syntax tree, or where it first fails (line and column, 1-based; never the content). */
export function parseJsonc(text: string): ParsedJsonc {
  // Refused before parsing, like any file that does not parse: the parse itself would recurse.
  const tooDeep = nestingTooDeepAt(text);
  if (tooDeep !== undefined)
    return { ok: false, ...lineAndColumn(text, tooDeep), code: `nested deeper than ${MAX_NESTING} levels` };
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, PARSE_OPTIONS);
  const first = errors[0];
  if (first) {
    const { line, column } = lineAndColumn(text, first.offset);
    return { ok: false, line, column, code: printParseErrorCode(first.error) };
  }
  return { ok: true, root };
}

/**
 * checkJsoncSyntax(text) → what parseJsonc says about the text, without its syntax tree: a tree
 * of a 41 MB ~/.claude.json held gigabytes (docs/hardening.md §8); this pass holds no more than the
 * token it reads. The same nesting bound, the same first error, line and column.
 */
export function checkJsoncSyntax(text: string): { readonly ok: true } | Extract<ParsedJsonc, { ok: false }> {
  const tooDeep = nestingTooDeepAt(text);
  if (tooDeep !== undefined)
    return { ok: false, ...lineAndColumn(text, tooDeep), code: `nested deeper than ${MAX_NESTING} levels` };
  let first: { error: ParseErrorCode; offset: number } | undefined;
  visit(
    text,
    {
      onError: (error, offset) => {
        first ??= { error, offset };
      },
    },
    PARSE_OPTIONS,
  );
  if (!first) return { ok: true };
  return { ok: false, ...lineAndColumn(text, first.offset), code: printParseErrorCode(first.error) };
}

/** nestingTooDeepAt(text) → the offset of the first `{` or `[` beyond MAX_NESTING levels (strings and comments skipped), else undefined. */
function nestingTooDeepAt(text: string): number | undefined {
  const scanner = createScanner(text, true);
  let depth = 0;
  for (let token = scanner.scan(); token !== EOF_TOKEN; token = scanner.scan()) {
    if (token === OPEN_BRACE_TOKEN || token === OPEN_BRACKET_TOKEN) {
      if (++depth > MAX_NESTING) return scanner.getTokenOffset();
    } else if (token === CLOSE_BRACE_TOKEN || token === CLOSE_BRACKET_TOKEN) depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/**
 * duplicateKey(text, root, ["hooks"]) → the first key that appears twice on a path we read or
 * write — a watched top-level key, or any key anywhere below one — with the line of its second
 * occurrence; undefined when there is none. Hosts keep the last occurrence and jsonc-parser's
 * tree edits the first, so an edit there would change nothing a host reads (docs/decisions.md#installer: each
 * install appended another set, and uninstall removed the binary the leftovers still ran).
 */
export function duplicateKey(
  text: string,
  root: Node | undefined,
  watched: readonly string[],
): { readonly key: string; readonly line: number } | undefined {
  if (root?.type !== "object") return undefined;
  const seen = new Set<string>();
  for (const property of root.children ?? []) {
    const name = property.children?.[0]?.value;
    if (typeof name !== "string" || !watched.includes(name)) continue;
    if (seen.has(name)) return { key: name, line: lineAndColumn(text, property.offset).line };
    seen.add(name);
    const below = duplicateBelow(text, property.children?.[1], name);
    if (below) return below;
  }
  return undefined;
}

function duplicateBelow(
  text: string,
  node: Node | undefined,
  where: string,
): { key: string; line: number } | undefined {
  if (!node) return undefined;
  if (node.type === "array") {
    for (const [index, item] of (node.children ?? []).entries()) {
      const found = duplicateBelow(text, item, `${where}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (node.type !== "object") return undefined;
  const seen = new Set<string>();
  for (const property of node.children ?? []) {
    const name = property.children?.[0]?.value;
    if (typeof name !== "string") continue;
    const key = `${where}.${name}`;
    if (seen.has(name)) return { key, line: lineAndColumn(text, property.offset).line };
    seen.add(name);
    const found = duplicateBelow(text, property.children?.[1], key);
    if (found) return found;
  }
  return undefined;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}
