// Every project and session name a hook text names is one velesdb-memory 0.17.0's
// save_working_context accepts (issue 34 §5): not blank after trimming, at most 256 UTF-8
// bytes (src/context/memory_bridge.rs:258-272, src/limits.rs:138). The rule (identity.ts
// slotNameProblem) and the per-session slot (sessionSlot) are run through the REAL server,
// VELESDB_MEMORY_BIN_REAL (skipped without it, failed under CI=true), boundary values each side.
// check and doctor name a configured value outside the rule in one line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MAX_SLOT_NAME_BYTES, sessionSlot, slotNameProblem } from "../src/core/identity.ts";
import { makeInstallSandbox, write } from "./support/install-sandbox.ts";

const REAL = process.env.VELESDB_MEMORY_BIN_REAL;
if (!REAL && process.env.CI === "true") {
  test("the real velesdb-memory is required under CI", () => {
    throw new Error("VELESDB_MEMORY_BIN_REAL is not set: the slot rule cannot be shown against velesdb-memory 0.17.0");
  });
}

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
    expect(sessionSlot("rolling", "94daaa85-620d-444a-a7f5-edce09bb30db")).toBe("rolling/94daaa85-620d-444a-a7f5-edce09bb30db");
    expect(sessionSlot("rolling", "id with spaces")).toMatch(/^rolling\/id-\d+-14$/);
    expect(sessionSlot("rolling", undefined)).toBe("rolling");
    expect(sessionSlot("rolling", "  ")).toBe("rolling");
    // A base cut to make room is cut between characters, never inside one.
    expect(sessionSlot(B256, "abc")).toBe(`${"é".repeat(126)}/abc`);
  });
});

describe.skipIf(!REAL)("the real velesdb-memory 0.17.0 agrees, case by case", () => {
  let server: ReturnType<typeof Bun.spawn<"pipe", "pipe", "ignore">>;
  let dir: string;
  let buffer = "";
  let nextId = 0;
  const reader = () => server.stdout.getReader();
  let read: ReturnType<typeof reader>;
  async function call(method: string, params: unknown): Promise<{ result?: { isError?: boolean }; error?: { code: number; message: string } }> {
    const id = ++nextId;
    server.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    server.stdin.flush();
    for (;;) {
      const cut = buffer.indexOf("\n");
      if (cut >= 0) {
        const message = JSON.parse(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 1);
        if (message.id === id) return message;
        continue;
      }
      const chunk = await read.read();
      if (chunk.done) throw new Error("the server exited");
      buffer += new TextDecoder().decode(chunk.value);
    }
  }
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-identity-"));
    server = Bun.spawn([REAL!], { env: { PATH: "/usr/bin:/bin", HOME: dir, VELESDB_MEMORY_PATH: path.join(dir, "store"), VELESDB_MEMORY_QUIET: "1" }, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    read = reader();
    await call("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "identity-test", version: "0" } });
    server.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  });
  afterAll(() => {
    server?.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test.each(CASES)("%s: saved as session and as project exactly when the rule accepts it", async (_label, value) => {
    const accepted = slotNameProblem(value) === undefined;
    for (const args of [{ project: "p", session: value }, { project: value, session: "s" }]) {
      const answer = await call("tools/call", { name: "save_working_context", arguments: { ...args, working: { goal: "g" } } });
      const saved = answer.error === undefined && answer.result?.isError !== true;
      expect({ value: value.slice(0, 12), saved }).toEqual({ value: value.slice(0, 12), saved: accepted });
      if (!accepted) expect(answer.error?.code).toBe(-32602);
    }
  });
});

describe("check and doctor name a configured id the server would refuse", () => {
  test.each([
    ["a 257-byte project", { project: B257 }, "has a project that is 257 bytes, over velesdb-memory's 256-byte cap for an id"],
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
      write(path.join(repo, ".velesdb-hooks.json"), JSON.stringify({ enforce_learning_loop: true, project: B256, session: "main" }));
      const control = box.run(["check", "--client", "claude"], { cwd: repo });
      expect(control.stdout).not.toContain("config:");
    } finally {
      box.cleanup();
    }
  });
});
