// The one screen of `velesdb-hooks stats`: totals, each hook's own time, then a small per-day
// chart. Plain text; colour only for a terminal (and never with NO_COLOR), so a pipe or a file
// gets the same characters without escape codes.
import { readerJson } from "../core/texts.ts";
import type { Counts, Skipped, Summary } from "./aggregate.ts";

const BAR_WIDTH = 30;

export interface RenderOptions {
  readonly colour: boolean;
  /** Where the records are, for the header. */
  readonly where: string;
  /** Lines under the header: the day files that were not read, and why. */
  readonly notes?: readonly string[];
}

/** The most projects the screen lists; the rest are in --json. */
const PROJECT_ROWS = 12;
/** A project name is cut to this many characters on the screen (it may be 120), then escaped. */
const PROJECT_CHARS = 40;

/** count(1234) → "1 234": thin grouping a person reads at a glance, the same in every locale. */
export function count(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, " ");
}

/** shortCount(25_300) → "25.3k". */
export function shortCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

function compressionLine(t: Counts): string {
  const reasons = Object.entries(t.passedByReason)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${count(n)} ${reason}`)
    .join(", ");
  const passed = `${count(t.outputsPassed)} passed through${reasons ? ` (${reasons})` : ""}`;
  if (t.outputsReplaced === 0) return `0 outputs replaced, ${passed}`;
  const bytesSaved = t.bytesBefore - t.bytesAfter;
  return `${plural(t.outputsReplaced, "output")} replaced, ${passed}; ${count(bytesSaved)} bytes and ${count(t.tokensSaved)} tokens the model did not read`;
}

/** renderSummary(summary, options) → the screen, one trailing newline. */
export function renderSummary(s: Summary, options: RenderOptions): string {
  const t = s.totals;
  const scope = s.project === null ? "all projects" : `project ${readerJson(s.project)}`;
  const lines: string[] = [
    `velesdb-hooks stats: ${scope}, ${s.days === 1 ? "today" : `last ${s.days} days`} (${s.from} to ${s.to}, UTC)`,
    `records: ${options.where}`,
    ...(options.notes ?? []),
    "",
    row(
      "hook calls",
      `${count(t.hookCalls)}; ${plural(t.errors, "error")}, ${plural(t.timeouts, "timeout")}${t.answersLost > 0 ? `, ${plural(t.answersLost, "answer")} not delivered` : ""}`,
    ),
    row("sessions", `${count(t.sessionsWithContext)} started with their context named`),
    row(
      "guard",
      `${plural(t.editsRefused, "edit")} refused in ${plural(s.loop.refusedSessions, "session")}: ${count(s.loop.recalledAndEdited)} then recalled and edited, ` +
        `${count(s.loop.recalledNoEdit)} recalled without editing, ${count(s.loop.neverRecalled)} never recalled; ${plural(t.editsAllowed, "guarded edit")} allowed`,
    ),
    row("recalls", `${count(t.recallsSuccessful)} successful, ${count(t.recallsFailed)} failed`),
    row("checkpoints", `${count(t.checkpointsAsked)} asked at Stop, ${count(t.checkpointsDelivered)} delivered`),
    row("compression", compressionLine(t)),
  ];
  lines.push(...skippedLines(s.skipped).map((line) => row("skipped", line.slice("skipped: ".length))));
  lines.push("", "hook time (own, p50 / p99):");
  for (const h of s.hookTimes.slice(0, 12)) {
    lines.push(
      `  ${`${h.host} ${h.event}`.padEnd(32)} ${fmtMs(h.p50Ms).padStart(8)} / ${fmtMs(h.p99Ms).padStart(8)}  ${plural(h.calls, "call")}`,
    );
  }
  if (s.hookTimes.length > 12) lines.push(`  … ${s.hookTimes.length - 12} more in --json`);
  // The projects the records name come from repositories (a directory's name by default):
  // each is cut, then written as a JSON string with every control and bidi character escaped.
  if (s.project === null) {
    lines.push("", "per project (hook calls; refused / recalls / checkpoints / tokens saved):");
    for (const p of s.perProject.slice(0, PROJECT_ROWS)) {
      const name = p.project === null ? "(no project)" : readerJson(cut(p.project, PROJECT_CHARS));
      lines.push(`  ${name.padEnd(32)} ${count(p.hookCalls).padStart(7)}  ${detail(p)}`);
    }
    if (s.perProject.length > PROJECT_ROWS) lines.push(`  … ${s.perProject.length - PROJECT_ROWS} more in --json`);
  }
  lines.push("", "per day (hook calls; refused / recalls / checkpoints / tokens saved):");
  const max = Math.max(1, ...s.perDay.map((d) => d.hookCalls));
  for (const d of s.perDay) {
    const width = d.hookCalls === 0 ? 0 : Math.max(1, Math.round((d.hookCalls / max) * BAR_WIDTH));
    const bar = "#".repeat(width).padEnd(BAR_WIDTH);
    const shown = options.colour && width > 0 ? `\u001b[36m${bar}\u001b[0m` : bar;
    lines.push(`  ${d.day.slice(5)} ${shown} ${count(d.hookCalls).padStart(7)}  ${detail(d)}`);
  }
  return `${lines.join("\n").replace(/ +$/gm, "")}\n`;
}

/** skippedLines(skipped) → "skipped: 2 records: 1 not a whole record, 1 with an impossible time", or nothing. */
export function skippedLines(skipped: Skipped): string[] {
  const parts = [
    ...(skipped.unreadable > 0
      ? [`${count(skipped.unreadable)} not a whole record (cut by a full disk, or not written by the hooks)`]
      : []),
    ...(skipped.impossibleTime > 0 ? [`${count(skipped.impossibleTime)} with an impossible time`] : []),
  ];
  const total = skipped.unreadable + skipped.impossibleTime;
  return total === 0 ? [] : [`skipped: ${plural(total, "record")}: ${parts.join(", ")}`];
}

const detail = (c: Counts): string =>
  `${c.editsRefused} / ${c.recallsSuccessful} / ${c.checkpointsDelivered} / ${shortCount(c.tokensSaved)}`;

/** cut("abcdef", 4) → "abc…": at most `chars` code points, never half of a surrogate pair. */
function cut(text: string, chars: number): string {
  const points = [...text];
  return points.length <= chars ? text : `${points.slice(0, chars - 1).join("")}…`;
}

const row = (label: string, text: string): string => `  ${label.padEnd(12)} ${text}`;

function fmtMs(ms: number): string {
  return ms < 100 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}
