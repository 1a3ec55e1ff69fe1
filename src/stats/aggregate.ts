// From stats records (src/core/stats-record.ts) to what `velesdb-hooks stats` shows: totals,
// one row per host, project and day, each hook's own time, the guard's loop followed session by
// session, and one row per day for the chart. Pure: records in, a summary out, so each count is
// tested with fixed records (test/stats.test.ts).
import type { StatsRecord } from "../core/stats-note.ts";

export interface Counts {
  hookCalls: number;
  /** Distinct sessions that were given context (SessionStart's guidance, Windsurf's prompt reminder). */
  sessionsWithContext: number;
  editsRefused: number;
  /** Edits in an opted-in repository the guard let through (the recall had been made). */
  editsAllowed: number;
  recallsSuccessful: number;
  recallsFailed: number;
  checkpointsAsked: number;
  checkpointsDelivered: number;
  outputsReplaced: number;
  outputsPassed: number;
  passedByReason: Record<string, number>;
  bytesBefore: number;
  bytesAfter: number;
  tokensSaved: number;
  errors: number;
  timeouts: number;
  answersLost: number;
}

export interface LoopCounts {
  /** Sessions in which the guard refused at least one edit. */
  refusedSessions: number;
  /** …that then made a successful recall and an edit went through: the loop working. */
  recalledAndEdited: number;
  /** …that recalled but made no guarded edit after it. */
  recalledNoEdit: number;
  /** …that never made a successful recall after the refusal. */
  neverRecalled: number;
}

export interface HookTime {
  readonly host: string;
  readonly event: string;
  readonly calls: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface Summary {
  readonly from: string;
  readonly to: string;
  readonly days: number;
  readonly project: string | null;
  readonly records: number;
  /** Records left out, by why: not a whole record (cut by a full disk, written by something else), or a time no clock gives. */
  readonly skipped: Skipped;
  readonly totals: Counts;
  readonly loop: LoopCounts;
  readonly hookTimes: readonly HookTime[];
  readonly perDay: ReadonlyArray<{ readonly day: string } & Counts>;
  /** One row per project (null: hooks that resolved none), most hook calls first. */
  readonly perProject: ReadonlyArray<{ readonly project: string | null } & Counts>;
  readonly groups: ReadonlyArray<
    { readonly day: string; readonly host: string; readonly project: string | null } & Counts
  >;
}

export const NO_PROJECT = null;

/** Records `stats` leaves out, by why (docs/stats.md, docs/hardening.md §4.7). */
export interface Skipped {
  /** Not a whole record of ours: cut by a full disk, or written by something else. */
  unreadable: number;
  /** A record whose time is no second a clock gives (negative, fractional, past what a date holds). */
  impossibleTime: number;
}

export const noneSkipped = (): Skipped => ({ unreadable: 0, impossibleTime: 0 });

export function emptyCounts(): Counts {
  return {
    hookCalls: 0,
    sessionsWithContext: 0,
    editsRefused: 0,
    editsAllowed: 0,
    recallsSuccessful: 0,
    recallsFailed: 0,
    checkpointsAsked: 0,
    checkpointsDelivered: 0,
    outputsReplaced: 0,
    outputsPassed: 0,
    // No prototype: a reason named "constructor" or "__proto__" (a line passes PLAIN_NAME with
    // either) would otherwise read Object.prototype's members and count on from them.
    passedByReason: Object.create(null) as Record<string, number>,
    bytesBefore: 0,
    bytesAfter: 0,
    tokensSaved: 0,
    errors: 0,
    timeouts: 0,
    answersLost: 0,
  };
}

const PLAIN_NAME = /^[A-Za-z0-9_-]{1,40}$/;

/** The last second a JavaScript date holds (8.64e15 ms): a `t` past it makes no day, and toISOString throws. */
const LAST_SECOND = 8_640_000_000_000;

/** parseRecordLine(line) → the record when the line is one we write, else undefined. */
export function parseRecordLine(line: string): StatsRecord | undefined {
  const read = readRecordLine(line);
  return read.ok ? read.record : undefined;
}

/**
 * readRecordLine(line) → the record when the line is one we write, else why it is left out.
 * `t` is what recordLine writes, whole seconds since the epoch: anything else (a negative, a
 * fraction, 1e20, a string) is no time a hook recorded, and 1e20 once made `stats` print only
 * "internal error: Invalid Date" (docs/hardening.md §4.7).
 */
export function readRecordLine(line: string): { ok: true; record: StatsRecord } | { ok: false; why: keyof Skipped } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, why: "unreadable" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, why: "unreadable" };
  const r = value as Record<string, unknown>;
  if (r.v !== 1) return { ok: false, why: "unreadable" };
  if (!Number.isSafeInteger(r.t) || (r.t as number) < 0 || (r.t as number) > LAST_SECOND)
    return { ok: false, why: "impossibleTime" };
  return isRecordShape(r) ? { ok: true, record: r as unknown as StatsRecord } : { ok: false, why: "unreadable" };
}

/**
 * recordPieces(text) → the day file's records as separate texts. A record cut by a full disk
 * ends without its newline, so the next record appended lands on the same line; split there,
 * the good record survives (docs/hardening.md §4.7). Every record starts `{"v":` (stats-note.ts
 * builds it with v first; test/stats.test.ts pins it), and those five characters occur nowhere
 * inside a record: a quote within a JSON string is always escaped.
 */
export function recordPieces(text: string): string[] {
  return text.split("\n").flatMap((line) => (line === "" ? [] : line.split(/(?=\{"v":)/)));
}

function isRecordShape(r: Record<string, unknown>): boolean {
  if (!Number.isFinite(r.ms)) return false;
  // Names are printed on the screen: only the plain names our hooks write pass, so a line
  // that holds anything else (escape sequences included) is no record.
  for (const key of ["h", "e", "d", "s", "g", "r", "ck", "c", "why"]) {
    if (
      (key === "h" || key === "e" || r[key] !== undefined) &&
      !(typeof r[key] === "string" && PLAIN_NAME.test(r[key] as string))
    )
      return false;
  }
  for (const key of ["bi", "bo", "tk"]) if (r[key] !== undefined && !Number.isFinite(r[key])) return false;
  return r.p === undefined || typeof r.p === "string";
}

/** dayOf(record) → its UTC day, "2026-12-02". */
export const dayOf = (record: StatsRecord): string => new Date(record.t * 1000).toISOString().slice(0, 10);

/** sessionKey(record) → host and session cksum, or undefined when the payload named no session. */
const sessionKey = (record: StatsRecord): string | undefined =>
  record.s === undefined ? undefined : `${record.h}\u0000${record.s}`;

/** add(counts, record, contextSessions) → counts with one record added (contextSessions: keys already counted there). */
function add(counts: Counts, record: StatsRecord, contextSessions: Set<string>): void {
  counts.hookCalls++;
  if (record.d === "addContext") {
    const key = sessionKey(record) ?? `unnamed\u0000${contextSessions.size}`;
    if (!contextSessions.has(key)) {
      contextSessions.add(key);
      counts.sessionsWithContext++;
    }
  }
  if (record.g === "refused") counts.editsRefused++;
  if (record.g === "allowed") counts.editsAllowed++;
  if (record.r === "ok") counts.recallsSuccessful++;
  if (record.r === "failed") counts.recallsFailed++;
  if (record.ck !== undefined) counts.checkpointsAsked++;
  if (record.ck === "sent" && record.lost !== 1) counts.checkpointsDelivered++;
  if (record.c === "replaced") {
    counts.outputsReplaced++;
    counts.bytesBefore += record.bi ?? 0;
    counts.bytesAfter += record.bo ?? 0;
    counts.tokensSaved += record.tk ?? 0;
  }
  if (record.c === "passed") {
    counts.outputsPassed++;
    const reason = record.why ?? "other";
    counts.passedByReason[reason] = (counts.passedByReason[reason] ?? 0) + 1;
  }
  if (record.err === 1) counts.errors++;
  if (record.to === 1) counts.timeouts++;
  if (record.lost === 1) counts.answersLost++;
}

/** percentile([3, 1, 2], 0.5) → 2: nearest rank on the sorted values. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * followLoop(records) → for each session the guard refused in: did a successful recall follow,
 * and then an edit the guard let through? Records are in append order, which is time order.
 */
export function followLoop(records: readonly StatsRecord[]): LoopCounts {
  const state = new Map<string, "refused" | "recalled" | "edited">();
  for (const record of records) {
    const key = sessionKey(record);
    if (key === undefined) continue;
    const now = state.get(key);
    if (record.g === "refused" && now === undefined) state.set(key, "refused");
    else if (record.r === "ok" && now === "refused") state.set(key, "recalled");
    else if (record.g === "allowed" && now === "recalled") state.set(key, "edited");
  }
  const loop: LoopCounts = { refusedSessions: state.size, recalledAndEdited: 0, recalledNoEdit: 0, neverRecalled: 0 };
  for (const outcome of state.values()) {
    if (outcome === "edited") loop.recalledAndEdited++;
    else if (outcome === "recalled") loop.recalledNoEdit++;
    else loop.neverRecalled++;
  }
  return loop;
}

/** daysEnding("2026-12-02", 3) → ["2026-11-30", "2026-12-01", "2026-12-02"]. */
export function daysEnding(lastDay: string, count: number): string[] {
  const last = Date.parse(`${lastDay}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) =>
    new Date(last - (count - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}

/**
 * summarise(records, {today, days, project}) → the summary of the records made on the `days`
 * UTC days ending `today`, of one project when `project` is given. Records in append order.
 */
export function summarise(
  all: readonly StatsRecord[],
  options: {
    readonly today: string;
    readonly days: number;
    readonly project: string | null;
    readonly skipped?: Skipped;
  },
): Summary {
  const dayList = daysEnding(options.today, options.days);
  const from = dayList[0]!;
  const records = all.filter((r) => {
    const day = dayOf(r);
    return day >= from && day <= options.today && (options.project === null || r.p === options.project);
  });
  const totals = emptyCounts();
  const totalSessions = new Set<string>();
  const perDay = new Map(dayList.map((day) => [day, { counts: emptyCounts(), sessions: new Set<string>() }]));
  const groups = new Map<
    string,
    { day: string; host: string; project: string | null; counts: Counts; sessions: Set<string> }
  >();
  const times = new Map<string, { host: string; event: string; ms: number[] }>();
  const projects = new Map<string | null, { counts: Counts; sessions: Set<string> }>();
  for (const record of records) {
    const day = dayOf(record);
    add(totals, record, totalSessions);
    const dayEntry = perDay.get(day)!;
    add(dayEntry.counts, record, dayEntry.sessions);
    const project = record.p ?? NO_PROJECT;
    let projectEntry = projects.get(project);
    if (!projectEntry) {
      projectEntry = { counts: emptyCounts(), sessions: new Set() };
      projects.set(project, projectEntry);
    }
    add(projectEntry.counts, record, projectEntry.sessions);
    const groupKey = `${day}\u0000${record.h}\u0000${project ?? ""}\u0000${project === null ? 0 : 1}`;
    let group = groups.get(groupKey);
    if (!group) {
      group = { day, host: record.h, project, counts: emptyCounts(), sessions: new Set() };
      groups.set(groupKey, group);
    }
    add(group.counts, record, group.sessions);
    const timeKey = `${record.h}\u0000${record.e}`;
    let time = times.get(timeKey);
    if (!time) {
      time = { host: record.h, event: record.e, ms: [] };
      times.set(timeKey, time);
    }
    time.ms.push(record.ms);
  }
  const hookTimes = [...times.values()]
    .map(({ host, event, ms }) => ({
      host,
      event,
      calls: ms.length,
      p50Ms: percentile(ms, 0.5),
      p99Ms: percentile(ms, 0.99),
    }))
    .sort((a, b) => b.calls - a.calls || (a.host + a.event < b.host + b.event ? -1 : 1));
  return {
    from,
    to: options.today,
    days: options.days,
    project: options.project,
    records: records.length,
    skipped: options.skipped ?? noneSkipped(),
    totals,
    loop: followLoop(records),
    hookTimes,
    perDay: dayList.map((day) => ({ day, ...perDay.get(day)!.counts })),
    perProject: [...projects]
      .map(([project, { counts }]) => ({ project, ...counts }))
      .sort((a, b) => b.hookCalls - a.hookCalls || ((a.project ?? "") < (b.project ?? "") ? -1 : 1)),
    groups: [...groups.values()]
      .sort((a, b) =>
        a.day !== b.day
          ? a.day < b.day
            ? -1
            : 1
          : a.host !== b.host
            ? a.host < b.host
              ? -1
              : 1
            : (a.project ?? "") < (b.project ?? "")
              ? -1
              : 1,
      )
      .map(({ day, host, project, counts }) => ({ day, host, project, ...counts })),
  };
}
