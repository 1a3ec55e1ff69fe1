// Tool hooks end to end (edit guard = PreToolUse, recall evidence = PostToolUse, Bash
// compression = Claude PostToolUse), on the real hosts with hooks our installer registered.
// Each scenario also runs without hooks (or with the one thing it depends on removed), and the
// same check must then fail.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { assertOffline, check, expectCheck } from "./checks.ts";
import {
  e2eSuite,
  type Mode,
  E2E_PROJECT,
  FAKE_MCP,
  runClaude,
  runCodex,
  type E2ECase,
  type McpOptions,
  type Host,
  type RunResult,
} from "./harness.ts";
import { codexText, text, type Scenario } from "./mock-llm.ts";
import { realisticCompiler } from "../support/compress-fixtures.ts";

const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };

const suite = e2eSuite();

function setup(name: string, mode: Mode, host: Host, script: (c: E2ECase) => Scenario, mcp: McpOptions = {}): E2ECase {
  return suite.setup(name, mode, host, script, { projectConfig: OPT_IN, mcp });
}
const withAndWithout = suite.withAndWithout;

/** A directory that exists, for a compiler path that does not. */
const mockDir = () => path.dirname(FAKE_MCP);

/** Claude: tool_result blocks of a request (all messages), as {is_error, text}. */
function claudeToolResults(r: RunResult): { isError: boolean; text: string }[] {
  return r.requests.flatMap((q) =>
    ((q.body?.messages ?? []) as any[])
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b) => b?.type === "tool_result")
      .map((b) => ({ isError: b.is_error === true, text: typeof b.content === "string" ? b.content : JSON.stringify(b.content) })),
  );
}


describe("claude", () => {
  const writeTurn = (c: E2ECase) => ({
    reply: { blocks: [{ type: "tool_use" as const, name: "Write", input: { file_path: path.join(c.workspace, "guarded.txt"), content: "x\n" } }] },
  });

  test("edit guard: a Write before any recall is refused and the reason names recall_fused", async () => {
    const refused = check("the Write was refused with a reason naming the recall", (r) => {
      const p: string[] = [];
      if (fs.existsSync(path.join(r.case.workspace, "guarded.txt"))) p.push("the file was written");
      const denial = claudeToolResults(r).find((t) => t.isError && t.text.includes("recall_fused"));
      if (!denial) p.push("no is_error tool_result naming recall_fused reached the model");
      return p;
    });
    const run = (mode: Mode) => {
      const c = setup("claude-guard", mode, "claude", (c) => ({ claude: [writeTurn(c), { reply: text("DONE answer") }] }));
      return runClaude(c, ["-p", "write a file"]);
    };
    await withAndWithout(run, refused);
  });

  test("recall evidence: after a successful recall_fused the same Write goes through", async () => {
    const c = setup("claude-recall-then-write", "hooks", "claude", (c) => ({
      claude: [
        { reply: { blocks: [{ type: "tool_use", name: "mcp__velesdb-memory__recall_fused", input: { query: "guarded.txt" } }] } },
        writeTurn(c),
        { reply: text("DONE answer") },
      ],
    }));
    const r = await runClaude(c, ["-p", "recall, then write a file"]);
    expect(r.exitCode).toBe(0);
    expect(fs.existsSync(path.join(c.workspace, "guarded.txt"))).toBe(true);
    expect(claudeToolResults(r).filter((t) => t.isError)).toEqual([]);
    assertOffline(r, suite.mock.escaped());
  });

  const recallTurn = { reply: { blocks: [{ type: "tool_use" as const, name: "mcp__velesdb-memory__recall_fused", input: { query: "guarded.txt" } }] } };

  test("a failed recall (the MCP tool answers isError) leaves the Write refused; a working one unlocks it", async () => {
    const run = (failing: boolean) => {
      const c = setup(`claude-failed-recall-${failing}`, "hooks", "claude", (c) => ({ claude: [recallTurn, writeTurn(c), { reply: text("DONE answer") }] }), { mode: failing ? "is-error" : "structured" });
      return runClaude(c, ["-p", "recall, then write a file"]);
    };
    const written = check("the Write after the recall went through", (r) =>
      fs.existsSync(path.join(r.case.workspace, "guarded.txt")) ? [] : ["guarded.txt was not written"],
    );
    const failed = await run(true);
    const worked = await run(false);
    assertOffline(failed, suite.mock.escaped());
    expectCheck(written, failed).toFail();
    expect(claudeToolResults(failed).some((t) => t.isError && t.text.includes("recall_fused"))).toBe(true);
    expectCheck(written, worked).toPass();
  });

  test("Stop after edits: the checkpoint names the edited repository, once; the run ends normally", async () => {
    const checkpoint = check("one Stop checkpoint naming the workspace repository reached the model", (r) => {
      const p: string[] = [];
      const stops = r.requests.filter((q) => q.lastText.includes("Stop hook additional context:"));
      const naming = stops.filter((q) => q.lastText.includes("Learning checkpoint") && q.lastText.includes(r.case.workspace));
      if (naming.length !== 1) p.push(`${naming.length} checkpoint continuation(s) name ${r.case.workspace}, expected 1`);
      if (r.exitCode !== 0) p.push(`exit code ${r.exitCode}`);
      if (!r.stdout.includes("AFTER CHECKPOINT")) p.push("the run did not end with the continuation's answer");
      return p;
    });
    const run = (mode: Mode) => {
      const c = setup("claude-stop-checkpoint", mode, "claude", (c) => ({
        claude: mode === "hooks"
          ? [recallTurn, writeTurn(c), { reply: text("DONE answer") }, { reply: text("AFTER CHECKPOINT") }, { reply: text("EXTRA") }]
          : [writeTurn(c), { reply: text("DONE answer") }, { reply: text("AFTER CHECKPOINT") }],
      }));
      return runClaude(c, ["-p", "recall, write, stop"]);
    };
    await withAndWithout(run, checkpoint);
  });

  // Compression through the realistic compiler fixture (dedupes repeats, keeps error lines,
  // URLs, hashes and numbers verbatim): a noisy build log with one error line buried in it.
  const noisyLog = (repeats: number) =>
    `for i in $(seq 1 ${repeats}); do echo '   Compiling crate-alpha (build script) ... ok'; echo '   Downloaded crate-beta from the local mirror'; done; ` +
    `echo "error[E0463]: can't find crate for core"; ` +
    `for i in $(seq 1 ${repeats}); do echo '   Compiling crate-alpha (build script) ... ok'; done`;
  const ARCHIVE_PATH = /saved at \\?"(.+?)\\?" and can be read/;
  const compiledLog = check("the Bash result reached the model compiled: error line kept, archive named and present", (r) => {
    const results = claudeToolResults(r);
    if (results.length === 0) return ["no tool_result reached the model"];
    const t = results.at(-1)!.text;
    const p: string[] = [];
    if (!t.includes("error[E0463]")) p.push("the error line is missing");
    const repeats = t.split("Compiling crate-alpha").length - 1;
    if (repeats > 5) p.push(`the raw log reached the model (${repeats} repeated lines)`);
    const archive = ARCHIVE_PATH.exec(t)?.[1];
    if (!archive) p.push("the footer names no archive");
    else if (!fs.existsSync(archive)) p.push(`the archive ${archive} does not exist`);
    if (/persistedOutputPath|Output too large/.test(t)) p.push("the host's preview or persisted keys reached the model");
    return p;
  });
  for (const [label, repeats] of [["≈20 KB, inline", 200], ["≈200 KB, persisted by the host", 2000]] as const) {
    test(`post-tool-use: a noisy ${label} log reaches the model compiled, not as the host's preview`, async () => {
      const run = (mode: Mode) => {
        const c = setup(`claude-noisy-${repeats}`, mode, "claude", () => ({
          claude: [
            { reply: { blocks: [{ type: "tool_use", name: "Bash", input: { command: noisyLog(repeats), description: "build" } }] } },
            { reply: text("DONE answer") },
          ],
        }));
        return runClaude(c, ["-p", "build it"], { env: { VELESDB_MEMORY_BIN: realisticCompiler() } });
      };
      await withAndWithout(run, compiledLog);
    });
  }

  test("post-tool-use: with the compiler absent the tool_result is the untouched original", async () => {
    const run = (compiler: string) => {
      const c = setup(`claude-no-compiler-${path.basename(compiler)}`, "hooks", "claude", () => ({
        claude: [
          { reply: { blocks: [{ type: "tool_use", name: "Bash", input: { command: noisyLog(200), description: "build" } }] } },
          { reply: text("DONE answer") },
        ],
      }));
      return runClaude(c, ["-p", "build it"], { env: { VELESDB_MEMORY_BIN: compiler } });
    };
    const untouched = check("the tool_result is the complete original output", (r) => {
      const t = claudeToolResults(r).at(-1)?.text ?? "";
      const repeats = t.split("Compiling crate-alpha").length - 1;
      return repeats === 400 && t.includes("error[E0463]") && !ARCHIVE_PATH.test(t) ? [] : [`${repeats} raw lines, footer ${ARCHIVE_PATH.test(t)}`];
    });
    const absent = await run(path.join(mockDir(), "no-such-velesdb-memory"));
    expectCheck(untouched, absent).toPass();
    // Control: the same run with the compiler present is compiled.
    expectCheck(untouched, await run(realisticCompiler())).toFail();
    assertOffline(absent, suite.mock.escaped());
  });

  // Bash compression: the fake's compile-stdin (VELESDB_MEMORY_BIN) answers one line
  // "E2E-COMPILED lines=N first=… last=…". `seq 1 N` prints N lines: 4000 → ≈19 KB (inline,
  // between the 12 KB floor and the host's 30 000-character limit), 12000 → ≈59 KB (the host
  // persists it and passes persistedOutputPath with stdout cut at the limit).
  const compressed = (lines: number) =>
    check(`the Bash result reached the model compiled from all ${lines} lines`, (r) => {
      const results = claudeToolResults(r);
      if (results.length === 0) return ["no tool_result reached the model"];
      const t = results.at(-1)!.text;
      const p: string[] = [];
      if (!t.includes(`E2E-COMPILED lines=${lines} first=1 last=${lines}`)) p.push("the tool_result is not the compiled view of the complete output");
      if (t.includes(`\n${lines - 1}\n`) || t.includes(`${lines - 1}\\n`)) p.push("the raw output still reaches the model");
      // Inline outputs are archived by the hook; a persisted output's archive is the host's own file.
      const archive = lines < 10000 ? /velesdb-output\./ : /tool-results\//;
      if (!archive.test(t)) p.push(`the footer does not name the archive (${archive})`);
      if (/persistedOutputPath/.test(t)) p.push("persistedOutputPath leaked into the replacement");
      return p;
    });
  for (const lines of [4000, 12000]) {
    test(`post-tool-use: a ${lines}-line Bash output reaches the model compiled`, async () => {
      const run = (mode: Mode) => {
        const c = setup(`claude-compress-${lines}`, mode, "claude", () => ({
          claude: [
            { reply: { blocks: [{ type: "tool_use", name: "Bash", input: { command: `seq 1 ${lines}`, description: "e2e output" } }] } },
            { reply: text("DONE answer") },
          ],
        }));
        return runClaude(c, ["-p", "print numbers"], { env: { VELESDB_MEMORY_BIN: FAKE_MCP } });
      };
      await withAndWithout(run, compressed(lines));
    });
  }
});

describe("codex", () => {
  const patchTurn = {
    reply: {
      items: [{ type: "custom_tool_call", name: "apply_patch", call_id: "c2", input: "*** Begin Patch\n*** Add File: guarded.txt\n+x\n*** End Patch\n" }],
    },
  };

  test("edit guard: an apply_patch before any recall is refused and the reason names recall_fused", async () => {
    const refused = check("the patch was refused with a reason naming the recall", (r) => {
      const outputs = r.requests.flatMap((q) => ((q.body?.input ?? []) as any[]).filter((i) => i?.type === "custom_tool_call_output" && i.call_id === "c2"));
      const p: string[] = [];
      if (fs.existsSync(path.join(r.case.workspace, "guarded.txt"))) p.push("the file was written");
      if (outputs.length === 0) p.push("no custom_tool_call_output for the patch");
      else if (!JSON.stringify(outputs.at(-1).output).includes("recall_fused")) p.push("the patch output does not name recall_fused");
      return p;
    });
    const run = (mode: Mode) => {
      const c = setup("codex-guard", mode, "codex", () => ({ codex: [patchTurn, { reply: codexText("DONE_FINAL") }] }));
      return runCodex(c, "write a file");
    };
    await withAndWithout(run, refused);
  });

  test("post-tool-use: a 5000-line shell output reaches the model as the compiled view alone (the block reason replaces it)", async () => {
    const compiledOnly = check("the shell call's output is the compiled view of all 5000 lines with the archive path, and nothing of the raw output", (r) => {
      const outputs = r.requests.flatMap((q) => ((q.body?.input ?? []) as any[]).filter((i) => i?.type === "function_call_output" && i.call_id === "c5"));
      if (outputs.length === 0) return ["no function_call_output for the shell call"];
      const out = String(outputs.at(-1).output);
      const p: string[] = [];
      if (!out.includes("E2E-COMPILED lines=5000 first=1 last=5000")) p.push("the output is not the compiled view of the whole output");
      if (!/saved at "[^"]+"/.test(out)) p.push("no archive path");
      if (out.includes("\n4999\n")) p.push("the raw output reached the model too");
      return p;
    });
    const run = (mode: Mode) => {
      const c = setup("codex-compress", mode, "codex", () => ({
        codex: [{ reply: { items: [{ type: "function_call", name: "exec_command", arguments: JSON.stringify({ cmd: "seq 1 5000" }), call_id: "c5" }] } }, { reply: codexText("DONE_FINAL") }],
      }));
      return runCodex(c, "count", { env: { VELESDB_MEMORY_BIN: FAKE_MCP } });
    };
    await withAndWithout(run, compiledOnly);
  });

  test("recall evidence: after a successful recall_fused the same patch goes through", async () => {
    const c = setup("codex-recall-then-patch", "hooks", "codex", () => ({
      codex: [
        { reply: { items: [{ type: "tool_search_call", call_id: "c3", execution: "client", arguments: { query: "recall" } }] } },
        { reply: { items: [{ type: "function_call", namespace: "mcp__velesdb_memory", name: "recall_fused", arguments: JSON.stringify({ query: "guarded.txt" }), call_id: "c4" }] } },
        patchTurn,
        { reply: codexText("DONE_FINAL") },
      ],
    }));
    const r = await runCodex(c, "recall, then write a file");
    expect(r.exitCode).toBe(0);
    expect(fs.existsSync(path.join(c.workspace, "guarded.txt"))).toBe(true);
    assertOffline(r, suite.mock.escaped());
  });
});
