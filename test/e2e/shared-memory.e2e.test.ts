// The shared memory, proof 3 (docs/shared-memory.md): two sessions open at once — Claude Code
// and Codex, one HOME, one store, one opted-in repository — both recall successfully and both
// edit; both stop and save; the next session gets what they saved. `install --mcp` wires each
// host to `velesdb-hooks mcp --server <velesdb-memory>`, one broker per store.
//
// The negative control is the same pair wired the way install --mcp wired velesdb-memory before
// the front (each host starting its own stdio server on the store): velesdb-memory admits one
// process per store, so one of the two has no memory tools — its recall fails, our guard keeps
// its edit refused. The model is obedient-model.ts (it loads, edits, recalls only when our
// guard's refusal names the recall, saves when the Stop text asks).
import { expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { describeWithReal, realBinary } from "../support/real-velesdb-memory.ts";
import { assertOffline, check, claudeHookContexts, exitedCleanly, toolAnswerTexts, type Check } from "./checks.ts";
import {
  createCase,
  e2eSuite,
  E2E_PROJECT,
  installWithMcp,
  wireServerDirectly,
  registerHooks,
  runClaude,
  runCodex,
  type E2ECase,
  type RunResult,
} from "./harness.ts";
import { claudeModel, codexModel, type Work } from "./obedient-model.ts";

const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };

const suite = e2eSuite();

const workOf = (host: string, marker: string): Work => ({
  goal: `notes for the ${host} half of the change`,
  verifiedFacts: [`notes-${host}.txt records the ${host} session's findings (${marker})`],
  pendingActions: [`review notes-${host}.txt`],
});

type Wiring = "front" | "direct";

/**
 * rendezvous(parties) → meet(name, model): the session's first request carrying a tool answer
 * (its load, the first call SessionStart asks for) waits, at most 30 s, until every session got
 * that far. So both hosts have their velesdb-memory up at the same moment, whatever the load on
 * the machine: without it one short session can end before the other starts (seen here).
 */
function rendezvous(parties: number) {
  const arrived = new Set<string>();
  let release = (): void => {};
  const everyone = new Promise<void>((resolve) => (release = resolve));
  return <Q extends { body: any }, R>(name: string, model: (req: Q) => R) =>
    async (req: Q): Promise<R> => {
      const body = req.body ?? {};
      const answered = [
        ...(Array.isArray(body.messages) ? body.messages : []),
        ...(Array.isArray(body.input) ? body.input : []),
      ].some(
        (m: any) =>
          m?.type === "function_call_output" ||
          (Array.isArray(m?.content) && m.content.some((b: any) => b?.type === "tool_result")),
      );
      if (answered && !arrived.has(name)) {
        arrived.add(name);
        if (arrived.size >= parties) release();
        await Promise.race([everyone, Bun.sleep(30_000)]);
      }
      return model(req);
    };
}

interface PairRun {
  readonly wiring: Wiring;
  readonly markers: { readonly claude: string; readonly codex: string };
  readonly claude: RunResult;
  readonly codex: RunResult;
  readonly next: RunResult;
  readonly workspace: string;
}

/** The server entry install --mcp writes for Claude (~/.claude.json user scope). */
const claudeEntry = (c: E2ECase): { command?: string; args?: string[] } | undefined =>
  (
    JSON.parse(fs.readFileSync(path.join(c.home, ".claude.json"), "utf8")) as {
      mcpServers?: Record<string, { command?: string; args?: string[] }>;
    }
  ).mcpServers?.["velesdb-memory"];

function wire(c: E2ECase, wiring: Wiring): void {
  const server = realBinary();
  registerHooks(c, "codex"); // hooks + the trust state; --mcp appends its table after it
  if (wiring === "front") {
    installWithMcp(c, ["claude", "codex"], server);
    const entry = claudeEntry(c);
    // The shared front's design (branch mcp): every client starts `velesdb-hooks mcp --server <abs velesdb-memory>`.
    if (entry?.args?.[0] !== "mcp" || !entry.args.includes(server)) {
      throw new Error(
        `install --mcp wired ${JSON.stringify(entry)}, not \`velesdb-hooks mcp --server ${server}\`: the shared front (branch mcp) is not in this build`,
      );
    }
    return;
  }
  registerHooks(c, "claude");
  wireServerDirectly(c, server);
}

/** runPair(wiring) → Claude and Codex at once in one opted-in repository, then the next Claude session. */
async function runPair(wiring: Wiring): Promise<PairRun> {
  const c = createCase(suite.mock, `shared-${wiring}`, { projectConfig: OPT_IN });
  suite.cases.push(c);
  wire(c, wiring);
  const tag = `${wiring}-${process.pid}-${Date.now().toString(36)}`;
  const markers = { claude: `SHARED-CLAUDE-${tag}`, codex: `SHARED-CODEX-${tag}` };
  const claudeCase = { ...c, scenario: `${c.scenario}-claude` };
  const nextCase = { ...c, scenario: `${c.scenario}-next` };
  const meet = rendezvous(2);
  suite.mock.script(claudeCase.scenario, {
    claude: [
      {
        reply: meet(
          "claude",
          claudeModel(
            { edit: { file: "notes-claude.txt", content: "claude notes\n" }, work: workOf("claude", markers.claude) },
            c.workspace,
          ),
        ),
      },
    ],
  });
  suite.mock.script(c.scenario, {
    codex: [
      {
        reply: meet(
          "codex",
          codexModel({
            edit: { file: "notes-codex.txt", content: "codex notes\n" },
            work: workOf("codex", markers.codex),
          }),
        ),
      },
    ],
  });
  suite.mock.script(nextCase.scenario, { claude: [{ reply: claudeModel() }] });
  // The broker the front starts outlives its sessions by an idle grace (VELESDB_HOOKS_MCP_IDLE_MS, branch mcp): short here, so none outlives the case.
  const env = { VELESDB_HOOKS_MCP_IDLE_MS: "2000" };
  const [claude, codex] = await Promise.all([
    runClaude(claudeCase, ["-p", "write notes-claude.txt"], { env }),
    runCodex(c, "write notes-codex.txt", { env }),
  ]);
  const next = await runClaude(nextCase, ["-p", "continue"], { env });
  // VH_E2E_KEEP=1: each session's model requests beside the case (harness.ts keeps only the last run's).
  if (process.env.VH_E2E_KEEP)
    for (const [name, r] of Object.entries({ claude, codex, next }))
      fs.writeFileSync(path.join(c.root, `${name}.requests.json`), JSON.stringify(r.requests, null, 2));
  for (const r of [claude, codex, next]) assertOffline(r, suite.mock.escaped());
  return { wiring, markers, claude, codex, next, workspace: c.workspace };
}

/** Both sessions recalled (a real recall answer, not an error), both edits applied, both saves answered with an id. */
const bothWorked = (p: PairRun): string[] => {
  const problems: string[] = [];
  for (const [host, r] of [
    ["claude", p.claude],
    ["codex", p.codex],
  ] as const) {
    problems.push(...exitedCleanly.problems(r).map((x) => `${host}: ${x}`));
    const answers = toolAnswerTexts(r.requests);
    if (!answers.some((a) => a.includes('"memories":[')))
      problems.push(`${host}: no successful recall answer (${answers.map((a) => a.slice(0, 160)).join(" | ")})`);
    if (!fs.existsSync(path.join(p.workspace, `notes-${host}.txt`)))
      problems.push(`${host}: notes-${host}.txt was not written (the edit stayed refused)`);
    if (!answers.some((a) => /"id_str":"\d+"/.test(a))) problems.push(`${host}: no save answered with an id`);
  }
  return problems;
};

/**
 * Decided on main (docs/working-context.md#the-decision-each-session-saves-its-own-slot): each host session saves its own slot
 * (<session>/<host session id>), and the next session's load misses its own slot and lists both
 * in other_sessions, most recent first; the load text then names the same call on the first one
 * or two of them, which the obedient model makes. So what each of the two saved comes back.
 */
const nextGetsBoth: (p: PairRun) => Check = (p) =>
  check("the next session's load carries what each session saved", (r) => {
    // The hook loads the latest state into the first request's SessionStart context
    // (docs/working-context.md#loaded-by-the-hook), and the model loads the other one it names.
    const first = r.requests[0] ? claudeHookContexts(r.requests[0], "SessionStart").join("\n") : "";
    const answers = `${first}\n${toolAnswerTexts(r.requests).join("\n")}`;
    return [p.markers.claude, p.markers.codex]
      .filter((m) => !answers.includes(m))
      .map((m) => `the next session's answers lack ${m}`);
  });

describeWithReal("proof 3: two sessions at once on one store, through the shared front", () => {
  const name =
    "Claude and Codex at once in an opted-in repository: both recall, both edit, both save; the next session gets both; wired directly (each host its own velesdb-memory), one of them cannot";
  test(name, async () => {
    // One pair after the other: each velesdb-memory holds ~465 MB (docs/real-server.md).
    const front = await runPair("front");
    const direct = await runPair("direct");
    expect(bothWorked(front)).toEqual([]);
    expect(nextGetsBoth(front).problems(front.next)).toEqual([]);
    // Negative control: each host with its own velesdb-memory on the store: the second one to start has none.
    expect(bothWorked(direct).length, "negative control: two directly wired sessions both worked").toBeGreaterThan(0);
  }, 600_000);
});
