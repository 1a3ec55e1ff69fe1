// OpenCode: the compiled binary on the payloads our plugin really sent while OpenCode 1.18.33 ran
// (fixtures/payloads/opencode): the guard over write/edit/apply_patch, recall evidence from
// `velesdb-memory_<tool>` MCP results, bash compression (inline and from OpenCode's saved file),
// the idle continuation and the compaction context. Every refusal sits next to the control that
// passes. The encoder's rows: test/encoders.test.ts; the plugin file: test/hosts/opencode/install-opencode.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { fake } from "../../support/compress-fixtures.ts";
import { realOutput } from "../../support/real-outputs.ts";

/** A real `go test -v` run with two failures (test/support/real-outputs.ts). */
const GO_TEST = realOutput("go test");
import { hook, loadPayload, makeSandbox, repository, type Sandbox } from "../../support/hook-runner.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("opencode");
});
afterEach(() => box.cleanup());

function editPayload(
  tool: "write" | "edit" | "apply_patch",
  session: string,
  cwd: string,
  target: string,
): Record<string, unknown> {
  const toolInput =
    tool === "apply_patch"
      ? { patchText: `*** Begin Patch\n*** Add File: ${target}\n+x\n*** End Patch\n` }
      : tool === "edit"
        ? { filePath: target, oldString: "a", newString: "b" }
        : { filePath: target, content: "x\n" };
  return loadPayload("opencode", "pre-tool-use.write", {
    session_id: session,
    cwd,
    tool_name: tool,
    tool_input: toolInput,
  });
}

const recall = (session: string, cwd: string, overrides: Record<string, unknown> = {}) =>
  loadPayload("opencode", "post-tool-use.recall-fused", { session_id: session, cwd, ...overrides });

describe("opencode guard and evidence", () => {
  test.each(["write", "edit", "apply_patch"] as const)(
    "%s before a recall is refused in an opted-in repository, passes elsewhere",
    (tool) => {
      const guarded = repository(box, "guarded", true);
      const plain = repository(box, "plain", false);
      const refused = hook(
        box,
        "opencode",
        "pre-tool-use",
        editPayload(tool, "s1", guarded, path.join(guarded, "a.ts")),
      );
      expect(typeof refused.json.deny).toBe("string");
      expect(refused.json.deny as string).toContain("recall");
      expect(
        hook(box, "opencode", "pre-tool-use", editPayload(tool, "s1", plain, path.join(plain, "a.ts"))).json,
      ).toEqual({});
    },
  );

  test("a successful velesdb-memory_recall_fused unlocks the edit; an isError one and another server's do not", () => {
    const guarded = repository(box, "guarded", true);
    const target = path.join(guarded, "a.ts");
    hook(
      box,
      "opencode",
      "post-tool-use",
      recall("s1", guarded, { tool_response: { content: [{ type: "text", text: "boom" }], isError: true } }),
    );
    hook(box, "opencode", "post-tool-use", recall("s1", guarded, { tool_name: "other-server_recall_fused" }));
    expect(typeof hook(box, "opencode", "pre-tool-use", editPayload("write", "s1", guarded, target)).json.deny).toBe(
      "string",
    );
    expect(hook(box, "opencode", "post-tool-use", recall("s1", guarded)).json).toEqual({});
    expect(hook(box, "opencode", "pre-tool-use", editPayload("write", "s1", guarded, target)).json).toEqual({});
    // Another session is still refused: evidence is per session.
    expect(typeof hook(box, "opencode", "pre-tool-use", editPayload("write", "s2", guarded, target)).json.deny).toBe(
      "string",
    );
  });
});

describe("opencode lifecycle", () => {
  test("session-start answers the load guidance as system text; stop continues once; compaction gets instructions", () => {
    const dir = repository(box, "proj", false);
    const start = hook(
      box,
      "opencode",
      "session-start",
      loadPayload("opencode", "session-start.startup", { session_id: "s1", cwd: dir }),
    );
    expect(start.json.system as string).toContain('load_working_context(project="proj"');
    const first = hook(box, "opencode", "stop", loadPayload("opencode", "stop.first", { session_id: "s1", cwd: dir }));
    expect(first.json.prompt as string).toContain('save_working_context(project="proj"');
    // The plugin marks the idle after its own continuation: the rule then lets the session end.
    expect(
      hook(box, "opencode", "stop", loadPayload("opencode", "stop.active", { session_id: "s1", cwd: dir })).json,
    ).toEqual({});
    expect(
      hook(box, "opencode", "pre-compact", loadPayload("opencode", "pre-compact", { session_id: "s1", cwd: dir })).json
        .context as string,
    ).toContain("save_working_context(");
  });
});

describe("opencode bash compression", () => {
  const bash = (output: string, metadata: Record<string, unknown>) =>
    loadPayload("opencode", "post-tool-use.bash-truncated", {
      session_id: "s1",
      cwd: box.workspace,
      tool_response: { title: "build", output, metadata },
    });

  test("an oversized inline output becomes the compiled view naming an archive of the whole output", () => {
    const log = GO_TEST.stdout;
    const answer = hook(box, "opencode", "post-tool-use", bash(log, { exit: 0, truncated: false }), {
      VELESDB_MEMORY_BIN: fake("medium"),
    });
    const output = answer.json.output as string;
    expect(output.length).toBeLessThan(log.length / 2);
    for (const line of GO_TEST.mustKeep) expect(output.split("\n")).toContain(line);
    const archive = JSON.parse(/saved at ("(?:[^"\\]|\\.)*")/.exec(output)![1]!) as string;
    expect((JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout: string }).stdout).toBe(log);
  });

  test("OpenCode's cut output is compiled from its saved file, which is the archive", () => {
    const saved = path.join(box.home, ".local", "share", "opencode", "tool-output", "tool_x");
    fs.mkdirSync(path.dirname(saved), { recursive: true });
    const log = GO_TEST.stdout;
    fs.writeFileSync(saved, log);
    const answer = hook(
      box,
      "opencode",
      "post-tool-use",
      bash(`...output truncated...\n\nFull output saved to: ${saved}\n\ntail\n`, {
        exit: 0,
        truncated: true,
        outputPath: saved,
      }),
      { VELESDB_MEMORY_BIN: fake("medium") },
    );
    expect(answer.json.output as string).toContain(JSON.stringify(saved));
    expect(fs.readFileSync(saved, "utf8")).toBe(log);
  });

  test("small output, no compiler, and a non-bash tool stay untouched (control: the same big output with a compiler is replaced)", () => {
    const log = GO_TEST.stdout;
    expect(
      hook(box, "opencode", "post-tool-use", bash("ok\n", { exit: 0, truncated: false }), {
        VELESDB_MEMORY_BIN: fake("medium"),
      }).json,
    ).toEqual({});
    const missing = hook(box, "opencode", "post-tool-use", bash(log, { exit: 0, truncated: false }), {
      VELESDB_MEMORY_BIN: path.join(box.root, "nope"),
    });
    expect(missing.json).toEqual({});
    expect(missing.stderr).toContain("compression off");
    expect(
      hook(
        box,
        "opencode",
        "post-tool-use",
        { ...bash(log, { exit: 0, truncated: false }), tool_name: "read" },
        { VELESDB_MEMORY_BIN: fake("medium") },
      ).json,
    ).toEqual({});
    expect(
      typeof hook(box, "opencode", "post-tool-use", bash(log, { exit: 0, truncated: false }), {
        VELESDB_MEMORY_BIN: fake("medium"),
      }).json.output,
    ).toBe("string");
  });
});
