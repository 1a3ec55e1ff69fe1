// docs/real-server.md#the-memory-proofs, proofs 1, 2 and 4, on the real CLIs with the REAL velesdb-memory (0.17.0,
// VELESDB_MEMORY_BIN_REAL; .ci/run builds it): the working context one session saves at Stop
// reaches the model of the next session of that repository at SessionStart.
// - proof 1: a Claude Code session saves at Stop; the next Claude session gets it back;
// - proof 2: the same save, loaded by a Codex session and by a Gemini CLI session;
// - proof 4 (hooks not installed): the same four sessions with the server wired but without our
//   hooks: nothing is saved and nothing comes back. This run is every check's negative control.
// Everything is wired by our installer (`velesdb-hooks install --client <host> --mcp`, with
// VELESDB_MEMORY_BIN naming the real binary), in one HOME (so one store, ~/.velesdb-memory) and
// one workspace (one .velesdb-hooks.json project; each session saves its own slot, so a later
// session finds the earlier one in other_sessions). The model is obedient-model.ts: it calls the
// tools only when a hook text names them, with the arguments the text gives. The sessions run
// one after another (velesdb-memory admits one process per store; two at once is proof 3,
// shared-memory.e2e.test.ts). Eight host runs in all, one chain after the other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { describeWithReal, realBinary } from "../support/real-velesdb-memory.ts";
import { allOf, assertOffline, check, exitedCleanly, once, toolAnswerTexts, type Check } from "./checks.ts";
import { runGemini, type GeminiCase, type GeminiRun } from "../hosts/gemini/gemini-harness.ts";
import {
  createCase,
  e2eSuite,
  E2E_PROJECT,
  installWithMcp,
  wireServerDirectly,
  registerHooks,
  runClaude,
  runCodex,
  storeReleased,
  type E2ECase,
  type Mode,
  type RunResult,
} from "./harness.ts";
import { startMockGemini, type MockGemini } from "../hosts/gemini/mock-gemini.ts";
import type { LoggedRequest } from "./mock-llm.ts";
import {
  claudeModel,
  claudeView,
  codexModel,
  codexView,
  geminiModel,
  grammarWork,
  type Work,
} from "./obedient-model.ts";

const suite = e2eSuite();
let gemini: MockGemini;
beforeAll(async () => {
  gemini = await startMockGemini();
});
afterAll(() => gemini?.stop());

/** What the first Claude session worked out; the marker is what must come back, and only with our hooks. */
const workOf = (marker: string): Work =>
  grammarWork(`guarded.txt is generated from parser.txt by the build (${marker})`);

interface Chain {
  readonly mode: Mode;
  readonly marker: string;
  readonly claudeSave: RunResult;
  readonly claudeLoad: RunResult;
  readonly codexLoad: RunResult;
  readonly geminiLoad: GeminiRun;
}

/** Wires the three hosts in the case's HOME: with our installer (hooks + --mcp), or the server entry alone (the shapes install writes). */
function wire(c: E2ECase, gem: GeminiCase, mode: Mode): void {
  const server = realBinary();
  fs.mkdirSync(path.dirname(gem.settings), { recursive: true });
  fs.writeFileSync(
    path.join(c.home, ".gemini", "trustedFolders.json"),
    `${JSON.stringify({ [c.workspace]: "TRUST_FOLDER" })}\n`,
  );
  // What a headless Gemini needs (gemini-harness.ts), and nothing of velesdb-memory yet.
  const settings: Record<string, unknown> = {
    security: { auth: { selectedType: "gemini-api-key" } },
    model: { name: "gemini-2.5-flash" },
    privacy: { usageStatisticsEnabled: false },
  };
  if (mode === "hooks") {
    fs.writeFileSync(gem.settings, `${JSON.stringify(settings, null, 2)}\n`);
    // Codex: hooks and the trust state a user's /hooks approval writes, then --mcp appends its table.
    registerHooks(c, "codex");
    installWithMcp(c, ["claude", "codex", "gemini"], server);
    return;
  }
  wireServerDirectly(c, server, { codexWaits: true });
  fs.writeFileSync(
    gem.settings,
    `${JSON.stringify({ ...settings, mcpServers: { "velesdb-memory": { command: server, args: [] } } }, null, 2)}\n`,
  );
}

/** runChain(mode) → the four sessions of one repository, in turn: Claude saves, then Claude, Codex and Gemini load. */
async function runChain(mode: Mode): Promise<Chain> {
  const marker = `HANDOFF-${mode}-${process.pid}-${Date.now().toString(36)}`;
  const c = createCase(suite.mock, `handoff-${mode}`);
  suite.cases.push(c);
  const gem: GeminiCase = {
    name: c.name,
    scenario: `${c.scenario}-gemini`,
    root: c.root,
    home: c.home,
    tmp: c.tmp,
    workspace: c.workspace,
    settings: path.join(c.home, ".gemini", "settings.json"),
    mcpLog: c.mcpLog,
    mock: gemini,
  };
  wire(c, gem, mode);
  // Each Claude session its own scenario (its own request log); Codex keeps the case's, written into config.toml.
  const claudeA = { ...c, scenario: `${c.scenario}-claude-save` };
  const claudeB = { ...c, scenario: `${c.scenario}-claude-load` };
  suite.mock.script(claudeA.scenario, { claude: [{ reply: claudeModel({ work: workOf(marker) }) }] });
  suite.mock.script(claudeB.scenario, { claude: [{ reply: claudeModel() }] });
  suite.mock.script(c.scenario, { codex: [{ reply: codexModel() }] });
  gemini.script(gem.scenario, [{ reply: geminiModel() }]);

  const between = (): Promise<void> => (mode === "none" ? storeReleased(c) : Promise.resolve());
  const claudeSave = await runClaude(claudeA, ["-p", "find where the grammar lives"]);
  await between();
  const claudeLoad = await runClaude(claudeB, ["-p", "continue the grammar work"]);
  await between();
  const codexLoad = await runCodex(c, "continue the grammar work");
  await between();
  const geminiLoad = await runGemini(gem, "continue the grammar work");
  // VH_E2E_KEEP=1: each session's model requests beside the case (harness.ts keeps only the last run's).
  if (process.env.VH_E2E_KEEP) {
    const sessions = {
      "claude-save": claudeSave,
      "claude-load": claudeLoad,
      "codex-load": codexLoad,
      "gemini-load": geminiLoad,
    };
    for (const [name, r] of Object.entries(sessions))
      fs.writeFileSync(path.join(c.root, `${name}.requests.json`), JSON.stringify(r.requests, null, 2));
  }
  for (const r of [claudeSave, claudeLoad, codexLoad]) assertOffline(r, suite.mock.escaped());
  expect(gemini.escaped()).toEqual([]);
  return { mode, marker, claudeSave, claudeLoad, codexLoad, geminiLoad };
}

// One chain after the other: an idle velesdb-memory 0.17.0 holds ~465 MB of anonymous memory
// (measured, /proc/<pid>/status RssAnon), and the suite runs beside other files on CI's machine.
const chains = once(async () => {
  const on = await runChain("hooks");
  const off = await runChain("none");
  return { on, off };
});

// ---- What each host's requests show -----------------------------------------------------------

/** startContext(req) → the SessionStart text in a request, whichever host sent it (Claude system, Codex developer, Gemini first user entry). */
function startContext(req: { body: any }): string {
  const as = req as LoggedRequest;
  if (Array.isArray(req.body?.messages)) return claudeView(as).sessionStart;
  if (Array.isArray(req.body?.input)) return codexView(as).sessionStart;
  const first = (Array.isArray(req.body?.contents) ? req.body.contents : []).find((c: any) => c?.role === "user");
  return (Array.isArray(first?.parts) ? first.parts : []).map((p: any) => String(p?.text ?? "")).join("\n");
}

/**
 * The saved text came back, either way a model gets it: in the first request's SessionStart
 * context, where the hook loaded it (docs/working-context.md#loaded-by-the-hook), or in a
 * found:true answer to a load the text named.
 */
const cameBack = (marker: string): Check =>
  check("the working context saved earlier reached this session's model", (r) => {
    const first = r.requests[0];
    if (first === undefined) return ["no model request"];
    if (startContext(first).includes(marker)) return [];
    const answers = toolAnswerTexts(r.requests);
    return answers.some((a) => a.includes(marker) && a.includes('"found":true'))
      ? []
      : [
          `neither the SessionStart context nor a found:true tool answer carries ${marker}; context: ${startContext(first).slice(0, 300)}; answers: ${answers.map((a) => a.slice(0, 200)).join(" | ")}`,
        ];
  });

/**
 * The first session found nothing saved — a load answered found:false, or the hook's own load
 * said so ("nothing to resume", src/core/texts.ts nothingSavedGuidance) — and then the real
 * server answered its save with an id.
 */
const savedAtStop = check("the session found nothing saved, then saved its working context at Stop", (r) => {
  const answers = toolAnswerTexts(r.requests);
  const p: string[] = [];
  const toldNothing = r.requests[0] !== undefined && startContext(r.requests[0]).includes("nothing to resume");
  if (!toldNothing && !answers.some((a) => a.includes('"found":false')))
    p.push("neither a load answer with found:false nor the hook's nothing-to-resume before the save");
  if (!answers.some((a) => /"id_str":"\d+"/.test(a))) p.push("no save answered with an id");
  return p;
});

const geminiAsRun = (g: GeminiRun): RunResult => ({
  exitCode: g.exitCode,
  signal: null,
  timedOut: g.timedOut,
  stdout: g.stdout,
  stderr: g.stderr,
  durationMs: g.durationMs,
  requests: g.requests as unknown as RunResult["requests"],
  allRequests: [],
  case: undefined as unknown as E2ECase,
});

/** proves(check, on, off) → passes with our hooks, fails in the same sessions without them. */
function proves(c: Check, on: RunResult, off: RunResult): void {
  const withHooks = c.problems(on);
  expect(withHooks, `${c.name}\nstderr: ${on.stderr.slice(-1500)}`).toEqual([]);
  expect(c.problems(off).length, `negative control: "${c.name}" passed without our hooks`).toBeGreaterThan(0);
}

describeWithReal("memory across sessions on the real CLIs and the real velesdb-memory", () => {
  test("proof 1: a Claude session saves at Stop, the next Claude session of the repository gets it back at SessionStart", async () => {
    const { on, off } = await chains();
    proves(allOf("claude save", exitedCleanly, savedAtStop), on.claudeSave, off.claudeSave);
    proves(allOf("claude load", exitedCleanly, cameBack(on.marker)), on.claudeLoad, off.claudeLoad);
  }, 600_000);

  test("proof 2: the same save, loaded by a Codex session", async () => {
    const { on, off } = await chains();
    proves(allOf("codex load", exitedCleanly, cameBack(on.marker)), on.codexLoad, off.codexLoad);
  }, 600_000);

  test("proof 2: the same save, loaded by a Gemini CLI session", async () => {
    const { on, off } = await chains();
    proves(
      allOf("gemini load", exitedCleanly, cameBack(on.marker)),
      geminiAsRun(on.geminiLoad),
      geminiAsRun(off.geminiLoad),
    );
  }, 600_000);

  test("proof 4: hooks not installed, the server wired: no session is told to load or save, nothing comes back", async () => {
    const { off } = await chains();
    const sessions = [off.claudeSave, off.claudeLoad, off.codexLoad, geminiAsRun(off.geminiLoad)];
    for (const r of sessions) {
      expect(exitedCleanly.problems(r)).toEqual([]);
      expect(toolAnswerTexts(r.requests)).toEqual([]);
      expect(r.requests.some((q) => JSON.stringify(q.body).includes(off.marker))).toBe(false);
    }
    // The server was there all along: each host's requests name its tools, or their namespace
    // (Codex: mcp__velesdb_memory, deferred), as the host exposes them (positive control of the wiring).
    const exposed = /mcp__velesdb[-_]memory|mcp_velesdb-memory_/;
    for (const [i, r] of sessions.entries())
      expect(
        [i, r.requests.some((q) => exposed.test(JSON.stringify(q.body)))],
        `session ${i} saw no velesdb-memory tool; stderr: ${r.stderr.slice(-1500)}`,
      ).toEqual([i, true]);
  }, 600_000);
});

describe("the obedient model reads the slot from the text", () => {
  test("callIn: the slot a text names, with quotes kept as JSON; none when the text names none", async () => {
    const { callIn } = await import("./obedient-model.ts");
    expect(
      callIn(
        `load_working_context(project=${JSON.stringify(E2E_PROJECT.project)}, session="a \\"b\\"") returns`,
        "load_working_context",
      ),
    ).toEqual({ project: E2E_PROJECT.project, session: 'a "b"' });
    expect(
      callIn('mcp__velesdb-memory__save_working_context(project="p", session="s")', "save_working_context"),
    ).toEqual({ project: "p", session: "s" });
    expect(callIn("call load_working_context to resume", "load_working_context")).toBeUndefined();
  });

  test("a state the hook loaded is read from the context: no load, unless the text says items were left out", () => {
    const request = (context: string) =>
      ({
        body: {
          messages: [
            { role: "user", content: "continue" },
            { role: "system", content: `SessionStart hook additional context: ${context}` },
          ],
        },
      }) as unknown as LoggedRequest;
    const call = 'mcp__velesdb-memory__load_working_context(project="p", session="s/1")';
    const head =
      'velesdb-hooks loaded the velesdb-memory working context that the latest other session of this project saved (project="p", session="s/1"; …); what it holds:\nGoal: g';
    const model = claudeModel();
    // The whole state is in the context: it answers.
    expect(
      model(request(`${head}\nThat is the whole saved state (1 item); ${call} returns it as JSON.`)).blocks,
    ).toEqual([{ type: "text", text: "READ the working context" }]);
    // Part of it was left out: the call the text names for the whole state.
    expect(
      model(
        request(`${head}\nLeft out to stay within 4000 characters: 2 verified facts; ${call} returns the whole state.`),
      ).blocks[0],
    ).toMatchObject({ type: "tool_use", input: { project: "p", session: "s/1" } });
    // Positive control: the instruction text (the hook did not load) still gets the load.
    expect(model(request(`${call} returns this session's velesdb-memory working context`)).blocks[0]).toMatchObject({
      type: "tool_use",
      name: "mcp__velesdb-memory__load_working_context",
    });
  });
});
