// The contract between the velesdb-memory double (fake-velesdb-memory.mjs) and the real server
// it stands for (crates.io velesdb-memory 0.17.0, VELESDB_MEMORY_BIN_REAL; .ci/run builds it):
// both run through the same sessions (velesdb-memory-cases.ts) and every answer the double
// models must be the real one, byte for byte, but for the server's prose (not copied into the
// repository), the day a fact was stored, and the JSON-RPC id. What the double does not model is
// named in its header (no state: one answer per tool); its failure modes are documented
// injections, each compared with the real answer to the request that makes the real server fail
// that way. Without the binary this file skips, and fails under CI=true.
import { afterAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describeWithReal, realBinary } from "../support/real-velesdb-memory.ts";
import { FAKE_MCP, type DoubleMode } from "./harness.ts";
import { initialize, initialized, mcpSession, toolCall, type McpRequest } from "./mcp-session.ts";
import {
  ASKED_VERSIONS,
  CANONICAL_CALLS,
  emptyStoreSession,
  factStoreSession,
  INJECTION_TRIGGERS,
  proseMasked,
  statelessSession,
  undated,
  withoutId,
} from "./velesdb-memory-cases.ts";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
});

/** real(requests) → the real server's answers, in a fresh private HOME and store (hash embedder). */
function real(requests: McpRequest[]): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-contract-"));
  temps.push(dir);
  fs.mkdirSync(path.join(dir, "home"));
  return mcpSession([realBinary()], requests, {
    HOME: path.join(dir, "home"),
    TMPDIR: dir,
    VELESDB_MEMORY_PATH: path.join(dir, "store"),
    VELESDB_MEMORY_QUIET: "1",
  });
}
const double = (mode: DoubleMode, requests: McpRequest[]): Promise<string[]> =>
  mcpSession(["node", FAKE_MCP, "--mode", mode], requests);

/** comparable(line) → what must be equal: prose masked where the line carries it, the stored day and the id masked. */
function comparable(line: string): string {
  const plain = withoutId(undated(line));
  return /"(instructions|inputSchema)"/.test(line) ? proseMasked(plain) : plain;
}
/** The answers of requests, paired with a label saying which request each one is. */
const labelled = (requests: McpRequest[], lines: string[]): [string, string][] =>
  requests
    .filter((r) => !("notification" in r))
    .map((r, i) => [JSON.stringify(r).slice(0, 160), comparable(lines[i]!)]);

/** The tool and arguments of a tools/call, to know a trigger however its _meta reads. */
const callOf = (r: McpRequest): string =>
  "method" in r && r.method === "tools/call"
    ? JSON.stringify([(r.params as any).name, (r.params as any).arguments])
    : "";
const TRIGGERS = new Set(Object.values(INJECTION_TRIGGERS).map(callOf));
/**
 * modelled(requests, lines) → the labelled answers the double models in its plain modes: the
 * injections' triggers are left out (they are the failing calls the rpc-error and is-error modes
 * copy, compared on their own below; in structured or empty mode the double answers them as a success).
 */
const modelled = (requests: McpRequest[], lines: string[]): [string, string][] =>
  labelled(requests, lines).filter((_, i) => !TRIGGERS.has(callOf(requests.filter((r) => !("notification" in r))[i]!)));

/** sameAnswers(mode, script, select) → both run the script; the answers `select` keeps must be equal. Returns the real ones. */
async function sameAnswers(
  mode: DoubleMode,
  script: McpRequest[],
  select: (requests: McpRequest[], lines: string[]) => [string, string][] = labelled,
): Promise<string[]> {
  const [theirs, mine] = await Promise.all([real(script), double(mode, script)]);
  expect(select(script, mine)).toEqual(select(script, theirs));
  return theirs;
}

describeWithReal("the velesdb-memory double against the real velesdb-memory 0.17.0", () => {
  test.each(ASKED_VERSIONS.map((v) => [v]))(
    "initialize at %s, tools/list, ping and a call: the same answers",
    async (version) => {
      await sameAnswers("empty", [
        initialize(version),
        initialized,
        { method: "tools/list" },
        { method: "ping" },
        toolCall("recall_fused", { query: "x" }),
      ]);
    },
  );

  test("MCP 2026-07-28 without initialize, as Claude Code speaks it: server/discover, then _meta on every request", async () => {
    const script = statelessSession();
    const theirs = await sameAnswers("empty", script, modelled);
    // The triggers in this session: each mode's answer is the real one with the 2026 shape.
    for (const [mode, trigger] of Object.entries(INJECTION_TRIGGERS)) {
      const at = script.findIndex((r) => callOf(r) === callOf(trigger) && JSON.stringify(r).includes("_meta"));
      const [, answer] = await double(mode as DoubleMode, [
        script[0]!,
        {
          ...(script[at] as { method: string; params: any }),
          params: { ...(script[at] as any).params, arguments: { query: "guarded.txt" } },
        },
      ]);
      expect(comparable(answer!)).toBe(comparable(theirs[at]!));
    }
  });

  test("an empty store: the recall tools and the double's empty mode", async () => {
    await sameAnswers("empty", emptyStoreSession());
  });

  test("the store holding the fact: every tool's canonical answer, the unknown tool and save_working_context's refusals", async () => {
    await sameAnswers("structured", factStoreSession(), modelled);
    // Every tool of the real list was called (a new tool needs its canonical call and answer).
    const listed: string[] = JSON.parse((await real([initialize(), { method: "tools/list" }]))[1]!).result.tools.map(
      (t: { name: string }) => t.name,
    );
    expect(listed.filter((name) => name !== "remember" && !CANONICAL_CALLS.some(([n]) => n === name))).toEqual([]);
  });

  test.each(Object.entries(INJECTION_TRIGGERS))(
    "the %s mode answers a recall as the real server answers its trigger",
    async (mode, trigger) => {
      const script = [initialize(), trigger];
      const [theirs, mine] = await Promise.all([
        real(script),
        double(mode as DoubleMode, [initialize(), toolCall("recall_fused", { query: "guarded.txt" })]),
      ]);
      expect(comparable(mine[1]!)).toBe(comparable(theirs[1]!));
    },
  );

  test("negative control: the comparison sees a difference (structured against an empty store)", async () => {
    const script = [initialize(), toolCall("recall_fused", { query: "guarded.txt" })];
    const [theirs, mine] = await Promise.all([real(script), double("structured", script)]);
    expect(comparable(mine[1]!)).not.toBe(comparable(theirs[1]!));
  });
});
