// The DeepSeek harness host end to end: the REAL Codex hook bridge from npm
// (`@deepseek-ai/dsh-hooks-codex` 0.0.1-rc.1, imported into this Bun process) applied to a small
// fake of the harness (dsh-harness.ts), with dist/velesdb-hooks installed by its own installer
// (`install --client dsh --config`) into the hooks.json it reads. Every assertion is on what the bridge DECIDED — the messages it injected or steered, the
// model-visible tool outcome, the hook/* events it appended — never on our exit codes.
//
// Every scenario runs three times: with our hooks ("ours": every check must pass), and as negative
// controls with the same hooks.json whose commands are all `true` ("inert") and with no hooks at
// all ("absent"): there the scenario's BEHAVIOUR check must fail, or it proves nothing. Support
// checks (our binary really ran, preconditions of the scenario) only run with our hooks.
import { requireFiles } from "../../e2e/harness.ts";
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  cleanupDshCases,
  createDshCase,
  doubleToolResult,
  DSH_PROJECT,
  DSH_REGISTRATION,
  dshCheck,
  expectDsh,
  HOOKS_BIN,
  messageText,
  NEGATIVE_MODES,
  shellQuote,
  type DshCase,
  type DshCaseOptions,
  type DshCheck,
  type FakeAgent,
  type HooksMode,
  type ToolOutcome,
} from "./dsh-harness.ts";
import { IS_ROOT, testIf } from "../../support/requires.ts";

const ROOT = path.resolve(import.meta.dir, "..", "..", "..");
const LOAD = `load_working_context(project="${DSH_PROJECT.project}", session="${DSH_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)
const SAVE = `save_working_context(project="${DSH_PROJECT.project}", session="${DSH_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)
const OPTED_IN = { ...DSH_PROJECT, enforce_learning_loop: true };
const RECALL_TOOL = "mcp__velesdb-memory__recall_fused";
const STOPS = 20;

beforeAll(() => {
  requireFiles([]);
});
afterEach(cleanupDshCases);

const MODES: readonly HooksMode[] = ["ours", ...NEGATIVE_MODES];

/**
 * Runs `drive` on a fresh case per mode: with our hooks `behaviour` and every `support` check
 * must pass; in both negative controls `behaviour` must fail.
 */
async function scenario<T>(
  name: string,
  options: Omit<DshCaseOptions, "mode">,
  drive: (c: DshCase) => Promise<T>,
  behaviour: DshCheck<T>,
  support: DshCheck<T>[] = [],
): Promise<void> {
  for (const mode of MODES) {
    const c = createDshCase(name, { ...options, mode });
    const run = await drive(c);
    if (mode === "ours") expectDsh(allOf(name, behaviour, ...support), run, c).toPass();
    else expectDsh(behaviour, run, c).toFail();
  }
}

/** All sub-checks must pass; problems are prefixed with the sub-check's name. */
function allOf<T>(name: string, ...checks: DshCheck<T>[]): DshCheck<T> {
  return dshCheck(name, (run) => checks.flatMap((c) => c.problems(run).map((p) => `${c.name}: ${p}`)));
}

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
const payloadsOf = (c: DshCase, event: string): Record<string, unknown>[] =>
  c.bash.spawns
    .filter((s) => s.stdin !== undefined && (JSON.parse(s.stdin) as Record<string, unknown>).hook_event_name === event)
    .map((s) => JSON.parse(s.stdin!) as Record<string, unknown>);
const ourRuns = (c: DshCase, event: string) =>
  c.bash.spawns.filter((s) => s.command === `${shellQuote(c.hooksBin)} dsh ${event}`);

/** Our binary ran for `event` at least `n` times and every run exited 0 (the hook really ran). */
function ranOurHook(c: DshCase, event: string, n: number): string[] {
  const runs = ourRuns(c, event);
  const p: string[] = [];
  if (runs.length < n) p.push(`our ${event} hook ran ${runs.length} time(s), expected ≥ ${n}`);
  for (const r of runs)
    if (r.result?.exitCode !== 0)
      p.push(`our ${event} hook exited ${r.result?.exitCode}: ${r.result?.stderr.text.trim()}`);
  return p;
}

/** SessionStart → the load guidance injected once, from the bridge, for the workspace identity. */
function loadGuidanceInjected(agent: FakeAgent): string[] {
  const p: string[] = [];
  if (agent.injected.length !== 1) p.push(`${agent.injected.length} injected message(s), expected 1`);
  const injected = agent.injected[0];
  if (injected) {
    if (!messageText(injected).includes(LOAD))
      p.push(`injected context lacks ${LOAD}: ${JSON.stringify(messageText(injected).slice(0, 300))}`);
    if (injected.role !== "user" || injected.source?.kind !== "plugin" || injected.source.plugin !== "hooks-codex") {
      p.push(
        `injected message is not the bridge's plugin-sourced user message: ${JSON.stringify({ role: injected.role, source: injected.source })}`,
      );
    }
  }
  return p;
}

/** `n` Stops, one turn each (the bridge takes turn_id from the last turn/start). */
async function stops(c: DshCase, agent: FakeAgent, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    agent.startTurn();
    await c.bridge.turnStopping(agent);
  }
}

/** Our Stop hook ran for every Stop, and every Stop payload had stop_hook_active:false. */
function everyStopRan(c: DshCase, agent: FakeAgent, n: number): string[] {
  const p = ranOurHook(c, "stop", n);
  const invoked = agent.hookInvocations("Stop").length;
  if (invoked !== n) p.push(`bridge invoked the Stop hook ${invoked} time(s) for ${n} Stops`);
  const flags = payloadsOf(c, "Stop")
    .filter((q) => q.session_id === agent.session.header.id)
    .map((q) => q.stop_hook_active);
  if (flags.some((f) => f !== false)) p.push(`a Stop payload had stop_hook_active ${JSON.stringify(flags)}`);
  return p;
}

// ---------------------------------------------------------------------------------------------

describe("dsh bridge: discovery", () => {
  test("the bridge loads our hooks.json: four listeners, no warnings, commands as registered", () => {
    const c = createDshCase("load", { mode: "ours" });
    expect(c.bridge.warnings).toEqual([]);
    expect(c.bridge.registered.sort()).toEqual([
      "agent/pre-step",
      "agent/session-start",
      "agent/turn-stopping",
      "tools/post-execute",
      "tools/pre-execute",
    ]);
    const written = JSON.parse(fs.readFileSync(c.hooksJson, "utf8")) as {
      hooks: Record<string, { matcher?: string; hooks: { command: string; timeout: number }[] }[]>;
    };
    expect(Object.keys(written.hooks).sort()).toEqual(["PostToolUse", "PreToolUse", "SessionStart", "Stop"]);
    for (const row of DSH_REGISTRATION) {
      const group = written.hooks[row.wireEvent]![0]!;
      expect(group.hooks[0]!.command).toBe(`'${c.hooksBin}' dsh ${row.argvEvent}`);
      expect(group.hooks[0]!.timeout).toBe(10);
    }
    expect(written.hooks.Stop![0]!.matcher).toBeUndefined();
  });

  test("the installer wrote that hooks.json: binary at its stable path, plugin row with the absolute path; --dry-run writes nothing", () => {
    const c = createDshCase("installer", { mode: "ours" });
    expect(fs.statSync(c.hooksBin).isFile()).toBe(true);
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: c.home,
      TMPDIR: c.tmp,
      VELESDB_HOOKS_HOME: path.join(c.home, ".velesdb-hooks"),
    };
    const check = Bun.spawnSync([HOOKS_BIN, "check", "--client", "dsh", "--config", c.hooksJson, "--strict"], {
      env,
      timeout: 30_000,
    });
    expect(check.stdout.toString()).toContain("dsh: entries in step");
    expect(check.exitCode).toBe(0);
    const target = path.join(c.root, "dry-run.json");
    const dry = Bun.spawnSync([HOOKS_BIN, "install", "--client", "dsh", "--config", target, "--dry-run"], {
      env,
      timeout: 30_000,
    });
    expect(dry.exitCode).toBe(0);
    expect(dry.stdout.toString()).toContain(`configPath: ${target}`);
    expect(fs.existsSync(target)).toBe(false);
  });

  test("the payloads the real bridge writes have the keys, order and types of the recorded fixtures", async () => {
    const c = createDshCase("payloads", { mode: "ours", projectConfig: OPTED_IN });
    const agent = c.newAgent();
    await c.bridge.sessionStart(agent);
    agent.startTurn();
    await c.bridge.toolCall(agent, "edit", { path: "a.txt", old_str: "x", new_str: "y" }, () => text("ok"));
    await c.bridge.toolCall(agent, RECALL_TOOL, { query: "q" }, () => doubleToolResult("structured"));
    await c.bridge.turnStopping(agent);
    const shape = (o: Record<string, unknown>) =>
      Object.entries(o).map(([k, v]) => `${k}:${v === null ? "null" : typeof v}`);
    const fixture = (name: string) =>
      JSON.parse(fs.readFileSync(path.join(ROOT, "fixtures", "payloads", "dsh", `${name}.json`), "utf8")) as Record<
        string,
        unknown
      >;
    const pairs: [string, string][] = [
      ["SessionStart", "session-start.startup"],
      ["PreToolUse", "pre-tool-use.edit"],
      ["PostToolUse", "post-tool-use.recall-fused"],
      ["Stop", "stop"],
    ];
    for (const [event, name] of pairs) {
      const sent = payloadsOf(c, event);
      expect(sent.length).toBe(1);
      expect(shape(sent[0]!)).toEqual(shape(fixture(name)));
      expect(sent[0]!.cwd).toBe(c.workspace);
      expect(sent[0]!.session_id).toBe(agent.session.header.id);
    }
    expect(payloadsOf(c, "PreToolUse")[0]!.tool_input).toEqual({ command: "" }); // edit arguments are not exposed
    // Text blocks joined: the double's one block, velesdb-memory's JSON.
    expect(payloadsOf(c, "PostToolUse")[0]!.tool_response).toBe(
      doubleToolResult("structured")
        .content.map((b) => b.text)
        .join(""),
    );
    expect(payloadsOf(c, "Stop")[0]!.turn_id).toBe("1");
    for (const s of c.bash.spawns) expect(s.stdin!.endsWith("\n")).toBe(false); // no trailing newline
    for (const s of c.bash.spawns) expect(s.workdir).toBe(c.workspace); // hooks run in the session workspace
  });
});

describe("dsh bridge: SessionStart", () => {
  interface SessionRun {
    c: DshCase;
    agent: FakeAgent;
  }

  test("the load guidance with the workspace identity is injected into the session", async () => {
    await scenario(
      "session-start",
      {},
      async (c): Promise<SessionRun> => {
        const agent = c.newAgent();
        await c.bridge.sessionStart(agent, "startup");
        return { c, agent };
      },
      dshCheck<SessionRun>("load guidance injected", ({ agent }) => loadGuidanceInjected(agent)),
      [dshCheck<SessionRun>("our SessionStart hook ran", ({ c }) => ranOurHook(c, "session-start", 1))],
    );
  });
});

describe("dsh bridge: recall before edit", () => {
  interface GuardRun {
    c: DshCase;
    agent: FakeAgent;
    outcomes: Record<string, ToolOutcome>;
    /** The target file's content after each step: a denied edit must not have run. */
    contentAfter: Record<string, string>;
  }

  async function driveGuard(c: DshCase): Promise<GuardRun> {
    const agent = c.newAgent();
    await c.bridge.sessionStart(agent);
    agent.startTurn();
    await c.bridge.preStep(agent, "fix the parser");
    const target = path.join(c.workspace, "parser.txt");
    fs.writeFileSync(target, "v0\n");
    const outcomes: Record<string, ToolOutcome> = {};
    const contentAfter: Record<string, string> = {};
    const step = async (
      label: string,
      name: string,
      args: Record<string, unknown>,
      execute: () => { content: { type: "text"; text: string }[]; isError?: boolean },
    ) => {
      outcomes[label] = await c.bridge.toolCall(agent, name, args, execute);
      contentAfter[label] = fs.readFileSync(target, "utf8");
    };
    const edit = (v: string) => () => {
      fs.writeFileSync(target, `${v}\n`);
      return text(`edited ${target}`);
    };
    const recallArgs = { query: "parser", filter: { project: DSH_PROJECT.project } };
    await step("edit before recall", "edit", { path: target, old_str: "v0", new_str: "v1" }, edit("v1"));
    await step("bash", "bash", { command: "git status" }, () => text("nothing to commit"));
    // velesdb-memory refusing the recall (a JSON-RPC error), as the double answers it.
    await step("error recall", RECALL_TOOL, recallArgs, () => doubleToolResult("rpc-error"));
    await step("edit after error recall", "edit", { path: target, old_str: "v0", new_str: "v2" }, edit("v2"));
    // The bridge drops isError: a failed MCP call reaches the hook as its text only.
    await step("timed-out recall", RECALL_TOOL, recallArgs, () => ({
      ...text("MCP error -32001: Request timed out"),
      isError: true,
    }));
    await step("edit after timed-out recall", "edit", { path: target, old_str: "v0", new_str: "v2" }, edit("v2"));
    await step("recall", RECALL_TOOL, recallArgs, () => doubleToolResult("structured"));
    await step("edit after recall", "edit", { path: target, old_str: "v0", new_str: "v3" }, edit("v3"));
    await step("write after recall", "write", { path: target, content: "v4" }, edit("v4"));
    await step(
      "str_replace_editor after recall",
      "str_replace_editor",
      { command: "str_replace", path: target },
      edit("v5"),
    );
    return { c, agent, outcomes, contentAfter };
  }

  /** The tool did not run; the model got an error result carrying our reason. */
  const deniedWithOurReason = (r: GuardRun, label: string): string[] => {
    const o = r.outcomes[label]!;
    const p: string[] = [];
    if (o.stage !== "denied") p.push(`${label}: the tool ran (${JSON.stringify(o.text.slice(0, 120))})`);
    else {
      if (!o.isError) p.push(`${label}: the denied outcome is not an error`);
      if (!o.text.includes("velesdb-hooks refused this edit") || !o.text.includes("recall_fused")) {
        p.push(`${label}: the model-visible outcome lacks our reason: ${JSON.stringify(o.text.slice(0, 300))}`);
      }
    }
    if (r.contentAfter[label] !== "v0\n") p.push(`${label}: the file changed`);
    return p;
  };
  const ran = (r: GuardRun, label: string): string[] => {
    const o = r.outcomes[label]!;
    return o.stage === "ran" && !o.isError ? [] : [`${label}: ${o.stage}, ${JSON.stringify(o.text.slice(0, 200))}`];
  };

  const guardBehaviour = allOf<GuardRun>(
    "recall before edit",
    dshCheck("edit denied before any recall, with our reason", (r) => deniedWithOurReason(r, "edit before recall")),
    dshCheck("a recall the server refused (JSON-RPC error) does not unlock", (r) =>
      deniedWithOurReason(r, "edit after error recall"),
    ),
    dshCheck("a failed recall (isError, plain text) does not unlock", (r) =>
      deniedWithOurReason(r, "edit after timed-out recall"),
    ),
    dshCheck("a recall whose text is JSON unlocks edit, write and str_replace_editor", (r) => [
      ...ran(r, "recall"),
      ...ran(r, "edit after recall"),
      ...ran(r, "write after recall"),
      ...ran(r, "str_replace_editor after recall"),
      ...(r.contentAfter["edit after recall"] === "v3\n" ? [] : ["the allowed edit did not change the file"]),
    ]),
  );
  const guardSupport = [
    dshCheck<GuardRun>("the shell is not gated (and not even matched)", (r) => ran(r, "bash")),
    dshCheck<GuardRun>("the bridge recorded our decisions as hook/* events", (r) => {
      const p = [...ranOurHook(r.c, "pre-tool-use", 6), ...ranOurHook(r.c, "post-tool-use", 3)];
      const pre = r.agent.hookResults("PreToolUse").map((e) => e.decision);
      if (JSON.stringify(pre) !== JSON.stringify(["deny", "deny", "deny", "pass", "pass", "pass"]))
        p.push(`PreToolUse hook/result decisions ${JSON.stringify(pre)}`);
      const post = r.agent.hookResults("PostToolUse").map((e) => e.decision);
      if (JSON.stringify(post) !== JSON.stringify(["pass", "pass", "pass"]))
        p.push(`PostToolUse hook/result decisions ${JSON.stringify(post)}`);
      if (r.agent.hookInvocations("PreToolUse").some((e) => e.matcher !== DSH_REGISTRATION[2].matcher))
        p.push("a PreToolUse invocation under another matcher");
      return p;
    }),
  ];

  test("opted in: edit denied before recall, a failed recall keeps it denied, a successful recall unlocks", async () => {
    await scenario("guard", { projectConfig: OPTED_IN }, driveGuard, guardBehaviour, guardSupport);
  });

  test(`opted in: the edit batch earns exactly one checkpoint over ${STOPS} Stops`, async () => {
    await scenario(
      "checkpoint",
      { projectConfig: OPTED_IN },
      async (c) => {
        const run = await driveGuard(c);
        await stops(c, run.agent, STOPS);
        return run;
      },
      dshCheck<GuardRun>("exactly one steer, the checklist for the edited repository", (r) => {
        const p: string[] = [];
        if (r.agent.steered.length !== 1) p.push(`${r.agent.steered.length} steer(s) over ${STOPS} Stops, expected 1`);
        const steer = r.agent.steered[0] ? messageText(r.agent.steered[0]) : "";
        for (const needle of ["Recall", "Decision", "Causality", "Feedback", SAVE, JSON.stringify(r.c.workspace)]) {
          if (!steer.includes(needle)) p.push(`checklist lacks ${JSON.stringify(needle)}`);
        }
        const blocks = r.agent.hookResults("Stop").filter((e) => e.decision === "block").length;
        if (blocks !== 1) p.push(`${blocks} Stop hook/result block decision(s)`);
        return p;
      }),
      [dshCheck<GuardRun>("the Stop hook ran every time", (r) => everyStopRan(r.c, r.agent, STOPS)), ...guardSupport],
    );
  });
});

describe("dsh bridge: Stop", () => {
  interface StopRun {
    c: DshCase;
    agent: FakeAgent;
    other: FakeAgent;
  }

  /** 20 Stops in one session, then 3 in another session of the same workspace. */
  const driveStops = async (c: DshCase): Promise<StopRun> => {
    const agent = c.newAgent();
    await c.bridge.sessionStart(agent);
    await stops(c, agent, STOPS);
    const other = c.newAgent();
    await stops(c, other, 3);
    return { c, agent, other };
  };

  const steersOnce = (agent: FakeAgent, stopsFired: number): string[] => {
    const p: string[] = [];
    if (agent.steered.length !== 1)
      p.push(
        `session ${agent.session.header.id}: ${agent.steered.length} steer(s) over ${stopsFired} Stops, expected exactly 1`,
      );
    const steer = agent.steered[0];
    if (steer) {
      if (!messageText(steer).includes(SAVE))
        p.push(`steer lacks ${SAVE}: ${JSON.stringify(messageText(steer).slice(0, 300))}`);
      if (steer.source?.plugin !== "hooks-codex") p.push(`steer not from the bridge: ${JSON.stringify(steer.source)}`);
    }
    const decisions = agent.hookResults("Stop").map((e) => e.decision);
    if (decisions.filter((d) => d === "block").length !== 1 || decisions.some((d) => d !== "block" && d !== "pass")) {
      p.push(`Stop hook/result decisions ${JSON.stringify(decisions)}`);
    }
    return p;
  };

  const steersOncePerSession = dshCheck<StopRun>("exactly one steer per session", (r) => [
    ...steersOnce(r.agent, STOPS),
    ...steersOnce(r.other, 3),
  ]);
  const everyStop = dshCheck<StopRun>("our Stop hook ran for every Stop, always with stop_hook_active:false", (r) => [
    ...everyStopRan(r.c, r.agent, STOPS),
    ...everyStopRan(r.c, r.other, 3),
  ]);

  test(`steers exactly once per session over ${STOPS} Stops that all say stop_hook_active:false`, async () => {
    await scenario("stop-once", {}, driveStops, steersOncePerSession, [everyStop]);
  });

  test("with a fresh empty TMPDIR for every hook process (sandbox), still once: state lives in the workspace", async () => {
    await scenario("stop-private-tmp", { freshTmpdirPerSpawn: true }, driveStops, steersOncePerSession, [
      everyStop,
      dshCheck("every hook process got its own new empty TMPDIR", (r) => {
        const dirs = r.c.bash.spawns.map((s) => s.tmpdir);
        const p: string[] = [];
        if (dirs.some((d) => d === undefined) || new Set(dirs).size !== dirs.length)
          p.push("TMPDIR shared between hook processes");
        if (r.c.bash.spawns.some((s) => !s.tmpdirWasEmpty)) p.push("a hook process started with a non-empty TMPDIR");
        return p;
      }),
      dshCheck("the markers are in the workspace", (r) =>
        fs.existsSync(path.join(r.c.workspace, ".velesdb-hooks", "state"))
          ? []
          : ["no <workspace>/.velesdb-hooks/state"],
      ),
    ]);
  });

  interface UnwritableRun {
    c: DshCase;
    agent: FakeAgent;
    edit?: ToolOutcome;
    stateProblems: string[];
  }

  const chattrWorks = (() => {
    if (!IS_ROOT) return false;
    const probe = fs.mkdtempSync(path.join(os.tmpdir(), "vh-chattr-"));
    const ok = Bun.spawnSync(["chattr", "+i", probe], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
    Bun.spawnSync(["chattr", "-i", probe], { stdout: "ignore", stderr: "ignore" });
    fs.rmSync(probe, { recursive: true, force: true });
    return ok;
  })();

  const unwritable: {
    label: string;
    optedIn: boolean;
    skip: boolean;
    // biome-ignore lint/suspicious/noConfusingVoidType: a case that sets no variable is a block with no return, which a `| undefined` return type refuses
    prepare: (d: { root: string; workspace: string }) => Record<string, string> | void;
    /** Problems if the state location turned out writable after all. */
    verify: (c: DshCase) => string[];
  }[] = [
    {
      label: "VELESDB_HOOKS_STATE_DIR under a regular file",
      optedIn: false,
      skip: false,
      prepare: ({ root }) => {
        fs.writeFileSync(path.join(root, "a-file"), "x\n");
        return { VELESDB_HOOKS_STATE_DIR: path.join(root, "a-file", "state") };
      },
      verify: (c) => (fs.statSync(path.join(c.root, "a-file")).isFile() ? [] : ["a-file is no longer a file"]),
    },
    {
      label: "<workspace>/.velesdb-hooks is a regular file, opted in",
      optedIn: true,
      skip: false,
      prepare: ({ workspace }) => void fs.writeFileSync(path.join(workspace, ".velesdb-hooks"), "not a directory\n"),
      verify: (c) =>
        fs.statSync(path.join(c.workspace, ".velesdb-hooks")).isFile() ? [] : [".velesdb-hooks is no longer a file"],
    },
    {
      label: "an immutable workspace via chattr +i, opted in",
      optedIn: true,
      skip: !chattrWorks, // needs root and a filesystem with the immutable flag
      prepare: ({ workspace }) => {
        const r = Bun.spawnSync(["chattr", "+i", workspace], { stdout: "ignore", stderr: "pipe" });
        if (r.exitCode !== 0) throw new Error(`chattr +i failed: ${r.stderr.toString()}`);
      },
      verify: (c) =>
        fs.existsSync(path.join(c.workspace, ".velesdb-hooks"))
          ? ["state got written into the immutable workspace"]
          : [],
    },
  ];

  for (const v of unwritable) {
    // "Never steers" alone would also hold without hooks; the behaviour proven is that the hooks
    // are live (guidance injected, the guard refuses in an opted-in repository) AND Stop never
    // steers, over 20 Stops that all say stop_hook_active:false.
    testIf(!v.skip, "root and a filesystem with the immutable flag (chattr +i)")(
      `with an unwritable state location (${v.label}) it never steers`,
      async () => {
        await scenario(
          `unwritable-${v.label}`,
          { projectConfig: v.optedIn ? OPTED_IN : DSH_PROJECT, prepare: v.prepare },
          async (c): Promise<UnwritableRun> => {
            const agent = c.newAgent();
            await c.bridge.sessionStart(agent);
            agent.startTurn();
            const edit = v.optedIn
              ? await c.bridge.toolCall(agent, "edit", { path: "x.txt" }, () => text("edited"))
              : undefined;
            await stops(c, agent, STOPS);
            return { c, agent, ...(edit ? { edit } : {}), stateProblems: v.verify(c) };
          },
          allOf<UnwritableRun>(
            "live hooks, no loop",
            dshCheck("the session still got its load guidance (it needs no state)", (r) =>
              loadGuidanceInjected(r.agent),
            ),
            dshCheck("opted in: the guard refuses the edit, naming storage", (r) =>
              r.edit === undefined || (r.edit.stage === "denied" && r.edit.text.includes("storage"))
                ? []
                : [`edit outcome: ${r.edit.stage} ${JSON.stringify(r.edit.text.slice(0, 200))}`],
            ),
            dshCheck("no steer at all", (r) => {
              const p = r.agent.steered.map((s) => `steered: ${JSON.stringify(messageText(s).slice(0, 200))}`);
              const decisions = r.agent.hookResults("Stop").map((e) => e.decision);
              if (decisions.some((d) => d !== "pass"))
                p.push(`Stop hook/result decisions ${JSON.stringify(decisions)}`);
              return p;
            }),
          ),
          [
            dshCheck("the state location really is unwritable", (r) => r.stateProblems),
            dshCheck("our Stop hook ran every time", (r) => everyStopRan(r.c, r.agent, STOPS)),
          ],
        );
      },
    );
  }
});
