// docs/decisions.md#hook-input-and-answers: whether a rule that throws opens (passes) or closes (refuses) is a named
// field of each event, read next to the event, not an accident of where cli.ts put its catch.
// docs/contract.md §10: advisory hooks pass on any surprise; the edit guard refuses when it cannot verify,
// and only in repositories that opted in.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { failureDecision } from "../src/core/failure.ts";
import { createHookInput } from "../src/core/hook-input.ts";
import { HOSTS } from "../src/hosts/index.ts";
import type { HostModule } from "../src/hosts/host.ts";
import { makeSandbox, writeConfig, type Sandbox } from "./support/hook-runner.ts";

const EXPECTED: Readonly<Record<string, "open" | "closed">> = {
  "claude/session-start": "open",
  "claude/stop": "open",
  "claude/pre-compact": "open",
  "claude/pre-tool-use": "closed",
  "claude/post-tool-use": "open",
  "codex/session-start": "open",
  "codex/stop": "open",
  "codex/pre-tool-use": "closed",
  "codex/post-tool-use": "open",
  "windsurf/pre-user-prompt": "open",
  "windsurf/pre-write-code": "closed",
  "windsurf/post-mcp-tool-use": "open",
  "dsh/session-start": "open",
  "dsh/stop": "open",
  "dsh/pre-tool-use": "closed",
  "dsh/post-tool-use": "open",
  "gemini/session-start": "open",
  "gemini/after-agent": "open",
  "gemini/before-tool": "closed",
  "gemini/after-tool": "open",
  "copilot/session-start": "open",
  "copilot/stop": "open",
  "copilot/pre-tool-use": "closed",
  "copilot/post-tool-use": "open",
  "opencode/session-start": "open",
  "opencode/stop": "open",
  "opencode/pre-compact": "open",
  "opencode/pre-tool-use": "closed",
  "opencode/post-tool-use": "open",
  "droid/session-start": "open",
  "droid/stop": "open",
  "droid/pre-tool-use": "closed",
  "droid/post-tool-use": "open",
  "kilo/session-start": "open",
  "kilo/stop": "open",
  "kilo/pre-compact": "open",
  "kilo/pre-tool-use": "closed",
  "kilo/post-tool-use": "open",
  "codebuddy/session-start": "open",
  "codebuddy/stop": "open",
  "codebuddy/pre-tool-use": "closed",
  "codebuddy/post-tool-use": "open",
  "pi/session-start": "open",
  "pi/stop": "open",
  "pi/pre-tool-use": "closed",
  "pi/post-tool-use": "open",
  "qwen/session-start": "open",
  "qwen/stop": "open",
  "qwen/pre-compact": "open",
  "qwen/pre-tool-use": "closed",
  "qwen/post-tool-use": "open",
};

test("every event names its failure policy: only the edit guards close", () => {
  const actual = Object.fromEntries(
    Object.entries(HOSTS as Record<string, HostModule>).flatMap(([host, module]) =>
      Object.entries(module.events).map(([event, e]) => [`${host}/${event}`, e.failure]),
    ),
  );
  expect(actual).toEqual(EXPECTED);
});

describe("failureDecision", () => {
  let box: Sandbox;
  let guarded: string;
  beforeAll(() => {
    box = makeSandbox("failpolicy");
    guarded = path.join(box.root, "guarded");
    fs.mkdirSync(guarded);
    writeConfig(guarded, { project: "guarded", enforce_learning_loop: true });
  });
  afterAll(() => box.cleanup());
  const input = (cwd: string) => createHookInput({ cwd, session_id: "s" }, "", HOSTS.claude.profile, box.env);

  test.each([
    ["open, opted-in repository", "open", true, "pass", /internal error, passing: boom/],
    ["open, plain directory", "open", false, "pass", /internal error, passing: boom/],
    ["closed, opted-in repository", "closed", true, "deny", /internal error, refusing: boom/],
    [
      "closed, plain directory: never blocks an unrelated repository",
      "closed",
      false,
      "pass",
      /internal error, passing .*not opted in.*: boom/,
    ],
  ] as const)("%s", async (_label, policy, optedIn, kind, note) => {
    const decision = await failureDecision(policy, input(optedIn ? guarded : box.workspace), "boom");
    expect(decision.kind).toBe(kind);
    expect(decision.note).toMatch(note);
    if (decision.kind === "deny") {
      expect(decision.reason).toContain("velesdb-hooks refused this edit");
      expect(decision.reason).toContain(JSON.stringify(guarded));
    }
  });
});
