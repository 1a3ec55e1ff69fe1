// docs/shared-memory.md#a-dead-server-in-an-opted-in-repository: the guard tells the truth when no server answers (src/core/memory-down.ts,
// docs/shared-memory.md "A dead server"). Measured with the REAL velesdb-memory 0.17.0 on a
// locked store (a second server on one VELESDB_MEMORY_PATH): the front exits 1, the broker's
// status says failed with the server's own lock line, and in an opted-in repository the first
// edit is refused with one sentence naming that cause and `velesdb-hooks doctor`; the same edit
// retried then passes with a note to the user while the server stays down; once it answers
// again, a recall is asked for as before. Controls: the same session with no server trouble is
// refused with the recall text, every time; a recall that failed with the server's own error
// (not a transport failure) proves nothing.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { readMcpStatus } from "../src/core/mcp-runtime.ts";
import { makeSandbox, writeConfig, type Sandbox, hook } from "./support/hook-runner.ts";
import { denyReason, editPayload, isDeny, recallPayload, type Host } from "./support/learning.ts";
import { brokersOf, initialize, killTree, REAL_SERVER, startClient, until } from "./support/mcp-session.ts";

const LOCK_MESSAGE = "another velesdb-memory process holds";
if (REAL_SERVER === undefined && process.env.CI === "true")
  throw new Error(
    "VELESDB_MEMORY_BIN_REAL is unset under CI=true: the dead-server case needs the real velesdb-memory 0.17.0",
  );

let box: Sandbox;
let repo: string;
let env: Record<string, string>;
beforeEach(() => {
  box = makeSandbox("memdown");
  repo = path.join(box.root, "repos", "guarded");
  fs.mkdirSync(path.join(repo, "src"), { recursive: true });
  writeConfig(repo, { project: "guarded", enforce_learning_loop: true });
  // The hooks and the front read one state directory, as on a user's machine (both default to it).
  env = {
    ...box.env,
    VELESDB_HOOKS_STATE_DIR: box.stateDir,
    VELESDB_HOOKS_MCP_IDLE_MS: "1000",
    VELESDB_MEMORY_QUIET: "1",
  };
});
afterEach(() => {
  for (const pid of brokersOf(box.stateDir)) killTree(pid);
  box.cleanup();
});

const edit = (host: Host, session: string) =>
  hook(box, host, "pre-tool-use", editPayload(host, session, repo, [path.join(repo, "src", "a.ts")]), env);
const userMessageOf = (answer: ReturnType<typeof edit>) => answer.json.systemMessage as string | undefined;

describe.skipIf(REAL_SERVER === undefined)("a locked store, with the real velesdb-memory 0.17.0", () => {
  test("told once with the cause and doctor, then edits pass with a note while it stays down; a recall is asked for once it answers", async () => {
    const store = path.join(box.home, ".velesdb-memory");
    const holder = Bun.spawn([REAL_SERVER!], {
      env: { ...env, VELESDB_MEMORY_PATH: store },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      expect(await until(() => fs.existsSync(store) && fs.readdirSync(store).length > 0, 10_000)).toBe(true);
      await Bun.sleep(500);
      const front = startClient(REAL_SERVER!, env);
      expect(await front.proc.exited).toBe(1);
      expect(front.stderr()).toContain(LOCK_MESSAGE);
      expect(readMcpStatus(env).state).toBe("failed");

      const first = edit("claude", "s-down");
      expect(isDeny(first)).toBe(true);
      const reason = denyReason(first);
      expect(reason).toContain("velesdb-memory is not answering in this session (");
      expect(reason).toContain(LOCK_MESSAGE);
      expect(reason).toContain("`velesdb-hooks doctor`");
      expect(reason).not.toContain("Only a successful result unlocks");

      const retried = edit("claude", "s-down");
      expect(isDeny(retried)).toBe(false);
      expect(userMessageOf(retried)).toContain("edit allowed without a recall: velesdb-memory is not answering");
      expect(userMessageOf(retried)).toContain("velesdb-hooks doctor");
      // Another session is told for itself first.
      expect(denyReason(edit("claude", "s-other"))).toContain("velesdb-memory is not answering");
    } finally {
      holder.kill("SIGKILL");
      await holder.exited;
    }
    // The server answers again: the status says running, and the rule is the usual one.
    const front = startClient(REAL_SERVER!, env);
    await initialize(front);
    expect(readMcpStatus(env).state).toBe("running");
    const back = edit("claude", "s-down");
    expect(isDeny(back)).toBe(true);
    expect(denyReason(back)).toContain("requires a recall before its first edit");
    expect(denyReason(back)).not.toContain("not answering");
    front.proc.kill("SIGKILL");
  }, 60_000);
});

describe.each(["claude", "codex"] as const)("%s: a session's own recall that failed in transport", (host) => {
  test("the front's 'velesdb-memory stopped' in a recall result: told once, then the edit passes with a note", () => {
    const failed = {
      content: [{ type: "text", text: "velesdb-memory stopped: velesdb-memory exited (code 1); call again" }],
      isError: true,
    };
    const recorded = hook(
      box,
      host,
      "post-tool-use",
      recallPayload(host, "s-t", repo, { response: host === "claude" ? [failed.content[0]] : failed }),
      env,
    );
    expect(recorded.stderr).toContain("velesdb-memory did not answer (transport)");
    const first = edit(host, "s-t");
    expect(denyReason(first)).toContain(
      "velesdb-memory is not answering in this session (velesdb-memory stopped: velesdb-memory exited (code 1); call again)",
    );
    expect(isDeny(edit(host, "s-t"))).toBe(false);
  });

  test("controls: no trouble known → the recall text, every time; a recall refused by the server itself proves nothing", () => {
    for (let i = 0; i < 2; i++) {
      const answer = edit(host, "s-ok");
      expect(denyReason(answer)).toContain("requires a recall before its first edit");
      expect(denyReason(answer)).not.toContain("not answering");
    }
    const ownError = { content: [{ type: "text", text: "reserved metadata key: _veles_kind" }], isError: true };
    hook(
      box,
      host,
      "post-tool-use",
      recallPayload(host, "s-own", repo, { response: host === "claude" ? [ownError.content[0]] : ownError }),
      env,
    );
    for (let i = 0; i < 2; i++)
      expect(denyReason(edit(host, "s-own"))).toContain("requires a recall before its first edit");
  });
});
