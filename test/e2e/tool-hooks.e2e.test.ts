// Tool hooks end to end (edit guard = PreToolUse, recall evidence = PostToolUse, Bash
// compression = Claude PostToolUse), on the real hosts with hooks our installer registered.
// Each scenario also runs without hooks (or with the one thing it depends on removed), and the
// same check must then fail.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { assertOffline, check, expectCheck, withAndWithoutIn } from "./checks.ts";
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
import { realCommand } from "../support/real-outputs.ts";

const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };

const suite = e2eSuite();

function setup(name: string, mode: Mode, host: Host, script: (c: E2ECase) => Scenario, mcp: McpOptions = {}): E2ECase {
  return suite.setup(name, mode, host, script, { projectConfig: OPT_IN, mcp });
}
const withAndWithout = withAndWithoutIn(suite);

/** A directory that exists, for a compiler path that does not. */
const mockDir = () => path.dirname(FAKE_MCP);

/** Claude: tool_result blocks of a request (all messages), as {is_error, text}. */
function claudeToolResults(r: RunResult): { isError: boolean; text: string }[] {
  return r.requests.flatMap((q) =>
    ((q.body?.messages ?? []) as any[])
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b) => b?.type === "tool_result")
      .map((b) => ({
        isError: b.is_error === true,
        text: typeof b.content === "string" ? b.content : JSON.stringify(b.content),
      })),
  );
}

const ARCHIVE_PATH = /saved at \\?"(.+?)\\?" and can be read/;

/** toolResultText(r) → the text of the last tool_result the model received (a block list joined), if any. */
function toolResultText(r: RunResult): string | undefined {
  const last = claudeToolResults(r).at(-1)?.text;
  if (last === undefined || !last.startsWith("[")) return last;
  try {
    return (JSON.parse(last) as Array<{ text?: string }>).map((b) => b.text ?? "").join("\n");
  } catch {
    return last;
  }
}

/** originalOf(archive) → the complete original: our archive's JSON object, or the host's own saved text. */
function originalOf(archive: string): { stdout: string; stderr: string } {
  const text = fs.readFileSync(archive, "utf8");
  try {
    const parsed = JSON.parse(text) as { stdout?: unknown; stderr?: unknown };
    if (typeof parsed.stdout === "string")
      return { stdout: parsed.stdout, stderr: typeof parsed.stderr === "string" ? parsed.stderr : "" };
  } catch {
    // The host's own file: the output as text.
  }
  return { stdout: text, stderr: "" };
}

describe("claude", () => {
  const writeTurn = (c: E2ECase) => ({
    reply: {
      blocks: [
        {
          type: "tool_use" as const,
          name: "Write",
          input: { file_path: path.join(c.workspace, "guarded.txt"), content: "x\n" },
        },
      ],
    },
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
      const c = setup("claude-guard", mode, "claude", (c) => ({
        claude: [writeTurn(c), { reply: text("DONE answer") }],
      }));
      return runClaude(c, ["-p", "write a file"]);
    };
    await withAndWithout(run, refused);
  });

  test("recall evidence: after a successful recall_fused the same Write goes through", async () => {
    const c = setup("claude-recall-then-write", "hooks", "claude", (c) => ({
      claude: [
        {
          reply: {
            blocks: [{ type: "tool_use", name: "mcp__velesdb-memory__recall_fused", input: { query: "guarded.txt" } }],
          },
        },
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

  const recallTurn = {
    reply: {
      blocks: [
        { type: "tool_use" as const, name: "mcp__velesdb-memory__recall_fused", input: { query: "guarded.txt" } },
      ],
    },
  };

  test("a failed recall (the MCP tool answers isError) leaves the Write refused; a working one unlocks it", async () => {
    const run = (failing: boolean) => {
      const c = setup(
        `claude-failed-recall-${failing}`,
        "hooks",
        "claude",
        (c) => ({ claude: [recallTurn, writeTurn(c), { reply: text("DONE answer") }] }),
        { mode: failing ? "is-error" : "structured" },
      );
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
      const naming = stops.filter(
        (q) => q.lastText.includes("Learning checkpoint") && q.lastText.includes(r.case.workspace),
      );
      if (naming.length !== 1)
        p.push(`${naming.length} checkpoint continuation(s) name ${r.case.workspace}, expected 1`);
      if (r.exitCode !== 0) p.push(`exit code ${r.exitCode}`);
      if (!r.stdout.includes("AFTER CHECKPOINT")) p.push("the run did not end with the continuation's answer");
      return p;
    });
    const run = (mode: Mode) => {
      const c = setup("claude-stop-checkpoint", mode, "claude", (c) => ({
        claude:
          mode === "hooks"
            ? [
                recallTurn,
                writeTurn(c),
                { reply: text("DONE answer") },
                { reply: text("AFTER CHECKPOINT") },
                { reply: text("EXTRA") },
              ]
            : [writeTurn(c), { reply: text("DONE answer") }, { reply: text("AFTER CHECKPOINT") }],
      }));
      return runClaude(c, ["-p", "recall, write, stop"]);
    };
    await withAndWithout(run, checkpoint);
  });

  // Bash compression on real tool output: the host itself runs a real test runner in the
  // workspace (test/support/real-outputs.ts), node --test's TAP report (≈23 KB: inline, between
  // our 12 KB floor and Claude's 30 000-character limit) or pytest -v (≈50 KB: Claude persists it
  // and passes persistedOutputPath with stdout cut). The compiler is the double's compile-stdin,
  // which answers its whole input after an "E2E-COMPILED" line, as the real one does with a view
  // inside its budget. The lines a reader needs are parsed, with the runner's own structure, from
  // the complete original the footer's archive holds, and must be lines of what the model read.
  const compressed = (parse: (stdout: string, stderr: string) => string[], archiveIs: RegExp) =>
    check(
      "the Bash result reached the model compiled: every failure and the summary verbatim, the archive named and complete",
      (r) => {
        const t = toolResultText(r);
        if (t === undefined) return ["no tool_result reached the model"];
        if (!t.includes("E2E-COMPILED")) return ["the tool_result is not a compiled view"];
        const p: string[] = [];
        const archive = ARCHIVE_PATH.exec(t)?.[1];
        if (!archive || !fs.existsSync(archive)) return [`the footer names no existing archive (${archive})`];
        if (!archiveIs.test(archive)) p.push(`the archive ${archive} is not ${archiveIs}`);
        const original = originalOf(archive);
        const needed = parse(original.stdout, original.stderr);
        if (needed.length === 0) p.push("the original holds no line the runner marks (not a failing run?)");
        const lines = new Set(t.split("\n"));
        for (const line of needed) if (!lines.has(line)) p.push(`lost: ${line}`);
        if (t.length > original.stdout.length / 3)
          p.push(`the model read ${t.length} of ${original.stdout.length} characters: not compiled down`);
        if (/persistedOutputPath|Output too large/.test(t))
          p.push("the host's preview or persisted keys reached the model");
        return p;
      },
    );
  for (const [label, runner, archiveIs] of [
    ["node --test with 2 failures (≈23 KB, inline)", "node --test: 2 failures among 300", /velesdb-output\./],
    ["pytest -v with 2 failures (≈50 KB, persisted by the host)", "pytest", /tool-results\//],
  ] as const) {
    test(`post-tool-use: ${label} reaches the model compiled, every failure kept`, async () => {
      let parse: (stdout: string, stderr: string) => string[] = () => [];
      const run = (mode: Mode) => {
        const c = setup(`claude-compress-${runner.split(" ")[0]}`, mode, "claude", (c) => {
          const real = realCommand(runner, c.workspace, { exitZero: true });
          parse = real.mustKeep;
          return {
            claude: [
              {
                reply: {
                  blocks: [
                    { type: "tool_use", name: "Bash", input: { command: real.command, description: "run the tests" } },
                  ],
                },
              },
              { reply: text("DONE answer") },
            ],
          };
        });
        return runClaude(c, ["-p", "run the tests"], { env: { VELESDB_MEMORY_BIN: FAKE_MCP } });
      };
      await withAndWithout(
        run,
        compressed((out, err) => parse(out, err), archiveIs),
      );
    });
  }

  test("post-tool-use: with the compiler absent the tool_result is the untouched original", async () => {
    let parse: (stdout: string, stderr: string) => string[] = () => [];
    const run = (compiler: string) => {
      const c = setup(`claude-no-compiler-${path.basename(compiler)}`, "hooks", "claude", (c) => {
        const real = realCommand("node --test: 2 failures among 300", c.workspace, { exitZero: true });
        parse = real.mustKeep;
        return {
          claude: [
            {
              reply: {
                blocks: [
                  { type: "tool_use", name: "Bash", input: { command: real.command, description: "run the tests" } },
                ],
              },
            },
            { reply: text("DONE answer") },
          ],
        };
      });
      return runClaude(c, ["-p", "run the tests"], { env: { VELESDB_MEMORY_BIN: compiler } });
    };
    const untouched = check("the tool_result is the complete original output, with no footer", (r) => {
      const t = toolResultText(r) ?? "";
      const p: string[] = [];
      if (ARCHIVE_PATH.test(t) || t.includes("E2E-COMPILED")) p.push("a compiled view or footer reached the model");
      if (t.split("\n").filter((l) => /^ok \d+ - slug /.test(l)).length !== 300)
        p.push("the 300 passing tests are not all there");
      if (parse(t, "").length !== 3) p.push("the failures and the tally are not all there");
      return p;
    });
    const absent = await run(path.join(mockDir(), "no-such-velesdb-memory"));
    expectCheck(untouched, absent).toPass();
    // Control: the same run with the compiler present is compiled.
    expectCheck(untouched, await run(FAKE_MCP)).toFail();
    assertOffline(absent, suite.mock.escaped());
  });
});

describe("codex", () => {
  const patchTurn = {
    reply: {
      items: [
        {
          type: "custom_tool_call",
          name: "apply_patch",
          call_id: "c2",
          input: "*** Begin Patch\n*** Add File: guarded.txt\n+x\n*** End Patch\n",
        },
      ],
    },
  };

  test("edit guard: an apply_patch before any recall is refused and the reason names recall_fused", async () => {
    const refused = check("the patch was refused with a reason naming the recall", (r) => {
      const outputs = r.requests.flatMap((q) =>
        ((q.body?.input ?? []) as any[]).filter((i) => i?.type === "custom_tool_call_output" && i.call_id === "c2"),
      );
      const p: string[] = [];
      if (fs.existsSync(path.join(r.case.workspace, "guarded.txt"))) p.push("the file was written");
      if (outputs.length === 0) p.push("no custom_tool_call_output for the patch");
      else if (!JSON.stringify(outputs.at(-1).output).includes("recall_fused"))
        p.push("the patch output does not name recall_fused");
      return p;
    });
    const run = (mode: Mode) => {
      const c = setup("codex-guard", mode, "codex", () => ({ codex: [patchTurn, { reply: codexText("DONE_FINAL") }] }));
      return runCodex(c, "write a file");
    };
    await withAndWithout(run, refused);
  });

  test("post-tool-use: a real pytest run with 2 failures reaches the model as the compiled view alone, every failure kept (the block reason replaces it)", async () => {
    let parse: (stdout: string, stderr: string) => string[] = () => [];
    const compiledOnly = check(
      "the shell call's output is the compiled view with the archive path: every failure and the summary verbatim, the passes folded",
      (r) => {
        const outputs = r.requests.flatMap((q) =>
          ((q.body?.input ?? []) as any[]).filter((i) => i?.type === "function_call_output" && i.call_id === "c5"),
        );
        if (outputs.length === 0) return ["no function_call_output for the shell call"];
        const out = String(outputs.at(-1).output);
        if (!out.includes("E2E-COMPILED")) return ["the output is not a compiled view"];
        const archive = /saved at "([^"]+)"/.exec(out)?.[1];
        if (!archive || !fs.existsSync(archive)) return ["no archive path"];
        const original = originalOf(archive);
        const p: string[] = [];
        const needed = parse(original.stdout, original.stderr);
        if (needed.length === 0) p.push("the original holds no line pytest marks");
        const lines = new Set(out.split("\n"));
        for (const line of needed) if (!lines.has(line)) p.push(`lost: ${line}`);
        if (out.split("PASSED").length > 20) p.push("the raw output reached the model too");
        return p;
      },
    );
    const run = (mode: Mode) => {
      const c = setup("codex-compress", mode, "codex", (c) => {
        const real = realCommand("pytest", c.workspace);
        parse = real.mustKeep;
        return {
          codex: [
            {
              reply: {
                items: [
                  {
                    type: "function_call",
                    name: "exec_command",
                    arguments: JSON.stringify({ cmd: real.command }),
                    call_id: "c5",
                  },
                ],
              },
            },
            { reply: codexText("DONE_FINAL") },
          ],
        };
      });
      return runCodex(c, "run the tests", { env: { VELESDB_MEMORY_BIN: FAKE_MCP } });
    };
    await withAndWithout(run, compiledOnly);
  });

  test("recall evidence: after a successful recall_fused the same patch goes through", async () => {
    const c = setup("codex-recall-then-patch", "hooks", "codex", () => ({
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
                arguments: JSON.stringify({ query: "guarded.txt" }),
                call_id: "c4",
              },
            ],
          },
        },
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
