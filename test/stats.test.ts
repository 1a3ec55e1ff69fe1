// `velesdb-hooks stats` and the record each hook call appends (docs/stats.md): the
// aggregation on fixed records, the record file's bounds (size, age) and safety (an unsafe state
// directory, a planted link), VELESDB_HOOK_STATS=off beside its positive control, and then the
// compiled binary: a learning-loop session hook by hook, what `stats` and `stats --json` say
// about it, that no payload text reaches a record, `--reset`, doctor's and uninstall's lines.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  noted,
  noteDecision,
  noteHook,
  noteProject,
  noteStat,
  resetNoted,
  type StatsRecord,
} from "../src/core/stats-note.ts";
import { appendHookRecord, KEEP_DAYS, MAX_DAY_BYTES, MAX_LINE_BYTES, recordLine } from "../src/core/stats-record.ts";
import { parseRecordLine, percentile, recordPieces, summarise } from "../src/stats/aggregate.ts";
import { parseStatsArgs } from "../src/stats/command.ts";
import { MAX_READ_BYTES } from "../src/stats/files.ts";
import { renderSummary } from "../src/stats/render.ts";
import { bashPayload, fake, realisticLog } from "./support/compress-fixtures.ts";
import { loadPayload, makeSandbox, REPO_ROOT, runBinary, writeConfig, type Sandbox } from "./support/hook-runner.ts";
import { editPayload, recallPayload, stopPayload } from "./support/learning.ts";

const DAY_MS = 86_400_000;
const NOW = Date.parse("2026-12-02T12:00:00Z");
const day = (offset: number) => new Date(NOW - offset * DAY_MS).toISOString().slice(0, 10);
/** The real velesdb-memory 0.17.0 (crates.io, --features http), built by the CI cache step. */
const REAL_COMPILER = path.join(
  process.env.HOME ?? "/root",
  ".cache",
  "velesdb-hooks-ci",
  "velesdb-memory-0.17.0-http",
  "bin",
  "velesdb-memory",
);

let seq = 0;
/** rec({…}) → a record as the hooks write it, `t` seconds into the test day unless given. */
function rec(fields: Partial<StatsRecord> & { s?: string }): StatsRecord {
  return { v: 1, t: Math.floor(NOW / 1000) + seq++, h: "claude", e: "PreToolUse", ms: 10, ...fields } as StatsRecord;
}

describe("aggregation", () => {
  const records: StatsRecord[] = [
    // Session A: context, a refusal, a successful recall, the edit allowed: the loop working.
    rec({ e: "SessionStart", d: "addContext", p: "alpha", s: "A" }),
    rec({ e: "SessionStart", d: "addContext", p: "alpha", s: "A" }), // resumed: one session still
    rec({ d: "deny", g: "refused", p: "alpha", s: "A", ms: 20 }),
    rec({ e: "PostToolUse", r: "ok", p: "alpha", s: "A" }),
    rec({ g: "allowed", p: "alpha", s: "A" }),
    rec({ e: "Stop", d: "continue", ck: "sent", p: "alpha", s: "A" }),
    // Session B: refused, then only a failed recall.
    rec({ d: "deny", g: "refused", p: "alpha", s: "B" }),
    rec({ e: "PostToolUse", r: "failed", p: "alpha", s: "B" }),
    // Session C (codex): refused, recalled, never edited; a checkpoint asked but not delivered.
    rec({ h: "codex", d: "deny", g: "refused", p: "beta", s: "C" }),
    rec({ h: "codex", e: "PostToolUse", r: "ok", p: "beta", s: "C" }),
    rec({ h: "codex", e: "Stop", d: "pass", ck: "asked", p: "beta", s: "C" }),
    rec({ h: "codex", e: "Stop", d: "continue", ck: "sent", lost: 1, p: "beta", s: "C" }),
    // Session D: an allowed edit with no refusal before it is no loop at all.
    rec({ g: "allowed", p: "alpha", s: "D" }),
    // Compression, errors, timeouts; a record without project or session.
    rec({ e: "PostToolUse", c: "replaced", bi: 61_174, bo: 576, tk: 18_380, s: "A", p: "alpha" }),
    rec({ e: "PostToolUse", c: "passed", why: "below-threshold" }),
    rec({ e: "PostToolUse", c: "passed", why: "below-threshold" }),
    rec({ e: "PostToolUse", c: "passed", why: "signal-lost", to: 1 }),
    rec({ e: "PreToolUse", d: "deny", err: 1, p: "alpha" }),
    // Yesterday, and 8 days ago (outside a 7-day window).
    rec({ t: Math.floor((NOW - DAY_MS) / 1000), p: "alpha" }),
    rec({ t: Math.floor((NOW - 8 * DAY_MS) / 1000), g: "refused", p: "alpha", s: "OLD" }),
  ];
  const summary = summarise(records, { today: day(0), days: 7, project: null });

  test("totals count each event once, sessions with context once per session", () => {
    const t = summary.totals;
    expect(summary.records).toBe(records.length - 1);
    expect(t.sessionsWithContext).toBe(1);
    expect([t.editsRefused, t.editsAllowed]).toEqual([3, 2]);
    expect([t.recallsSuccessful, t.recallsFailed]).toEqual([2, 1]);
    expect([t.checkpointsAsked, t.checkpointsDelivered, t.answersLost]).toEqual([3, 1, 1]);
    expect([t.outputsReplaced, t.bytesBefore - t.bytesAfter, t.tokensSaved]).toEqual([1, 60_598, 18_380]);
    expect(t.passedByReason).toEqual({ "below-threshold": 2, "signal-lost": 1 });
    expect([t.errors, t.timeouts]).toEqual([1, 1]);
  });

  test("the loop is followed per session: refused → recalled → edited, recalled only, never recalled", () => {
    expect(summary.loop).toEqual({ refusedSessions: 3, recalledAndEdited: 1, recalledNoEdit: 1, neverRecalled: 1 });
    // Order matters: an edit allowed before the recall (another repository) does not close the loop.
    const reordered = summarise(
      [rec({ g: "refused", s: "E" }), rec({ g: "allowed", s: "E" }), rec({ r: "ok", s: "E" })],
      { today: day(0), days: 1, project: null },
    );
    expect(reordered.loop).toEqual({ refusedSessions: 1, recalledAndEdited: 0, recalledNoEdit: 1, neverRecalled: 0 });
  });

  test("per day, per host/project/day, and the days and project filters", () => {
    expect(summary.perDay.map((d) => d.day)).toEqual([6, 5, 4, 3, 2, 1, 0].map(day));
    expect(summary.perDay.at(-1)!.hookCalls).toBe(records.length - 2);
    expect(summary.perDay.at(-2)!.hookCalls).toBe(1);
    const codexToday = summary.groups.find((g) => g.host === "codex" && g.day === day(0))!;
    expect([codexToday.project, codexToday.hookCalls, codexToday.editsRefused]).toEqual(["beta", 4, 1]);
    expect(summary.groups.some((g) => g.project === null && g.outputsPassed === 3)).toBe(true);
    const beta = summarise(records, { today: day(0), days: 7, project: "beta" });
    expect([beta.records, beta.totals.editsRefused, beta.loop.recalledNoEdit]).toEqual([4, 1, 1]);
    const wide = summarise(records, { today: day(0), days: 9, project: null });
    expect(wide.totals.editsRefused).toBe(4);
    expect(summarise(records, { today: day(0), days: 7, project: "gamma" }).records).toBe(0);
  });

  test("hook time: nearest-rank p50 and p99 per host and event", () => {
    const ms = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(ms, 0.5), percentile(ms, 0.99), percentile([7], 0.99), percentile([], 0.5)]).toEqual([
      50, 99, 7, 0,
    ]);
    const times = summarise(
      ms.map((m) => rec({ e: "Stop", ms: m })),
      { today: day(0), days: 1, project: null },
    ).hookTimes;
    expect(times).toEqual([{ host: "claude", event: "Stop", calls: 100, p50Ms: 50, p99Ms: 99 }]);
  });

  test("a torn or foreign line is no record", () => {
    const line = recordLine({ v: 1, t: 0, h: "claude", e: "Stop", ms: 0, d: "pass" }, NOW, 8.123);
    expect(parseRecordLine(line.trim())).toMatchObject({ v: 1, h: "claude", e: "Stop", d: "pass", ms: 8.12 });
    const forged = [
      '{"v":1,"t":1,"h":"\u001b[31mx","e":"y","ms":1}',
      '{"v":1,"t":1,"h":"x","e":"y","ms":"1"}',
      '{"v":1,"t":1,"h":"x","e":"y","ms":1,"tk":"9"}',
    ];
    for (const bad of [line.slice(0, 20), "{}", "[1]", '{"v":2,"t":1,"h":"x","e":"y","ms":1}', "not json", ...forged])
      expect(parseRecordLine(bad)).toBeUndefined();
  });

  test("the screen: totals, hook time and a chart, no escape code unless colour is asked for", () => {
    const plain = renderSummary(summary, { colour: false, where: "/state/stats" });
    expect(plain).toContain(
      "guard        3 edits refused in 3 sessions: 1 then recalled and edited, 1 recalled without editing, 1 never recalled",
    );
    expect(plain).toContain(
      "compression  1 output replaced, 3 passed through (2 below-threshold, 1 signal-lost); 60 598 bytes and 18 380 tokens",
    );
    expect(plain).toContain("checkpoints  3 asked at Stop, 1 delivered");
    expect(plain).toMatch(/^ {2}12-02 #{30} +18 {2}3 \/ 2 \/ 1 \/ 18\.4k$/m);
    expect(plain).not.toContain("\u001b[");
    // Positive control: the same summary for a terminal is coloured.
    expect(renderSummary(summary, { colour: true, where: "/state/stats" })).toContain("\u001b[36m");
    expect(plain.split("\n").length).toBeLessThan(40);
  });

  test("the screen names each project, most hook calls first, as a JSON string; --project shows only its own header", () => {
    const plain = renderSummary(summary, { colour: false, where: "/state/stats" });
    const section = plain.slice(plain.indexOf("per project"), plain.indexOf("per day"));
    expect(section.split("\n").filter((line) => line.startsWith("  "))).toEqual([
      `  ${'"alpha"'.padEnd(32)}      12  2 / 1 / 1 / 18.4k`,
      `  ${'"beta"'.padEnd(32)}       4  1 / 1 / 0 / 0`,
      `  ${"(no project)".padEnd(32)}       3  0 / 0 / 0 / 0`,
    ]);
    const beta = summarise(records, { today: day(0), days: 7, project: "beta" });
    expect(renderSummary(beta, { colour: false, where: "/state/stats" })).not.toContain("per project");
  });

  test("a project name with controls and bidi overrides is escaped on the screen, and cut at 40 characters first", () => {
    const hostile = `evil\u0085\u001b[2J\u202egnp.exe\u2066${"x".repeat(60)}`;
    const plain = renderSummary(
      summarise([rec({ p: hostile }), rec({ p: "plain" })], { today: day(0), days: 1, project: null }),
      { colour: false, where: "/state/stats" },
    );
    expect(plain).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(plain).toContain('"evil\\u0085\\u001b[2J\\u202egnp.exe\\u2066xxxx');
    expect(plain).toContain('x…"');
    // Positive control: the name did hold them, and a plain one is shown as it is.
    expect(hostile).toMatch(/[\u0085\u202e]/);
    expect(plain).toContain('  "plain"');
  });

  test('a compression reason named "constructor" or "__proto__" counts from zero, not from Object.prototype', () => {
    const odd = summarise(
      [
        rec({ e: "PostToolUse", c: "passed", why: "constructor" }),
        rec({ e: "PostToolUse", c: "passed", why: "__proto__" }),
        rec({ e: "PostToolUse", c: "passed", why: "below-threshold" }),
      ],
      { today: day(0), days: 1, project: null },
    );
    expect(Object.entries(odd.totals.passedByReason).sort()).toEqual([
      ["__proto__", 1],
      ["below-threshold", 1],
      ["constructor", 1],
    ]);
    expect(renderSummary(odd, { colour: false, where: "/s" })).toContain(
      "3 passed through (1 constructor, 1 __proto__, 1 below-threshold)",
    );
  });

  test('every record the hooks write starts {"v": (the reader splits a cut record from the next one there)', () => {
    resetNoted();
    noteHook("claude", "Stop", "s1");
    noteProject({ project: '{"v":1,"t":1}' });
    const line = recordLine(noted, NOW, 1);
    expect(line.startsWith('{"v":1,')).toBe(true);
    // A project name spelling a record's start stays inside its string: one piece, one record.
    expect(recordPieces(line)).toEqual([line.trimEnd()]);
    resetNoted();
  });

  test("arguments: --days, --project, --json, --reset alone; anything else is a usage error", () => {
    expect(parseStatsArgs(["--days", "3", "--project=alpha", "--json"])).toEqual({
      ok: true,
      options: { days: 3, project: "alpha", json: true, reset: false },
    });
    for (const bad of [
      ["--days", "0"],
      ["--days", "x"],
      ["--days"],
      ["--project", ""],
      ["--reset", "--json"],
      ["--colour"],
      ["extra"],
    ]) {
      expect(parseStatsArgs(bad).ok).toBe(false);
    }
  });
});

describe("the record file", () => {
  let box: Sandbox;
  let env: Record<string, string>;
  const statsDir = () => path.join(box.stateDir, "stats");
  const dayFile = (offset = 0) => path.join(statsDir(), `${day(offset)}.jsonl`);
  beforeEach(() => {
    box = makeSandbox("stats-file");
    env = box.env;
    resetNoted();
  });
  afterEach(() => box.cleanup());

  test("the first record creates the state and stats directories 0700 and the day's file 0600; later ones append", () => {
    expect(appendHookRecord(env, { nowMs: NOW, durationMs: 5 })).toBe(true);
    expect(appendHookRecord(env, { nowMs: NOW + 1000, durationMs: 6 })).toBe(true);
    expect(fs.statSync(box.stateDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(statsDir()).mode & 0o777).toBe(0o700);
    expect(fs.statSync(dayFile()).mode & 0o777).toBe(0o600);
    expect(
      fs
        .readFileSync(dayFile(), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => parseRecordLine(l)?.ms),
    ).toEqual([5, 6]);
  });

  test("size: a day's file at its bound takes no more records", () => {
    fs.mkdirSync(statsDir(), { recursive: true, mode: 0o700 });
    fs.chmodSync(box.stateDir, 0o700);
    fs.writeFileSync(dayFile(), "x".repeat(MAX_DAY_BYTES - 1), { mode: 0o600 });
    expect(appendHookRecord(env, { nowMs: NOW })).toBe(true); // Positive control: one byte under.
    const size = fs.statSync(dayFile()).size;
    expect(appendHookRecord(env, { nowMs: NOW })).toBe(false);
    expect(fs.statSync(dayFile()).size).toBe(size);
  });

  test("age: the first record of a day removes day files older than the kept days, and nothing else", () => {
    fs.mkdirSync(statsDir(), { recursive: true, mode: 0o700 });
    fs.chmodSync(box.stateDir, 0o700);
    for (const offset of [40, KEEP_DAYS, KEEP_DAYS - 1, 1]) fs.writeFileSync(dayFile(offset), "", { mode: 0o600 });
    fs.writeFileSync(path.join(statsDir(), "notes.txt"), "mine");
    expect(appendHookRecord(env, { nowMs: NOW })).toBe(true);
    expect(fs.readdirSync(statsDir()).sort()).toEqual(
      [`${day(KEEP_DAYS - 1)}.jsonl`, `${day(1)}.jsonl`, `${day(0)}.jsonl`, "notes.txt"].sort(),
    );
    // Only the day's first record lists the directory: an old file that appears later stays until tomorrow.
    fs.writeFileSync(dayFile(40), "", { mode: 0o600 });
    expect(appendHookRecord(env, { nowMs: NOW })).toBe(true);
    expect(fs.existsSync(dayFile(40))).toBe(true);
  });

  test("an unsafe state directory, a linked stats directory or day file: nothing written, nothing followed", () => {
    fs.mkdirSync(box.stateDir, { mode: 0o755 });
    fs.chmodSync(box.stateDir, 0o755);
    expect(appendHookRecord(env, { nowMs: NOW })).toBe(false);
    expect(fs.readdirSync(box.stateDir)).toEqual([]);
    fs.chmodSync(box.stateDir, 0o700);
    const elsewhere = path.join(box.root, "elsewhere");
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, statsDir());
    expect(appendHookRecord(env, { nowMs: NOW })).toBe(false);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    fs.unlinkSync(statsDir());
    fs.mkdirSync(statsDir(), { mode: 0o700 });
    const target = path.join(elsewhere, "target");
    fs.writeFileSync(target, "");
    fs.symlinkSync(target, dayFile());
    expect(appendHookRecord(env, { nowMs: NOW })).toBe(false);
    expect(fs.readFileSync(target, "utf8")).toBe("");
    // Positive control: with the link gone, the same call writes.
    fs.unlinkSync(dayFile());
    expect(appendHookRecord(env, { nowMs: NOW })).toBe(true);
  });

  test("VELESDB_HOOK_STATS=off writes nothing (and creates nothing); unset or any other value records", () => {
    expect(appendHookRecord({ ...env, VELESDB_HOOK_STATS: "off" }, { nowMs: NOW })).toBe(false);
    expect(fs.existsSync(box.stateDir)).toBe(false);
    expect(appendHookRecord({ ...env, VELESDB_HOOK_STATS: "on" }, { nowMs: NOW })).toBe(true);
    expect(fs.readFileSync(dayFile(), "utf8").split("\n").filter(Boolean)).toHaveLength(1);
  });

  test("a rule that threw is recorded as an error, with the kind of answer its failure policy gave", () => {
    noteHook("claude", "PreToolUse", "s1");
    noteDecision({ kind: "deny", reason: "internal error" }, "error");
    expect(parseRecordLine(recordLine(noted, NOW, 1))).toMatchObject({
      h: "claude",
      e: "PreToolUse",
      d: "deny",
      err: 1,
    });
    resetNoted();
    noteDecision({ kind: "pass" });
    expect(parseRecordLine(recordLine(noted, NOW, 1))!.err).toBeUndefined();
  });

  test("a record line stays under its bound whatever the project name, and holds every fact", () => {
    noteHook("windsurf", "post_mcp_tool_use", "s".repeat(5000));
    noteProject({ project: '\u0001"\\\u2028'.repeat(200) });
    noteDecision({ kind: "summariserInstructions", text: "x" }, "error");
    noteStat("guard", "refused");
    noteStat("recall", "failed");
    noteStat("checkpoint", "asked");
    noteStat("timeout", true);
    noteStat("answerLost", true);
    noteStat("compression", { outcome: "replaced", bytesIn: 1e9, bytesOut: 1e9, tokensSaved: 1e9 });
    const line = recordLine(noted, NOW * 1000, 1e9);
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MAX_LINE_BYTES);
    expect(line.endsWith("\n") && line.indexOf("\n") === line.length - 1).toBe(true);
    const parsed = JSON.parse(line);
    expect(parsed.p.length).toBe(120);
    expect(parsed.s).toMatch(/^[0-9a-z]{1,7}$/);
    expect(Object.keys(parsed).sort()).toEqual([
      "bi",
      "bo",
      "c",
      "ck",
      "d",
      "e",
      "err",
      "g",
      "h",
      "lost",
      "ms",
      "p",
      "r",
      "s",
      "t",
      "tk",
      "to",
      "v",
    ]);
  });
});

describe("the compiled binary", () => {
  let box: Sandbox;
  let repo: string;
  const run = (args: string[], payload: Record<string, unknown> | string, extra: Record<string, string> = {}) =>
    runBinary(args, payload, { env: { ...box.env, VELESDB_HOOK_FRESHNESS: "off", ...extra }, cwd: box.root });
  const stats = (args: string[] = [], extra: Record<string, string> = {}) => run(["stats", ...args], "", extra);
  const records = (): StatsRecord[] => {
    const dir = path.join(box.stateDir, "stats");
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .flatMap((f) => fs.readFileSync(path.join(dir, f), "utf8").split("\n").filter(Boolean))
      .map((l) => parseRecordLine(l)!);
  };
  beforeEach(() => {
    box = makeSandbox("stats-bin");
    repo = path.join(box.root, "repo");
    fs.mkdirSync(path.join(repo, "src"), { recursive: true });
    writeConfig(repo, { project: "stats-proj", enforce_learning_loop: true });
  });
  afterEach(() => box.cleanup());

  /** One Claude session through the loop: start, refused edit, recall, the edit, Stop, a small Bash result. */
  function claudeSession(session: string): void {
    const target = path.join(repo, "src", "a.ts");
    run(
      ["claude", "session-start"],
      loadPayload("claude", "session-start.startup", { session_id: session, cwd: repo }),
    );
    expect(run(["claude", "pre-tool-use"], editPayload("claude", session, repo, [target])).stdout).toContain('"deny"');
    run(["claude", "post-tool-use"], recallPayload("claude", session, repo));
    expect(run(["claude", "pre-tool-use"], editPayload("claude", session, repo, [target])).stdout).toBe("{}\n");
    expect(run(["claude", "stop"], stopPayload("claude", session, repo)).stdout).toContain("Learning checkpoint");
    run(
      ["claude", "post-tool-use"],
      loadPayload("claude", "post-tool-use.bash-small", { session_id: session, cwd: repo }),
    );
  }

  test("a session's hooks each leave one record with the event's facts, and stats counts them", () => {
    claudeSession("stats-session-1");
    const got = records();
    expect(got.map((r) => [r.e, r.d, r.g ?? r.r ?? r.ck ?? r.why ?? "", r.p ?? ""])).toEqual([
      ["SessionStart", "addContext", "", "stats-proj"],
      ["PreToolUse", "deny", "refused", "stats-proj"],
      ["PostToolUse", "pass", "ok", "stats-proj"],
      ["PreToolUse", "pass", "allowed", "stats-proj"],
      ["Stop", "continue", "sent", "stats-proj"],
      ["PostToolUse", "pass", "below-threshold", ""],
    ]);
    expect(new Set(got.map((r) => r.s)).size).toBe(1);
    const json = JSON.parse(stats(["--json"]).stdout);
    expect(json.totals).toMatchObject({
      hookCalls: 6,
      sessionsWithContext: 1,
      editsRefused: 1,
      editsAllowed: 1,
      recallsSuccessful: 1,
      checkpointsAsked: 1,
      checkpointsDelivered: 1,
    });
    expect(json.loop).toEqual({ refusedSessions: 1, recalledAndEdited: 1, recalledNoEdit: 0, neverRecalled: 0 });
    expect(json.recordsDirectory).toBe(path.join(box.stateDir, "stats"));
    const screen = stats();
    expect(screen.exitCode).toBe(0);
    expect(screen.stdout).toContain("1 edit refused in 1 session: 1 then recalled and edited");
    expect(screen.stdout).not.toContain("\u001b[");
    expect(stats(["--project", "stats-proj", "--json"]).stdout).toContain('"hookCalls": 5');
    expect(stats(["--project", "elsewhere"]).stdout).toBe(
      `no stats records for project "elsewhere" in the last 7 days (${path.join(box.stateDir, "stats")})\n`,
    );
  });

  test("no payload text reaches a record: not the command, the output, the file content, the paths or the session id", () => {
    const secret = "sk-live-7f3a9c1e2b";
    const session = `session-${secret}`;
    const payload = bashPayload(`${secret}\n`.repeat(3), {
      cwd: repo,
      sessionId: session,
      response: { stderr: secret },
    });
    (payload.tool_input as Record<string, unknown>).command = `echo ${secret}`;
    run(["claude", "post-tool-use"], payload);
    run(["claude", "pre-tool-use"], {
      ...editPayload("claude", session, repo, [path.join(repo, `${secret}.ts`)]),
      tool_input: { file_path: path.join(repo, `${secret}.ts`), content: secret },
    });
    const text = fs
      .readdirSync(path.join(box.stateDir, "stats"))
      .map((f) => fs.readFileSync(path.join(box.stateDir, "stats", f), "utf8"))
      .join("");
    expect(text.split("\n").filter(Boolean)).toHaveLength(2);
    for (const leak of [secret, repo, box.root, "echo"]) expect(text).not.toContain(leak);
    // Positive control: the payloads did carry it.
    expect(JSON.stringify(payload)).toContain(secret);
  });

  test("a compressed Bash output is counted with its bytes and tokens (the real velesdb-memory 0.17 compiler)", () => {
    if (!fs.existsSync(REAL_COMPILER)) {
      // The compiler is built by CI's cache step; without it this case cannot run here.
      expect(process.env.CI).not.toBe("true");
      return;
    }
    const log = realisticLog(40_000);
    const answer = run(["claude", "post-tool-use"], bashPayload(log, { cwd: repo, sessionId: "stats-compress" }), {
      VELESDB_MEMORY_BIN: REAL_COMPILER,
    });
    expect(answer.stdout).toContain("updatedToolOutput");
    const replaced = records().find((r) => r.c === "replaced")!;
    expect(replaced.bi).toBe(Buffer.byteLength(log));
    expect(replaced.bo!).toBeLessThan(replaced.bi! / 4);
    expect(replaced.tk!).toBeGreaterThan(1000);
    const json = JSON.parse(stats(["--json"]).stdout);
    expect(json.totals).toMatchObject({
      outputsReplaced: 1,
      tokensSaved: replaced.tk,
      bytesBefore: replaced.bi,
      bytesAfter: replaced.bo,
    });
    // Negative control: without a compiler the same output passes, and says why.
    run(["claude", "post-tool-use"], bashPayload(log, { cwd: repo, sessionId: "stats-compress" }), {
      PATH: "/nonexistent",
    });
    expect(records().at(-1)).toMatchObject({ c: "passed", why: "no-compiler" });
  });

  test("a compiler that hangs: the watchdog's deadline is counted as a timeout, the output as passed (no-compiler)", () => {
    const log = realisticLog(40_000);
    run(["claude", "post-tool-use"], bashPayload(log, { cwd: repo, sessionId: "stats-hang" }), {
      VELESDB_MEMORY_BIN: fake("hangs"),
      VELESDB_HOOK_PROBE_TIMEOUT: "1",
    });
    expect(records().at(-1)).toMatchObject({ c: "passed", why: "no-compiler", to: 1 });
    expect(JSON.parse(stats(["--json"]).stdout).totals.timeouts).toBe(1);
    // Control: a compiler that answers at once is no timeout.
    run(["claude", "post-tool-use"], bashPayload(log, { cwd: repo, sessionId: "stats-low" }), {
      VELESDB_MEMORY_BIN: fake("low"),
    });
    expect(records().at(-1)!.to).toBeUndefined();
  });

  test("VELESDB_HOOK_STATS=off: the hooks answer the same and record nothing; the control records", () => {
    const payload = editPayload("claude", "off-session", repo, [path.join(repo, "src", "a.ts")]);
    const off = run(["claude", "pre-tool-use"], payload, { VELESDB_HOOK_STATS: "off" });
    expect(fs.existsSync(path.join(box.stateDir, "stats"))).toBe(false);
    const on = run(["claude", "pre-tool-use"], payload);
    expect(on.stdout).toBe(off.stdout);
    expect(records()).toHaveLength(1);
    expect(stats([], { VELESDB_HOOK_STATS: "off" }).stdout).toContain("recording is off (VELESDB_HOOK_STATS=off)");
  });

  test("--reset removes the records and says where; stats then says there are none; doctor and uninstall name the place", () => {
    const where = path.join(box.stateDir, "stats");
    expect(stats().stdout).toBe(`no stats records in the last 7 days (${where})\n`);
    claudeSession("stats-session-2");
    const doctor = run(["doctor"], "");
    expect(doctor.stdout).toMatch(
      new RegExp(
        `^stats: +${where.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: 1 day file, \\d+ B, ${day(0).slice(0, 4)}`,
        "m",
      ),
    );
    const uninstall = run(["uninstall", "--client", "claude"], "");
    expect(uninstall.stdout).toContain(
      `stats records kept (your history): ${where}; \`velesdb-hooks stats --reset\` removes them`,
    );
    expect(records().length).toBeGreaterThan(0);
    const reset = stats(["--reset"]);
    expect(reset.stdout).toMatch(
      new RegExp(`^removed 1 stats file \\(\\d+ B\\) from ${where.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n$`),
    );
    expect(fs.existsSync(where)).toBe(false);
    expect(stats().stdout).toBe(`no stats records in the last 7 days (${where})\n`);
    expect(stats(["--reset"]).stdout).toBe(`no stats records to remove (${where})\n`);
    expect(run(["doctor"], "").stdout).toContain(`stats:     ${where}: no records yet`);
  });

  test("a usage error exits 64 with one line", () => {
    const bad = stats(["--days", "0"]);
    expect([bad.exitCode, bad.stdout, bad.stderr]).toEqual([
      64,
      "",
      "velesdb-hooks: --days needs a whole number of days from 1 to 366\n",
    ]);
  });
});

describe("hostile day files (docs/hardening.md §4.7)", () => {
  let box: Sandbox;
  const statsDir = () => path.join(box.stateDir, "stats");
  /** Today's file, the day `stats` reads by the real clock. */
  const todayFile = () => path.join(statsDir(), `${new Date().toISOString().slice(0, 10)}.jsonl`);
  const line = (fields: Record<string, unknown> = {}) =>
    JSON.stringify({ v: 1, t: Math.floor(Date.now() / 1000), h: "claude", e: "Stop", ms: 4, d: "pass", ...fields });
  const stats = (args: string[] = [], cwd?: string) =>
    runBinary(["stats", ...args], "", { env: { ...box.env, VELESDB_HOOK_FRESHNESS: "off" }, cwd: cwd ?? box.root });
  beforeEach(() => {
    box = makeSandbox("stats-hostile");
    fs.mkdirSync(statsDir(), { recursive: true, mode: 0o700 });
    fs.chmodSync(box.stateDir, 0o700);
  });
  afterEach(() => box.cleanup());

  test("records with an impossible time are skipped and counted; the rest of the screen is whole, exit 0", () => {
    const impossible = [1e20, -5, 1.5, "2026-13-45T99:99:99Z"].map((t) => line({ t }));
    fs.writeFileSync(todayFile(), `${[line(), ...impossible, line({ e: "SessionStart" })].join("\n")}\n`, {
      mode: 0o600,
    });
    const screen = stats();
    expect([screen.exitCode, screen.stderr]).toEqual([0, ""]);
    expect(screen.stdout).toContain("  hook calls   2; 0 errors");
    expect(screen.stdout).toContain("  skipped      4 records: 4 with an impossible time\n");
    expect(screen.stdout).toContain("per day (hook calls;");
    const json = JSON.parse(stats(["--json"]).stdout);
    expect([json.records, json.skipped]).toEqual([2, { unreadable: 0, impossibleTime: 4 }]);
    // Control: without them nothing is said to be skipped.
    fs.writeFileSync(todayFile(), `${line()}\n`);
    expect(stats().stdout).not.toContain("skipped");
  });

  test("a crash of stats exits 1 with one line (a fault injected from source)", () => {
    // From source with a preload that makes every date's toISOString throw: stats needs it for today's day.
    const preload = path.join(box.root, "fault.ts");
    fs.writeFileSync(preload, 'Date.prototype.toISOString = () => { throw new Error("injected fault"); };\n');
    const bun = path.join(REPO_ROOT, "node_modules", ".bin", "bun");
    const run = Bun.spawnSync([bun, "--preload", preload, path.join(REPO_ROOT, "src", "cli.ts"), "stats"], {
      env: box.env,
      cwd: box.root,
    });
    expect(run.stderr.toString()).toBe("velesdb-hooks: internal error: injected fault\n");
    expect(run.exitCode).toBe(1);
  });

  test("a state directory below a regular file: one line, exit 1, for stats and doctor alike", () => {
    const env = { ...box.env, VELESDB_HOOKS_STATE_DIR: path.join(todayFile(), "state") };
    fs.writeFileSync(todayFile(), `${line()}\n`, { mode: 0o600 });
    const run = runBinary(["stats"], "", { env, cwd: box.root });
    expect([run.exitCode, run.stdout]).toEqual([1, ""]);
    expect(run.stderr).toBe(
      `velesdb-hooks: stats not read: the state directory ${env.VELESDB_HOOKS_STATE_DIR} cannot be inspected (ENOTDIR)\n`,
    );
    const doctor = runBinary(["doctor"], "", { env: { ...env, VELESDB_HOOK_FRESHNESS: "off" }, cwd: box.root });
    expect(doctor.stderr).not.toContain("internal error");
    expect(doctor.stdout).toContain("stats:     not recorded: the state directory");
  });

  test("stats --json escapes the C1 and bidi controls of a repository's directory name, as the screen does", () => {
    // The default project is the directory's name, whatever it holds (src/core/identity.ts).
    const name = "repo\u0085\u202egnp.exe\u2066x\u009b2J";
    const repo = path.join(box.root, name);
    fs.mkdirSync(repo);
    runBinary(
      ["claude", "session-start"],
      loadPayload("claude", "session-start.startup", { session_id: "b1", cwd: repo }),
      {
        env: { ...box.env, VELESDB_HOOK_FRESHNESS: "off" },
        cwd: repo,
      },
    );
    // Positive control: the record holds the raw name.
    expect(fs.readFileSync(todayFile(), "utf8")).toContain(name);
    const RAW = /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;
    const json = stats(["--json"]);
    expect(json.stdout).not.toMatch(RAW);
    expect(json.stdout).toContain('"project": "repo\\u0085\\u202egnp.exe\\u2066x\\u009b2J"');
    expect(JSON.parse(json.stdout).perProject.map((p: { project: string }) => p.project)).toEqual([name]);
    const screen = stats();
    expect(screen.stdout).not.toMatch(RAW);
    expect(screen.stdout).toContain('  "repo\\u0085\\u202egnp.exe\\u2066x\\u009b2J"');
    const only = stats(["--project", name]);
    expect(only.stdout).not.toMatch(RAW);
    expect(only.stdout).toContain('project "repo\\u0085');
  });

  test("a record cut by a full disk does not take the next appended record with it", () => {
    // What a write that ran out of space leaves: the start of a record, no newline.
    const whole = line({ e: "SessionStart", d: "addContext", s: "a" });
    fs.writeFileSync(todayFile(), `${whole}\n${line({ g: "refused" }).slice(0, 37)}`, { mode: 0o600 });
    // The next hook appends its record right after it, as every hook does (O_APPEND).
    runBinary(
      ["claude", "session-start"],
      loadPayload("claude", "session-start.startup", { session_id: "after-full-disk", cwd: box.workspace }),
      { env: { ...box.env, VELESDB_HOOK_FRESHNESS: "off" }, cwd: box.workspace },
    );
    const text = fs.readFileSync(todayFile(), "utf8");
    expect(text.split("\n").filter(Boolean)).toHaveLength(2); // The cut record and the new one share a line.
    const json = JSON.parse(stats(["--json"]).stdout);
    expect([json.records, json.totals.sessionsWithContext]).toEqual([2, 2]);
    expect(json.skipped).toEqual({ unreadable: 1, impossibleTime: 0 });
    expect(stats().stdout).toContain("  skipped      1 record: 1 not a whole record (cut by a full disk");
  });

  test("a day file over the read limit is named with its size, never read as no records", () => {
    const big = todayFile();
    fs.writeFileSync(big, "", { mode: 0o600 });
    fs.truncateSync(big, 100 * 1024 * 1024); // Sparse: 100 MB on paper, nothing on disk.
    const notRead = `not read: ${big} is 100.0 MB, over the read limit of 2.3 MB (the hooks stop a day's file at 2.0 MB)`;
    const alone = stats();
    expect(alone.stdout).toBe(`no stats records in the last 7 days (${statsDir()})\n${notRead}\n`);
    expect(alone.exitCode).toBe(0);
    // Beside a day that reads: the screen shows its records and still names the file.
    const yesterday = path.join(statsDir(), `${new Date(Date.now() - DAY_MS).toISOString().slice(0, 10)}.jsonl`);
    fs.writeFileSync(yesterday, `${line({ t: Math.floor(Date.now() / 1000) - 86_400 })}\n`, { mode: 0o600 });
    const screen = stats();
    expect(screen.stdout).toContain(`\n${notRead}\n`);
    expect(screen.stdout).toContain("  hook calls   1;");
    expect(JSON.parse(stats(["--json"]).stdout).filesNotRead).toEqual([
      { file: big, problem: notRead.slice(`not read: ${big} `.length) },
    ]);
    // Control: at the limit exactly, the file is read.
    fs.truncateSync(big, 0);
    fs.writeFileSync(big, `${line()}\n`.padEnd(MAX_READ_BYTES, "\n"));
    expect(fs.statSync(big).size).toBe(MAX_READ_BYTES);
    const read = stats().stdout;
    expect(read).not.toContain("not read");
    expect(read).toContain("  hook calls   2;");
  });
});

test("no hook evaluates the stats command: it is a lazy chunk of its own, reached only by `stats`", async () => {
  const built = await Bun.build({
    entrypoints: [path.join(import.meta.dir, "..", "src", "cli.ts")],
    target: "bun",
    format: "esm",
    splitting: true,
    metafile: true,
  });
  expect(built.success).toBe(true);
  const outputs = built.metafile!.outputs as Record<
    string,
    { imports: Array<{ path: string; kind: string }>; inputs: Record<string, unknown>; entryPoint?: string }
  >;
  const key = (p: string) => Object.keys(outputs).find((name) => path.posix.basename(name) === path.posix.basename(p))!;
  const eager = new Set<string>();
  const queue = [Object.keys(outputs).find((name) => outputs[name]!.entryPoint?.endsWith("src/cli.ts"))!];
  while (queue.length > 0) {
    const chunk = queue.pop()!;
    if (eager.has(chunk)) continue;
    eager.add(chunk);
    for (const to of outputs[chunk]!.imports) if (to.kind === "import-statement") queue.push(key(to.path));
  }
  const eagerSources = [...eager].flatMap((chunk) => Object.keys(outputs[chunk]!.inputs));
  expect(eagerSources).toContain("src/core/stats-record.ts");
  expect(eagerSources.filter((source) => source.startsWith("src/stats/"))).toEqual([]);
  // Positive control: the command's modules are in the build, behind the dynamic import.
  expect(Object.values(outputs).flatMap((o) => Object.keys(o.inputs))).toContain("src/stats/command.ts");
});
