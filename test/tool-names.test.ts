// Every velesdb-memory tool a hook text asks for is named the way that host shows it to its
// model (docs/working-context.md#tool-names-the-hosts-tool-search-finds): Claude Code and Codex hide MCP tools behind a tool search, which finds
// `mcp__velesdb-memory__load_working_context`, not `load_working_context`. Each expected form
// below is the name the host's model calls and its payloads carry, as measured on the real CLI
// (the e2e suites' mock models call exactly these names and the call reaches the server:
// test/e2e/harness.e2e.test.ts, mcp-wiring, gemini, qwen, copilot, opencode, droid, dsh-bridge,
// kilo, codebuddy, pi;
// the payload fixtures under fixtures/payloads/<host>/). Windsurf and Cursor were never run
// here: bare names, said so in their host files.
//
// The texts come from the real rules with each host's own profile (SessionStart, PreCompact,
// Stop, the checkpoint, the guard's refusal, Windsurf's reminder), so a host that forgot its
// namer, or a text that names a tool by hand, fails here.
import { afterAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stopDecision } from "../src/core/checkpoint.ts";
import type { Decision } from "../src/core/decision.ts";
import { guardEditDecision } from "../src/core/guard.ts";
import { createHookInput, type HostProfile } from "../src/core/hook-input.ts";
import {
  genericStopDecision,
  preCompactDecision,
  promptReminderDecision,
  sessionStartDecision,
} from "../src/core/lifecycle.ts";
import { claudeInCursor } from "../src/hosts/claude-in-cursor.ts";
import { HOSTS } from "../src/hosts/index.ts";
import { PROFILES } from "./hosts/profiles.ts";

/** Each host's measured form (its test profile, test/hosts/<host>/profile.ts), and Cursor's, which runs Claude's hooks. */
const EXPECTED: Readonly<Record<string, (tool: string) => string>> = {
  ...Object.fromEntries(Object.entries(PROFILES).map(([host, profile]) => [host, profile.toolName])),
  cursor: (t) => t, // not measured
};

/** Every tool the texts can name whose name cannot be an English word: each occurrence must be the host's form. */
const COMPOUND_TOOLS = [
  "load_working_context",
  "save_working_context",
  "list_working_contexts",
  "recall_fused",
  "compile_transcript",
  "compile_context",
  "memory_status",
];
/** Tools named by a plain word: checked where the texts use them as tools. */
const WORD_TOOLS = ["remember", "relate", "why", "feedback"];

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-tool-names-")));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Every text this host's rules produce, from one opted-in repository and one plain one. */
async function textsOf(label: string, profile: HostProfile): Promise<string[]> {
  const base = path.join(root, label);
  const optedIn = path.join(base, "opted-in");
  const plain = path.join(base, "plain");
  fs.mkdirSync(optedIn, { recursive: true });
  fs.mkdirSync(plain, { recursive: true });
  fs.writeFileSync(
    path.join(optedIn, ".velesdb-hooks.json"),
    JSON.stringify({ project: "atlas", enforce_learning_loop: true }),
  );
  const env = {
    ...process.env,
    VELESDB_HOOK_FRESHNESS: "off",
    VELESDB_HOOKS_STATE_DIR: path.join(base, "state"),
    TMPDIR: base,
  };
  const input = (cwd: string, extra: Record<string, unknown> = {}) =>
    createHookInput(
      { cwd, [profile.sessionIdField]: "s-1", transcript_path: "/t/x.jsonl", ...extra },
      "",
      profile,
      env,
    );
  const decisions: Decision[] = [
    await sessionStartDecision(input(plain, { source: "compact" })),
    preCompactDecision(input(plain)),
    promptReminderDecision(input(plain)),
    genericStopDecision(input(plain)),
    await guardEditDecision(input(optedIn), [path.join(optedIn, "a.ts")]),
    stopDecision(input(optedIn)),
  ];
  return decisions.flatMap((d) => ("text" in d ? [d.text] : "reason" in d ? [d.reason] : []));
}

const profiles: ReadonlyArray<readonly [string, HostProfile]> = [
  ...Object.entries(HOSTS).map(([name, host]) => [name, host.profile] as const),
  ["cursor", claudeInCursor.profile],
];

/** misnamed(texts, expected) → each compound tool token that is not `expected(tool)`, with the text it is in. */
function misnamed(texts: readonly string[], expected: (tool: string) => string): string[] {
  const wrong: string[] = [];
  for (const text of texts) {
    for (const token of text.match(/[A-Za-z0-9_:-]+/g) ?? []) {
      const tool = COMPOUND_TOOLS.find(
        (t) => token === t || token.endsWith(`_${t}`) || token.endsWith(`-${t}`) || token.endsWith(`:${t}`),
      );
      if (tool && token !== expected(tool)) wrong.push(`${token} in: ${text.slice(0, 80)}`);
    }
  }
  return wrong;
}

describe.each(profiles)("%s: every tool in every hook text is named as this host names it", (name, profile) => {
  const expected = EXPECTED[name]!;

  test("the compound tool names, everywhere", async () => {
    const texts = await textsOf(name, profile);
    expect(texts.length).toBeGreaterThanOrEqual(5);
    const joined = texts.join("\n");
    for (const tool of ["load_working_context", "save_working_context", "recall_fused", "compile_transcript"])
      expect(joined).toContain(expected(tool));
    expect(misnamed(texts, expected)).toEqual([]);
  });

  test("the one-word tools of the checkpoint and the feedback loop", async () => {
    const joined = (await textsOf(`${name}-words`, profile)).join("\n");
    for (const tool of WORD_TOOLS) expect(joined).toContain(expected(tool));
    if (expected("x") !== "x")
      for (const tool of WORD_TOOLS) expect(joined).not.toMatch(new RegExp(`(?:^|[ :(])${tool}\\(`, "m"));
  });
});

test("control: the scan catches a host whose texts name another host's form, or the bare name", async () => {
  const claudeTexts = await textsOf("control", HOSTS.claude.profile);
  expect(misnamed(claudeTexts, EXPECTED.codex!).length).toBeGreaterThan(5);
  expect(misnamed(['load_working_context(project="p", session="s") returns'], EXPECTED.claude!)).toEqual([
    'load_working_context in: load_working_context(project="p", session="s") returns',
  ]);
});
