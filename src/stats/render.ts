// The one screen of `velesdb-hooks stats`: totals, each hook's own time, then a small per-day
// chart. Plain text; colour only for a terminal (and never with NO_COLOR), so a pipe or a file
// gets the same characters without escape codes.
import type { Counts, Summary } from "./aggregate.ts";

const BAR_WIDTH = 30;

export interface RenderOptions {
  readonly colour: boolean;
  /** Where the records are, for the header. */
  readonly where: string;
}

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
  const scope = s.project === null ? "all projects" : `project ${JSON.stringify(s.project)}`;
  const lines: string[] = [
    `velesdb-hooks stats: ${scope}, ${s.days === 1 ? "today" : `last ${s.days} days`} (${s.from} to ${s.to}, UTC)`,
    `records: ${options.where}`,
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
  if (s.unreadableLines > 0)
    lines.push(row("unreadable", `${plural(s.unreadableLines, "line")} skipped (not a record)`));
  lines.push("", "hook time (own, p50 / p99):");
  for (const h of s.hookTimes.slice(0, 12)) {
    lines.push(
      `  ${`${h.host} ${h.event}`.padEnd(32)} ${fmtMs(h.p50Ms).padStart(8)} / ${fmtMs(h.p99Ms).padStart(8)}  ${plural(h.calls, "call")}`,
    );
  }
  if (s.hookTimes.length > 12) lines.push(`  … ${s.hookTimes.length - 12} more in --json`);
  lines.push("", "per day (hook calls; refused / recalls / checkpoints / tokens saved):");
  const max = Math.max(1, ...s.perDay.map((d) => d.hookCalls));
  for (const d of s.perDay) {
    const width = d.hookCalls === 0 ? 0 : Math.max(1, Math.round((d.hookCalls / max) * BAR_WIDTH));
    const bar = "#".repeat(width).padEnd(BAR_WIDTH);
    const shown = options.colour && width > 0 ? `\u001b[36m${bar}\u001b[0m` : bar;
    const detail = `${d.editsRefused} / ${d.recallsSuccessful} / ${d.checkpointsDelivered} / ${shortCount(d.tokensSaved)}`;
    lines.push(`  ${d.day.slice(5)} ${shown} ${count(d.hookCalls).padStart(7)}  ${detail}`);
  }
  return `${lines.join("\n").replace(/ +$/gm, "")}\n`;
}

const row = (label: string, text: string): string => `  ${label.padEnd(12)} ${text}`;

function fmtMs(ms: number): string {
  return ms < 100 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}
