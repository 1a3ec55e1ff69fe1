// Lifecycle hooks end to end, on the real hosts: SessionStart, Stop, PreCompact (Claude) and
// SessionStart(compact) (Codex). Every scenario runs twice — with our hooks registered, and
// without (negative control) — and asserts on what the NEXT MODEL REQUEST carried.
import { describe, expect, test } from "bun:test";
import {
  allOf,
  check,
  claudeHookContexts,
  claudeMessages,
  codexMessages,
  count,
  exitedCleanly,
  withAndWithoutIn,
} from "./checks.ts";
import {
  claudeSessionId,
  e2eSuite,
  type Mode,
  E2E_PROJECT,
  runClaude,
  runCodex,
  type CaseOptions,
  type E2ECase,
  type RunResult,
} from "./harness.ts";
import { codexText, text, type Scenario } from "./mock-llm.ts";

const LOAD = `load_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)
const SAVE = `save_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)

const suite = e2eSuite();

/** A fresh case for one run of a scenario, with our hooks registered or not. */
const setup = (
  name: string,
  mode: Mode,
  host: "claude" | "codex",
  script: Scenario,
  options: CaseOptions = {},
): E2ECase => suite.setup(name, mode, host, script, options);
const withAndWithout = withAndWithoutIn(suite);

// ---------------------------------------------------------------------------------------------
// Claude Code 2.1.328
// ---------------------------------------------------------------------------------------------
describe("claude", () => {
  // Finding: SessionStart additionalContext arrives as a role:"system" message right after the
  // first user message, text "SessionStart hook additional context: <ours>", followed in the
  // same message by the host's own environment block.
  const claudeSessionStartLoaded = check("SessionStart load guidance reached the first request", (r) => {
    const first = r.requests[0];
    if (!first) return ["no model request"];
    const system = claudeHookContexts(first, "SessionStart");
    if (system.length === 0) return ['no role:"system" message with "SessionStart hook additional context: …"'];
    return system.some((t) => t.includes(LOAD)) ? [] : [`SessionStart context lacks ${LOAD}`];
  });

  test("SessionStart: the load guidance with the configured project/session reaches the model", async () => {
    const run = (mode: Mode) => {
      const c = setup("claude-ss", mode, "claude", {
        claude: [{ reply: text("FIRST answer") }, { reply: text("SECOND answer") }],
      });
      return runClaude(c, ["-p", "hello"]);
    };
    await withAndWithout(run, allOf("claude session start", exitedCleanly, claudeSessionStartLoaded));
  });

  // Finding: Stop hookSpecificOutput.additionalContext makes the host take one more model turn;
  // the continuation request ends with a role:"user" message
  // "<system-reminder>\nStop hook additional context: <ours>…" (not "Stop hook feedback", which
  // is the decision:block spelling). The continuation's Stop (stop_hook_active:true) passes.
  const claudeStopOnce = check("Stop continued exactly once with the save guidance", (r) => {
    const p: string[] = [];
    if (r.requests.length !== 2)
      p.push(`expected 2 model requests (answer + one continuation), saw ${r.requests.length}`);
    const last = r.requests.at(-1);
    const users = last ? claudeMessages(last, "user").join("\n") : "";
    const n = count(users, "Stop hook additional context:");
    if (n !== 1) p.push(`the last request carries ${n} "Stop hook additional context:" message(s), expected 1`);
    else if (!users.includes(SAVE)) p.push(`the Stop context lacks ${SAVE}`);
    if (!r.stdout.includes("SECOND answer")) p.push("the run did not end with the continuation's answer");
    return p;
  });

  test("Stop: the first Stop continues once with the save guidance, the continuation's Stop passes", async () => {
    const run = (mode: Mode) => {
      const c = setup("claude-stop", mode, "claude", {
        claude: [{ reply: text("FIRST answer") }, { reply: text("SECOND answer") }, { reply: text("THIRD answer") }],
      });
      return runClaude(c, ["-p", "hello"]);
    };
    await withAndWithout(run, allOf("claude stop", exitedCleanly, claudeStopOnce));
  });

  // Finding: the summariser request is a normal /v1/messages call whose last user message is
  // the host's compaction prompt ("CRITICAL: Respond with TEXT ONLY … Please provide your
  // summary …"); PreCompact stdout is appended to it after "Additional Instructions:\n".
  const SUMMARISER = /Please provide your summary/;
  const summariserCarriesInstructions = check("the summariser request carries our instructions", (r) => {
    const summarisers = r.requests.filter((q) => SUMMARISER.test(q.lastText));
    if (summarisers.length === 0) return ["no summariser request (compaction did not run)"];
    const bad = summarisers.filter((q) => {
      const at = q.lastText.indexOf("Additional Instructions:");
      return at < 0 || !q.lastText.slice(at).includes(SAVE);
    });
    return bad.length === 0
      ? []
      : [`${bad.length}/${summarisers.length} summariser request(s) lack "Additional Instructions:" with ${SAVE}`];
  });
  const compactionProceeded = check("compaction proceeded", (r) =>
    r.requests.some((q) => /This session is being continued from a previous conversation/.test(q.text))
      ? []
      : ["no request after compaction carries the summary"],
  );

  const compactScript: Scenario = {
    claude: [
      { matchLast: SUMMARISER, reply: text("<analysis>ok</analysis>\n<summary>SUMMARY-OF-CONVERSATION</summary>") },
      { match: /This session is being continued from a previous conversation/, reply: text("AFTER-COMPACTION answer") },
      { reply: text("FIRST answer") },
      { reply: text("SECOND answer") },
    ],
  };

  test("PreCompact (manual /compact): compaction proceeds and the summariser gets our instructions", async () => {
    const run = async (mode: Mode): Promise<RunResult> => {
      const c = setup("claude-pc-manual", mode, "claude", compactScript);
      const first = await runClaude(c, ["-p", "remember the number 42"]);
      const sessionId = claudeSessionId(first);
      expect(sessionId).toBeString();
      const compact = await runClaude(c, ["-p", "/compact", "--resume", sessionId!]);
      expect(compact.exitCode).toBe(0);
      // One more prompt on the compacted session shows the summary replaced the transcript.
      return runClaude(c, ["-p", "what was the number?", "--resume", sessionId!]);
    };
    await withAndWithout(
      run,
      allOf("claude manual compaction", exitedCleanly, summariserCarriesInstructions, compactionProceeded),
    );
  });

  // Finding: auto-compaction needs a model the CLI knows (an unknown name leaves the threshold
  // unenforced), `--autocompact 100000` (threshold 67 000), an earlier assistant turn to
  // summarise, and a later turn reporting usage.input_tokens 75 000; the host then routes
  // through "reactive" compaction, runs PreCompact with trigger "auto", and asks the summariser.
  // After compaction it runs SessionStart(source "compact") and sends the summary.
  test("PreCompact (auto-compaction): compaction proceeds and the summariser gets our instructions", async () => {
    const bash = (cmd: string, inputTokens: number) => ({
      reply: {
        blocks: [{ type: "tool_use" as const, name: "Bash", input: { command: cmd, description: "e2e step" } }],
        inputTokens,
      },
    });
    const run = (mode: Mode) => {
      const c = setup("claude-pc-auto", mode, "claude", {
        claude: [
          compactScript.claude![0]!,
          compactScript.claude![1]!,
          bash("echo step0", 5000),
          bash("echo step1", 75_000),
          { reply: text("DONE answer") },
        ],
      });
      return runClaude(c, ["-p", "run two steps", "--autocompact", "100000"]);
    };
    const on = await withAndWithout(
      run,
      allOf("claude auto compaction", exitedCleanly, summariserCarriesInstructions, compactionProceeded),
    );
    // The post-compaction SessionStart ran too: its note reaches the first request after compaction.
    const after = on.requests.find(
      (q) => /This session is being continued/.test(q.text) && !SUMMARISER.test(q.lastText),
    );
    expect(after).toBeDefined();
    // Finding: there the context sits mid-way in a system message after the tool results,
    // merged with the host's environment block and deferred-tools list.
    const context = claudeHookContexts(after!, "SessionStart");
    expect(context.join("\n")).toContain("compacted");
    expect(context.join("\n")).toContain(SAVE);
  });
});

// ---------------------------------------------------------------------------------------------
// Codex CLI 0.169.0
// ---------------------------------------------------------------------------------------------
describe("codex", () => {
  // Finding: SessionStart additionalContext arrives as an `input[]` item
  // {type:"message", role:"developer"} placed after the environment context, before the prompt.
  const codexDeveloperContext = (needles: string[]) =>
    check(`a developer message carries ${needles.join(" + ")}`, (r) => {
      const first = r.requests[0];
      if (!first) return ["no model request"];
      return codexMessages(first, "developer").some((t) => needles.every((n) => t.includes(n)))
        ? []
        : [`no role:"developer" item with ${needles.join(" and ")}`];
    });

  test("SessionStart: the load guidance with the configured project/session reaches the model", async () => {
    const run = (mode: Mode) => {
      const c = setup("codex-ss", mode, "codex", {
        codex: [{ reply: codexText("FIRST_FINAL") }, { reply: codexText("SECOND_FINAL") }],
      });
      return runCodex(c, "hello");
    };
    await withAndWithout(run, allOf("codex session start", exitedCleanly, codexDeveloperContext([LOAD])));
  });

  // Finding: Stop decision:block makes Codex send one more request whose last item is a user
  // message "<hook_prompt hook_run_id=\"stop:…\">REASON</hook_prompt>"; the next Stop has
  // stop_hook_active:true and our hook passes, so the run ends.
  const codexStopOnce = check("Stop continued exactly once with the save guidance", (r) => {
    const p: string[] = [];
    if (r.requests.length !== 2)
      p.push(`expected 2 model requests (answer + one continuation), saw ${r.requests.length}`);
    const last = r.requests.at(-1);
    const users = last ? codexMessages(last, "user").join("\n") : "";
    const prompts = users.match(/<hook_prompt[^>]*>[\s\S]*?<\/hook_prompt>/g) ?? [];
    if (prompts.length !== 1) p.push(`the last request carries ${prompts.length} <hook_prompt> message(s), expected 1`);
    else if (!prompts[0]!.includes(SAVE)) p.push(`the <hook_prompt> lacks ${SAVE}`);
    if (!r.stdout.includes("SECOND_FINAL")) p.push("the run did not end with the continuation's answer");
    return p;
  });

  test("Stop: the first Stop continues once with the save guidance, the continuation's Stop passes", async () => {
    const run = (mode: Mode) => {
      const c = setup("codex-stop", mode, "codex", {
        codex: [
          { reply: codexText("FIRST_FINAL") },
          { reply: codexText("SECOND_FINAL") },
          { reply: codexText("THIRD_FINAL") },
        ],
      });
      return runCodex(c, "hello");
    };
    await withAndWithout(run, allOf("codex stop", exitedCleanly, codexStopOnce));
  });

  // Finding: with model_auto_compact_token_limit = 2000 and a reply reporting total_tokens
  // 50 000, Codex sends a summariser request (last user item "You are performing a CONTEXT
  // CHECKPOINT COMPACTION…"), then a fresh request (prompt + "Another language model started to
  // solve this problem…" summary) carrying SessionStart(source "compact") context as a developer item.
  const CHECKPOINT = /CONTEXT CHECKPOINT COMPACTION/;
  const codexCompactReminder = check("the post-compaction request carries the compaction reminder", (r) => {
    const at = r.requests.findIndex((q) => CHECKPOINT.test(q.lastText));
    if (at < 0) return ["no compaction request (auto-compaction did not run)"];
    const after = r.requests[at + 1];
    if (!after) return ["no request after compaction"];
    const developer = codexMessages(after, "developer");
    return developer.some((t) => t.includes("compacted") && t.includes(SAVE) && t.includes(LOAD))
      ? []
      : [`no developer item with "compacted", ${LOAD} and ${SAVE} after compaction`];
  });

  test("SessionStart after auto-compaction (source compact) carries the post-compaction reminder", async () => {
    const run = (mode: Mode) => {
      const c = setup(
        "codex-compact",
        mode,
        "codex",
        {
          codex: [
            { matchLast: CHECKPOINT, reply: codexText("SUMMARY-OF-CONVERSATION") },
            // After compaction the turn count restarts: recognise the resumed request instead.
            { match: /Another language model started to solve this problem/, reply: codexText("FINAL") },
            {
              reply: {
                items: [
                  {
                    type: "function_call",
                    name: "exec_command",
                    arguments: JSON.stringify({ cmd: "echo step0" }),
                    call_id: "c1",
                  },
                ],
                totalTokens: 50_000,
              },
            },
            { reply: codexText("FINAL") },
          ],
        },
        { codex: { autoCompactTokenLimit: 2000 } },
      );
      return runCodex(c, "run one step");
    };
    await withAndWithout(run, allOf("codex compaction", exitedCleanly, codexCompactReminder));
  });
});
