// Two sessions of one repository open at once keep both working contexts (docs/working-context.md).
// The calls come from the compiled hooks (Claude's SessionStart and
// Stop answers for two session ids), and are run as the model would run them against the REAL
// velesdb-memory 0.17.0 (VELESDB_MEMORY_BIN_REAL; skipped without it, failed under CI=true).
// Negative control: the one shared slot the hooks used before, where the second save replaces
// the first.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  additionalContextOf,
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  type Sandbox,
} from "./support/hook-runner.ts";
import { REAL_VELESDB_MEMORY, RealServer, requireRealServerUnderCi } from "./support/real-velesdb-memory.ts";

requireRealServerUnderCi(test, "the per-session working context");

/** The (project, session) of the first `<tool>(project="…", session="…")` in a hook text. */
function slotIn(text: string, tool: string): { project: string; session: string } {
  const match = new RegExp(
    `mcp__velesdb-memory__${tool}\\(project=("(?:[^"\\\\]|\\\\.)*"), session=("(?:[^"\\\\]|\\\\.)*")\\)`,
  ).exec(text);
  if (!match) throw new Error(`no ${tool} call in: ${text.slice(0, 200)}`);
  return { project: JSON.parse(match[1]!), session: JSON.parse(match[2]!) };
}

describe.skipIf(!REAL_VELESDB_MEMORY)("two Claude sessions of one repository, the real server", () => {
  let box: Sandbox;
  let server: RealServer;
  beforeAll(async () => {
    box = makeSandbox("working-context");
    server = await RealServer.start();
  });
  afterAll(() => {
    server?.stop();
    box?.cleanup();
  });

  const hook = (event: "session-start" | "stop", fixture: string, sessionId: string): string => {
    const payload = loadPayload("claude", fixture, { cwd: box.workspace, session_id: sessionId });
    const answer = parseOneJsonAnswer(
      runBinary(["claude", event], payload, { env: box.env, cwd: box.workspace }).stdout,
    );
    return additionalContextOf(answer) ?? "";
  };
  const save = (slot: { project: string; session: string }, goal: string) =>
    server.tool("save_working_context", { ...slot, working: { goal, pending_actions: [`finish ${goal}`] } });
  const load = async (slot: { project: string; session: string }) =>
    (await server.tool("load_working_context", slot)).result!.structuredContent as {
      found: boolean;
      working: { goal?: string } | null;
      other_sessions: string[];
    };

  test("each saves its own slot; the next session's load lists both, most recent first, and each loads back", async () => {
    const a = slotIn(hook("stop", "stop.first", "aaaa-1111"), "save_working_context");
    const b = slotIn(hook("stop", "stop.first", "bbbb-2222"), "save_working_context");
    expect(a.session).toBe("rolling/aaaa-1111");
    expect(b.session).toBe("rolling/bbbb-2222");
    // Each session's SessionStart loads the slot its Stop saves.
    expect(slotIn(hook("session-start", "session-start.startup", "aaaa-1111"), "load_working_context")).toEqual(a);
    expect((await save(a, "goal of A")).error).toBeUndefined();
    await Bun.sleep(1100); // saved_at has a resolution of one second
    expect((await save(b, "goal of B")).error).toBeUndefined();

    const c = slotIn(hook("session-start", "session-start.startup", "cccc-3333"), "load_working_context");
    const first = await load(c);
    expect(first.found).toBe(false);
    expect(first.other_sessions).toEqual([b.session, a.session]);
    expect((await load({ project: c.project, session: first.other_sessions[0]! })).working?.goal).toBe("goal of B");
    expect((await load({ project: c.project, session: first.other_sessions[1]! })).working?.goal).toBe("goal of A");
    // A resumed session finds its own slot at once.
    expect((await load(a)).found).toBe(true);
  });

  test("negative control: one shared slot keeps only the last save", async () => {
    const shared = { project: "shared-slot-control", session: "rolling" };
    await save(shared, "goal of A");
    await save(shared, "goal of B");
    const loaded = await load(shared);
    expect(loaded.working?.goal).toBe("goal of B");
    expect(loaded.other_sessions).toEqual([]);
  });
});
