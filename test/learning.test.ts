// The learning loop (docs/contract.md §6) against the compiled binary, for Claude Code and Codex: the
// guard refuses the first edit in an opted-in repository until the same session ran a
// successful recall bound to it, and Stop turns each batch of edits into exactly one
// checkpoint. Every refusal below sits next to the control that shows the same path passing.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeSandbox, writeConfig, type Sandbox, hook } from "./support/hook-runner.ts";
import {
  checkpointTargets,
  continuation,
  denyReason,
  editPayload,
  isDeny,
  recallPayload,
  stopPayload,
  type Host,
} from "./support/learning.ts";
import { IS_ROOT, testIf } from "./support/requires.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("learn");
});
afterEach(() => {
  Bun.spawnSync(["chattr", "-R", "-i", box.root], { stderr: "ignore" });
  box.cleanup();
});

const HOSTS: Host[] = ["claude", "codex"];

/** repo("a", {…}) → a directory under the sandbox holding that `.velesdb-hooks.json`. */
function repo(name: string, config?: unknown): string {
  const dir = path.join(box.root, "repos", name);
  fs.mkdirSync(path.join(dir, "src"), { recursive: true });
  if (config !== undefined) writeConfig(dir, config);
  return dir;
}
const optedIn = (name: string, project = name) => repo(name, { project, enforce_learning_loop: true });

const edit = (host: Host, session: string | undefined, cwd: string, targets: string[], tool?: string) =>
  hook(box, host, "pre-tool-use", editPayload(host, session, cwd, targets, tool));
const recall = (host: Host, session: string, cwd: string, options: Parameters<typeof recallPayload>[3] = {}) =>
  hook(box, host, "post-tool-use", recallPayload(host, session, cwd, options));
const stop = (host: Host, session: string, cwd: string, active = false) =>
  hook(box, host, "stop", stopPayload(host, session, cwd, active));

describe.each(HOSTS)("%s guard", (host) => {
  const tools = host === "claude" ? ["Write", "Edit", "NotebookEdit"] : ["apply_patch"];

  test.each([
    ["no config file", undefined],
    ["enforce_learning_loop: false", { enforce_learning_loop: false }],
    ['enforce_learning_loop: "true" (a string)', { enforce_learning_loop: "true" }],
    ["a malformed config file", "{ enforce_learning_loop: true"],
  ])("not opted in (%s): every covered tool passes", (_label, config) => {
    const dir = repo("plain", config);
    for (const tool of tools) expect(edit(host, "s1", dir, [path.join(dir, "src", "a.ts")], tool).json).toEqual({});
    // Positive control: the same edits in an opted-in repository are refused.
    const guarded = optedIn("guarded");
    for (const tool of tools)
      expect(isDeny(edit(host, "s1", guarded, [path.join(guarded, "src", "a.ts")], tool))).toBe(true);
  });

  test("opted in: refused before a recall, allowed after one in the same session only", () => {
    const dir = optedIn("app");
    const target = path.join(dir, "src", "main.ts");
    const refused = edit(host, "s1", dir, [target]);
    expect(isDeny(refused)).toBe(true);
    expect(denyReason(refused)).toContain("recall_fused");
    expect(denyReason(refused)).toContain('"project": "app"');
    expect(fs.existsSync(target)).toBe(false);

    expect(recall(host, "s1", dir).json).toEqual({});
    expect(edit(host, "s1", dir, [target]).json).toEqual({});
    // The recall belongs to s1: another session of the same host is still refused…
    expect(isDeny(edit(host, "s2", dir, [target]))).toBe(true);
    // …and so is another opted-in repository, even one with the same project name.
    const twin = optedIn("twin", "app");
    expect(isDeny(edit(host, "s1", twin, [path.join(twin, "src", "x.ts")]))).toBe(true);
  });

  test("a target outside the cwd: the target's repository decides; a recall from the outside cwd unlocks it", () => {
    const outside = repo("outside"); // unconfigured cwd
    const guarded = optedIn("lib", "lib-project");
    const target = path.join(guarded, "src", "lib.ts");
    expect(isDeny(edit(host, "s1", outside, [target]))).toBe(true);
    // An edit to the unconfigured cwd itself is not gated (control).
    expect(edit(host, "s1", outside, [path.join(outside, "notes.md")]).json).toEqual({});

    recall(host, "s1", outside); // sole pending repository, unconfigured cwd: promoted
    expect(edit(host, "s1", outside, [target]).json).toEqual({});
    const checkpoint = continuation(host, stop(host, "s1", outside));
    expect(checkpointTargets(checkpoint)).toEqual([{ project: "lib-project", session: "rolling/s1", root: guarded }]); // the session's own slot
    expect(checkpoint).toContain('save_working_context(project="lib-project", session="rolling/');
  });

  test("a pending repository never steals a recall meant for the cwd's repository", () => {
    const a = optedIn("repo-a", "alpha");
    const b = optedIn("repo-b", "beta");
    expect(isDeny(edit(host, "s1", b, [path.join(a, "src", "x.ts")]))).toBe(true); // pending: alpha
    recall(host, "s1", b); // unscoped, from opted-in cwd b: unlocks b, not a
    expect(edit(host, "s1", b, [path.join(b, "src", "y.ts")]).json).toEqual({});
    expect(isDeny(edit(host, "s1", b, [path.join(a, "src", "x.ts")]))).toBe(true);
    // A recall scoped to alpha then promotes the pending repository (control).
    recall(host, "s1", b, { input: { query: "q", filter: { project: "alpha" } } });
    expect(edit(host, "s1", b, [path.join(a, "src", "x.ts")]).json).toEqual({});
  });

  test("a recall scoped to project B never unlocks pending A", () => {
    const a = optedIn("repo-a", "alpha");
    optedIn("repo-b", "beta");
    const cwd = repo("neutral");
    expect(isDeny(edit(host, "s1", cwd, [path.join(a, "src", "x.ts")]))).toBe(true);
    recall(host, "s1", cwd, { input: { query: "q", filter: { project: "beta" } } });
    expect(isDeny(edit(host, "s1", cwd, [path.join(a, "src", "x.ts")]))).toBe(true);
    recall(host, "s1", cwd, { input: { query: "q", memory_scope: { project: "alpha" } }, tool: "compile_context" });
    expect(edit(host, "s1", cwd, [path.join(a, "src", "x.ts")]).json).toEqual({});
  });

  test("a recall from an opted-in cwd scoped to another project does not unlock the cwd", () => {
    const a = optedIn("repo-a", "alpha");
    const target = path.join(a, "src", "x.ts");
    recall(host, "s1", a, { input: { query: "q", filter: { project: "beta" } } });
    expect(isDeny(edit(host, "s1", a, [target]))).toBe(true);
    recall(host, "s1", a, { input: { query: "q", filter: { project: 7 } } });
    expect(isDeny(edit(host, "s1", a, [target]))).toBe(true);
    recall(host, "s1", a, { input: { query: "q", filter: { project: "alpha" } } });
    expect(edit(host, "s1", a, [target]).json).toEqual({});
  });

  test.each([
    [
      "isError: true",
      { response: host === "claude" ? undefined : { content: [{ type: "text", text: "boom" }], isError: true } },
    ],
    ["an error field", { response: { error: "store locked", content: [{ type: "text", text: "x" }] } }],
    ["an empty content array", { response: host === "claude" ? [] : { content: [], isError: false } }],
    ["an empty object", { response: {} }],
    [
      "a non-text block",
      {
        response:
          host === "claude"
            ? [{ type: "image", data: "AAAA" }]
            : { content: [{ type: "image", data: "AAAA" }], isError: false },
      },
    ],
    // A bare string counts only when it reads as a recall result (docs/decisions.md#the-learning-loop,
    // docs/how-it-works.md#what-counts-as-a-recall-per-host-measured)
    // (Claude's form for structuredContent); free text or an error message never does.
    ["a bare string", { response: "ok" }],
    ["a bare error message", { response: "MCP error -32603: memory store unavailable" }],
    ["a bare string parsing as {error}", { response: '{"error":"locked"}' }],
    [
      "free text in a text block",
      {
        response:
          host === "claude"
            ? [{ type: "text", text: "ok" }]
            : { content: [{ type: "text", text: "ok" }], isError: false },
      },
    ],
    [
      "text parsing as {error}",
      {
        response:
          host === "claude"
            ? [{ type: "text", text: '{"error":"locked"}' }]
            : { content: [{ type: "text", text: '{"error":"locked"}' }], isError: false },
      },
    ],
    ["an unrelated tool", { tool: "load_working_context" }],
    ["compile_context without memory_scope", { tool: "compile_context", input: { text: "some text" } }],
  ])("a failed recall never unlocks: %s", (label, options) => {
    if (label === "isError: true" && host === "claude")
      options = { response: { content: [{ type: "text", text: "boom" }], isError: true } };
    const dir = optedIn("app");
    const target = path.join(dir, "src", "a.ts");
    expect(isDeny(edit(host, "s1", dir, [target]))).toBe(true);
    recall(host, "s1", dir, options as Parameters<typeof recallPayload>[3]);
    expect(isDeny(edit(host, "s1", dir, [target]))).toBe(true);
    // Positive control: a successful recall on the same path unlocks.
    recall(host, "s1", dir);
    expect(edit(host, "s1", dir, [target]).json).toEqual({});
  });

  // docs/how-it-works.md#what-counts-as-a-recall-per-host-measured: velesdb-memory answers a recall
  // with rmcp Json<T> (one text block + the same
  // object as structuredContent); Claude Code 2.1.328–2.1.332 hands the hook that object
  // serialised as a bare string. It must unlock exactly like the content-array form.
  test.each([
    [
      "a bare JSON string (structuredContent serialised)",
      '{"memories":[{"id":1,"id_str":"1","score":0.5,"content":"x"}]}',
    ],
    ["a bare JSON string with no memories", '{"memories":[]}'],
  ])("a recall answered as %s unlocks", (_label, response) => {
    const dir = optedIn("app");
    const target = path.join(dir, "src", "a.ts");
    expect(isDeny(edit(host, "s1", dir, [target]))).toBe(true);
    recall(host, "s1", dir, { response });
    expect(edit(host, "s1", dir, [target]).json).toEqual({});
  });

  test("missing session_id in an opted-in repository is refused; elsewhere it passes", () => {
    const dir = optedIn("app");
    const refused = edit(host, undefined, dir, [path.join(dir, "src", "a.ts")]);
    expect(isDeny(refused)).toBe(true);
    expect(denyReason(refused)).toContain("without a session id");
    const plain = repo("plain");
    expect(edit(host, undefined, plain, [path.join(plain, "a.ts")]).json).toEqual({});
  });

  test.each([
    ["slashes", "../../etc/passwd"],
    ["dot-dot", ".."],
    ["10 000 characters", "s".repeat(10_000)],
    ["newlines", "line1\nline2\n"],
  ])(
    "a hostile session_id (%s) is scoped correctly and writes nothing outside the state directory",
    (_label, session) => {
      const dir = optedIn("app");
      const target = path.join(dir, "src", "a.ts");
      expect(isDeny(edit(host, session, dir, [target]))).toBe(true);
      recall(host, session, dir);
      expect(edit(host, session, dir, [target]).json).toEqual({});
      expect(isDeny(edit(host, `${session}x`, dir, [target]))).toBe(true);
      expect(continuation(host, stop(host, session, dir))).toContain("Learning checkpoint");
      const outside = fs.readdirSync(box.root).sort();
      expect(outside).toEqual(["home", "repos", "tmp", "ws"]);
      expect(fs.readdirSync(box.tmp)).toEqual([path.basename(box.stateDir)]);
    },
  );
});

describe("codex apply_patch", () => {
  test("a patch touching two opted-in repositories needs a recall for each; the checkpoint names both", () => {
    const a = optedIn("repo-a", "alpha");
    const b = optedIn("repo-b", "beta");
    const cwd = repo("workspace");
    const targets = [path.join(a, "src", "x.ts"), path.join(b, "src", "y.ts")];
    const first = edit("codex", "s1", cwd, targets);
    expect(isDeny(first)).toBe(true);
    expect(denyReason(first)).toContain('"project": "alpha"');
    expect(denyReason(first)).toContain('"project": "beta"');

    recall("codex", "s1", cwd, { input: { query: "q", filter: { project: "alpha" } } });
    const second = edit("codex", "s1", cwd, targets);
    expect(isDeny(second)).toBe(true);
    expect(denyReason(second)).not.toContain('"project": "alpha"');
    expect(denyReason(second)).toContain('"project": "beta"');

    recall("codex", "s1", cwd, { input: { query: "q", filter: { project: "beta" } } });
    expect(edit("codex", "s1", cwd, targets).json).toEqual({});
    const roots = checkpointTargets(continuation("codex", stop("codex", "s1", cwd))).map((t) => t.root);
    expect(roots).toEqual([a, b].sort());
  });

  test("a refused patch leaves no dirty mark: the next Stop has no checkpoint", () => {
    const a = optedIn("repo-a", "alpha");
    const b = optedIn("repo-b", "beta");
    const cwd = repo("workspace");
    recall("codex", "s1", cwd, { input: { query: "q", filter: { project: "alpha" } } }); // nothing pending: no effect
    recall("codex", "s1", a); // unlocks a only
    expect(isDeny(edit("codex", "s1", cwd, [path.join(a, "x"), path.join(b, "y")]))).toBe(true);
    expect(continuation("codex", stop("codex", "s1", cwd))).not.toContain("Learning checkpoint");
    // Control: the patch to a alone passes and is checkpointed.
    expect(edit("codex", "s1", cwd, [path.join(a, "x")]).json).toEqual({});
    expect(checkpointTargets(continuation("codex", stop("codex", "s1", cwd, true)))).toHaveLength(1);
  });

  test("relative patch targets resolve against the payload cwd", () => {
    const a = optedIn("repo-a", "alpha");
    const plain = repo("plain");
    expect(isDeny(edit("codex", "s1", a, ["src/new file.ts"]))).toBe(true);
    expect(edit("codex", "s1", plain, ["src/new file.ts"]).json).toEqual({});
  });
});

describe.each(HOSTS)("%s symlinks", (host) => {
  test("an intermediate symlinked directory gets the physical repository's policy", () => {
    const guarded = optedIn("guarded");
    const plain = repo("plain");
    const link = path.join(plain, "vendored");
    fs.symlinkSync(path.join(guarded, "src"), link);
    const target = path.join(link, "new.ts");
    expect(isDeny(edit(host, "s1", plain, [target]))).toBe(true);
    recall(host, "s1", guarded);
    expect(edit(host, "s1", plain, [target]).json).toEqual({});
  });

  test("a final-component symlink that crosses into an opted-in repository is refused, even after recall", () => {
    const guarded = optedIn("guarded");
    const plain = repo("plain");
    const real = path.join(guarded, "src", "real.ts");
    fs.writeFileSync(real, "x");
    const link = path.join(plain, "alias.ts");
    fs.symlinkSync(real, link);
    recall(host, "s1", guarded);
    const refused = edit(host, "s1", plain, [link]);
    expect(isDeny(refused)).toBe(true);
    expect(denyReason(refused)).toContain("symlink");
    expect(denyReason(refused)).toContain("recall");
    expect(denyReason(refused)).toContain(real);
    // Control: the physical path passes after the recall; a link between unguarded places passes.
    expect(edit(host, "s1", plain, [real]).json).toEqual({});
    const other = path.join(plain, "other.ts");
    fs.writeFileSync(other, "y");
    fs.symlinkSync(other, path.join(plain, "alias2.ts"));
    expect(edit(host, "s1", plain, [path.join(plain, "alias2.ts")]).json).toEqual({});
  });
});

describe.each(HOSTS)("%s forged state", (host) => {
  const prefix = host === "claude" ? "" : "codex-";
  const sessionKey = (session: string) => cksum(session);

  test("a recall marker that is a symlink is never evidence and never overwritten", () => {
    const dir = optedIn("app");
    const target = path.join(dir, "src", "a.ts");
    expect(isDeny(edit(host, "s1", dir, [target]))).toBe(true); // creates the state directory
    const victim = path.join(box.root, "victim");
    fs.writeFileSync(victim, "keep");
    const marker = path.join(box.stateDir, `${prefix}recall-${cksum(`s1\n${dir}`)}.marker`);
    fs.symlinkSync(victim, marker);
    const refused = edit(host, "s1", dir, [target]);
    expect(denyReason(refused)).toMatch(/linked: .* is a symlink/);
    recall(host, "s1", dir);
    expect(isDeny(edit(host, "s1", dir, [target]))).toBe(true);
    expect(fs.readFileSync(victim, "utf8")).toBe("keep");
    expect(fs.lstatSync(marker).isSymbolicLink()).toBe(true);
  });

  test("a pending record with the wrong content is malformed: the recall marks nothing, the record stays", () => {
    const dir = optedIn("app");
    const target = path.join(dir, "src", "a.ts");
    expect(isDeny(edit(host, "s1", dir, [target]))).toBe(true);
    const pendingDir = path.join(box.stateDir, `${prefix}pending-recall-${sessionKey("s1")}.records`);
    const [name] = fs.readdirSync(pendingDir);
    const forged = path.join(pendingDir, name!);
    fs.writeFileSync(forged, '{"project":"app","session":"rolling","root":"/somewhere/else"}\n');
    recall(host, "s1", dir);
    expect(isDeny(edit(host, "s1", dir, [target]))).toBe(true);
    expect(fs.readFileSync(forged, "utf8")).toContain("/somewhere/else");
  });

  test("a records directory that is a symlink is refused and never written through", () => {
    const dir = optedIn("app");
    const target = path.join(dir, "src", "a.ts");
    recall(host, "s1", dir);
    const elsewhere = path.join(box.root, "elsewhere");
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, path.join(box.stateDir, `${prefix}learning-dirty-${sessionKey("s1")}.records`));
    const refused = edit(host, "s1", dir, [target]);
    expect(isDeny(refused)).toBe(true);
    expect(denyReason(refused)).toContain("linked");
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    const stopped = continuation(host, stop(host, "s1", dir));
    expect(stopped).toMatch(/linked: .*learning-dirty-.*\.records" is a symlink/);
    expect(stop(host, "s1", dir, true).json).toEqual({});
  });

  test("a dirty record with the wrong content: Stop continues naming it, never consumes it", () => {
    const dir = optedIn("app");
    recall(host, "s1", dir);
    expect(edit(host, "s1", dir, [path.join(dir, "src", "a.ts")]).json).toEqual({});
    const dirtyDir = path.join(box.stateDir, `${prefix}learning-dirty-${sessionKey("s1")}.records`);
    const [name] = fs.readdirSync(dirtyDir);
    fs.writeFileSync(path.join(dirtyDir, name!), "[]\n");
    const text = continuation(host, stop(host, "s1", dir));
    expect(text).toContain("malformed");
    expect(text).toContain(path.join(dirtyDir, name!));
    expect(fs.readFileSync(path.join(dirtyDir, name!), "utf8")).toBe("[]\n");
    // The session can still end: the continuation's own Stop passes.
    expect(stop(host, "s1", dir, true).json).toEqual({});
  });
});

describe.each(HOSTS)("%s Stop checkpoints", (host) => {
  test("first Stop in an opted-in repository: the checklist once; each edit batch exactly one more", () => {
    const dir = optedIn("app");
    const first = continuation(host, stop(host, "s1", dir));
    for (const step of ["Recall", "Decision", "Causality", "Feedback"]) expect(first).toContain(step);
    expect(checkpointTargets(first)).toEqual([{ project: "app", session: "rolling/s1", root: dir }]);
    expect(stop(host, "s1", dir, true).json).toEqual({});
    expect(stop(host, "s1", dir).json).toEqual({});

    recall(host, "s1", dir);
    let continuations = 0;
    for (let round = 0; round < 20; round++) {
      if (round % 5 === 0) expect(edit(host, "s1", dir, [path.join(dir, "src", `f${round}.ts`)]).json).toEqual({});
      if (continuation(host, stop(host, "s1", dir, round % 2 === 1)) !== undefined) continuations++;
    }
    expect(continuations).toBe(4); // four batches (rounds 0, 5, 10, 15), one checkpoint each
  });

  test("a plain repository gets the generic reminder once, not the checklist", () => {
    const dir = repo("plain");
    const text = continuation(host, stop(host, "s1", dir));
    expect(text).toContain('save_working_context(project="plain", session="rolling/');
    expect(text).not.toContain("Learning checkpoint");
    expect(stop(host, "s1", dir).json).toEqual({});
  });

  test("50 concurrent edits to different opted-in repositories: the next Stop names all 50, the one after passes", async () => {
    const repos = Array.from({ length: 50 }, (_, i) => optedIn(`r${String(i).padStart(2, "0")}`, `project-${i}`));
    for (const dir of repos) recall(host, "s1", dir);
    const { BINARY } = await import("./support/hook-runner.ts");
    const runs = repos.map((dir) => {
      const child = Bun.spawn([BINARY, host, "pre-tool-use"], {
        stdin: new Blob([JSON.stringify(editPayload(host, "s1", dir, [path.join(dir, "src", "a.ts")]))]),
        env: box.env,
        stdout: "pipe",
      });
      return child.exited.then(async () => (await new Response(child.stdout).text()).trim());
    });
    expect(await Promise.all(runs)).toEqual(repos.map(() => "{}"));
    const named = checkpointTargets(continuation(host, stop(host, "s1", repos[0]!)));
    expect(named.map((t) => t.root).sort()).toEqual([...repos].sort());
    expect(stop(host, "s1", repos[0]!, true).json).toEqual({});
    expect(stop(host, "s1", repos[0]!).json).toEqual({});
  });

  testIf(IS_ROOT, "root")(
    "a record that cannot be removed: the complete checklist with a warning, then no loop",
    () => {
      const a = optedIn("repo-a", "alpha");
      const b = optedIn("repo-b", "beta");
      for (const dir of [a, b]) {
        recall(host, "s1", dir);
        edit(host, "s1", dir, [path.join(dir, "src", "x.ts")]);
      }
      const prefix = host === "claude" ? "" : "codex-";
      const dirtyDir = path.join(box.stateDir, `${prefix}learning-dirty-${cksum("s1")}.records`);
      const [stuckName] = fs.readdirSync(dirtyDir).sort();
      expect(Bun.spawnSync(["chattr", "+i", path.join(dirtyDir, stuckName!)]).exitCode).toBe(0);

      const text = continuation(host, stop(host, "s1", a));
      expect(checkpointTargets(text).map((t) => t.root)).toEqual([a, b]);
      expect(text).toContain(`Warning: the edit queue at ${JSON.stringify(dirtyDir)} could not be emptied`);
      // The stuck record never earns a second checkpoint: continuation passes, later Stops only
      // name the broken queue when the host says this is not a continuation.
      expect(stop(host, "s1", a, true).json).toEqual({});
      expect(continuation(host, stop(host, "s1", a))).toMatch(/storage: .*cannot be removed/);
      expect(stop(host, "s1", a, true).json).toEqual({});
      // A new edit batch in the other repository is still checkpointed, once (control).
      const stuckRoot = JSON.parse(fs.readFileSync(path.join(dirtyDir, stuckName!), "utf8")).root as string;
      const other = stuckRoot === a ? b : a;
      expect(edit(host, "s1", other, [path.join(other, "src", "y.ts")]).json).toEqual({});
      expect(checkpointTargets(continuation(host, stop(host, "s1", a))).map((t) => t.root)).toEqual([other]);
      expect(stop(host, "s1", a, true).json).toEqual({});
      Bun.spawnSync(["chattr", "-i", path.join(dirtyDir, stuckName!)]);
    },
  );

  test("a pending manifest left by an interrupted Stop is re-emitted exactly once", () => {
    const dir = optedIn("app");
    stop(host, "s1", dir); // creates the state directory and the per-repository marker
    const prefix = host === "claude" ? "" : "codex-";
    const manifest = path.join(box.stateDir, `${prefix}learning-checkpoint-manifest-${cksum("s1")}.marker`);
    const targets = [{ project: "lost", session: "rolling", root: "/lost/root" }];
    fs.writeFileSync(manifest, `${JSON.stringify({ state: "pending", targets })}\n`, { mode: 0o600 });
    const text = continuation(host, stop(host, "s1", dir, true));
    expect(checkpointTargets(text)).toEqual([{ ...targets[0]!, session: "rolling/s1" }]);
    expect(stop(host, "s1", dir, true).json).toEqual({});
    expect(stop(host, "s1", dir).json).toEqual({});
    expect(fs.existsSync(manifest)).toBe(false);
  });

  test("a linked manifest: continue naming it once, never remove it", () => {
    const dir = optedIn("app");
    stop(host, "s1", dir);
    const prefix = host === "claude" ? "" : "codex-";
    const manifest = path.join(box.stateDir, `${prefix}learning-checkpoint-manifest-${cksum("s1")}.marker`);
    fs.symlinkSync(path.join(box.root, "nowhere"), manifest);
    expect(continuation(host, stop(host, "s1", dir))).toMatch(/linked: .*learning-checkpoint-manifest.* is a symlink/);
    expect(stop(host, "s1", dir, true).json).toEqual({});
    expect(fs.lstatSync(manifest).isSymbolicLink()).toBe(true);
  });
});

function cksum(text: string): string {
  const out = Bun.spawnSync(["cksum"], { stdin: Buffer.from(text) })
    .stdout.toString()
    .trim()
    .split(/\s+/);
  return `${out[0]}-${out[1]}`;
}
