// The Copilot client of the installer, through the compiled binary in a fake home: a hooks
// file of our own in ~/.copilot/hooks/ (never the user's settings.json), flat camelCase
// entries quoted for bash and PowerShell, matchers that keep a missing binary from refusing
// more than edits, and a doctor that says when the binary is gone.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeInstallSandbox, read, treeDigest, write, type InstallSandbox } from "../../support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("copilot", { clients: ["copilot"] });
});
afterEach(() => box.cleanup());

const C = ["--client", "copilot"];
const ours = (home = box.home) => path.join(home, ".copilot", "hooks", "velesdb-hooks.json");
const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};
type Handler = Record<string, unknown>;
const hooksOf = (file: string): Record<string, Handler[]> =>
  (JSON.parse(read(file)) as { hooks: Record<string, Handler[]> }).hooks;

// The user's own Copilot files: settings with hooks of theirs, and a hooks file of theirs.
const USER_SETTINGS =
  '{\n  // mine\n  "model": "gpt-5",\n  "hooks": {"preToolUse": [{"type": "command", "bash": "echo mine"}]}\n}\n';
const USER_HOOKS = '{"version":1,"hooks":{"agentStop":[{"type":"command","bash":"./notify.sh","timeoutSec":5}]}}';

describe("entries", () => {
  test("one file of ours: version 1, flat camelCase handlers, bash and powershell quoted, timeoutSec, matchers on tool events", () => {
    ok(["install", ...C]);
    const file = JSON.parse(read(ours())) as { version: unknown; hooks: Record<string, Handler[]> };
    expect(file.version).toBe(1);
    const program = box.stableBinary;
    const entry = (event: string, matcher?: string) => ({
      type: "command",
      ...(matcher ? { matcher } : {}),
      bash: `'${program}' copilot ${event}`,
      powershell: `& "${program}" copilot ${event}`,
      timeoutSec: 10,
    });
    expect(file.hooks).toEqual({
      sessionStart: [entry("session-start")],
      agentStop: [entry("stop")],
      preToolUse: [entry("pre-tool-use", "^(edit|create|apply_patch)$")],
      postToolUse: [entry("post-tool-use", "^(bash|velesdb[-_]memory-.+)$")],
    });
  });

  test("check after install: in step, exit 0 (control: a changed matcher is drift)", () => {
    ok(["install", ...C]);
    const check = box.run(["check", ...C]);
    expect(check.stdout).toContain("copilot: entries in step");
    expect(check.exitCode).toBe(0);
    write(ours(), read(ours()).replace("^(edit|create|apply_patch)$", "^(edit)$"));
    const drifted = box.run(["check", ...C]);
    expect(drifted.stdout).toContain("preToolUse differs");
    expect(drifted.exitCode).not.toBe(0);
  });

  test("the bash command, run by sh -c from a directory with spaces, answers the session-start context", () => {
    box.cleanup();
    box = makeInstallSandbox("copilot-awkward", { homeName: `it's a "home" with $HOME`, clients: ["copilot"] });
    ok(["install", ...C]);
    const command = String(hooksOf(ours()).sessionStart![0]!.bash);
    const repo = path.join(box.root, "repo");
    write(path.join(repo, ".velesdb-hooks.json"), JSON.stringify({ project: "atlas", session: "main" }));
    const run = Bun.spawnSync(["sh", "-c", command], {
      stdin: Buffer.from(JSON.stringify({ sessionId: "s1", cwd: repo, source: "new" })),
      env: box.env,
      cwd: repo,
    });
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout.toString()).additionalContext).toContain(
      'load_working_context(project="atlas", session="main/',
    );
  });

  test("COPILOT_HOME moves the file; a relative COPILOT_HOME is refused", () => {
    const elsewhere = path.join(box.root, "copilot-home");
    fs.mkdirSync(elsewhere);
    ok(["install", ...C], { COPILOT_HOME: elsewhere });
    expect(fs.existsSync(path.join(elsewhere, "hooks", "velesdb-hooks.json"))).toBe(true);
    expect(fs.existsSync(ours())).toBe(false);
    const relative = box.run(["install", ...C], { env: { COPILOT_HOME: "rel/dir" } });
    expect(relative.exitCode).not.toBe(0);
    expect(relative.stdout + relative.stderr).toContain("COPILOT_HOME");
  });
});

describe("the user's files", () => {
  test("install twice changes no byte; uninstall leaves the user's settings and hooks files byte for byte", () => {
    write(path.join(box.home, ".copilot", "settings.json"), USER_SETTINGS);
    write(path.join(box.home, ".copilot", "hooks", "user.json"), USER_HOOKS);
    ok(["install", ...C]);
    const installed = treeDigest(box.home);
    const second = ok(["install", ...C]);
    expect(treeDigest(box.home)).toBe(installed);
    expect(second.stdout).toContain("is already in step");
    ok(["uninstall", ...C]);
    expect(read(path.join(box.home, ".copilot", "settings.json"))).toBe(USER_SETTINGS);
    expect(read(path.join(box.home, ".copilot", "hooks", "user.json"))).toBe(USER_HOOKS);
    // Install created our file, so uninstall deletes it: the hooks directory is the user's again.
    expect(fs.readdirSync(path.join(box.home, ".copilot", "hooks"))).toEqual(["user.json"]);
  });

  test("install without --client includes copilot when ~/.copilot exists, and not otherwise", () => {
    fs.mkdirSync(path.join(box.home, ".claude"));
    ok(["install"]);
    expect(fs.existsSync(ours())).toBe(true);
    ok(["uninstall"]);
    fs.rmSync(path.join(box.home, ".copilot"), { recursive: true, force: true });
    ok(["install"]);
    expect(fs.existsSync(path.join(box.home, ".claude", "settings.json"))).toBe(true);
    expect(fs.existsSync(path.join(box.home, ".copilot"))).toBe(false);
  });
});

describe("a missing binary", () => {
  test("check and doctor say Copilot refuses every edit tool while it is missing (control: present, no such line)", () => {
    ok(["install", ...C]);
    expect(box.run(["doctor"]).stdout).not.toContain("refuses every edit tool");
    fs.rmSync(box.stableBinary);
    const check = box.run(["check", ...C]);
    expect(check.exitCode).not.toBe(0);
    expect(check.stdout).toContain("Copilot refuses every edit tool while it is missing");
    expect(box.run(["doctor"]).stdout).toContain("Copilot refuses every edit tool while it is missing");
  });
});
