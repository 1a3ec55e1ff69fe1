// Memory that comes back without the model's help (docs/working-context.md#loaded-by-the-hook and
// #saved-by-the-hook, docs/real-server.md#the-memory-proofs,
// docs/performance/2026-12-04-memory-by-hooks.md), on the real Claude Code and Codex CLIs with
// the REAL velesdb-memory 0.17.0 (VELESDB_MEMORY_BIN_REAL), wired by our installer
// (`install --client claude|codex --mcp`, VELESDB_MEMORY_BIN = the real binary), and a model
// that never calls a memory tool (disobedient-model.ts: it runs its command, answers, and
// ignores every hook text).
// - The chain, in one HOME (one store) and one repository: session one (Claude) runs a command
//   and answers with a marker, then stops; its Stop hook saves the compiled transcript. Session
//   two (Claude, a new session id) and session three (Codex) find the marker in their FIRST model
//   request, in the SessionStart context the hook loaded. Session two does other work and never
//   repeats the marker, and its own Stop saves its compiled transcript: what session three loads
//   must still carry what session two was handed.
// - Negative controls: a session of another repository (another project) in the same HOME never
//   sees the marker; the same chain with the server wired but our hooks not installed brings
//   nothing back.
// - Fail open: the server stopped (SIGSTOP) past a short VELESDB_HOOKS_LOAD_MS, the mcp runtime
//   directory replaced by a link, the front's record garbage, the server gone, and a store no
//   front was ever set up for (the server wired directly): each session still starts and its
//   first request carries today's instruction, load_working_context(project=…), with one stderr
//   line naming why (none for the store never set up).
// - The cost (item 4, "the loop stays cheap"): model requests and memory tool calls per session,
//   with our hooks and without, printed as a table; a resumed session needs no tool call.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { mcpRuntimeDirectory } from "../../src/core/mcp-runtime.ts";
import { describeWithReal, realBinary } from "../support/real-velesdb-memory.ts";
import { brokersIn, killTree, serversOn, until } from "../support/mcp-session.ts";
import { assertOffline, exitedCleanly, once, toolAnswerTexts } from "./checks.ts";
import { claudeDisobedient, codexDisobedient, type Chore } from "./disobedient-model.ts";
import {
  claudeSessionId,
  createCase,
  e2eSuite,
  E2E_PROJECT,
  installWithMcp,
  wireServerDirectly,
  writeClaudeServer,
  installedHooksBin,
  registerHooks,
  runClaude,
  runCodex,
  storeReleased,
  shellQuote,
  spiedRuns,
  spyOnInstalledHooks,
  type E2ECase,
  type Mode,
  type RunResult,
} from "./harness.ts";
import type { LoggedRequest } from "./mock-llm.ts";
import { claudeModel, claudeView, codexView, grammarWork, type Work } from "./obedient-model.ts";

// The brokers our sessions started outlive them by an idle grace (docs/shared-memory.md "Idle
// exit"); they and their servers go with the case, by pid.
const suite = e2eSuite({ beforeRemove: (c) => brokersIn(runtimeDirOf(c)).forEach(killTree) });

/** Every host run: bounded, and the sessions run one after the other (one velesdb-memory holds ~465 MB). */
const RUN = { timeoutMs: 120_000 };

/** The broker's runtime directory of the case's HOME, as the hooks and the front name it (src/core/mcp-runtime.ts). */
const runtimeDirOf = (c: E2ECase): string => mcpRuntimeDirectory({ HOME: c.home }).dir;
/** The store: velesdb-memory 0.17.0's default, $HOME/.velesdb-memory (no VELESDB_MEMORY_PATH here). */
const storeOf = (c: E2ECase): string => path.join(c.home, ".velesdb-memory");

/**
 * tappedServer(c) → what install --mcp is given as VELESDB_MEMORY_BIN: a sh script that runs the
 * real velesdb-memory with every line its client sends also appended to `<case>/server-in.log`,
 * so the calls the hooks make themselves can be counted beside the model's. The server is the
 * real one, unchanged; its answers are not touched.
 */
function tappedServer(c: E2ECase): { bin: string; log: string } {
  const bin = path.join(c.root, "bin", "velesdb-memory");
  const log = path.join(c.root, "server-in.log");
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  fs.writeFileSync(log, "");
  fs.writeFileSync(bin, `#!/bin/sh\ntee -a ${shellQuote(log)} | ${shellQuote(realBinary())} "$@"\n`, { mode: 0o755 });
  return { bin, log };
}

/** Wires both hosts in the case's HOME: our installer (hooks + --mcp), or the server entry alone, as install writes it. */
function wire(c: E2ECase, mode: Mode, server: string): void {
  if (mode === "hooks") {
    registerHooks(c, "codex"); // hooks and the trust state a user's /hooks approval writes; --mcp appends its table
    installWithMcp(c, ["claude", "codex"], server);
    return;
  }
  wireServerDirectly(c, server, { codexWaits: true });
}

// ---- What the sessions do ----------------------------------------------------------------------

/** Session one's work: a command whose output states a finding, and an answer repeating it. */
const findingOf = (marker: string): string => `guarded.txt is generated from parser.txt by make regen (${marker})`;
const workChore = (marker: string): Chore => ({
  command: `printf '%s\\n' ${shellQuote(findingOf(marker))}`,
  answer: `Found it: ${findingOf(marker)}.`,
});

/** A later session's own work, unrelated to the marker: it neither needs nor repeats what it was handed. */
const otherChore: Chore = { command: "ls -a", answer: "Listed the repository; nothing to change." };

/** The obedient model's work for the cost rows (what it saves when the Stop text asks). */
const obedientWork = (marker: string): Work => grammarWork(findingOf(marker));

// ---- Reading a session ---------------------------------------------------------------------------

/** startContext(req) → the SessionStart text of a request (Claude: the system message; Codex: the developer items). */
const startContext = (req: LoggedRequest): string =>
  Array.isArray(req.body?.messages) ? claudeView(req).sessionStart : codexView(req).sessionStart;

/** memoryCallsByModel(r) → the memory tools the model called in the session, in order (Claude tool_use, Codex namespaced function_call). */
function memoryCallsByModel(r: RunResult): string[] {
  const calls = new Map<string, string>();
  for (const q of r.requests) {
    for (const m of Array.isArray(q.body?.messages) ? q.body.messages : [])
      for (const b of Array.isArray(m?.content) ? m.content : [])
        if (b?.type === "tool_use" && /^mcp__velesdb[-_]memory__/.test(b.name ?? ""))
          calls.set(String(b.id), b.name.replace(/^mcp__velesdb[-_]memory__/, ""));
    for (const i of Array.isArray(q.body?.input) ? q.body.input : [])
      if (
        i?.type === "function_call" &&
        (/^mcp__velesdb[-_]memory/.test(i.namespace ?? "") || /^mcp__velesdb[-_]memory__/.test(i.name ?? ""))
      )
        calls.set(String(i.call_id), String(i.name).replace(/^mcp__velesdb[-_]memory__/, ""));
  }
  return [...calls.values()];
}

/** The tools/call names in the server's input between two offsets of its log: every call, the model's and the hooks'. */
function serverCalls(log: string, from: number, to: number): string[] {
  const text = fs.readFileSync(log).subarray(from, to).toString("utf8");
  return [...text.matchAll(/"method":"tools\/call","params":\{"name":"([a-z_]+)"/g)].map((m) => m[1]!);
}

const logSize = (log: string): number => (fs.existsSync(log) ? fs.statSync(log).size : 0);

/** One session as measured: its run, and every memory tool call the server received while it ran. */
interface Session {
  readonly run: RunResult;
  readonly serverCalls: readonly string[];
}

async function measured(log: string, run: () => Promise<RunResult>): Promise<Session> {
  const from = logSize(log);
  const r = await run();
  assertOffline(r, suite.mock.escaped());
  // A hook still answering when the host exits (none should) would add its calls later: wait for the log to settle briefly.
  await Bun.sleep(200);
  return { run: r, serverCalls: serverCalls(log, from, logSize(log)) };
}

/** The hook runs of a session the spy recorded: argv (`claude session-start`), payload, stderr. */
const hookRunsOf = (spy: string, sessionId: string | undefined) =>
  spiedRuns(spy).filter((h) => {
    const p = h.payload as { session_id?: unknown } | undefined;
    return sessionId !== undefined && p?.session_id === sessionId;
  });

// ---- The runs -------------------------------------------------------------------------------------

interface Chain {
  readonly mode: Mode;
  readonly marker: string;
  readonly c: E2ECase;
  readonly log: string;
  readonly spy: string | undefined;
  readonly one: Session;
  readonly two: Session;
  readonly three: Session;
}

/** runChain(mode) → sessions one (Claude, works and stops), two (Claude) and three (Codex) of one repository, in turn. */
async function runChain(mode: Mode): Promise<Chain> {
  const marker = `MWM-${mode}-${process.pid}-${Date.now().toString(36)}`;
  const c = createCase(suite.mock, `no-model-${mode}`);
  suite.cases.push(c);
  const { bin, log } = tappedServer(c);
  wire(c, mode, bin);
  const spy = mode === "hooks" ? spyOnInstalledHooks(c.home, { stderr: true }) : undefined;
  // Each Claude session its own scenario (its own request log); Codex keeps the case's, written into config.toml.
  const one = { ...c, scenario: `${c.scenario}-one` };
  const two = { ...c, scenario: `${c.scenario}-two` };
  suite.mock.script(one.scenario, { claude: [{ reply: claudeDisobedient(workChore(marker)) }] });
  suite.mock.script(two.scenario, { claude: [{ reply: claudeDisobedient(otherChore) }] });
  suite.mock.script(c.scenario, { codex: [{ reply: codexDisobedient(otherChore) }] });
  const between = (): Promise<void> => (mode === "none" ? storeReleased(c) : Promise.resolve());
  const sessionOne = await measured(log, () => runClaude(one, ["-p", "find out what generates guarded.txt"], RUN));
  await between();
  const sessionTwo = await measured(log, () => runClaude(two, ["-p", "list the repository"], RUN));
  await between();
  const sessionThree = await measured(log, () => runCodex(c, "list the repository", RUN));
  return { mode, marker, c, log, spy, one: sessionOne, two: sessionTwo, three: sessionThree };
}

/** A session of another repository (its own project) in the chain's HOME. */
async function otherRepository(chain: Chain): Promise<Session> {
  const elsewhere = path.join(chain.c.root, "elsewhere");
  fs.mkdirSync(elsewhere, { recursive: true });
  fs.writeFileSync(
    path.join(elsewhere, ".velesdb-hooks.json"),
    `${JSON.stringify({ project: "e2e-elsewhere", session: E2E_PROJECT.session })}\n`,
  );
  const other = { ...chain.c, scenario: `${chain.c.scenario}-elsewhere` };
  suite.mock.script(other.scenario, { claude: [{ reply: claudeDisobedient(otherChore) }] });
  return measured(chain.log, () => runClaude(other, ["-p", "list the repository"], { ...RUN, cwd: elsewhere }));
}

/** One row of the cost table (item 4). */
interface CostRow {
  readonly session: string;
  readonly model: string;
  readonly hooks: string;
  readonly measured: Session;
  /** What a resumed session must find: the earlier session's marker (none for a session that works). */
  readonly marker?: string;
}

/** The cost sessions of the obedient model (item 4), and the marker its work saved. */
interface CostSessions {
  readonly marker: string;
  readonly works: Session;
  readonly before: Session;
  readonly resume: Session;
}

/**
 * The cost sessions, after the chain, in its HOME: an obedient model works and stops (it saves
 * when the Stop text asks), then resumes twice: with the hook's own load and save turned off
 * (VELESDB_HOOKS_LOAD_MS=0 and VELESDB_HOOKS_SAVE_MS=0: the texts and the cost before the hooks loaded and saved themselves),
 * then with our hooks as installed. In that order, so each resume finds the working session's save
 * the latest of the project (the first resume saves nothing).
 */
async function costSessions(chain: Chain): Promise<CostSessions> {
  const { c, log } = chain;
  const marker = `MWM-cost-${process.pid}-${Date.now().toString(36)}`;
  const works = { ...c, scenario: `${c.scenario}-cost-works` };
  const before = { ...c, scenario: `${c.scenario}-cost-before` };
  const resume = { ...c, scenario: `${c.scenario}-cost-resume` };
  suite.mock.script(works.scenario, { claude: [{ reply: claudeModel({ work: obedientWork(marker) }) }] });
  suite.mock.script(before.scenario, { claude: [{ reply: claudeModel() }] });
  suite.mock.script(resume.scenario, { claude: [{ reply: claudeModel() }] });
  const off = { VELESDB_HOOKS_LOAD_MS: "0", VELESDB_HOOKS_SAVE_MS: "0" };
  return {
    marker,
    works: await measured(log, () => runClaude(works, ["-p", "move the grammar rules"], RUN)),
    before: await measured(log, () => runClaude(before, ["-p", "continue the grammar work"], { ...RUN, env: off })),
    resume: await measured(log, () => runClaude(resume, ["-p", "continue the grammar work"], RUN)),
  };
}

/** The fail-open sessions, last in the chain's HOME: each breaks one thing, runs one Claude session, and puts it back. */
interface FailOpen {
  readonly slow: Session;
  readonly link: Session;
  readonly garbage: { readonly exitCode: number | null; readonly context: string; readonly stderr: string };
  readonly missing: Session;
}

const stopBrokers = (c: E2ECase): void => {
  for (const pid of brokersIn(runtimeDirOf(c))) killTree(pid);
};

async function failOpen(chain: Chain): Promise<FailOpen> {
  const { c, log } = chain;
  const session = (name: string) => {
    const s = { ...c, scenario: `${c.scenario}-fail-${name}` };
    suite.mock.script(s.scenario, { claude: [{ reply: claudeDisobedient(otherChore) }] });
    return s;
  };

  // 1. The server stopped (SIGSTOP) with its broker listening: the hook's load gets no answer
  //    within VELESDB_HOOKS_LOAD_MS. The previous session's broker is still in its idle grace.
  const running = await until(() => serversOn(realBinary(), storeOf(c)).length === 1, 20_000);
  if (!running) throw new Error(`no velesdb-memory runs on ${storeOf(c)} to stop`);
  const [server] = serversOn(realBinary(), storeOf(c));
  process.kill(server!, "SIGSTOP");
  let slow: Session;
  try {
    slow = await measured(log, () =>
      runClaude(session("slow"), ["-p", "list the repository"], {
        ...RUN,
        // The host's own MCP connection waits on the stopped server too: it gives up on it quickly.
        env: { VELESDB_HOOKS_LOAD_MS: "800", MCP_TIMEOUT: "5000", MCP_TOOL_TIMEOUT: "5000" },
      }),
    );
  } finally {
    process.kill(server!, "SIGCONT");
  }
  stopBrokers(c);

  // 2. The mcp runtime directory replaced by a link to a directory of ours (docs/shared-memory.md
  //    "The channel": a planted link is refused, never followed).
  const dir = runtimeDirOf(c);
  const aside = `${dir}.aside`;
  fs.renameSync(dir, aside);
  fs.symlinkSync(aside, dir);
  let link: Session;
  try {
    link = await measured(log, () => runClaude(session("link"), ["-p", "list the repository"], RUN));
  } finally {
    fs.unlinkSync(dir);
    fs.renameSync(aside, dir);
  }
  stopBrokers(c);

  // 3. The server gone: the path the front recorded no longer exists, and no broker runs.
  fs.rmSync(path.join(c.root, "bin", "velesdb-memory"));
  const missing = await measured(log, () => runClaude(session("missing"), ["-p", "list the repository"], RUN));
  stopBrokers(c);

  // 4. The front's record garbage and no broker: at binary level, as the host runs the hook,
  //    because a host's own front rewrites the record as it starts (src/mcp/front.ts recordFront).
  const record = fs.readdirSync(dir).find((f) => f.endsWith(".front.json"));
  if (record === undefined) throw new Error(`no front record in ${dir}`);
  fs.writeFileSync(path.join(dir, record), "{garbage\u0000\n");
  const hook = Bun.spawnSync([installedHooksBin(c), "claude", "session-start"], {
    stdin: new TextEncoder().encode(
      JSON.stringify({
        session_id: "garbage-record",
        cwd: c.workspace,
        hook_event_name: "SessionStart",
        source: "startup",
      }),
    ),
    env: { PATH: "/usr/bin:/bin", HOME: c.home, TMPDIR: c.tmp },
    cwd: c.workspace,
    stdout: "pipe",
    stderr: "pipe",
    timeout: 30_000,
  });
  let context = "";
  try {
    context = JSON.parse(hook.stdout.toString()).hookSpecificOutput.additionalContext;
  } catch {
    context = `(not our answer) ${hook.stdout.toString().slice(0, 300)}`;
  }
  const garbage = { exitCode: hook.exitCode, context, stderr: hook.stderr.toString() };
  stopBrokers(c);

  return { slow, link, garbage, missing };
}

/** A store no front was ever set up for: our hooks (no --mcp), velesdb-memory wired directly, as a user may have it. */
async function directlyWired(): Promise<{ session: Session; c: E2ECase; spy: string }> {
  const c = createCase(suite.mock, "no-model-direct");
  suite.cases.push(c);
  const { bin, log } = tappedServer(c);
  registerHooks(c, "claude");
  writeClaudeServer(c, bin);
  const spy = spyOnInstalledHooks(c.home, { stderr: true });
  suite.mock.script(c.scenario, { claude: [{ reply: claudeDisobedient(workChore("MWM-hooks-0-direct")) }] });
  const session = await measured(log, () => runClaude(c, ["-p", "find out what generates guarded.txt"], RUN));
  return { session, c, spy };
}

const everything = once(async () => {
  const on = await runChain("hooks");
  const elsewhere = await otherRepository(on);
  const cost = await costSessions(on);
  const broken = await failOpen(on);
  const off = await runChain("none");
  const resumeOff = { ...off.c, scenario: `${off.c.scenario}-cost-resume` };
  suite.mock.script(resumeOff.scenario, { claude: [{ reply: claudeModel() }] });
  const costOff = await measured(off.log, () => runClaude(resumeOff, ["-p", "continue the grammar work"], RUN));
  const direct = await directlyWired();
  // VH_E2E_KEEP=1: each session's model requests beside its case.
  if (process.env.VH_E2E_KEEP) {
    const keep = (c: E2ECase, name: string, s: Session) =>
      fs.writeFileSync(path.join(c.root, `${name}.requests.json`), JSON.stringify(s.run.requests, null, 2));
    for (const chain of [on, off])
      for (const name of ["one", "two", "three"] as const) keep(chain.c, name, chain[name]);
    keep(on.c, "elsewhere", elsewhere);
    keep(on.c, "cost-works", cost.works);
    keep(on.c, "cost-before", cost.before);
    keep(on.c, "cost-resume", cost.resume);
    keep(on.c, "fail-slow", broken.slow);
    keep(on.c, "fail-link", broken.link);
    keep(on.c, "fail-missing", broken.missing);
    keep(off.c, "cost-resume", costOff);
    keep(direct.c, "direct", direct.session);
  }
  const rows: CostRow[] = [
    { session: "resume", model: "obedient", hooks: "installed", measured: cost.resume, marker: cost.marker },
    {
      session: "resume",
      model: "obedient",
      hooks: "installed, the hook's load and save off (as before)",
      measured: cost.before,
      marker: cost.marker,
    },
    { session: "resume", model: "obedient", hooks: "not installed", measured: costOff, marker: off.marker },
    { session: "resume", model: "disobedient", hooks: "installed", measured: on.two, marker: on.marker },
    { session: "resume", model: "disobedient", hooks: "not installed", measured: off.two, marker: off.marker },
    { session: "works, stops", model: "obedient", hooks: "installed", measured: cost.works },
    { session: "works, stops", model: "disobedient", hooks: "installed", measured: on.one },
    { session: "works, stops", model: "disobedient", hooks: "not installed", measured: off.one },
  ];
  console.log(costTable(rows));
  const spy = on.spy!;
  for (const [name, s] of [
    ["slow", broken.slow],
    ["link", broken.link],
    ["missing", broken.missing],
  ] as const)
    console.log(`fail open, ${name}: session-start stderr ${JSON.stringify(sessionStartStderr(spy, s))}`);
  console.log(`fail open, garbage front record: stderr ${JSON.stringify(broken.garbage.stderr)}`);
  return { on, off, elsewhere, cost, costOff, broken, direct, rows };
});

/** The figures as a markdown table (docs/performance/2026-12-04-memory-by-hooks.md). */
function costTable(rows: readonly CostRow[]): string {
  const tally = (names: readonly string[]): string => {
    if (names.length === 0) return "0";
    const counts = new Map<string, number>();
    for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
    return `${names.length} (${[...counts].map(([n, k]) => (k > 1 ? `${n} ×${k}` : n)).join(", ")})`;
  };
  const lines = [
    "| session | model | our hooks | model requests | memory tool calls by the model | calls by the hooks | earlier state in the first request |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const row of rows) {
    const r = row.measured.run;
    const byModel = memoryCallsByModel(r);
    const byHooks = [...row.measured.serverCalls];
    for (const call of byModel) byHooks.splice(byHooks.indexOf(call), byHooks.includes(call) ? 1 : 0);
    const first = r.requests[0];
    const inFirst =
      row.marker === undefined ? "—" : first !== undefined && startContext(first).includes(row.marker) ? "yes" : "no";
    lines.push(
      `| ${row.session} | ${row.model} | ${row.hooks} | ${r.requests.length} | ${tally(byModel)} | ${tally(byHooks)} | ${inFirst} |`,
    );
  }
  return lines.join("\n");
}

// ---- Checks ----------------------------------------------------------------------------------------

/** The first request's SessionStart context: where the state must already be. */
const firstContext = (s: Session): string => {
  const first = s.run.requests[0];
  return first === undefined ? "" : startContext(first);
};

/** Today's instruction (src/core/texts.ts loadGuidance), for E2E_PROJECT's own slot. */
const instructs = (context: string): boolean =>
  /load_working_context\(project="e2e-proj", session="e2e-slot\/[^"]+"\) returns this session's velesdb-memory working context/.test(
    context,
  );

const clean = (s: Session): void => expect(exitedCleanly.problems(s.run), s.run.stderr.slice(-1500)).toEqual([]);

/** expectCarries(what, text, needle, yes) → `text` does (or does not) hold `needle`; a failure shows the start of the text, not all of it. */
function expectCarries(what: string, text: string, needle: string, yes = true): void {
  expect([what, text.includes(needle)], `${what}: ${text.slice(0, 800)}`).toEqual([what, yes]);
}

/** The stderr of the session-start hook run of a Claude session (the spy's record). */
function sessionStartStderr(spy: string, s: Session): string[] {
  return hookRunsOf(spy, claudeSessionId(s.run))
    .filter((h) => h.argv.at(-1) === "session-start")
    .map((h) => h.stderr ?? "(no stderr record)");
}

describeWithReal("memory that comes back without the model's help, real CLIs and velesdb-memory 0.17.0", () => {
  test("a session whose model never calls a memory tool is resumed by the next Claude session from its first request", async () => {
    const { on } = await everything();
    for (const s of [on.one, on.two]) clean(s);
    // The model never called a memory tool: what comes back came through the hooks.
    for (const s of [on.one, on.two]) expect(memoryCallsByModel(s.run)).toEqual([]);
    // Session one did its work: its command ran and the answer reached the model.
    expect(toolAnswerTexts(on.one.run.requests).some((a) => a.includes(on.marker))).toBe(true);
    expectCarries("session one's first request", firstContext(on.one), on.marker, false);
    // Its Stop still asked the model once to save, and the model ignored it.
    const stopAsked = on.one.run.requests.some((q) => q.lastText.includes("Stop hook additional context"));
    expect(stopAsked).toBe(true);
    // …and the hook saved the compiled transcript: session two's first request holds session one's
    // slot, compiled by the hook (the model never saved one), with the marker.
    const oneId = claudeSessionId(on.one.run);
    expect(oneId).toBeDefined();
    const two = firstContext(on.two);
    expectCarries("session two, the slot", two, `session="${E2E_PROJECT.session}/${oneId}"`);
    expectCarries(
      "session two, loaded",
      two,
      "velesdb-hooks loaded the velesdb-memory working context that the latest other session",
    );
    expectCarries("session two, compiled", two, "velesdb-hooks compiled it from that session's transcript");
    expectCarries("session two, the marker", two, on.marker);
    // Nothing went wrong on the way: no hook of these sessions wrote a line on stderr.
    for (const s of [on.one, on.two])
      expect(
        hookRunsOf(on.spy!, claudeSessionId(s.run))
          .map((h) => h.stderr)
          .filter((e) => e !== ""),
      ).toEqual([]);
  }, 900_000);

  // Session two did other work and never repeated the marker, and its own Stop saved its compiled
  // transcript, the latest save of the project now. What session three loads must still carry what
  // session two was handed: a session that only passed through must not bury the state it resumed.
  test("…and the Codex session after a Claude session that did other work, from its first request", async () => {
    const { on } = await everything();
    clean(on.three);
    expect(memoryCallsByModel(on.three.run)).toEqual([]);
    const three = firstContext(on.three);
    expectCarries("session three, loaded", three, "velesdb-hooks loaded");
    expectCarries("session three, the marker", three, on.marker);
  }, 900_000);

  test("negative control: a session of another repository (another project) never sees the marker", async () => {
    const { on, elsewhere } = await everything();
    clean(elsewhere);
    for (const q of elsewhere.run.requests)
      expectCarries("another repository", JSON.stringify(q.body), on.marker, false);
    // Positive control: the hook did ask the store, for that project, and found nothing there.
    expectCarries(
      "another repository, asked",
      firstContext(elsewhere),
      'no session of project "e2e-elsewhere" has saved a working context yet',
    );
  }, 900_000);

  test("negative control: the same chain with the server wired but our hooks not installed brings nothing back", async () => {
    const { off } = await everything();
    for (const s of [off.one, off.two, off.three]) {
      clean(s);
      expect(memoryCallsByModel(s.run)).toEqual([]);
    }
    // Session one worked (the same command ran), and the marker never reached a later session.
    expect(toolAnswerTexts(off.one.run.requests).some((a) => a.includes(off.marker))).toBe(true);
    for (const s of [off.two, off.three])
      for (const q of s.run.requests) expectCarries("hooks not installed", JSON.stringify(q.body), off.marker, false);
    // The server was there all along (positive control of the wiring): each host's requests name its tools.
    for (const s of [off.one, off.two, off.three])
      expect(s.run.requests.some((q) => /mcp__velesdb[-_]memory/.test(JSON.stringify(q.body)))).toBe(true);
    // …and nothing reached it: no call at all, the model's or a hook's.
    expect([...off.one.serverCalls, ...off.two.serverCalls, ...off.three.serverCalls]).toEqual([]);
  }, 900_000);

  test("fail open: server stopped past the deadline, runtime directory a link, front record garbage, server gone — each session starts with the instruction", async () => {
    const { on, broken } = await everything();
    const spy = on.spy!;
    for (const [name, s, cause] of [
      ["slow", broken.slow, /did not answer in time/],
      ["link", broken.link, /is a symlink|not a directory|link/],
      ["missing", broken.missing, /is not there any more|cannot be started/],
    ] as const) {
      clean(s);
      const context = firstContext(s);
      expect([name, instructs(context)], context.slice(0, 800)).toEqual([name, true]);
      expectCarries(name, context, on.marker, false);
      // One stderr line from the session-start hook, naming why.
      const stderr = sessionStartStderr(spy, s);
      expect([name, stderr.length]).toEqual([name, 1]);
      const lines = stderr[0]!.split("\n").filter((l) => l !== "");
      expect([name, lines.length], stderr[0]).toEqual([name, 1]);
      expect(lines[0]).toStartWith("velesdb-hooks: working context not loaded by the hook: ");
      expect([name, cause.test(lines[0]!)], lines[0]).toEqual([name, true]);
    }
    // The front's record garbage, no broker: the instruction, exit 0, at most one clean line.
    expect(broken.garbage.exitCode).toBe(0);
    expect(instructs(broken.garbage.context), broken.garbage.context.slice(0, 800)).toBe(true);
    expect(broken.garbage.stderr.split("\n").filter((l) => l !== "").length).toBeLessThanOrEqual(1);
    expect(broken.garbage.stderr).not.toMatch(/\n\s+at |Error:/);
  }, 900_000);

  test("fail open: a store no front was set up for (velesdb-memory wired directly) gets the instruction, silently, and no broker", async () => {
    const { direct } = await everything();
    clean(direct.session);
    expect(instructs(firstContext(direct.session)), firstContext(direct.session).slice(0, 800)).toBe(true);
    expect(sessionStartStderr(direct.spy, direct.session)).toEqual([""]);
    // The hooks started nothing: the directly wired server holds the store, and no broker's files exist.
    const dir = runtimeDirOf(direct.c);
    const files = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
    expect(files.filter((f) => f.endsWith(".sock") || f.endsWith(".status.json"))).toEqual([]);
    // The server was wired (positive control): Claude started it and listed its tools.
    expect(direct.session.run.requests.some((q) => /mcp__velesdb-memory__/.test(JSON.stringify(q.body)))).toBe(true);
  }, 900_000);

  // The Stop hook saves its compiled transcript first, then asks the model once; the obedient
  // model then saves its own state, the better source, which the next Stop must leave as it is.
  test("the model's own save is what the next session gets, never the hook's compiled one", async () => {
    const { cost } = await everything();
    clean(cost.works);
    expect(memoryCallsByModel(cost.works.run)).toEqual(["save_working_context"]);
    const resumed = firstContext(cost.resume);
    expectCarries("the model's goal", resumed, `Goal: ${obedientWork(cost.marker).goal}`);
    expectCarries("a compiled state", resumed, "compiled by velesdb-hooks from the transcript", false);
  }, 900_000);

  test("the loop stays cheap: a resumed session needs no memory tool call, its state is in the first request", async () => {
    const { cost } = await everything();
    const { resume, before, marker } = cost;
    clean(resume);
    expect(memoryCallsByModel(resume.run)).toEqual([]);
    expectCarries("resumed session", firstContext(resume), marker);
    // Before the hook loaded itself (its load and save off here), the same obedient model paid tool calls for the
    // same state: its own slot (found: false), then, as the text says, the first one or two of
    // other_sessions (found: true), each a model request more.
    clean(before);
    const loads = memoryCallsByModel(before.run);
    expect(loads.length).toBeGreaterThanOrEqual(2);
    expect(new Set(loads)).toEqual(new Set(["load_working_context"]));
    const answers = toolAnswerTexts(before.run.requests);
    expect(answers.some((a) => a.includes('"found":false'))).toBe(true);
    expect(answers.some((a) => a.includes(marker) && a.includes('"found":true'))).toBe(true);
    expect(before.run.requests.length).toBeGreaterThanOrEqual(resume.run.requests.length + loads.length);
  }, 900_000);
});

describe("the disobedient model", () => {
  test("runs its command once, then answers the same way whatever a hook text asks", () => {
    const model = claudeDisobedient(workChore("MWM-hooks-1-x"));
    const request = (messages: unknown[]): LoggedRequest =>
      ({ body: { messages }, text: JSON.stringify(messages) }) as unknown as LoggedRequest;
    const first = model(
      request([
        { role: "user", content: "go" },
        {
          role: "system",
          content:
            'SessionStart hook additional context: mcp__velesdb-memory__load_working_context(project="p", session="s") returns',
        },
      ]),
    );
    expect(first.blocks[0]).toMatchObject({ type: "tool_use", name: "Bash" });
    const ran = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "out" }] },
    ];
    const answer = model(request(ran));
    const stop = model(
      request([
        ...ran,
        { role: "assistant", content: [{ type: "text", text: "x" }] },
        {
          role: "user",
          content:
            'Stop hook additional context: mcp__velesdb-memory__save_working_context(project="p", session="s") stores',
        },
      ]),
    );
    expect(answer).toEqual(stop);
    expect(JSON.stringify(stop)).toContain("MWM-hooks-1-x");
    expect(JSON.stringify([first, answer, stop])).not.toContain("mcp__velesdb");
  });
});
