// The Droid client of the installer, through the compiled binary in a fake home: grouped
// Claude-shaped entries in ~/.factory/settings.json beside the user's BYOK models (JSONC kept),
// timeouts in seconds, matchers for the edit tools and `velesdb-memory___<tool>`; install twice
// changes no byte; uninstall gives the user's bytes back; install without --client picks Droid
// when ~/.factory exists.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeInstallSandbox, read, write, type InstallSandbox } from "../../support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("droid", { clients: ["droid"] });
});
afterEach(() => box.cleanup());

const settings = (): string => path.join(box.home, ".factory", "settings.json");
const USER =
  '{\n  // my BYOK model\n  "customModels": [{"model": "m", "provider": "generic-chat-completion-api"}]\n}\n';
const ok = (args: string[]) => {
  const run = box.run(args);
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};

describe("droid entries", () => {
  test("grouped handlers per event, POSIX-quoted, timeout in seconds, matchers on the tool events; the user's models stay", () => {
    write(settings(), USER);
    ok(["install", "--client", "droid"]);
    const parsed = JSON.parse(read(settings()).replace(/^\s*\/\/.*$/m, "")) as {
      customModels: unknown[];
      hooks: Record<string, Array<{ matcher?: string; hooks: unknown[] }>>;
    };
    expect(parsed.customModels).toHaveLength(1);
    const handler = (event: string) => ({
      type: "command",
      command: `'${box.stableBinary}' droid ${event}`,
      timeout: 10,
    });
    expect(parsed.hooks).toEqual({
      SessionStart: [{ hooks: [handler("session-start")] }],
      Stop: [{ hooks: [handler("stop")] }],
      PreToolUse: [{ matcher: "^(Create|Edit|MultiEdit)$", hooks: [handler("pre-tool-use")] }],
      PostToolUse: [{ matcher: "^velesdb[-_]memory___.+$", hooks: [handler("post-tool-use")] }],
    });
  });

  test("install twice changes no byte; uninstall gives the user's bytes back", () => {
    write(settings(), USER);
    ok(["install", "--client", "droid"]);
    const installed = read(settings());
    ok(["install", "--client", "droid"]);
    expect(read(settings())).toBe(installed);
    ok(["uninstall", "--client", "droid"]);
    expect(read(settings())).toBe(USER);
  });

  test("install without --client picks Droid when ~/.factory exists (control: not without it)", () => {
    ok(["install"]);
    expect(fs.existsSync(settings())).toBe(true);
    ok(["uninstall"]);
    fs.rmSync(path.join(box.home, ".factory"), { recursive: true });
    expect(box.run(["install"]).exitCode).toBe(1);
    expect(fs.existsSync(settings())).toBe(false);
  });
});
