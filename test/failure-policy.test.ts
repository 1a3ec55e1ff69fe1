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
import { PROFILES } from "./hosts/profiles.ts";
import { makeSandbox, writeConfig, type Sandbox } from "./support/hook-runner.ts";

/** "<host>/<event>" → its policy, as each host's test profile writes it (test/hosts/<host>/profile.ts). */
const EXPECTED: Readonly<Record<string, "open" | "closed">> = Object.fromEntries(
  Object.entries(PROFILES).flatMap(([host, profile]) =>
    Object.entries(profile.failure).map(([event, policy]) => [`${host}/${event}`, policy]),
  ),
);

test("every event names its failure policy: only the edit guards close", () => {
  // Control: the profiles hold rows, and a guard that closes is among them.
  expect(EXPECTED["kilo/pre-tool-use"]).toBe("closed");
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
