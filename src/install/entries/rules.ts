// A marked section of ours in a user's text file (a client's `sections`; today Windsurf's
// global rules file, docs/contract.md §4.3, the only channel that reaches Cascade's model in every
// session). The file belongs to the user, so it gets the registry's write policy
// (docs/contract.md §9): backup, private temp file +
// fsync + rename, mode kept, a symlink written at its target, refusal before any change — and
// its content is never printed.
//
// The section is delimited by two marker lines and appended after one blank line:
//
//   <user's text>⏎
//   ⏎
//   <!-- velesdb-hooks:begin — … -->⏎
//   <section.body()>⏎
//   <!-- velesdb-hooks:end -->⏎
//
// Uninstall takes out exactly the section and the separator install added, so install then
// uninstall gives back the original bytes. The separator is "" for an empty file, one line
// break after text that ends with one, and two after text that does not; that last case is
// recorded in the begin marker (`velesdb-hooks:begin:added-newline`), because "abc⏎⏎" could
// otherwise be either "abc" plus two line breaks or "abc⏎" plus one. The file's own line ending
// (CRLF when it has any) is used for the section and the separator.
import type { SectionSpec } from "../client.ts";
import { readUserFile, type UserFile } from "../files/safe-read.ts";

const FLAG_ADDED_NEWLINE = ":added-newline";

/** The marker lines of a section, in the comment syntax of its file (SectionSpec.comment). */
interface Markers {
  readonly begin: string;
  readonly end: string;
  /** What closes a marker line ("" for a line comment). */
  readonly close: string;
}

const MARKERS: Readonly<Record<NonNullable<SectionSpec["comment"]>, Markers>> = {
  html: { begin: "<!-- velesdb-hooks:begin", end: "<!-- velesdb-hooks:end", close: " -->" },
  // A JavaScript module (OpenCode's plugin): an HTML comment is a syntax error in a module.
  line: { begin: "// velesdb-hooks:begin", end: "// velesdb-hooks:end", close: "" },
};

const markersOf = (section: SectionSpec): Markers => MARKERS[section.comment ?? "html"];

export type RulesFile = UserFile;

/** readRulesFile(path, ourTree) → the file or why it must not be touched (same rules as a registry). */
export const readRulesFile = (rulesPath: string, ourTreePath: string): RulesFile =>
  readUserFile(rulesPath, ourTreePath);

/** Where our section sits: [start, end) covers the begin line through the end line's line break. */
interface Span {
  readonly start: number;
  readonly end: number;
  readonly addedNewline: boolean;
  readonly eol: string;
}

type Found =
  | { readonly kind: "none" }
  | { readonly kind: "one"; readonly span: Span }
  | { readonly kind: "broken"; readonly problem: string };

/** findSection(text) → our section, none, or why the markers cannot be trusted (counted, never quoted). */
function findSection(text: string, { begin: BEGIN_TOKEN, end: END_TOKEN }: Markers): Found {
  const begins: { start: number; end: number; flagged: boolean; eol: string }[] = [];
  const ends: { start: number; end: number }[] = [];
  let offset = 0;
  while (offset < text.length) {
    const newline = text.indexOf("\n", offset);
    const lineEnd = newline < 0 ? text.length : newline + 1;
    const line = text.slice(offset, lineEnd).replace(/\r?\n$/, "");
    const eol = text.slice(offset + line.length, lineEnd);
    if (line.startsWith(BEGIN_TOKEN))
      begins.push({ start: offset, end: lineEnd, flagged: line.startsWith(BEGIN_TOKEN + FLAG_ADDED_NEWLINE), eol });
    else if (line.startsWith(END_TOKEN)) ends.push({ start: offset, end: lineEnd });
    offset = lineEnd;
  }
  if (begins.length === 0 && ends.length === 0) return { kind: "none" };
  const begin = begins[0];
  const end = ends[0];
  if (begins.length !== 1 || ends.length !== 1 || !begin || !end || end.start < begin.end || begin.eol === "") {
    return {
      kind: "broken",
      problem: `has ${begins.length} velesdb-hooks begin marker(s) and ${ends.length} end marker(s) out of order or unpaired; remove the velesdb-hooks section by hand, then run install again`,
    };
  }
  return { kind: "one", span: { start: begin.start, end: end.end, addedNewline: begin.flagged, eol: begin.eol } };
}

/**
 * notOurs(section, text) → the refusal for a section that must be its file alone (ownFile) when
 * the file, holding no section of ours, has text in it: that is a file of the user's, and ours
 * is never added to it. Blank text is no one's module: ours may go there.
 */
function notOurs(section: SectionSpec, text: string): { ok: false; problem: string } | undefined {
  if (section.ownFile === undefined || text.trim() === "") return undefined;
  return {
    ok: false,
    problem: `is not ours (it holds no velesdb-hooks section; ${section.ownFile}): rename it, then run install again`,
  };
}

/** renderSection(section, "\n", false) → the begin line, the section's body and the end line, each ended by `eol`. */
export function renderSection(section: SectionSpec, eol: string, addedNewline: boolean, stable: string): string {
  const markers = markersOf(section);
  const begin = `${markers.begin}${addedNewline ? FLAG_ADDED_NEWLINE : ""} — ${section.markerNote()}${markers.close}`;
  const lines = [begin, ...section.body(stable).split("\n"), `${markers.end}${markers.close}`];
  return lines.join(eol) + eol;
}

export type RulesState = "in step" | "outdated" | "absent";

export type RulesPlan =
  | { readonly ok: true; readonly before: RulesState; readonly text: string }
  | { readonly ok: false; readonly problem: string };

/** rulesState(section, text) → whether our section is there and exactly current; or why it cannot be judged. */
export function rulesState(
  section: SectionSpec,
  text: string,
  stable: string,
): { ok: true; state: RulesState } | { ok: false; problem: string } {
  const found = findSection(text, markersOf(section));
  if (found.kind === "broken") return { ok: false, problem: found.problem };
  if (found.kind === "none") return notOurs(section, text) ?? { ok: true, state: "absent" };
  const { span } = found;
  return {
    ok: true,
    state:
      text.slice(span.start, span.end) === renderSection(section, span.eol, span.addedNewline, stable)
        ? "in step"
        : "outdated",
  };
}

/**
 * planRules(section, text, "install" | "uninstall") → the file's text after the change (equal to
 * `text` when nothing changes). `text` is "" for a file that does not exist.
 */
export function planRules(
  section: SectionSpec,
  text: string,
  mode: "install" | "uninstall",
  stable: string,
): RulesPlan {
  const found = findSection(text, markersOf(section));
  if (found.kind === "broken") return { ok: false, problem: found.problem };
  if (found.kind === "none") {
    if (mode === "uninstall") return { ok: true, before: "absent", text };
    const foreign = notOurs(section, text);
    if (foreign) return foreign;
    const eol = text.includes("\r\n") ? "\r\n" : "\n";
    if (text === "") return { ok: true, before: "absent", text: renderSection(section, eol, false, stable) };
    if (text.endsWith("\n"))
      return { ok: true, before: "absent", text: text + eol + renderSection(section, eol, false, stable) };
    return { ok: true, before: "absent", text: text + eol + eol + renderSection(section, eol, true, stable) };
  }
  const { span } = found;
  const current = text.slice(span.start, span.end);
  const wanted = renderSection(section, span.eol, span.addedNewline, stable);
  const before: RulesState = current === wanted ? "in step" : "outdated";
  if (mode === "install") {
    // In place: the separator and whatever the user wrote around the section stay as they are.
    return { ok: true, before, text: text.slice(0, span.start) + wanted + text.slice(span.end) };
  }
  const after = text.slice(span.end);
  let head = text.slice(0, span.start);
  if (span.addedNewline) {
    const twice = head.endsWith("\r\n\r\n") ? 4 : head.endsWith("\n\n") ? 2 : 0;
    head = head.slice(0, head.length - twice);
    // Text the user added after the section must not be glued to their last line.
    if (twice > 0 && after !== "") head += span.eol;
  } else if (head !== "") {
    head = head.slice(0, head.length - (head.endsWith("\r\n") ? 2 : 1));
  }
  return { ok: true, before, text: head + after };
}
