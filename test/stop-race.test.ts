// docs/decisions.md#the-learning-loop: two Stops of one session racing each delivered the same checkpoint batch.
// The hand-off is now one claim per session (src/core/claim.ts): here every batch of allowed
// edits is followed by several Stops at once, and exactly one of them names the batch; a drain
// then passes (no loop, nothing left), and nothing edited is ever missing from a checkpoint.
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { loadPayload } from "./support/hook-runner.ts";
import { checkpointTargets } from "./support/learning.ts";
import { entryById, judgeAnswer } from "./support/fuzz-entries.ts";
import { makeFuzzSandbox, spawnHook, type FuzzSandbox } from "./support/fuzz-sandbox.ts";

const ROUNDS = 6;
const STOPS = 6;
const REPOS = 3;
const SESSION = "stop-race";

let box: FuzzSandbox;
let repos: string[];
beforeAll(() => {
  box = makeFuzzSandbox("stoprace");
  repos = Array.from({ length: REPOS }, (_, i) => {
    const dir = path.join(box.root, "ws", `r${i}`);
    fs.mkdirSync(path.join(dir, "src"), { recursive: true });
    fs.writeFileSync(
      path.join(dir, ".velesdb-hooks.json"),
      JSON.stringify({ project: `race-${i}`, enforce_learning_loop: true }),
    );
    return fs.realpathSync(dir);
  });
});
afterAll(() => box.cleanup());

async function hook(event: string, payload: Record<string, unknown>): Promise<{ kind: string; text?: string }> {
  const spawned = await spawnHook(["claude", event], new TextEncoder().encode(JSON.stringify(payload)), {
    env: box.env,
    cwd: box.plain,
    boundMs: 30_000,
  });
  const judged = judgeAnswer(entryById(`claude/${event}`), spawned);
  if (!judged.ok) throw new Error(`${event}: ${judged.problems.join("; ")}`);
  return judged.answer as { kind: string; text?: string };
}
const stop = (active = false) =>
  hook("stop", loadPayload("claude", "stop.first", { session_id: SESSION, cwd: box.plain, stop_hook_active: active }));
const rootsOf = (answer: { kind: string; text?: string }): string[] =>
  answer.kind === "continue" ? checkpointTargets(answer.text).map((t) => t.root) : [];

test(`${STOPS} Stops at once after each batch: exactly one checkpoint names it, none lost, then the session ends`, async () => {
  for (const repo of repos) {
    await hook(
      "post-tool-use",
      loadPayload("claude", "post-tool-use.recall-fused", {
        session_id: SESSION,
        cwd: repo,
        tool_input: { query: "prior" },
        tool_response: [{ type: "text", text: "[]" }],
      }),
    );
  }
  for (let round = 0; round < ROUNDS; round++) {
    const edited = repos.slice(0, 1 + (round % REPOS));
    for (const [n, repo] of edited.entries()) {
      const target = path.join(repo, "src", `f${round}-${n}.ts`);
      const answer = await hook(
        "pre-tool-use",
        loadPayload("claude", "pre-tool-use.write", {
          session_id: SESSION,
          cwd: box.plain,
          tool_input: { file_path: target, content: "x\n" },
        }),
      );
      expect(answer.kind).toBe("pass");
    }
    const answers = await Promise.all(Array.from({ length: STOPS }, () => stop()));
    const checkpoints = answers.filter((a) => rootsOf(a).length > 0);
    // Exactly one Stop delivered this batch, naming exactly what was edited.
    expect(checkpoints.map((a) => rootsOf(a).sort())).toEqual([[...edited].sort()]);
    // The next Stop has nothing new: the session can end.
    const after = await stop();
    expect(rootsOf(after)).toEqual([]);
    expect((await stop(true)).kind).toBe("pass");
  }
}, 300_000);

test("a Stop that died holding the claim, its batch still pending: the next Stop takes the claim over and re-sends that batch once", async () => {
  const session = "stop-race-crash";
  const stopOf = (active = false) =>
    hook(
      "stop",
      loadPayload("claude", "stop.first", { session_id: session, cwd: box.plain, stop_hook_active: active }),
    );
  await hook(
    "post-tool-use",
    loadPayload("claude", "post-tool-use.recall-fused", {
      session_id: session,
      cwd: repos[0],
      tool_input: { query: "prior" },
      tool_response: [{ type: "text", text: "[]" }],
    }),
  );
  const edit = await hook(
    "pre-tool-use",
    loadPayload("claude", "pre-tool-use.write", {
      session_id: session,
      cwd: box.plain,
      tool_input: { file_path: path.join(repos[0]!, "src", "crash.ts"), content: "x\n" },
    }),
  );
  expect(edit.kind).toBe("pass");
  const before = new Set(fs.readdirSync(box.stateDir));
  const first = await stopOf();
  expect(rootsOf(first)).toEqual([repos[0]!]);
  // The Stop's manifest, put back to "pending" (as if it had died before marking it delivered),
  // and its claim left behind by a process that no longer exists.
  const manifest = fs
    .readdirSync(box.stateDir)
    .find((name) => name.startsWith("learning-checkpoint-manifest-") && !before.has(name))!;
  expect(manifest).toBeDefined();
  const manifestPath = path.join(box.stateDir, manifest);
  fs.writeFileSync(
    manifestPath,
    fs.readFileSync(manifestPath, "utf8").replace('"state":"delivered"', '"state":"pending"'),
  );
  const claimPath = path.join(
    box.stateDir,
    manifest.replace("learning-checkpoint-manifest-", "learning-checkpoint-claim-"),
  );
  const dead = Bun.spawnSync(["true"]).pid;
  fs.writeFileSync(claimPath, `${JSON.stringify({ pid: dead, started: "1" })}\n`, { mode: 0o600 });
  const recovered = await Promise.all([stopOf(), stopOf(), stopOf()]);
  expect(recovered.map(rootsOf).filter((roots) => roots.length > 0)).toEqual([[repos[0]!]]);
  expect(fs.existsSync(claimPath)).toBe(false);
  expect(rootsOf(await stopOf())).toEqual([]);
});

test("control: a claim held by a live Stop leaves the batch queued for it; once released, the next Stop delivers it", async () => {
  const session = "stop-race-live";
  const stopOf = () => hook("stop", loadPayload("claude", "stop.first", { session_id: session, cwd: box.plain }));
  await hook(
    "post-tool-use",
    loadPayload("claude", "post-tool-use.recall-fused", {
      session_id: session,
      cwd: repos[1],
      tool_input: { query: "prior" },
      tool_response: [{ type: "text", text: "[]" }],
    }),
  );
  const before = new Set(fs.readdirSync(box.stateDir));
  expect(
    (
      await hook(
        "pre-tool-use",
        loadPayload("claude", "pre-tool-use.write", {
          session_id: session,
          cwd: box.plain,
          tool_input: { file_path: path.join(repos[1]!, "src", "live.ts"), content: "x\n" },
        }),
      )
    ).kind,
  ).toBe("pass");
  const dirty = fs.readdirSync(box.stateDir).find((name) => name.startsWith("learning-dirty-") && !before.has(name))!;
  const claimPath = path.join(
    box.stateDir,
    dirty.replace(/^learning-dirty-/, "learning-checkpoint-claim-").replace(/\.records$/, ".marker"),
  );
  const stat = fs.readFileSync(`/proc/${process.pid}/stat`, "utf8");
  fs.writeFileSync(
    claimPath,
    `${JSON.stringify({ pid: process.pid, started: stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] })}\n`,
    { mode: 0o600 },
  );
  expect(rootsOf(await stopOf())).toEqual([]);
  fs.rmSync(claimPath);
  expect(rootsOf(await stopOf())).toEqual([repos[1]!]);
});
