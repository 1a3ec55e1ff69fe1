// The DeepSeek harness bridge profile (docs/contract.md §4.4) against the compiled binary. The bridge
// never sets `stop_hook_active` and has no continuation cap, so the Stop rows here are the
// loop-safety proof: once per session, never on a state location that cannot be written.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  additionalContextOf,
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  writeConfig,
  type Sandbox,
} from "../../support/hook-runner.ts";
import { IS_ROOT, missing, testIf } from "../../support/requires.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("dsh");
});
afterEach(() => {
  Bun.spawnSync(["chattr", "-R", "-i", box.root], { stderr: "ignore" });
  box.cleanup();
});

const run = (event: string, payload: Record<string, unknown>, env: Record<string, string> = {}) => {
  const result = runBinary(["dsh", event], payload, { env: { ...box.env, ...env }, cwd: box.workspace });
  expect(result.exitCode).toBe(0);
  return parseOneJsonAnswer(result.stdout);
};
const fixture = (name: string, overrides: Record<string, unknown> = {}) =>
  loadPayload("dsh", name, { cwd: box.workspace, ...overrides });
const steers = (answer: Record<string, unknown>) => answer.decision === "block";

test("SessionStart: load guidance as additionalContext", () => {
  writeConfig(box.workspace, { project: "dsh-app", session: "slot" });
  const answer = run("session-start", fixture("session-start.startup"));
  expect(additionalContextOf(answer)).toContain(
    'mcp__velesdb-memory__load_working_context(project="dsh-app", session="slot/',
  );
});

describe("guard", () => {
  // docs/decisions.md#the-learning-loop, the text host's side: only text that parses as a recall result unlocks.
  test.each([
    ["a bare ok", "ok"],
    ["null", null],
    ["an empty string", ""],
    ["an error object", '{"error":"locked"}'],
    ["a JSON string", '"[]"'],
    ["an empty array that is not text", []],
    ["a content array instead of text", [{ type: "text", text: "[]" }]],
  ])(
    "a recall response that is %s never unlocks (control: the fixture's, velesdb-memory's real answer, does)",
    (_label, response) => {
      writeConfig(box.workspace, { project: "dsh-app", enforce_learning_loop: true });
      const isDeny = (answer: Record<string, unknown>) =>
        (answer.hookSpecificOutput as Record<string, unknown> | undefined)?.permissionDecision === "deny";
      run("post-tool-use", fixture("post-tool-use.recall-fused", { tool_response: response }));
      expect(isDeny(run("pre-tool-use", fixture("pre-tool-use.edit")))).toBe(true);
      run("post-tool-use", fixture("post-tool-use.recall-fused"));
      expect(run("pre-tool-use", fixture("pre-tool-use.edit"))).toEqual({});
    },
  );

  test("an edit in an opted-in cwd is denied before recall and allowed after a recall whose text is JSON", () => {
    writeConfig(box.workspace, { project: "dsh-app", enforce_learning_loop: true });
    const denied = run("pre-tool-use", fixture("pre-tool-use.edit"));
    expect((denied.hookSpecificOutput as Record<string, unknown>).permissionDecision).toBe("deny");
    expect(run("pre-tool-use", fixture("pre-tool-use.bash"))).toEqual({});
    run("post-tool-use", fixture("post-tool-use.recall-fused", { tool_response: '{"error":"locked"}' }));
    expect(
      (run("pre-tool-use", fixture("pre-tool-use.edit")).hookSpecificOutput as Record<string, unknown>)
        .permissionDecision,
    ).toBe("deny");
    run("post-tool-use", fixture("post-tool-use.recall-fused"));
    expect(run("pre-tool-use", fixture("pre-tool-use.edit"))).toEqual({});
    for (const tool of ["write", "str_replace_editor"])
      expect(run("pre-tool-use", fixture("pre-tool-use.edit", { tool_name: tool }))).toEqual({});
    // State lives in the workspace, not in TMPDIR, in a folder that git ignores.
    expect(fs.existsSync(path.join(box.workspace, ".velesdb-hooks", "state"))).toBe(true);
    expect(fs.readFileSync(path.join(box.workspace, ".velesdb-hooks", ".gitignore"), "utf8")).toMatch(/^\*$/m);
    Bun.spawnSync(["git", "init", "-q"], { cwd: box.workspace });
    expect(Bun.spawnSync(["git", "status", "--porcelain"], { cwd: box.workspace }).stdout.toString()).not.toContain(
      ".velesdb-hooks/",
    );
    // The private state directory holds only the stats records, which every host keeps there (docs/stats.md).
    expect(fs.readdirSync(box.stateDir)).toEqual(["stats"]);
  });
});

describe("Stop", () => {
  test("steers exactly once per session although every Stop arrives with stop_hook_active: false", () => {
    let count = 0;
    for (let i = 0; i < 20; i++) if (steers(run("stop", fixture("stop")))) count++;
    expect(count).toBe(1);
    expect(steers(run("stop", fixture("stop", { session_id: "another" })))).toBe(true);
  });

  test("with a fresh private TMPDIR for every hook process, state in the workspace still holds it to one", () => {
    let count = 0;
    for (let i = 0; i < 10; i++) {
      const privateTmp = fs.mkdtempSync(path.join(box.root, "tmp-"));
      if (steers(run("stop", fixture("stop"), { TMPDIR: privateTmp }))) count++;
    }
    expect(count).toBe(1);
  });

  test.each([
    [
      "a state path under a regular file",
      () => {
        const file = path.join(box.root, "not-a-dir");
        fs.writeFileSync(file, "x");
        return { VELESDB_HOOKS_STATE_DIR: path.join(file, "state") };
      },
    ],
    [
      "a state directory that is a symlink",
      () => {
        // Inside the case's directory, so it goes with it (one was left in /tmp by every run).
        const real = fs.mkdtempSync(path.join(box.root, "real-"));
        const link = path.join(box.root, "state-link");
        fs.symlinkSync(real, link);
        return { VELESDB_HOOKS_STATE_DIR: link };
      },
    ],
  ])("an unwritable state location (%s) never steers", (_label, makeEnv) => {
    const env = makeEnv();
    for (let i = 0; i < 5; i++) expect(steers(run("stop", fixture("stop"), env))).toBe(false);
    // Control: the same session with a writable location steers once.
    expect(steers(run("stop", fixture("stop")))).toBe(true);
  });

  testIf(IS_ROOT, "root")("a workspace nobody can write into (immutable) never steers", () => {
    expect(Bun.spawnSync(["chattr", "+i", box.workspace]).exitCode).toBe(0);
    for (let i = 0; i < 5; i++) expect(steers(run("stop", fixture("stop")))).toBe(false);
    Bun.spawnSync(["chattr", "-i", box.workspace]);
    expect(steers(run("stop", fixture("stop")))).toBe(true);
  });

  test("an opted-in workspace: the checklist once per edit batch, never a loop", () => {
    writeConfig(box.workspace, { project: "dsh-app", enforce_learning_loop: true });
    run("post-tool-use", fixture("post-tool-use.recall-fused"));
    expect(run("pre-tool-use", fixture("pre-tool-use.edit"))).toEqual({});
    const answers = Array.from({ length: 10 }, () => run("stop", fixture("stop")));
    expect(answers.filter(steers)).toHaveLength(1);
    expect(answers[0]!.reason).toContain("Learning checkpoint");
  });
});

// docs/decisions.md#state-of-the-deepseek-harness: `.velesdb-hooks` is repository content (git
// commits symlinks). The state
// directory below the workspace is created one component at a time without following links;
// anything hostile there makes state unavailable, with one stderr line and nothing written.
describe("a repository-controlled .velesdb-hooks is never followed", () => {
  const workspaceState = () => path.join(box.workspace, ".velesdb-hooks");
  const otherRepository = () => {
    const dir = path.join(box.root, "other-repo");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "README"), "other\n");
    return dir;
  };
  const tree = (dir: string): string[] =>
    fs.readdirSync(dir, { recursive: true, withFileTypes: false }).map(String).sort();

  const HOSTILE: ReadonlyArray<readonly [string, () => string, RegExp, boolean]> = [
    [
      "a symlink to another repository",
      () => {
        const target = otherRepository();
        fs.symlinkSync(target, workspaceState());
        return target;
      },
      /linked: state directory .*\.velesdb-hooks"? is a symlink/,
      false,
    ],
    [
      "a regular file",
      () => {
        fs.writeFileSync(workspaceState(), "not a directory\n");
        return box.workspace;
      },
      /storage: state directory .*\.velesdb-hooks"? is not a directory/,
      false,
    ],
    [
      "a real directory whose state is a symlink to another repository",
      () => {
        const target = otherRepository();
        fs.mkdirSync(workspaceState());
        fs.symlinkSync(target, path.join(workspaceState(), "state"));
        return target;
      },
      /linked: state directory .*state"? is a symlink/,
      false,
    ],
    [
      "a directory owned by another user",
      () => {
        fs.mkdirSync(workspaceState(), { mode: 0o777 });
        fs.chownSync(workspaceState(), 4242, 4242);
        return box.workspace;
      },
      /storage: state directory .*\.velesdb-hooks"? is owned by another user/,
      true,
    ],
  ];

  test.each(HOSTILE)(
    "%s: state unavailable, one stderr line, nothing written anywhere",
    (_label, plant, problem, needsRoot) => {
      if (needsRoot && missing(IS_ROOT, "root")) return;
      const watched = plant();
      const before = { watched: tree(watched), workspace: tree(box.workspace) };
      for (let i = 0; i < 3; i++) {
        const result = runBinary(["dsh", "stop"], fixture("stop"), { env: box.env, cwd: box.workspace });
        expect(result.exitCode).toBe(0);
        expect(steers(parseOneJsonAnswer(result.stdout))).toBe(false);
        expect(result.stderr.trim().split("\n")).toHaveLength(1);
        expect(result.stderr).toMatch(problem);
      }
      run("post-tool-use", fixture("post-tool-use.recall-fused"));
      run("pre-tool-use", fixture("pre-tool-use.edit"));
      expect(tree(watched)).toEqual(before.watched);
      expect(tree(box.workspace)).toEqual(before.workspace);
    },
  );

  test("positive control: a fresh workspace gets .velesdb-hooks/state (0700) and its .gitignore, and Stop steers once", () => {
    expect(steers(run("stop", fixture("stop")))).toBe(true);
    expect(fs.statSync(path.join(workspaceState(), "state")).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(path.join(workspaceState(), ".gitignore"), "utf8")).toMatch(/^\*$/m);
    expect(steers(run("stop", fixture("stop")))).toBe(false);
  });

  test("a .velesdb-hooks the repository already has gets state but no .gitignore (it is the repository's)", () => {
    fs.mkdirSync(workspaceState());
    expect(steers(run("stop", fixture("stop")))).toBe(true);
    expect(fs.existsSync(path.join(workspaceState(), "state"))).toBe(true);
    expect(fs.readdirSync(workspaceState())).toEqual(["state"]);
  });

  test("a session cwd reached through a symlink keeps its state in the real workspace (the cwd itself may be a link)", () => {
    const linkedCwd = path.join(box.root, "linked-workspace");
    fs.symlinkSync(box.workspace, linkedCwd);
    const stop = () =>
      steers(
        parseOneJsonAnswer(
          runBinary(["dsh", "stop"], fixture("stop", { cwd: linkedCwd }), { env: box.env, cwd: linkedCwd }).stdout,
        ),
      );
    expect(stop()).toBe(true);
    expect(stop()).toBe(false);
    expect(fs.lstatSync(path.join(workspaceState(), "state")).isDirectory()).toBe(true);
  });

  test("a planted .gitignore link in an existing .velesdb-hooks is not followed", () => {
    const outside = path.join(box.root, "outside.txt");
    fs.writeFileSync(outside, "untouched\n");
    fs.mkdirSync(workspaceState());
    fs.symlinkSync(outside, path.join(workspaceState(), ".gitignore"));
    expect(steers(run("stop", fixture("stop")))).toBe(true);
    expect(fs.existsSync(path.join(workspaceState(), "state"))).toBe(true);
    expect(fs.lstatSync(path.join(workspaceState(), ".gitignore")).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(outside, "utf8")).toBe("untouched\n");
  });
});
