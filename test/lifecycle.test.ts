// The lifecycle hooks of docs/contract.md §5 against the compiled binary, fed the payload shapes the real
// hosts send (fixtures/payloads). Each "passes"/"stays quiet" row sits next to a row proving
// the same path does answer.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  additionalContextOf,
  expectUsageError,
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  writeConfig,
  type Sandbox,
} from "./support/hook-runner.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("life");
});
afterEach(() => box.cleanup());

const run = (args: string[], payload: Record<string, unknown> | string, cwd?: string) =>
  runBinary(args, payload, { env: box.env, cwd: cwd ?? box.workspace });

describe("SessionStart", () => {
  test.each([
    ["claude", "session-start.startup"],
    ["claude", "session-start.resume"],
    ["codex", "session-start.startup"],
    ["codex", "session-start.resume"],
    ["codex", "session-start.fork"],
  ])("%s %s: load guidance with the default identity", (host, fixture) => {
    const result = run([host, "session-start"], loadPayload(host, fixture, { cwd: box.workspace }));
    expect(result.exitCode).toBe(0);
    const answer = parseOneJsonAnswer(result.stdout);
    expect(Object.keys(answer)).toEqual(["hookSpecificOutput"]);
    expect((answer.hookSpecificOutput as Record<string, unknown>).hookEventName).toBe("SessionStart");
    const text = additionalContextOf(answer)!;
    expect(text).toContain('load_working_context(project="project", session="rolling/');
    expect(text).not.toContain("compacted");
    expect(result.stderr).toBe("");
  });

  test.each(["claude", "codex"])("%s: identity comes from .velesdb-hooks.json found from a nested cwd", (host) => {
    writeConfig(box.workspace, { project: "veles-app", session: "campaign-7" });
    const nested = path.join(box.workspace, "src", "deep", "er");
    fs.mkdirSync(nested, { recursive: true });
    const text = additionalContextOf(
      parseOneJsonAnswer(
        run([host, "session-start"], loadPayload(host, "session-start.startup", { cwd: nested })).stdout,
      ),
    );
    expect(text).toContain('load_working_context(project="veles-app", session="campaign-7/');
  });

  test("a config file is found 20 directories up (start included), not 21", () => {
    let deepest = box.workspace;
    for (let i = 0; i < 20; i++) deepest = path.join(deepest, `d${i}`);
    fs.mkdirSync(deepest, { recursive: true });
    writeConfig(box.workspace, { project: "far-away" });
    const from = (dir: string) =>
      additionalContextOf(
        parseOneJsonAnswer(
          run(["claude", "session-start"], loadPayload("claude", "session-start.startup", { cwd: dir })).stdout,
        ),
      )!;
    // d18 is the 20th directory counted from itself up to the workspace: found.
    expect(from(path.join(box.workspace, ...Array.from({ length: 19 }, (_, i) => `d${i}`)))).toContain(
      'project="far-away"',
    );
    // d19 is 21 directories away: not found, so the default basename applies.
    expect(from(deepest)).toContain('project="d19"');
  });

  test("malformed or non-object config counts as absent: defaults, no error", () => {
    for (const content of ["{not json", "[1,2]", '"text"', "null"]) {
      writeConfig(box.workspace, content);
      const result = run(
        ["claude", "session-start"],
        loadPayload("claude", "session-start.startup", { cwd: box.workspace }),
      );
      expect(additionalContextOf(parseOneJsonAnswer(result.stdout))).toContain('project="project", session="rolling/');
    }
    // Positive control: the same file with valid JSON is honoured.
    writeConfig(box.workspace, { project: "ok" });
    const result = run(
      ["claude", "session-start"],
      loadPayload("claude", "session-start.startup", { cwd: box.workspace }),
    );
    expect(additionalContextOf(parseOneJsonAnswer(result.stdout))).toContain('project="ok", session="rolling/');
  });

  test("fields of the wrong type fall back to their defaults", () => {
    writeConfig(box.workspace, { project: 42, session: ["x"], enforce_learning_loop: "true" });
    const result = run(
      ["codex", "session-start"],
      loadPayload("codex", "session-start.startup", { cwd: box.workspace }),
    );
    expect(additionalContextOf(parseOneJsonAnswer(result.stdout))).toContain('project="project", session="rolling/');
  });

  test("the start directory is canonicalised physically: a symlinked cwd gets the real repository", () => {
    writeConfig(box.workspace, { project: "real-repo" });
    const inner = path.join(box.workspace, "pkg");
    fs.mkdirSync(inner);
    const link = path.join(box.root, "elsewhere-link");
    fs.symlinkSync(inner, link);
    const text = additionalContextOf(
      parseOneJsonAnswer(
        run(["claude", "session-start"], loadPayload("claude", "session-start.startup", { cwd: link })).stdout,
      ),
    );
    expect(text).toContain('project="real-repo"');
    // Without a config, the default project is the physical basename, not the link's name.
    fs.rmSync(path.join(box.workspace, ".velesdb-hooks.json"));
    const plain = additionalContextOf(
      parseOneJsonAnswer(
        run(["claude", "session-start"], loadPayload("claude", "session-start.startup", { cwd: link })).stdout,
      ),
    );
    expect(plain).toContain('project="pkg"');
  });

  test("a cwd that does not exist yet resolves through its nearest existing ancestor", () => {
    writeConfig(box.workspace, { project: "ancestor" });
    const missing = path.join(box.workspace, "not", "yet");
    const text = additionalContextOf(
      parseOneJsonAnswer(
        run(["codex", "session-start"], loadPayload("codex", "session-start.startup", { cwd: missing })).stdout,
      ),
    );
    expect(text).toContain('project="ancestor"');
  });

  test("codex source=compact adds the post-compaction reminder with the transcript path", () => {
    const transcript = path.join(box.root, "rollout.jsonl");
    const compact = run(
      ["codex", "session-start"],
      loadPayload("codex", "session-start.compact", { cwd: box.workspace, transcript_path: transcript }),
    );
    const text = additionalContextOf(parseOneJsonAnswer(compact.stdout))!;
    expect(text).toContain("compacted");
    expect(text).toContain('save_working_context(project="project", session="rolling/');
    expect(text).toContain(`compile_transcript on the transcript file ${JSON.stringify(transcript)}`);
    // Control: the same payload with another source carries no such reminder.
    const startup = run(
      ["codex", "session-start"],
      loadPayload("codex", "session-start.compact", { cwd: box.workspace, source: "startup" }),
    );
    expect(additionalContextOf(parseOneJsonAnswer(startup.stdout))).not.toContain("compacted");
  });

  test("claude compact after PreCompact names the trigger that ran", () => {
    const session = "sess-compact-1";
    run(
      ["claude", "pre-compact"],
      loadPayload("claude", "pre-compact.manual", { cwd: box.workspace, session_id: session }),
    );
    const text = additionalContextOf(
      parseOneJsonAnswer(
        run(
          ["claude", "session-start"],
          loadPayload("claude", "session-start.compact", { cwd: box.workspace, session_id: session }),
        ).stdout,
      ),
    )!;
    expect(text).toContain("compacted (manual)");
    // Another session never saw a PreCompact: no trigger is claimed.
    const other = additionalContextOf(
      parseOneJsonAnswer(
        run(
          ["claude", "session-start"],
          loadPayload("claude", "session-start.compact", { cwd: box.workspace, session_id: "other" }),
        ).stdout,
      ),
    )!;
    expect(other).toContain("compacted:");
    expect(other).not.toContain("(manual)");
  });
});

describe("Stop (generic)", () => {
  const stopText = (host: string, answer: Record<string, unknown>): string | undefined =>
    host === "codex"
      ? answer.decision === "block"
        ? (answer.reason as string)
        : undefined
      : additionalContextOf(answer);

  test.each([
    ["claude", "stop.first", "stop.continuation"],
    ["codex", "stop.first", "stop.active"],
  ])("%s: continues once with the save guidance, then passes", (host, first, second) => {
    const firstAnswer = parseOneJsonAnswer(
      run([host, "stop"], loadPayload(host, first, { cwd: box.workspace })).stdout,
    );
    if (host === "codex") {
      expect(Object.keys(firstAnswer).sort()).toEqual(["decision", "reason"]);
    } else {
      expect(firstAnswer).toEqual({
        hookSpecificOutput: { hookEventName: "Stop", additionalContext: expect.any(String) },
      });
    }
    expect(stopText(host, firstAnswer)).toContain('save_working_context(project="project", session="rolling/');
    expect(parseOneJsonAnswer(run([host, "stop"], loadPayload(host, second, { cwd: box.workspace })).stdout)).toEqual(
      {},
    );
    // Even a later Stop that is not a continuation passes: the reminder is once per session.
    expect(parseOneJsonAnswer(run([host, "stop"], loadPayload(host, first, { cwd: box.workspace })).stdout)).toEqual(
      {},
    );
    // A different session gets its own reminder.
    const other = parseOneJsonAnswer(
      run([host, "stop"], loadPayload(host, first, { cwd: box.workspace, session_id: "another-session" })).stdout,
    );
    expect(stopText(host, other)).toContain("save_working_context(");
  });

  test("claude and codex markers never collide for the same session id", () => {
    const session = "shared-session-id";
    const claudeFirst = parseOneJsonAnswer(
      run(["claude", "stop"], loadPayload("claude", "stop.first", { cwd: box.workspace, session_id: session })).stdout,
    );
    expect(additionalContextOf(claudeFirst)).toContain("save_working_context(");
    const codexFirst = parseOneJsonAnswer(
      run(["codex", "stop"], loadPayload("codex", "stop.first", { cwd: box.workspace, session_id: session })).stdout,
    );
    expect(codexFirst.decision).toBe("block");
    expect(
      parseOneJsonAnswer(
        run(["claude", "stop"], loadPayload("claude", "stop.first", { cwd: box.workspace, session_id: session }))
          .stdout,
      ),
    ).toEqual({});
    expect(
      parseOneJsonAnswer(
        run(["codex", "stop"], loadPayload("codex", "stop.first", { cwd: box.workspace, session_id: session })).stdout,
      ),
    ).toEqual({});
  });

  test("markers use the bash reference's names: stop-<cksum>.marker and codex-stop-<cksum>.marker", () => {
    run(["claude", "stop"], loadPayload("claude", "stop.first", { cwd: box.workspace, session_id: "abc" }));
    run(["codex", "stop"], loadPayload("codex", "stop.first", { cwd: box.workspace, session_id: "abc" }));
    // Beside the markers: the stats records' directory (docs/stats.md).
    const names = fs
      .readdirSync(box.stateDir)
      .filter((name) => name !== "stats")
      .sort();
    expect(names).toEqual(["codex-stop-1219131554-3.marker", "stop-1219131554-3.marker"]);
    expect(fs.statSync(box.stateDir).mode & 0o777).toBe(0o700);
    for (const name of names) expect(fs.statSync(path.join(box.stateDir, name)).mode & 0o777).toBe(0o600);
  });

  test("without session_id the session is unknown-session, still once", () => {
    const payload = loadPayload("claude", "stop.first", { cwd: box.workspace });
    delete payload.session_id;
    expect(additionalContextOf(parseOneJsonAnswer(run(["claude", "stop"], payload).stdout))).toContain(
      "save_working_context(",
    );
    expect(parseOneJsonAnswer(run(["claude", "stop"], payload).stdout)).toEqual({});
    expect(fs.existsSync(path.join(box.stateDir, `stop-${cksumOf("unknown-session")}.marker`))).toBe(true);
  });
});

describe("PreCompact (claude)", () => {
  test.each(["pre-compact.manual", "pre-compact.auto"])(
    "%s: plain summariser instructions, never a block",
    (fixture) => {
      const result = run(["claude", "pre-compact"], loadPayload("claude", fixture, { cwd: box.workspace }));
      expect(result.exitCode).toBe(0);
      expect(() => JSON.parse(result.stdout)).toThrow();
      expect(result.stdout).not.toContain('"decision"');
      expect(result.stdout).toContain('save_working_context(project="project", session="rolling/');
      expect(result.stdout).toContain("compile_transcript");
      expect(result.stdout).toContain("verbatim");
      expect(result.stderr).toBe("");
    },
  );

  test("the user's custom instructions are respected, not repeated", () => {
    const result = run(["claude", "pre-compact"], loadPayload("claude", "pre-compact.manual", { cwd: box.workspace }));
    expect(result.stdout).not.toContain("keep the API names");
    expect(result.stdout).toContain("take precedence");
    const auto = run(["claude", "pre-compact"], loadPayload("claude", "pre-compact.auto", { cwd: box.workspace }));
    expect(auto.stdout).not.toContain("take precedence");
  });

  test("a pass prints nothing at all (not even {}), and its positive control prints instructions", () => {
    const misrouted = run(
      ["claude", "pre-compact"],
      loadPayload("claude", "pre-compact.auto", { cwd: box.workspace, hook_event_name: "PostCompact" }),
    );
    expect(misrouted.exitCode).toBe(0);
    expect(misrouted.stdout).toBe("");
    expect(misrouted.stderr).toMatch(/^velesdb-hooks: registered for PostCompact/);
    const routed = run(["claude", "pre-compact"], loadPayload("claude", "pre-compact.auto", { cwd: box.workspace }));
    expect(routed.stdout).toContain("save_working_context(");
  });
});

describe("command line", () => {
  test.each([
    [["nohost", "stop"], /unknown host "nohost"; hosts are claude, codex/],
    [["toString", "stop"], /unknown host "toString"/],
    [["claude", "nope"], /unknown event "nope" for claude; events are session-start/],
    [["codex", "pre-compact"], /unknown event "pre-compact" for codex/],
    [["claude", "stop", "extra"], /unexpected argument "extra"/],
  ])("%j is a usage error: exit 64, one stderr line, nothing on stdout", (args, message) => {
    expectUsageError(run(args, "{}"), message);
  });

  test("no arguments at all prints the usage on stderr: exit 64, nothing on stdout (docs/decisions.md#hook-input-and-answers)", () => {
    const bare = run([], "");
    expect(bare.exitCode).toBe(64);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).not.toContain("unknown host");
    // The same text as --help, so a user who typed only the name learns every form.
    expect(bare.stderr).toBe(run(["--help"], "").stdout);
  });

  test("--version prints the package version; --help lists hosts and events", () => {
    const version = JSON.parse(fs.readFileSync(path.join(import.meta.dir, "..", "package.json"), "utf8")).version;
    expect(run(["--version"], "").stdout).toBe(`velesdb-hooks ${version}\n`);
    const help = run(["--help"], "");
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("claude    session-start, stop, pre-compact, pre-tool-use, post-tool-use");
    expect(help.stdout).toContain("codex     session-start, stop, pre-tool-use, post-tool-use");
    expect(help.stdout).toContain("windsurf  pre-user-prompt, pre-write-code, post-mcp-tool-use");
    expect(help.stdout).toContain("dsh       session-start, stop, pre-tool-use, post-tool-use");
  });
});

function cksumOf(text: string): string {
  const out = Bun.spawnSync(["cksum"], { stdin: Buffer.from(text) })
    .stdout.toString()
    .trim()
    .split(/\s+/);
  return `${out[0]}-${out[1]}`;
}
