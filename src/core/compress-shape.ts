// What compile-stdin is handed (docs/compression.md). Measured on velesdb-memory 0.17.0
// (src/context/segment.rs, packing.rs, budget.rs, verdict.rs in its crate): a command's output
// has no turn marker, so it is one `body` fragment; three lines with a digit make it
// "exact values", a critical fragment; packing cuts it into budget-sized chunks and takes them
// from the top, so a log keeps its head — the PASSED lines of a pytest run, never its failures —
// and any critical fragment left partly out makes the whole answer `risk: high`. The query only
// orders fragments, and there is one. So the order and the size are ours to choose: the lines
// that carry the outcome (signal) are found here, every other line is folded, and the view is
// sized to the budget (compile-stdin's own estimate, token-estimate.ts) before compile-stdin
// sees it, which then has nothing critical to cut.
// Deterministic (no clock, no randomness) and linear in the output. Memory: a 5 MB output is
// never split into strings; its lines are offsets into the text, judged by patterns run over the
// whole text and by scans of its characters, and only the lines a view shows are made strings.
import { lineThirtieths, rangeThirtieths } from "./token-estimate.ts";

/** Words that announce an outcome: a failure, an error, a crash. Path-only lines never count. */
const OUTCOME_WORDS =
  /\b(?:errors?|fatal|panic(?:ked)?|fail(?:ed|ures?|s)?|exceptions?|traceback|abort(?:ed)?|segmentation fault|denied|cannot|could not|unable to|undefined reference|not found|no such file)\b/gi;

/**
 * Line shapes of the tools' own reports: locations, frames, verdicts, summaries. Run over the
 * whole text (`m`: ^ is a line start), so none of them may cross a line break: [ \t], never \s.
 */
const SIGNAL_SHAPES: readonly RegExp[] = [
  /^[ \t]*E {3}/gm, // pytest: an assertion's explanation (a blank one too: it separates a diff)
  /^[ \t]+\S+_test\.go:\d+: /gm, // go test: what a failing test logged
  /^not ok \d+\b/gm, // TAP (node --test, bun --reporter tap)
  /^[ \t]*--- FAIL\b/gm, // go test
  /^FAIL\b/gm, // go test's package verdict
  /^[ \t]*File "[^"\n]+", line \d+/gm, // a Python frame
  /^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b(?::|$)/gm, // an exception, as Python prints it
  /^[ \t]*-->[ \t]+\S+:\d+(?::\d+)?/gm, // rustc: where the error is
  /^[ \t]*\d+ (?:passed|failed|tests?|pass|fail|errors?|skipped)\b/gim, // bun's " 3 fail", cargo/pytest counts
  /\b\d+ (?:passed|failed|failing|errors?)\b/gi, // "== 2 failed, 600 passed in 1.2s =="
  /^test result:/gm, // cargo test
  /^Ran \d+ tests?\b/gm, // unittest
  /^#[ \t]*(?:tests|pass|fail|cancelled|skipped|todo)[ \t]+\d+/gm, // TAP summary
  /\b\d+ upgraded, \d+ newly installed\b/g, // apt-get
  /^(?:npm (?:ERR!|error)|ERROR:|E: |W: )/gm, // npm, pip, apt
  /^make(?:\[\d+\])?: \*\*\*/gm, // make's failure line
  /^diff --git /gm, // git: which file a diff is of
  /^[ \t]*\S+[:(]\d+[,:]\d+\)?:?[ \t]+(?:fatal )?error\b/gim, // gcc, tsc, go vet: file:line:col: error
];

/** A line longer than this is no report line (a minified blob), and is shown cut when not signal. */
const REPORT_LINE_MAX = 4000;
const LONG_LINE_CHARS = 400;
const LONG_LINE_KEPT = 300;
/** A run of at least this many lines of one shape folds to its first line, a count and its last line. */
const MIN_FOLDED_RUN = 4;

const OTHER = 0;
const CONTEXT = 1;
const SIGNAL = 2;

/** The output as line offsets: line i is text[start[i], end[i]). */
interface Lines {
  readonly text: string;
  readonly start: Int32Array;
  readonly end: Int32Array;
  readonly count: number;
}

function lineOffsets(text: string): Lines {
  const body = text.endsWith("\n") ? text.length - 1 : text.length;
  const starts: number[] = [0];
  for (let at = text.indexOf("\n"); at >= 0 && at < body; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  const start = Int32Array.from(starts);
  const end = new Int32Array(start.length);
  for (let i = 0; i < start.length; i++) end[i] = i + 1 < start.length ? start[i + 1]! - 1 : body;
  return { text, start, end, count: start.length };
}

const isSpace = (code: number): boolean => code === 32 || code === 9 || code === 13 || code === 11 || code === 12;

function isBlank(l: Lines, i: number): boolean {
  for (let k = l.start[i]!; k < l.end[i]!; k++) if (!isSpace(l.text.charCodeAt(k))) return false;
  return true;
}

/** True when the line, trimmed, still holds a space or tab: a sentence, not one word or path. */
function hasInnerSpace(l: Lines, i: number): boolean {
  let from = l.start[i]!;
  let to = l.end[i]!;
  while (from < to && isSpace(l.text.charCodeAt(from))) from++;
  while (to > from && isSpace(l.text.charCodeAt(to - 1))) to--;
  for (let k = from; k < to; k++) if (isSpace(l.text.charCodeAt(k))) return true;
  return false;
}

/** lineAt(l, offset) → the index of the line holding that offset (binary search). */
function lineAt(l: Lines, offset: number): number {
  let lo = 0;
  let hi = l.count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (l.start[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * lineRoles(l) → per line: SIGNAL for an outcome (an error and its location, a failing test, a
 * traceback, a summary) and the first and last non-blank lines (what the command began with and
 * how it ended); CONTEXT for the line before and the two after a signal line (a compiler's source
 * excerpt and caret, an assertion's detail); OTHER for the rest.
 */
function lineRoles(l: Lines): Uint8Array {
  const roles = new Uint8Array(l.count);
  const short = (i: number): boolean => l.end[i]! - l.start[i]! <= REPORT_LINE_MAX;
  for (const pattern of SIGNAL_SHAPES) {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(l.text); m !== null; m = pattern.exec(l.text)) {
      const i = lineAt(l, m.index);
      if (short(i)) roles[i] = SIGNAL;
      // Next line: one mark per line is enough.
      pattern.lastIndex = Math.max(pattern.lastIndex, l.end[i]! + 1);
    }
  }
  OUTCOME_WORDS.lastIndex = 0;
  for (let m = OUTCOME_WORDS.exec(l.text); m !== null; m = OUTCOME_WORDS.exec(l.text)) {
    const i = lineAt(l, m.index);
    if (short(i) && hasInnerSpace(l, i)) roles[i] = SIGNAL;
    OUTCOME_WORDS.lastIndex = Math.max(OUTCOME_WORDS.lastIndex, l.end[i]! + 1);
  }
  for (let i = 0; i < l.count; i++) {
    if (isBlank(l, i)) continue;
    roles[i] = SIGNAL;
    break;
  }
  for (let i = l.count - 1; i >= 0; i--) {
    if (isBlank(l, i)) continue;
    roles[i] = SIGNAL;
    break;
  }
  for (let i = 0; i < l.count; i++) {
    if (roles[i] !== SIGNAL) continue;
    for (const j of [i - 1, i + 1, i + 2])
      if (j >= 0 && j < l.count && roles[j] === OTHER && !isBlank(l, j)) roles[j] = CONTEXT;
  }
  return roles;
}

/**
 * lineShape(l, i) → a number for what the line looks like, with its digit runs made alike and
 * runs of + and - (a diffstat bar) too, and a path reduced to its directory and extension: equal
 * numbers for a run of progress lines or for one directory's files, so they fold together. Two
 * 32-bit FNV-1a hashes, combined; a collision could only fold two unlike lines, never hide a
 * signal line (those are never folded).
 */
function lineShape(l: Lines, i: number): number {
  const { text } = l;
  let from = l.start[i]!;
  let to = l.end[i]!;
  if (!hasInnerSpace(l, i)) {
    while (from < to && isSpace(text.charCodeAt(from))) from++;
    while (to > from && isSpace(text.charCodeAt(to - 1))) to--;
    const slash = text.lastIndexOf("/", to - 1);
    if (slash >= from) {
      const dot = text.lastIndexOf(".", to - 1);
      return hashRanges(text, [from, slash + 1, dot > slash + 1 ? dot : to, to], 1);
    }
  }
  let a = 0x811c9dc5;
  let b = 0x01000193;
  let previous = -1;
  for (let k = from; k < to; k++) {
    let code = text.charCodeAt(k);
    if (code >= 48 && code <= 57)
      code = 35; // '#'
    else if (code === 43 || code === 45) code = 177; // '±'
    if ((code === 35 || code === 177) && code === previous) continue;
    previous = code;
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

/** hashRanges(text, [s0, e0, s1, e1], salt) → a hash of text[s0,e0) then text[s1,e1). */
function hashRanges(text: string, bounds: readonly number[], salt: number): number {
  let a = 0x811c9dc5 ^ salt;
  let b = 0x01000193;
  for (let r = 0; r < bounds.length; r += 2) {
    for (let k = bounds[r]!; k < bounds[r + 1]!; k++) {
      const code = text.charCodeAt(k);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x5bd1e995);
    }
    a = Math.imul(a ^ 0x2a, 0x01000193);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

export interface ShapedView {
  /** The text to compile: the signal lines verbatim, in order, everything else folded. */
  readonly text: string;
  /** The lines the model must read verbatim for a replacement to ship. */
  readonly signal: readonly string[];
  /** compile-stdin's estimate of the view. */
  readonly tokens: number;
  /** compile-stdin's estimate of the whole output (what the model would have read). */
  readonly originalTokens: number;
}

export type ShapeOutcome =
  | { readonly ok: true; readonly view: ShapedView }
  | { readonly ok: false; readonly problem: string };

/**
 * shapeOutput(text, targetTokens) → the view of the output that fits targetTokens: every signal
 * line verbatim, context lines while they fit, runs of one line shape folded with a count, and
 * then, coarser and coarser, the stretches between kept lines reduced to their ends. Refused
 * when the signal lines alone do not fit: then no view is faithful at this budget. A step's size
 * is counted before any of its text is made, and only the chosen view is joined.
 */
export function shapeOutput(text: string, targetTokens: number): ShapeOutcome {
  const l = lineOffsets(text);
  const roles = lineRoles(l);
  const cost = new Float64Array(l.count);
  let original = 0;
  for (let i = 0; i < l.count; i++) {
    const length = l.end[i]! - l.start[i]!;
    const raw = rangeThirtieths(text, l.start[i]!, l.end[i]!) + 15;
    original += raw;
    cost[i] = roles[i] !== SIGNAL && length > LONG_LINE_CHARS ? lineThirtieths(shown(l, roles, i)) + 15 : raw;
  }
  const originalTokens = Math.ceil(original / 30);
  const signal: string[] = [];
  let signalThirtieths = 0;
  for (let i = 0; i < l.count; i++) {
    if (roles[i] !== SIGNAL) continue;
    signal.push(text.slice(l.start[i]!, l.end[i]!));
    signalThirtieths += cost[i]!;
  }
  if (Math.ceil(signalThirtieths / 30) > targetTokens) {
    return {
      ok: false,
      problem: `its ${signal.length} signal lines need about ${Math.ceil(signalThirtieths / 30)} tokens, above the ${targetTokens} available`,
    };
  }
  // Coarser each step: fold runs; then keep K items at each end of every stretch; then drop context.
  const steps: ReadonlyArray<{ ends: number; context: boolean }> = [
    ...[Infinity, 64, 32, 16, 8, 4, 2, 1, 0].map((ends) => ({ ends, context: true })),
    ...[2, 0].map((ends) => ({ ends, context: false })),
  ];
  for (const withContext of [true, false]) {
    const plan = foldStretches(l, roles, withContext);
    for (const step of steps.filter((s) => s.context === withContext)) {
      if (Math.ceil(render(plan, l, roles, cost, step.ends, null) / 30) > targetTokens) continue;
      const out: string[] = [];
      const thirtieths = render(plan, l, roles, cost, step.ends, out);
      return { ok: true, view: { text: out.join("\n"), signal, tokens: Math.ceil(thirtieths / 30), originalTokens } };
    }
  }
  return {
    ok: false,
    problem: `its ${signal.length} signal lines and the fold markers between them need more than the ${targetTokens} tokens available`,
  };
}

/** shown(l, roles, i) → the line as the view shows it: a long line that is not signal cut, saying so. */
function shown(l: Lines, roles: Uint8Array, i: number): string {
  const length = l.end[i]! - l.start[i]!;
  if (roles[i] === SIGNAL || length <= LONG_LINE_CHARS) return l.text.slice(l.start[i]!, l.end[i]!);
  return `${l.text.slice(l.start[i]!, l.start[i]! + LONG_LINE_KEPT)} […${length - LONG_LINE_KEPT} more characters]`;
}

/**
 * The folded output, made once per context choice: `sequence` holds a kept line's index (≥ 0)
 * or a stretch of other lines as −(its first item + 1); a stretch's items are lines (≥ 0) and
 * fold markers standing for n lines (−n), up to stretchEnd.
 */
interface FoldPlan {
  readonly sequence: Int32Array;
  readonly items: Int32Array;
  readonly stretchEnd: Map<number, number>;
}

function foldStretches(l: Lines, roles: Uint8Array, withContext: boolean): FoldPlan {
  const kept = (i: number): boolean => roles[i] === SIGNAL || (withContext && roles[i] === CONTEXT);
  const sequence: number[] = [];
  const items: number[] = [];
  const stretchEnd = new Map<number, number>();
  for (let i = 0; i < l.count; ) {
    if (kept(i)) {
      sequence.push(i++);
      continue;
    }
    const start = items.length;
    sequence.push(-(start + 1));
    let end = i;
    while (end < l.count && !kept(end)) end++;
    // Runs of one shape within the stretch: MIN_FOLDED_RUN or more become first, marker, last.
    let next = lineShape(l, i);
    for (let r = i; r < end; ) {
      const shape = next;
      let runEnd = r + 1;
      for (; runEnd < end; runEnd++) {
        next = lineShape(l, runEnd);
        if (next !== shape) break;
      }
      const run = runEnd - r;
      if (run >= MIN_FOLDED_RUN && !isBlank(l, r)) items.push(r, -(run - 2), runEnd - 1);
      else for (let k = r; k < runEnd; k++) items.push(k);
      r = runEnd;
    }
    stretchEnd.set(start, items.length);
    i = end;
  }
  return { sequence: Int32Array.from(sequence), items: Int32Array.from(items), stretchEnd };
}

const foldMarker = (n: number): string => `[… ${n} more lines like the one above …]`;
const gapMarker = (n: number): string => `[… ${n} lines not shown here …]`;

/** render(plan, …, ends, out) → the view's cost in thirtieths of a token; its lines pushed onto `out` when given. */
function render(
  plan: FoldPlan,
  l: Lines,
  roles: Uint8Array,
  cost: Float64Array,
  ends: number,
  out: string[] | null,
): number {
  let total = 0;
  const line = (i: number): void => {
    total += cost[i]!;
    out?.push(shown(l, roles, i));
  };
  const marker = (text: string): void => {
    total += lineThirtieths(text) + 15;
    out?.push(text);
  };
  const item = (value: number): void => (value >= 0 ? line(value) : marker(foldMarker(-value)));
  for (const entry of plan.sequence) {
    if (entry >= 0) {
      line(entry);
      continue;
    }
    const start = -entry - 1;
    const end = plan.stretchEnd.get(start)!;
    if (end - start <= 2 * ends + 1) {
      for (let k = start; k < end; k++) item(plan.items[k]!);
      continue;
    }
    for (let k = start; k < start + ends; k++) item(plan.items[k]!);
    let hidden = 0;
    for (let k = start + ends; k < end - ends; k++) hidden += plan.items[k]! >= 0 ? 1 : -plan.items[k]!;
    marker(gapMarker(hidden));
    for (let k = end - ends; k < end; k++) item(plan.items[k]!);
  }
  return total;
}

/**
 * missingSignal(content, signal) → the signal lines that are not a whole line of content: the
 * fidelity rule (docs/compression.md) ships a replacement only when this is empty.
 */
export function missingSignal(content: string, signal: readonly string[]): string[] {
  const present = new Set(content.split("\n"));
  return signal.filter((line) => !present.has(line));
}
