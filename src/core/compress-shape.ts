// What compile-stdin is handed (docs/compression.md). Measured on velesdb-memory 0.17.0
// (src/context/segment.rs, packing.rs, budget.rs, verdict.rs in its crate): a command's output
// has no turn marker, so it is one `body` fragment; three lines with a digit make it
// "exact values", a critical fragment; packing cuts it into budget-sized chunks and takes them
// from the top, so a log keeps its head — the PASSED lines of a pytest run, never its failures —
// and any critical fragment left partly out makes the whole answer `risk: high`. The query only
// orders fragments, and there is one. So the order and the size are ours to choose: the lines
// that carry the outcome (signal) are found here, every other line is folded, and the view is
// sized to the budget before compile-stdin sees it, which then has nothing critical to cut.
// Deterministic (no clock, no randomness) and linear in the output's lines.

/** A line kept for its own sake: the model must read it verbatim (the fidelity rule). */
export type LineRole = "signal" | "context" | "other";

/** Words that announce an outcome: a failure, an error, a crash. Path-only lines never count. */
const OUTCOME_WORDS =
  /\b(?:errors?|fatal|panic(?:ked)?|fail(?:ed|ures?|s)?|exceptions?|traceback|abort(?:ed)?|segmentation fault|denied|cannot|could not|unable to|undefined reference|not found|no such file)\b/i;

/** Line shapes of the tools' own reports: locations, frames, verdicts, summaries. */
const SIGNAL_SHAPES: readonly RegExp[] = [
  /^\s*E\s{2,}\S/, // pytest: an assertion's explanation
  /^not ok \d+\b/, // TAP (node --test, bun --reporter tap)
  /^\s*--- FAIL\b/, // go test
  /^FAIL\b/, // go test's package verdict
  /^\s*File "[^"]+", line \d+/, // a Python frame
  /^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b(?::|$)/, // an exception, as Python prints it
  /^\s*-->\s+\S+:\d+(?::\d+)?/, // rustc: where the error is
  /^\s*\d+ (?:passed|failed|tests?|pass|fail|errors?|skipped)\b/i, // bun's " 3 fail", cargo/pytest counts
  /\b\d+ (?:passed|failed|failing|errors?)\b/i, // "== 2 failed, 600 passed in 1.2s =="
  /^test result:/, // cargo test
  /^Ran \d+ tests?\b/, // unittest
  /^#\s*(?:tests|pass|fail|cancelled|skipped|todo)\s+\d+/, // TAP summary
  /\b\d+ upgraded, \d+ newly installed\b/, // apt-get
  /^(?:npm (?:ERR!|error)|ERROR:|E: |W: )/, // npm, pip, apt
  /^make(?:\[\d+\])?: \*\*\*/, // make's failure line
  /^diff --git /, // git: which file a diff is of
  /^\s*\S+[:(]\d+[,:]\d+\)?:?\s+(?:fatal )?error\b/i, // gcc, tsc, go vet: file:line:col: error
];

/**
 * lineRoles(lines) → each line's role: `signal` for an outcome (an error and its location, a
 * failing test, a traceback, a summary) and the first and last non-blank lines (what the command
 * began with and how it ended); `context` for the line before and the two after a signal line
 * (a compiler's source excerpt and caret, an assertion's detail); `other` for the rest.
 */
export function lineRoles(lines: readonly string[]): LineRole[] {
  const roles: LineRole[] = lines.map((line) => (isSignalLine(line) ? "signal" : "other"));
  const first = lines.findIndex((line) => line.trim() !== "");
  if (first >= 0) roles[first] = "signal";
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.trim() === "") continue;
    roles[i] = "signal";
    break;
  }
  for (let i = 0; i < lines.length; i++) {
    if (roles[i] !== "signal") continue;
    for (const j of [i - 1, i + 1, i + 2]) {
      if (j >= 0 && j < lines.length && roles[j] === "other" && lines[j]!.trim() !== "") roles[j] = "context";
    }
  }
  return roles;
}

/** isSignalLine("src/a.c:3:5: error: …") → true; a bare path ("lib/errors.js") never is. */
export function isSignalLine(line: string): boolean {
  if (line.length > 4000) return false; // a minified blob is not a report line
  if (SIGNAL_SHAPES.some((shape) => shape.test(line))) return true;
  const trimmed = line.trim();
  // A line of one word (a path in a listing, a file name in git's output) names a thing, not an outcome.
  return /\s/.test(trimmed) && OUTCOME_WORDS.test(trimmed);
}

/**
 * lineShape("tests/t.py::test_17 PASSED [ 12%]") → "tests/t.py::test_# PASSED [ #%]": what a
 * line looks like with its numbers, hashes and diffstat bars made alike, and a path reduced to
 * its directory and extension, so a run of progress lines or a directory's files fold together.
 */
export function lineShape(line: string): string {
  const trimmed = line.trim();
  if (!/\s/.test(trimmed) && trimmed.includes("/")) {
    const slash = trimmed.lastIndexOf("/");
    const name = trimmed.slice(slash + 1);
    const dot = name.lastIndexOf(".");
    return `path ${trimmed.slice(0, slash + 1)}*${dot > 0 ? name.slice(dot) : ""}`;
  }
  return line.replace(/\b[0-9a-f]{7,40}\b/g, "h").replace(/[0-9]+/g, "#").replace(/[+-]{2,}/g, "±");
}

// Token estimate: the formula of velesdb-memory 0.17.0's HeuristicEstimator
// (src/context/estimator.rs): per whitespace-separated word, an ASCII digit costs 1 token, a
// CJK character 5/6, anything else 3/10, the word's cost rounded up; each newline half a token.
// The same formula here lets a view be sized to the budget before compile-stdin prices it.

/** lineTokens("a 12") → the line's word cost in thirtieths of a token (its newline not included). */
export function lineThirtieths(line: string): number {
  let total = 0;
  let word = 0;
  let inWord = false;
  for (const ch of line) {
    const code = ch.codePointAt(0)!;
    if (ch === " " || ch === "\t" || ch === "\r" || ch === "\f" || ch === "\v" || code === 0xa0 || (code >= 0x2000 && code <= 0x200a) || code === 0x3000) {
      if (inWord) total += Math.ceil(word / 30) * 30;
      word = 0;
      inWord = false;
      continue;
    }
    inWord = true;
    word += code >= 0x30 && code <= 0x39 ? 30 : isCjk(code) ? 25 : 9;
  }
  if (inWord) total += Math.ceil(word / 30) * 30;
  return total;
}

function isCjk(code: number): boolean {
  return (
    (code >= 0x3040 && code <= 0x30ff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0xf900 && code <= 0xfaff)
  );
}

/** estimateTokens(text) → compile-stdin's own estimate of the text's tokens (see above). */
export function estimateTokens(text: string): number {
  const lines = text.split("\n");
  let thirtieths = 0;
  for (const line of lines) thirtieths += lineThirtieths(line);
  return thirtieths / 30 + Math.ceil(((lines.length - 1) * 15) / 30);
}

/** A line longer than this is shown cut when it is not signal (the archive has it whole). */
const LONG_LINE_CHARS = 400;
const LONG_LINE_KEPT = 300;
/** A run of at least this many lines of one shape folds to its first line, a count and its last line. */
const MIN_FOLDED_RUN = 4;

export interface ShapedView {
  /** The text to compile: the signal lines verbatim, in order, everything else folded. */
  readonly text: string;
  /** The lines the model must read verbatim for a replacement to ship. */
  readonly signal: readonly string[];
  /** compile-stdin's estimate of the view. */
  readonly tokens: number;
}

export type ShapeOutcome = { readonly ok: true; readonly view: ShapedView } | { readonly ok: false; readonly problem: string };

/** A line of the output with what we know of it. */
interface Line {
  readonly text: string;
  readonly role: LineRole;
  readonly thirtieths: number;
}

/**
 * shapeOutput(text, targetTokens) → the view of the output that fits targetTokens: every signal
 * line verbatim, context lines while they fit, runs of one line shape folded with a count, and
 * then, coarser and coarser, the stretches between kept lines reduced to their ends. Refused
 * when the signal lines alone do not fit: then no view is faithful at this budget.
 */
export function shapeOutput(text: string, targetTokens: number): ShapeOutcome {
  const raw = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  const roles = lineRoles(raw);
  const lines: Line[] = raw.map((line, i) => {
    const shown = roles[i] !== "signal" && line.length > LONG_LINE_CHARS ? `${line.slice(0, LONG_LINE_KEPT)} […${line.length - LONG_LINE_KEPT} more characters]` : line;
    return { text: shown, role: roles[i]!, thirtieths: lineThirtieths(shown) };
  });
  const signal = raw.filter((_, i) => roles[i] === "signal");
  // Coarser each step: fold runs; then keep K lines at each end of every stretch; then drop context.
  const steps: Array<{ ends: number; context: boolean }> = [
    { ends: Infinity, context: true },
    ...[64, 32, 16, 8, 4, 2, 1, 0].map((ends) => ({ ends, context: true })),
    ...[2, 0].map((ends) => ({ ends, context: false })),
  ];
  for (const step of steps) {
    const view = render(lines, step.ends, step.context);
    if (view.tokens <= targetTokens) return { ok: true, view: { ...view, signal } };
  }
  const signalTokens = Math.ceil(lines.filter((l) => l.role === "signal").reduce((sum, l) => sum + l.thirtieths + 15, 0) / 30);
  return { ok: false, problem: `its ${signal.length} signal lines need about ${signalTokens} tokens, above the ${targetTokens} available` };
}

/** render(lines, ends, withContext) → the view with stretches of unkept lines reduced to `ends` lines at each end. */
function render(lines: readonly Line[], ends: number, withContext: boolean): { text: string; tokens: number } {
  const out: string[] = [];
  let thirtieths = 0;
  const emit = (line: string, cost?: number): void => {
    out.push(line);
    thirtieths += (cost ?? lineThirtieths(line)) + 15;
  };
  const kept = (line: Line): boolean => line.role === "signal" || (withContext && line.role === "context");
  for (let i = 0; i < lines.length; ) {
    if (kept(lines[i]!)) {
      emit(lines[i]!.text, lines[i]!.thirtieths);
      i++;
      continue;
    }
    let end = i;
    while (end < lines.length && !kept(lines[end]!)) end++;
    const stretch = foldRuns(lines.slice(i, end));
    if (stretch.length <= 2 * ends + 1) {
      for (const item of stretch) emit(item.text, item.thirtieths);
    } else {
      for (const item of stretch.slice(0, ends)) emit(item.text, item.thirtieths);
      const hidden = stretch.slice(ends, stretch.length - ends).reduce((sum, item) => sum + item.lines, 0);
      emit(`[… ${hidden} lines not shown here …]`);
      for (const item of stretch.slice(stretch.length - ends)) emit(item.text, item.thirtieths);
    }
    i = end;
  }
  return { text: out.join("\n"), tokens: Math.ceil(thirtieths / 30) };
}

/** One line of a view and how many lines of the output it stands for. */
interface ViewItem {
  readonly text: string;
  readonly thirtieths: number;
  readonly lines: number;
}

/** foldRuns(lines) → the lines with each run of MIN_FOLDED_RUN or more of one shape folded to first, count, last. */
function foldRuns(lines: readonly Line[]): ViewItem[] {
  const items: ViewItem[] = [];
  for (let i = 0; i < lines.length; ) {
    const shape = lineShape(lines[i]!.text);
    let end = i + 1;
    while (end < lines.length && lineShape(lines[end]!.text) === shape) end++;
    const run = end - i;
    if (run >= MIN_FOLDED_RUN && lines[i]!.text.trim() !== "") {
      const marker = `[… ${run - 2} more lines like the one above …]`;
      items.push({ text: lines[i]!.text, thirtieths: lines[i]!.thirtieths, lines: 1 });
      items.push({ text: marker, thirtieths: lineThirtieths(marker), lines: run - 2 });
      items.push({ text: lines[end - 1]!.text, thirtieths: lines[end - 1]!.thirtieths, lines: 1 });
    } else {
      for (let j = i; j < end; j++) items.push({ text: lines[j]!.text, thirtieths: lines[j]!.thirtieths, lines: 1 });
    }
    i = end;
  }
  return items;
}

/**
 * missingSignal(content, signal) → the signal lines that are not a whole line of content: the
 * fidelity rule (docs/compression.md) ships a replacement only when this is empty.
 */
export function missingSignal(content: string, signal: readonly string[]): string[] {
  const present = new Set(content.split("\n"));
  return signal.filter((line) => !present.has(line));
}
