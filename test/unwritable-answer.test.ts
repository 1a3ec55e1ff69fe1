// docs/decisions.md#hook-input-and-answers: a deny whose JSON cannot be written completely must not become an allow.
// Claude, Codex, the DeepSeek bridge and Windsurf all block on exit 2 and read the reason from
// stderr, so when stdout is closed, full or a pipe nobody reads, the guard falls back to that.
// Run against the compiled binary: the fallback lives in the one place that writes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { BINARY, loadPayload, makeSandbox, writeConfig, type Sandbox } from "./support/hook-runner.ts";

let box: Sandbox;
let repo: string;
beforeAll(() => {
  box = makeSandbox("unwritable");
  repo = path.join(box.root, "repo");
  fs.mkdirSync(path.join(repo, "src"), { recursive: true });
  writeConfig(repo, { project: "guarded", enforce_learning_loop: true });
});
afterAll(() => box.cleanup());

// "closed": Bun reopens a closed stdout on /dev/null, so that row also covers "/dev/null".
type Stdout = "closed" | "full" | "closed pipe" | "readable";

// Each disposition as a shell redirection of the hook's stdout; the payload arrives late on
// stdin so that the pipe's reader (`true`) has certainly exited before the hook writes.
const REDIRECT: Record<Stdout, string> = {
  closed: ">&-",
  full: ">/dev/full",
  "closed pipe": "| true",
  readable: '>"$OUT"',
};

function runWithStdout(args: readonly string[], payload: Record<string, unknown>, stdout: Stdout, cwd: string) {
  const input = path.join(box.tmp, "payload.json");
  const out = path.join(box.tmp, "stdout.txt");
  const errFile = path.join(box.tmp, "stderr.txt");
  fs.writeFileSync(input, JSON.stringify(payload));
  fs.rmSync(out, { force: true });
  const script = `{ sleep 0.2; cat "$IN"; } | "$BIN" ${args.join(" ")} 2>"$ERR" ${REDIRECT[stdout]}; echo "\${PIPESTATUS[1]}"`;
  const run = Bun.spawnSync(["bash", "-c", script], {
    env: { ...box.env, IN: input, BIN: BINARY, ERR: errFile, OUT: out },
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    timeout: 20_000,
  });
  return {
    exitCode: Number(run.stdout.toString().trim()),
    stdout: fs.existsSync(out) ? fs.readFileSync(out, "utf8") : "",
    stderr: fs.readFileSync(errFile, "utf8"),
  };
}

// One refused edit per host: an opted-in repository and no recall in this session.
const DENIES: ReadonlyArray<readonly [host: string, event: string, payload: () => Record<string, unknown>]> = [
  [
    "claude",
    "pre-tool-use",
    () =>
      loadPayload("claude", "pre-tool-use.write", {
        session_id: "s-claude",
        cwd: repo,
        tool_input: { file_path: path.join(repo, "src", "a.ts"), content: "x" },
      }),
  ],
  [
    "codex",
    "pre-tool-use",
    () =>
      loadPayload("codex", "pre-tool-use.apply-patch", {
        session_id: "s-codex",
        cwd: repo,
        tool_input: {
          command: `*** Begin Patch\n*** Update File: ${path.join(repo, "src", "a.ts")}\n@@\n-a\n+b\n*** End Patch`,
        },
      }),
  ],
  ["dsh", "pre-tool-use", () => loadPayload("dsh", "pre-tool-use.edit", { session_id: "s-dsh", cwd: repo })],
  [
    "windsurf",
    "pre-write-code",
    () =>
      loadPayload("windsurf", "pre-write-code", {
        trajectory_id: "s-windsurf",
        tool_info: { file_path: path.join(repo, "src", "a.ts") },
      }),
  ],
];

describe.each(DENIES)("%s %s: a deny", (host, event, payload) => {
  test("positive control: with a readable stdout the host's own deny is written", () => {
    const run = runWithStdout([host, event], payload(), "readable", repo);
    expect(run.stdout + run.stderr).toContain("velesdb-hooks refused this edit");
    // Windsurf's deny is exit 2 by design; the others answer JSON with exit 0.
    expect(run.exitCode).toBe(host === "windsurf" ? 2 : 0);
    if (host !== "windsurf") expect(run.stdout).toContain("refused this edit");
  });

  test.each(["closed", "full", "closed pipe"] as const)("stdout %s → exit 2 with the reason on stderr", (stdout) => {
    const run = runWithStdout([host, event], payload(), stdout, repo);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("velesdb-hooks refused this edit (recall before edit).");
    expect(run.stderr).toContain(JSON.stringify(host === "dsh" ? repo : path.join(repo, "src", "a.ts")));
  });
});

test.each(["closed", "full", "closed pipe"] as const)(
  "a pass whose stdout is %s stays a pass (exit 0): only a deny falls back",
  (stdout) => {
    const plain = path.join(box.root, "plain");
    fs.mkdirSync(plain, { recursive: true });
    const payload = loadPayload("claude", "pre-tool-use.write", {
      session_id: "s-pass",
      cwd: plain,
      tool_input: { file_path: path.join(plain, "a.ts"), content: "x" },
    });
    expect(runWithStdout(["claude", "pre-tool-use"], payload, stdout, plain).exitCode).toBe(0);
  },
);
