// The harness itself, on the real hosts: Codex trust computed by the harness is what Codex
// computes; untrusted hooks are skipped (the reason trust matters); the fake velesdb-memory MCP
// server works as a host subprocess (the tool-hook scenarios build on it); the trap proxy
// catches traffic that is not addressed to 127.0.0.1.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as net from "node:net";
import { assertOffline, codexMessages } from "./checks.ts";
import {
  codexHooksList,
  codexTrustHash,
  createCase,
  e2eSuite,
  E2E_PROJECT,
  registerHooks,
  runClaude,
  runCodex,
  installedHooksBin,
  type CaseOptions,
  type E2ECase,
} from "./harness.ts";
import { codexText, text, type Scenario } from "./mock-llm.ts";

const LOAD = `load_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)

const suite = e2eSuite();

function setup(name: string, script: Scenario, options: CaseOptions = {}): E2ECase {
  const c = createCase(suite.mock, name, options);
  suite.cases.push(c);
  suite.mock.script(c.scenario, script);
  return c;
}

describe("codex hook trust", () => {
  test("the trust state the harness writes is what codex app-server reports as trusted", async () => {
    const c = setup("codex-trust", {});
    registerHooks(c, "codex");
    const hooks = (await codexHooksList(c)).filter((h) => h.command.includes(installedHooksBin(c)));
    expect(hooks.map((h) => h.eventName).sort()).toEqual(["postToolUse", "preToolUse", "sessionStart", "stop"]);
    const entries = JSON.parse(fs.readFileSync(`${c.codexHome}/hooks.json`, "utf8")).hooks as Record<string, any[]>;
    for (const h of hooks) {
      const wire = h.eventName[0]!.toUpperCase() + h.eventName.slice(1);
      const group = entries[wire]![0];
      expect(h.currentHash).toBe(codexTrustHash(wire, group.matcher, group.hooks[0]));
      expect(h.trustStatus).toBe("trusted");
    }
  });

  test("negative control: without the trust state Codex reports the hooks untrusted and skips them", async () => {
    const c = setup("codex-untrusted", { codex: [{ reply: codexText("FIRST_FINAL") }] });
    registerHooks(c, "codex", { codexTrust: "untrusted" });
    const hooks = (await codexHooksList(c)).filter((h) => h.command.includes(installedHooksBin(c)));
    expect(hooks.length).toBeGreaterThan(0);
    for (const h of hooks) expect(h.trustStatus).not.toBe("trusted");
    const r = await runCodex(c, "hello");
    expect(r.exitCode).toBe(0);
    expect(r.requests.length).toBe(1); // no Stop continuation either
    expect(codexMessages(r.requests[0]!, "developer").some((t) => t.includes(LOAD))).toBe(false);
    assertOffline(r, suite.mock.escaped());
  });
});

describe("fake velesdb-memory MCP server", () => {
  const mcpCalls = (c: E2ECase): any[] =>
    fs.existsSync(c.mcpLog)
      ? fs
          .readFileSync(c.mcpLog, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
          .filter((m) => m.method === "tools/call")
      : [];

  for (const failing of [false, true]) {
    test(`claude calls mcp__velesdb-memory__recall_fused through it (${failing ? "failing" : "working"} variant)`, async () => {
      const c = setup(
        `claude-mcp-${failing ? "fail" : "ok"}`,
        {
          claude: [
            {
              reply: {
                blocks: [{ type: "tool_use", name: "mcp__velesdb-memory__recall_fused", input: { query: "e2e" } }],
              },
            },
            { reply: text("DONE answer") },
          ],
        },
        { mcp: { mode: failing ? "is-error" : "structured" } },
      );
      const r = await runClaude(c, ["-p", "recall something"]);
      expect(r.exitCode).toBe(0);
      expect(mcpCalls(c).map((m) => m.params?.name)).toEqual(["recall_fused"]);
      const second = r.requests[1];
      expect(second).toBeDefined();
      const results = (second!.body.messages as any[])
        .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
        .filter((b) => b.type === "tool_result");
      expect(results.length).toBe(1);
      expect(Boolean(results[0].is_error)).toBe(failing);
      // The double's real answers: the recall's JSON (one memory), or rmcp's error text.
      expect(JSON.stringify(results[0].content)).toContain(failing ? "failed to deserialize parameters" : "memories");
      assertOffline(r, suite.mock.escaped());
    });
  }

  test("codex calls mcp__velesdb_memory__recall_fused through it (after tool search)", async () => {
    const c = setup(
      "codex-mcp",
      {
        codex: [
          {
            reply: {
              items: [{ type: "tool_search_call", call_id: "c3", execution: "client", arguments: { query: "recall" } }],
            },
          },
          {
            reply: {
              items: [
                {
                  type: "function_call",
                  namespace: "mcp__velesdb_memory",
                  name: "recall_fused",
                  arguments: JSON.stringify({ query: "e2e" }),
                  call_id: "c4",
                },
              ],
            },
          },
          { reply: codexText("DONE_FINAL") },
        ],
      },
      { mcp: {} },
    );
    const r = await runCodex(c, "recall something");
    expect(r.exitCode).toBe(0);
    expect(mcpCalls(c).map((m) => m.params?.name)).toEqual(["recall_fused"]);
    const outputs = (r.requests.at(-1)!.body.input as any[]).filter(
      (i) => i.type === "function_call_output" && i.call_id === "c4",
    );
    expect(outputs.length).toBe(1);
    // The model reads the text block of the double's real answer: the memories, ids exact.
    expect(JSON.stringify(outputs[0].output)).toContain('\\"memories\\":[{');
    expect(JSON.stringify(outputs[0].output)).toContain("16439525647125867986");
    assertOffline(r, suite.mock.escaped());
  });
});

describe("trap proxy", () => {
  test("a request to another address through the hosts' proxy settings is caught and logged", async () => {
    const before = suite.mock.escaped().length;
    const url = new URL(suite.mock.proxyUrl);
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () =>
        socket.write("CONNECT example.invalid:443 HTTP/1.1\r\nHost: example.invalid:443\r\n\r\n"),
      );
      socket.on("data", () => socket.end());
      socket.on("close", () => resolve());
      socket.on("error", reject);
    });
    const caught = suite.mock.escaped().slice(before);
    expect(caught).toEqual(["CONNECT example.invalid:443 HTTP/1.1"]);
    // Leave the log clean for the offline assertions of other tests: drop what we caused.
    suite.mock.forgetEscaped(before);
  });
});
