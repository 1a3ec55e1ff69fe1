// Every project and session name a hook text names is one velesdb-memory 0.17.0's
// save_working_context accepts (docs/working-context.md): not blank after trimming, at most 256 UTF-8
// bytes (src/context/memory_bridge.rs:258-272, src/limits.rs:138). The rule (identity.ts
// slotNameProblem) and the per-session slot (sessionSlot) are run through the REAL server,
// VELESDB_MEMORY_BIN_REAL (skipped without it, failed under CI=true), boundary values each side.
// check and doctor name a configured value outside the rule in one line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as path from "node:path";
import { MAX_SLOT_NAME_BYTES, sessionSlot, slotNameProblem } from "../src/core/identity.ts";
import { makeInstallSandbox, write } from "./support/install-sandbox.ts";
import { REAL_VELESDB_MEMORY, RealServer, requireRealServerUnderCi } from "./support/real-velesdb-memory.ts";

const REAL = REAL_VELESDB_MEMORY;
requireRealServerUnderCi(test, "the slot rule");

const bytes = (text: string): number => Buffer.byteLength(text, "utf8");
const B256 = "é".repeat(128); // 256 bytes in 128 characters
const B257 = `${B256}x`;
const CASES: ReadonlyArray<readonly [string, string]> = [
  ["256 bytes", B256],
  ["257 bytes", B257],
  ["256 ASCII bytes", "p".repeat(256)],
  ["whitespace only", " \t "],
  ["empty", ""],
  ["a per-session slot of a 256-byte base and a 500-character host id", sessionSlot(B256, "x".repeat(500))],
  ["a per-session slot of an odd host id", sessionSlot("rolling", "id with spaces/and slashes")],
  ["a per-session slot of a UUID", sessionSlot("s".repeat(256), "94daaa85-620d-444a-a7f5-edce09bb30db")],
];

describe("the slot rule", () => {
  test.each(CASES)("%s: accepted exactly when it is not blank and at most 256 bytes", (_label, value) => {
    expect(slotNameProblem(value) === undefined).toBe(value.trim() !== "" && bytes(value) <= MAX_SLOT_NAME_BYTES);
  });

  test("a per-session slot is never over the cap, keeps a plain host id as it is, and is the base without one", () => {
    expect(bytes(sessionSlot(B256, "x".repeat(500)))).toBeLessThanOrEqual(256);
    expect(sessionSlot("rolling", "94daaa85-620d-444a-a7f5-edce09bb30db")).toBe(
      "rolling/94daaa85-620d-444a-a7f5-edce09bb30db",
    );
    expect(sessionSlot("rolling", "id with spaces")).toMatch(/^rolling\/id-\d+-14$/);
    expect(sessionSlot("rolling", undefined)).toBe("rolling");
    expect(sessionSlot("rolling", "  ")).toBe("rolling");
    // A base cut to make room is cut between characters, never inside one.
    expect(sessionSlot(B256, "abc")).toBe(`${"é".repeat(126)}/abc`);
  });
});

describe.skipIf(!REAL)("the real velesdb-memory 0.17.0 agrees, case by case", () => {
  let server: RealServer;
  beforeAll(async () => {
    server = await RealServer.start();
  });
  afterAll(() => server?.stop());

  test.each(CASES)("%s: saved as session and as project exactly when the rule accepts it", async (_label, value) => {
    const accepted = slotNameProblem(value) === undefined;
    for (const args of [
      { project: "p", session: value },
      { project: value, session: "s" },
    ]) {
      const answer = await server.tool("save_working_context", { ...args, working: { goal: "g" } });
      const saved = answer.error === undefined && answer.result?.isError !== true;
      expect({ value: value.slice(0, 12), saved }).toEqual({ value: value.slice(0, 12), saved: accepted });
      if (!accepted) expect(answer.error?.code).toBe(-32602);
    }
  });
});

describe("check and doctor name a configured id the server would refuse", () => {
  test.each([
    [
      "a 257-byte project",
      { project: B257 },
      "has a project that is 257 bytes, over velesdb-memory's 256-byte cap for an id",
    ],
    ["a blank session", { session: "  " }, "has a session that is blank"],
  ])("%s: one config line, check fails; control: 256 bytes pass", (_label, fields, problem) => {
    const box = makeInstallSandbox("identity", { clients: ["claude"] });
    try {
      const repo = path.join(box.root, "repo");
      write(path.join(repo, ".velesdb-hooks.json"), JSON.stringify({ enforce_learning_loop: true, ...fields }));
      const run = box.run(["check", "--client", "claude"], { cwd: repo });
      expect(run.stdout).toContain(`config: ${path.join(repo, ".velesdb-hooks.json")} ${problem}`);
      expect(run.exitCode).toBe(1);
      const doctor = box.run(["doctor", "--client", "claude"], { cwd: repo });
      expect(doctor.stdout.split("\n").find((line) => line.startsWith("config:"))).toContain(problem);
      write(
        path.join(repo, ".velesdb-hooks.json"),
        JSON.stringify({ enforce_learning_loop: true, project: B256, session: "main" }),
      );
      const control = box.run(["check", "--client", "claude"], { cwd: repo });
      expect(control.stdout).not.toContain("config:");
    } finally {
      box.cleanup();
    }
  });
});
