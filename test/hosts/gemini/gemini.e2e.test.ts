// Gemini CLI end to end: the real CLI (@google/gemini-cli 0.61.0) offline against the mock
// Gemini API, with the fake velesdb-memory MCP server and our hooks registered by
// `velesdb-hooks install --client gemini`. Every scenario runs with our hooks and without
// them (negative control: the same check must fail), and asserts nothing left 127.0.0.1.
//
// Findings these tests rely on (see src/hosts/gemini.ts for the full list):
// - SessionStart context sits in the FIRST request's user entry, before the prompt, as
//   `<hook_context>…</hook_context>`;
// - a BeforeTool deny reaches the model as functionResponse {error: "Tool execution blocked: <reason>"};
// - an AfterAgent deny starts one more request whose last user entry is the reason verbatim.
//
// A Gemini run is two Node starts (it relaunches itself), and CI has 2 cores: behaviours whose
// turns and project config fit one session share its pair of runs (each keeps its own test and
// check, asserted on that pair), and the tests overlap, at most HOST_SLOTS runs at a time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { hostSlots, pairOf, type Pair } from "../../e2e/checks.ts";
import { E2E_LOAD_CALL, E2E_OPT_IN, E2E_SAVE_CALL, requireFiles } from "../../e2e/harness.ts";
import {
  createGeminiCase,
  functionResponses,
  GEMINI_BIN,
  installer,
  removeGeminiCase,
  runGemini,
  userSettings,
  userTexts,
  type GeminiCase,
  type GeminiCaseOptions,
  type GeminiRun,
  type Mode,
} from "./gemini-harness.ts";
import { geminiCall, geminiText, startMockGemini, type GeminiTurn, type MockGemini } from "./mock-gemini.ts";

let mock: MockGemini;
const cases: GeminiCase[] = [];
beforeAll(async () => {
  requireFiles([GEMINI_BIN]);
  mock = await startMockGemini();
});
afterAll(() => {
  mock?.stop();
  cases.forEach(removeGeminiCase);
});

type Check = (r: GeminiRun) => string[];

function describeRun(r: GeminiRun): string {
  return [
    `exit=${r.exitCode} timedOut=${r.timedOut} ${r.durationMs}ms, ${r.requests.length} request(s)`,
    ...r.requests.map(
      (q, i) => `  #${i} ${q.api} picked=${q.picked} last user: ${JSON.stringify(q.lastText.slice(0, 200))}`,
    ),
    `stderr: ${r.stderr.slice(-1500)}`,
  ].join("\n");
}

const HOST_SLOTS = 4;
const slot = hostSlots(HOST_SLOTS);
const TIMEOUT_MS = 240_000; // a test may wait for its session behind others (HOST_SLOTS)

/** session(name, turns, options) → the scenario with and without our hooks, side by side, made once; both stayed offline. */
function session(name: string, turns: GeminiTurn[], options: GeminiCaseOptions): () => Promise<Pair<GeminiRun>> {
  const run = (mode: Mode) => {
    const c = createGeminiCase(mock, name, mode, turns, options);
    cases.push(c);
    return slot(() => runGemini(c, "do the task"));
  };
  return pairOf(run, (r) => {
    expect(mock.escaped()).toEqual([]);
    expect(r.requests.filter((q) => q.api === "unknown").map((q) => `${q.method} ${q.path}`)).toEqual([]);
  });
}

/** proves(name, check, pair) → the check passes with our hooks and fails without them. */
function proves(name: string, check: Check, { on, off }: Pair<GeminiRun>): void {
  const problems = check(on);
  if (problems.length > 0)
    throw new Error(`${name} failed with hooks:\n- ${problems.join("\n- ")}\n${describeRun(on)}`);
  if (check(off).length === 0)
    throw new Error(`negative control: ${name} passed without hooks, so it proves nothing\n${describeRun(off)}`);
}

const exitedCleanly: Check = (r) =>
  r.timedOut || r.exitCode !== 0 ? [`exit ${r.exitCode}, timed out: ${r.timedOut}`] : [];
const writeFile = (name: string) => geminiCall("write_file", { file_path: name, content: `${name} content\n` });
const recall = geminiCall("mcp_velesdb-memory_recall_fused", { query: "guarded.txt" });

/** The functionResponses of write_file: "blocked" when our deny reached the model, "written" when it ran. */
function writeOutcomes(r: GeminiRun): string[] {
  return functionResponses(r)
    .filter((f) => f.name === "write_file")
    .map((f) =>
      typeof f.response.error === "string" &&
      f.response.error.startsWith("Tool execution blocked:") &&
      f.response.error.includes("recall")
        ? "blocked"
        : f.response.output !== undefined
          ? "written"
          : `other: ${JSON.stringify(f.response)}`,
    );
}

// ---- The shared sessions ----------------------------------------------------------------------

// Not opted in: SessionStart's guidance in the first request, the answer, then AfterAgent's one
// continuation. Its hooks case is also the install test's: installed twice by hand before the run.
interface InstallSteps {
  original: string;
  once: string;
  twice: string;
}
let installSteps: InstallSteps | undefined;
const plainSession = session(
  "gemini-plain",
  [{ match: /Before this session ends, /, reply: geminiText("SAVED") }, { reply: geminiText("DONE") }],
  {
    install: (c) => {
      const original = fs.readFileSync(c.settings, "utf8");
      installer(c, "install");
      const once = fs.readFileSync(c.settings, "utf8");
      installer(c, "install");
      installSteps = { original, once, twice: fs.readFileSync(c.settings, "utf8") };
    },
  },
);

// Opted in, the recall failing: write_file before any recall (refused), the recall, write_file again (still refused), the answer.
const failedRecallSession = session(
  "gemini-failed-recall",
  [
    { reply: writeFile("guarded.txt") },
    { reply: recall },
    { reply: writeFile("guarded.txt") },
    { reply: geminiText("DONE") },
  ],
  { projectConfig: E2E_OPT_IN, mcpMode: "is-error" },
);

const unlockSession = session(
  "gemini-unlock-checkpoint",
  [
    { match: /Recall[\s\S]*Decision[\s\S]*Causality[\s\S]*Feedback/, reply: geminiText("CHECKPOINT SAVED") },
    { reply: writeFile("guarded.txt") },
    { reply: recall },
    { reply: writeFile("guarded.txt") },
    { reply: geminiText("DONE") },
  ],
  { projectConfig: E2E_OPT_IN },
);

describe("gemini", () => {
  test.concurrent(
    "SessionStart: the load call reaches the first model request, with the prompt",
    async () => {
      proves(
        "gemini-context",
        (r) => {
          const p = exitedCleanly(r);
          const first = userTexts(r.requests[0]).join("\n");
          if (!first.includes(E2E_LOAD_CALL)) p.push(`the first request does not carry ${E2E_LOAD_CALL}`);
          else if (!/<hook_context>[\s\S]*load_working_context[\s\S]*<\/hook_context>\s*do the task/.test(first))
            p.push("the context is not the <hook_context> before the prompt");
          return p;
        },
        await plainSession(),
      );
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "an edit before any recall is refused and the file is not written",
    async () => {
      proves(
        "gemini-guard",
        (r) => {
          const p = exitedCleanly(r);
          if (fs.existsSync(path.join(r.case.workspace, "guarded.txt"))) p.push("the file was written");
          const first = writeOutcomes(r)[0];
          if (first !== "blocked")
            p.push(
              `the first write_file (before any recall) came back ${JSON.stringify(first)}, expected "blocked" naming the recall`,
            );
          return p;
        },
        await failedRecallSession(),
      );
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "a failed recall keeps the edit refused",
    async () => {
      proves(
        "gemini-failed-recall",
        (r) => {
          const p = exitedCleanly(r);
          const recallResponse = functionResponses(r).find((f) => f.name === "mcp_velesdb-memory_recall_fused");
          if (!recallResponse || recallResponse.response.error === undefined)
            p.push("the recall did not fail as scripted");
          if (fs.existsSync(path.join(r.case.workspace, "guarded.txt"))) p.push("the file was written");
          const outcomes = writeOutcomes(r);
          if (outcomes.join() !== "blocked,blocked")
            p.push(`write_file outcomes ${JSON.stringify(outcomes)}, expected blocked twice`);
          return p;
        },
        await failedRecallSession(),
      );
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "a successful recall unlocks the edit; AfterAgent then asks once for the checkpoint and the run ends",
    async () => {
      proves(
        "gemini-unlock-checkpoint",
        (r) => {
          const p = exitedCleanly(r);
          const outcomes = writeOutcomes(r);
          if (outcomes.join() !== "blocked,written")
            p.push(`write_file outcomes ${JSON.stringify(outcomes)}, expected blocked then written`);
          if (!fs.existsSync(path.join(r.case.workspace, "guarded.txt")))
            p.push("the file was not written after the recall");
          const continuations = r.requests.filter((q) => q.lastText.includes(E2E_SAVE_CALL));
          if (continuations.length !== 1)
            p.push(`${continuations.length} requests end with a prompt naming ${E2E_SAVE_CALL}, expected exactly 1`);
          if (r.requests.at(-1) !== continuations[0])
            p.push("the checkpoint continuation is not the last request: the run did not end after it");
          if (!r.stdout.includes("CHECKPOINT SAVED")) p.push("the continuation's answer is not the run's output");
          return p;
        },
        await unlockSession(),
      );
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "Stop without enforcement: one continuation naming save_working_context, then the run ends",
    async () => {
      proves(
        "gemini-stop",
        (r) => {
          const p = exitedCleanly(r);
          if (r.requests.length !== 2)
            p.push(`${r.requests.length} requests, expected the answer and one continuation`);
          if (!r.requests[1]?.lastText.includes(E2E_SAVE_CALL))
            p.push(`the second request's prompt does not name ${E2E_SAVE_CALL}`);
          return p;
        },
        await plainSession(),
      );
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "install twice: no byte changes; uninstall after a real run: the user's settings back byte for byte",
    async () => {
      // The hooks case of the plain session, installed twice by hand before its run.
      const { on: r } = await plainSession();
      const c = r.case;
      const steps = installSteps!;
      expect(steps.original).toBe(userSettings(c));
      expect(steps.once).not.toBe(steps.original);
      expect(steps.twice).toBe(steps.once);
      // The hooks are live in this file (positive control for what uninstall removes).
      expect(userTexts(r.requests[0]).join("\n")).toContain(E2E_LOAD_CALL);
      expect(mock.escaped()).toEqual([]);
      expect(installer(c, "check")).toContain("gemini: entries in step");
      installer(c, "uninstall");
      expect(fs.readFileSync(c.settings, "utf8")).toBe(steps.original);
    },
    TIMEOUT_MS,
  );
});
