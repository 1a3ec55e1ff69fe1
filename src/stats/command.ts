// `velesdb-hooks stats [--days N] [--project P] [--json] [--reset]` (docs/stats.md):
// what the hooks did for the user, read from the records every hook call appends
// (src/core/stats-record.ts). Loaded only for this command (src/cli.ts imports it lazily), so
// no hook evaluates the aggregation or the screen.
import { diagnosticLine } from "../core/decision.ts";
import { writeFully } from "../core/output.ts";
import { KEEP_DAYS } from "../core/stats-record.ts";
import type { StatsRecord } from "../core/stats-note.ts";
import { readerJson } from "../core/texts.ts";
import { noneSkipped, readRecordLine, recordPieces, summarise } from "./aggregate.ts";
import { humanBytes, readDayFile, removeDayFiles, shownPath, statsEnabled, statsLocation, utcDay } from "./files.ts";
import { renderSummary, skippedLines } from "./render.ts";

const EXIT_USAGE = 64;
const EXIT_PROBLEM = 1;
const DEFAULT_DAYS = 7;
const MAX_DAYS = 366;

export interface StatsOptions {
  readonly days: number;
  readonly project: string | null;
  readonly json: boolean;
  readonly reset: boolean;
}

/** parseStatsArgs(["--days", "3"]) → options, or the usage problem. */
export function parseStatsArgs(
  args: readonly string[],
): { ok: true; options: StatsOptions } | { ok: false; problem: string } {
  let days = DEFAULT_DAYS;
  let project: string | null = null;
  let json = false;
  let reset = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] =
      arg.startsWith("--") && arg.includes("=")
        ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
        : [arg, undefined];
    const value = (): string | undefined => inline ?? args[++i];
    if (flag === "--json" && inline === undefined) json = true;
    else if (flag === "--reset" && inline === undefined) reset = true;
    else if (flag === "--days") {
      const text = value();
      if (text === undefined || !/^[0-9]{1,3}$/.test(text) || Number(text) < 1 || Number(text) > MAX_DAYS) {
        return { ok: false, problem: `--days needs a whole number of days from 1 to ${MAX_DAYS}` };
      }
      days = Number(text);
    } else if (flag === "--project") {
      const text = value();
      if (text === undefined || text === "")
        return {
          ok: false,
          problem: "--project needs a project name (as in .velesdb-hooks.json, or the directory's name)",
        };
      project = text;
    } else
      return {
        ok: false,
        problem: `stats does not take ${JSON.stringify(arg)} (options: --days N, --project P, --json, --reset)`,
      };
  }
  if (reset && (json || project !== null || days !== DEFAULT_DAYS))
    return { ok: false, problem: "--reset removes every record and takes no other option" };
  return { ok: true, options: { days, project, json, reset } };
}

/** runStatsCommand(argv after "stats") → the exit code, once the screen (or JSON) is written. */
export async function runStatsCommand(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  now = Date.now(),
): Promise<number> {
  const parsed = parseStatsArgs(args);
  if (!parsed.ok) {
    writeFully(2, diagnosticLine(parsed.problem));
    return EXIT_USAGE;
  }
  const options = parsed.options;
  const location = statsLocation(env);
  if (location.state === "unsafe") {
    writeFully(2, diagnosticLine(`stats not read: ${location.problem}`));
    return EXIT_PROBLEM;
  }
  if (options.reset) {
    if (location.state === "absent" || location.files.length === 0)
      return say(`no stats records to remove (${location.dir})`);
    const removed = removeDayFiles(location);
    const left = location.files.length - removed.files;
    if (left > 0) {
      writeFully(
        2,
        diagnosticLine(
          `removed ${removed.files} of ${location.files.length} stats files from ${location.dir}; ${left} could not be removed`,
        ),
      );
      return EXIT_PROBLEM;
    }
    return say(
      `removed ${removed.files} stats ${removed.files === 1 ? "file" : "files"} (${humanBytes(removed.bytes)}) from ${location.dir}`,
    );
  }

  const today = utcDay(now);
  const records: StatsRecord[] = [];
  const skipped = noneSkipped();
  const notRead: { file: string; problem: string }[] = [];
  let bytes = 0;
  const files = location.state === "ok" ? location.files : [];
  for (const file of files) {
    bytes += file.bytes;
    const read = readDayFile(file);
    if (read.state === "gone") continue;
    if (read.state === "not read") {
      notRead.push({ file: file.path, problem: read.problem });
      continue;
    }
    for (const piece of recordPieces(read.text)) {
      const parsed = readRecordLine(piece);
      if (parsed.ok) records.push(parsed.record);
      else skipped[parsed.why]++;
    }
  }
  const summary = summarise(records, { today, days: options.days, project: options.project, skipped });
  const off = statsEnabled(env) ? "" : "; recording is off (VELESDB_HOOK_STATS=off)";
  const dir = shownPath(location.dir);
  if (options.json) {
    // Project names come from repositories' directory names: escaped as on the screen.
    return say(
      readerJson(
        {
          recordsDirectory: location.dir,
          recording: statsEnabled(env),
          keepDays: KEEP_DAYS,
          filesNotRead: notRead,
          ...summary,
        },
        2,
      ),
    );
  }
  // A file that was not read is said even when nothing else is: "no records" alone would hide it.
  const notReadLines = notRead.map(({ file, problem }) => `not read: ${shownPath(file)} ${problem}`);
  if (summary.records === 0) {
    const scope = options.project === null ? "" : ` for project ${readerJson(options.project)}`;
    return say(
      [
        `no stats records${scope} in the last ${options.days === 1 ? "day" : `${options.days} days`} (${dir})${off}`,
        ...skippedLines(summary.skipped),
        ...notReadLines,
      ].join("\n"),
    );
  }
  const where = `${dir} (${files.length} ${files.length === 1 ? "file" : "files"}, ${humanBytes(bytes)}; kept ${KEEP_DAYS} days)${off}`;
  const colour = isTerminal() && (env.NO_COLOR ?? "") === "";
  writeFully(1, renderSummary(summary, { colour, where, notes: notReadLines }));
  return 0;
}

function say(line: string): number {
  writeFully(1, `${line}\n`);
  return 0;
}

function isTerminal(): boolean {
  const tty = require("node:tty") as typeof import("node:tty");
  return tty.isatty(1);
}
